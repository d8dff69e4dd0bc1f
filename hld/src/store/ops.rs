//! The write commands, each run by the writer thread in a transaction of its own.

use hld_client::protocol::{
    ApprovalStatus, ConversationEvent, ConversationEventType, SessionStatus, TurnResult,
};
use rusqlite::{params, OptionalExtension};

use super::error::{Result, StoreError};
use super::read;
use super::types::{Change, Ingest, NewEvent, NewSession, SessionRow, SessionUpdate};
use super::writer::Writer;
use crate::model::{transition, Happening, SESSION_ENDED};

/// How many ancestors are followed to find where a continuation's sequence starts.
const MAX_CHAIN_DEPTH: usize = 10_000;

/// One event's insert: `?1` session and `?5` time (bound once per batch), the rest per event.
const EVENT_INSERT: &str = "INSERT INTO conversation_events (session_id, claude_session_id, \
    sequence, event_type, created_at, role, content, tool_id, tool_name, tool_input_json, \
    tool_result_for_id, tool_result_content, is_completed, is_error, approval_status, \
    approval_id, parent_tool_use_id, subtype) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 0, ?13, ?14, ?15, ?16, ?17)";

/// The `approval_status` written on a `tool_call` event for an approval in `status`.
pub(super) fn event_approval_status(status: ApprovalStatus) -> &'static str {
    match status {
        ApprovalStatus::Pending => "pending",
        ApprovalStatus::Approved => "approved",
        ApprovalStatus::Denied => "denied",
        ApprovalStatus::Responded | ApprovalStatus::Resolved => "resolved",
        // The daemon stores no status it does not know; were one read, it is no decision.
        _ => "pending",
    }
}

/// How recent a `tool_call` linked by tool name must be (spec/000 `CORRELATION_TIME_WINDOW`).
pub const CORRELATION_WINDOW: chrono::Duration = chrono::Duration::seconds(300);

/// The newest open, ungated call of a tool (`?1` session, `?2` tool, `?3` earliest `created_at`).
pub(super) const UNGATED_TOOL_CALL: &str = "SELECT tool_id FROM conversation_events
    WHERE session_id = ?1 AND event_type = 'tool_call' AND tool_name = ?2
        AND tool_id IS NOT NULL AND is_completed = 0
        AND (approval_status IS NULL OR approval_status = '')
        AND approval_id IS NULL AND created_at >= ?3
    ORDER BY sequence DESC LIMIT 1";

/// The status and id of the newest approval of a tool use (`?1` session, `?2` tool use id).
const TOOL_USE_APPROVAL: &str = "SELECT status, id FROM approvals
    WHERE session_id = ?1 AND tool_use_id = ?2
    ORDER BY requested_at DESC, rowid DESC LIMIT 1";

pub(super) fn to_json<T: serde::Serialize>(value: Option<&T>) -> Result<Option<String>> {
    value
        .map(serde_json::to_string)
        .transpose()
        .map_err(StoreError::from)
}

pub(super) fn parse_status(id: &str, status: &str) -> Result<SessionStatus> {
    SessionStatus::parse(status)
        .ok_or_else(|| StoreError::Invalid(format!("session {id} has unknown status {status:?}")))
}

impl Writer {
    /// Inserts a session and its MCP servers.
    pub(crate) fn create_session(&mut self, new: &NewSession) -> Result<()> {
        if let Some(parent) = &new.parent_session_id {
            if !self.session_exists(parent)? {
                return Err(StoreError::SessionNotFound(parent.clone()));
            }
        }
        let o = &new.options;
        self.conn
            .prepare_cached(
                "INSERT INTO sessions (id, run_id, parent_session_id, query, summary, model,
                    working_dir, max_turns, system_prompt, append_system_prompt,
                    custom_instructions, permission_prompt_tool, allowed_tools, disallowed_tools,
                    has_mcp_config, no_approvals, initial_status, status, created_at,
                    last_activity_at, title, additional_directories, auto_accept_edits,
                    dangerously_skip_permissions, dangerously_skip_permissions_expires_at,
                    permission_mode, worktree_id, resume_on_reset)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                    'starting', 'starting', ?17, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
            )?
            .execute(params![
                new.id,
                new.run_id,
                new.parent_session_id,
                new.query,
                new.summary,
                o.model,
                o.working_dir.to_str(),
                o.max_turns,
                o.system_prompt,
                o.append_system_prompt,
                o.custom_instructions,
                o.permission_prompt_tool,
                to_json(o.allowed_tools.as_ref())?,
                to_json(o.disallowed_tools.as_ref())?,
                o.mcp_config.is_some(),
                o.no_approvals,
                new.created_at,
                new.title,
                to_json(Some(&o.additional_directories).filter(|d| !d.is_empty()))?,
                new.modes.auto_accept_edits,
                new.modes.dangerously_skip_permissions,
                new.modes.bypass_expires_at,
                new.modes.permission_mode.as_str(),
                o.worktree,
                new.modes.resume_on_reset,
            ])?;
        // Continuing an archived session brings its chain back.
        if let Some(parent) = &new.parent_session_id {
            self.conn
                .prepare_cached("UPDATE sessions SET archived = 0 WHERE id = ?1 AND archived = 1")?
                .execute([parent])?;
        }
        if let Some(config) = &o.mcp_config {
            let mut stmt = self.conn.prepare_cached(
                "INSERT INTO mcp_servers (session_id, name, command, args_json, env_json,
                    extra_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for (name, server) in &config.mcp_servers {
                let extra = (!server.extra.is_empty()).then_some(&server.extra);
                stmt.execute(params![
                    new.id,
                    name,
                    server.command,
                    to_json(server.args.as_ref())?,
                    to_json(server.env.as_ref())?,
                    to_json(extra)?,
                ])?;
            }
        }
        Ok(())
    }

    fn session_exists(&self, id: &str) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
            .query_row([id], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// The session `id`, read inside this transaction.
    pub(super) fn session_after(&self, id: &str) -> Result<SessionRow> {
        read::session(&self.conn, id)?.ok_or_else(|| StoreError::SessionNotFound(id.into()))
    }

    /// Moves the session by the rule for `happening` from its status now, applying `update`;
    /// a final status resolves its pending approvals. `None` when the rule keeps the status.
    pub(crate) fn advance(
        &mut self,
        id: &str,
        happening: Happening,
        update: &SessionUpdate,
        out: &mut Vec<Change>,
    ) -> Result<Option<SessionStatus>> {
        let old: Option<String> = self
            .conn
            .prepare_cached("SELECT status FROM sessions WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?;
        let old = old.ok_or_else(|| StoreError::SessionNotFound(id.into()))?;
        let old_status = parse_status(id, &old)?;
        let Some(new_status) = transition(&old_status, happening) else {
            return Ok(None);
        };
        self.apply_update(id, Some(&new_status), update, &crate::time::now())?;
        out.push(Change::Session {
            old_status,
            session: Box::new(self.session_after(id)?),
            error: update.error_message.clone(),
            turn: None,
        });
        if !new_status.is_active() {
            self.expire_approvals(Some(id), out)?;
        }
        Ok(Some(new_status))
    }

    /// Resolves the pending approvals (cloud ones too) of ended sessions: one, or every one.
    fn expire_approvals(&mut self, session_id: Option<&str>, out: &mut Vec<Change>) -> Result<()> {
        let ids = self
            .conn
            .prepare_cached(
                "SELECT id FROM approvals
                 WHERE status = 'pending' AND (?1 IS NULL OR session_id = ?1)
                 ORDER BY requested_at, rowid",
            )?
            .query_map([session_id], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for id in ids {
            let resolved = ApprovalStatus::Resolved;
            self.decide_approval(&id, resolved, Some(SESSION_ENDED), None, out)?;
        }
        Ok(())
    }

    /// A decided approval: the session runs again if none of its approvals is pending,
    /// counted in the decision's transaction so that none created meanwhile is missed.
    pub(super) fn resume_if_unblocked(
        &mut self,
        session_id: &str,
        out: &mut Vec<Change>,
    ) -> Result<()> {
        let pending: bool = self
            .conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM approvals
                 WHERE session_id = ?1 AND status = 'pending')",
            )?
            .query_row([session_id], |r| r.get(0))?;
        if !pending {
            let settled = Happening::ApprovalsSettled;
            self.advance(session_id, settled, &SessionUpdate::default(), out)?;
        }
        Ok(())
    }

    /// The update itself, with a new status if one is given. The indexed columns (`status`,
    /// `claude_session_id`) are assigned only when given: SQLite rewrites the index entry of
    /// every column an UPDATE assigns, even to the value it had, and an agent's every line
    /// updates its session.
    fn apply_update(
        &mut self,
        id: &str,
        status: Option<&SessionStatus>,
        u: &SessionUpdate,
        now: &str,
    ) -> Result<()> {
        if let Some(status) = status {
            self.conn
                .prepare_cached("UPDATE sessions SET status = ?2 WHERE id = ?1")?
                .execute(params![id, status.as_str()])?;
        }
        if let Some(claude_session_id) = &u.claude_session_id {
            self.conn
                .prepare_cached("UPDATE sessions SET claude_session_id = ?2 WHERE id = ?1")?
                .execute(params![id, claude_session_id])?;
        }
        self.conn
            .prepare_cached(
                "UPDATE sessions SET
                    model = COALESCE(?2, model),
                    error_message = COALESCE(?3, error_message),
                    completed_at = COALESCE(?4, completed_at),
                    cost_usd = COALESCE(cost_usd + ?5, ?5, cost_usd),
                    input_tokens = COALESCE(input_tokens + ?6, ?6, input_tokens),
                    output_tokens = COALESCE(output_tokens + ?7, ?7, output_tokens),
                    duration_ms = COALESCE(duration_ms + ?8, ?8, duration_ms),
                    num_turns = COALESCE(num_turns + ?9, ?9, num_turns),
                    result_content = COALESCE(?10, result_content),
                    result_is_error = COALESCE(?11, result_is_error),
                    interrupted = COALESCE(?12, interrupted),
                    exit_code = COALESCE(?13, exit_code),
                    last_activity_at = ?14,
                    cache_creation_input_tokens = COALESCE(cache_creation_input_tokens + ?15,
                        ?15, cache_creation_input_tokens),
                    cache_read_input_tokens = COALESCE(cache_read_input_tokens + ?16, ?16,
                        cache_read_input_tokens),
                    effective_context_tokens = COALESCE(?17, effective_context_tokens),
                    context_limit = COALESCE(?18, context_limit),
                    skills = COALESCE(?19, skills)
                 WHERE id = ?1",
            )?
            .execute(params![
                id,
                u.model,
                u.error_message,
                u.completed_at,
                u.cost_usd,
                u.input_tokens,
                u.output_tokens,
                u.duration_ms,
                u.num_turns,
                u.result_content,
                u.result_is_error,
                u.interrupted,
                u.exit_code,
                now,
                u.context.cache_creation_input_tokens,
                u.context.cache_read_input_tokens,
                u.context.effective_context_tokens,
                u.context.context_limit,
                to_json(u.skills.as_ref())?,
            ])?;
        Ok(())
    }

    /// Raw lines, then events, then the update, all in this command's transaction.
    pub(crate) fn ingest(
        &mut self,
        session_id: &str,
        ingest: Ingest,
        out: &mut Vec<Change>,
    ) -> Result<()> {
        let now = crate::time::now();
        let run_id: String = self
            .conn
            .prepare_cached("SELECT run_id FROM sessions WHERE id = ?1")?
            .query_row([session_id], |r| r.get(0))
            .optional()?
            .ok_or_else(|| StoreError::SessionNotFound(session_id.into()))?;
        self.insert_raw_lines(session_id, &ingest.raw_lines, &now)?;
        let stored = self.append_events(session_id, ingest.events, &now)?;
        // The session's row is written once: by its update, which sets the last activity too.
        match &ingest.update {
            Some(update) => {
                self.apply_update(session_id, None, update, &now)?;
                if let Some(mode) = &update.permission_mode {
                    self.follow_mode(session_id, mode, out)?;
                }
            }
            None => {
                self.conn
                    .prepare_cached("UPDATE sessions SET last_activity_at = ?2 WHERE id = ?1")?
                    .execute(params![session_id, now])?;
            }
        }
        self.record_usage(session_id, &ingest.usage, &now)?;
        out.extend(stored.into_iter().map(|event| Change::Conversation {
            run_id: run_id.clone(),
            event: Box::new(event),
        }));
        self.store_rate_limits(session_id, &run_id, ingest.rate_limits, out)?;
        if let Some(end) = ingest.turn_end {
            if let Some(limit) = &end.usage_limit {
                self.set_usage_limit(session_id, limit)?;
            }
            let update = SessionUpdate {
                completed_at: Some(now),
                error_message: end.error,
                ..SessionUpdate::default()
            };
            let failed = update.error_message.is_some();
            let at = out.len();
            self.advance(session_id, Happening::TurnEnded { failed }, &update, out)?;
            // The batch's update holds what the turn's `result` reported of the turn alone.
            if let (Some(Change::Session { turn, .. }), Some(result)) =
                (out.get_mut(at), &ingest.update)
            {
                *turn = Some(TurnResult {
                    cost_usd: result.cost_usd,
                    duration_ms: result.duration_ms,
                    num_turns: result.num_turns,
                    input_tokens: result.input_tokens,
                    output_tokens: result.output_tokens,
                });
            }
            match end.live_until {
                Some(until) => self.set_live(session_id, true, Some(&until))?,
                None => self.start_turn(session_id, out)?,
            }
        }
        Ok(())
    }

    /// The session's process has ended: its status moves by `happening` with `update` (a final
    /// one stays, keeping only the exit code), and the session is no longer live.
    pub(crate) fn process_ended(
        &mut self,
        id: &str,
        happening: Happening,
        update: &SessionUpdate,
        out: &mut Vec<Change>,
    ) -> Result<Option<SessionStatus>> {
        self.set_live(id, false, None)?;
        let moved = self.advance(id, happening, update, out)?;
        if moved.is_none() {
            // A process closed between turns: no activity, only its exit code.
            self.conn
                .prepare_cached("UPDATE sessions SET exit_code = ?2 WHERE id = ?1")?
                .execute(params![id, update.exit_code])?;
        }
        Ok(moved)
    }

    fn insert_raw_lines(&self, session_id: &str, lines: &[String], now: &str) -> Result<()> {
        let mut stmt = self.conn.prepare_cached(
            "INSERT INTO raw_events (session_id, event_json, created_at) VALUES (?1, ?2, ?3)",
        )?;
        for line in lines {
            stmt.execute(params![session_id, line, now])?;
        }
        Ok(())
    }

    /// Inserts events with the session's next sequences; a tool result completes its call, and
    /// a tool call picks up an approval requested for it before it arrived.
    pub(super) fn append_events(
        &mut self,
        session_id: &str,
        events: Vec<NewEvent>,
        now: &str,
    ) -> Result<Vec<ConversationEvent>> {
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let first = self.reserve_sequences(session_id, events.len())?;
        let mut insert = self.conn.prepare_cached(EVENT_INSERT)?;
        insert.raw_bind_parameter(1, session_id)?;
        insert.raw_bind_parameter(5, now)?;
        let mut stored = Vec::with_capacity(events.len());
        for (sequence, e) in (first..).zip(events) {
            let (approval_status, approval_id) = match (&e.event_type, &e.tool_id) {
                (ConversationEventType::ToolCall, Some(tool_id)) => {
                    self.requested_approval(session_id, tool_id)?
                }
                _ => (None, None),
            };
            insert.raw_bind_parameter(2, &e.claude_session_id)?;
            insert.raw_bind_parameter(3, sequence)?;
            insert.raw_bind_parameter(4, e.event_type.as_str())?;
            insert.raw_bind_parameter(6, &e.role)?;
            insert.raw_bind_parameter(7, &e.content)?;
            insert.raw_bind_parameter(8, &e.tool_id)?;
            insert.raw_bind_parameter(9, &e.tool_name)?;
            insert.raw_bind_parameter(10, &e.tool_input_json)?;
            insert.raw_bind_parameter(11, &e.tool_result_for_id)?;
            insert.raw_bind_parameter(12, &e.tool_result_content)?;
            insert.raw_bind_parameter(13, e.is_error)?;
            insert.raw_bind_parameter(14, &approval_status)?;
            insert.raw_bind_parameter(15, &approval_id)?;
            insert.raw_bind_parameter(16, &e.parent_tool_use_id)?;
            insert.raw_bind_parameter(17, &e.subtype)?;
            insert.raw_execute()?;
            let id = self.conn.last_insert_rowid();
            if let (ConversationEventType::ToolResult, Some(for_id)) =
                (&e.event_type, &e.tool_result_for_id)
            {
                self.conn
                    .prepare_cached(
                        "UPDATE conversation_events SET is_completed = 1
                         WHERE session_id = ?1 AND tool_id = ?2 AND event_type = 'tool_call'",
                    )?
                    .execute([session_id, for_id])?;
            }
            stored.push(ConversationEvent {
                id,
                session_id: session_id.to_owned(),
                claude_session_id: e.claude_session_id,
                sequence,
                event_type: e.event_type,
                created_at: now.to_owned(),
                role: e.role,
                content: e.content,
                tool_id: e.tool_id,
                tool_name: e.tool_name,
                tool_input_json: e.tool_input_json,
                tool_result_for_id: e.tool_result_for_id,
                tool_result_content: e.tool_result_content,
                is_completed: false,
                is_error: e.is_error,
                approval_status,
                approval_id,
                parent_tool_use_id: e.parent_tool_use_id,
                subtype: e.subtype,
            });
        }
        Ok(stored)
    }

    /// The `approval_status` and id of the newest approval requested for tool use `tool_id`.
    fn requested_approval(
        &self,
        session_id: &str,
        tool_id: &str,
    ) -> Result<(Option<String>, Option<String>)> {
        Ok(self
            .conn
            .prepare_cached(TOOL_USE_APPROVAL)?
            .query_row([session_id, tool_id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .optional()?
            .map(|(status, id)| {
                let status = read::parse_wire(&status).map(event_approval_status);
                (status.map(str::to_owned), Some(id))
            })
            .unwrap_or_default())
    }

    /// Reserves the session's next `count` sequences (cached after first use); the first.
    fn reserve_sequences(&mut self, session_id: &str, count: usize) -> Result<i64> {
        let count =
            i64::try_from(count).map_err(|_| StoreError::Invalid("too many events".into()))?;
        if let Some(next) = self.next_seq.get_mut(session_id) {
            let first = *next;
            *next += count;
            return Ok(first);
        }
        let first = self.last_sequence(session_id)? + 1;
        self.next_seq.insert(session_id.to_owned(), first + count);
        Ok(first)
    }

    /// The last sequence of the session, else of its nearest ancestor with events (0 for none).
    fn last_sequence(&self, session_id: &str) -> Result<i64> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT (SELECT MAX(sequence) FROM conversation_events WHERE session_id = s.id),
                    s.parent_session_id
             FROM sessions s WHERE s.id = ?1",
        )?;
        let mut current = session_id.to_owned();
        for _ in 0..MAX_CHAIN_DEPTH {
            let row: Option<(Option<i64>, Option<String>)> = stmt
                .query_row([&current], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            match row {
                None => return Err(StoreError::SessionNotFound(current)),
                Some((Some(max), _)) => return Ok(max),
                Some((None, Some(parent))) => current = parent,
                Some((None, None)) => return Ok(0),
            }
        }
        Ok(0)
    }

    /// Fails every session a process may have been attached to, resolves every pending approval.
    pub(crate) fn mark_orphans(&mut self, reason: &str, out: &mut Vec<Change>) -> Result<usize> {
        let active: Vec<String> = self
            .conn
            .prepare(
                "SELECT id FROM sessions WHERE status IN
                    ('starting', 'running', 'waiting_input', 'completing')
                 ORDER BY created_at, rowid",
            )?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let update = SessionUpdate {
            error_message: Some(reason.to_owned()),
            completed_at: Some(crate::time::now()),
            ..SessionUpdate::default()
        };
        for id in &active {
            self.advance(id, Happening::Orphaned, &update, out)?;
        }
        self.conn
            .prepare("UPDATE sessions SET live = 0, live_until = NULL WHERE live = 1")?
            .execute([])?;
        self.expire_approvals(None, out)?;
        Ok(active.len())
    }
}

#[cfg(test)]
mod tests;
