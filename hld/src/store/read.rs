//! Queries and row mapping, for the read pool and the writer (reading back what it changed).

use std::collections::BTreeMap;
use std::path::PathBuf;

use hld_client::protocol::{
    Approval, ApprovalStatus, ApprovalType, ConversationEvent, ConversationEventType, DraftState,
    FunctionCall, FunctionCallSpec, FunctionCallStatus, HumanContact, HumanContactSpec,
    HumanContactStatus, LeafFilter, McpConfig, McpServer, PermissionMode, RateLimitKind,
    SessionStatus, UsageLimit,
};
use rusqlite::types::Type;
use rusqlite::{params, Connection, OptionalExtension, Row};
use serde_json::{Map, Value};

use super::error::Result;
use super::types::{ContextTokens, NewApproval, NewSession, SessionRow};
use crate::model::Modes;
use crate::model::SessionOptions;

/// How many parents `conversation_for_session` follows at most (a guard against cycles).
const MAX_CHAIN_DEPTH: i64 = 10_000;

const SESSION_COLUMNS: &str = "id, run_id, parent_session_id, query, summary, model, \
    working_dir, max_turns, system_prompt, append_system_prompt, custom_instructions, \
    permission_prompt_tool, allowed_tools, disallowed_tools, has_mcp_config, no_approvals, \
    initial_status, created_at, claude_session_id, status, last_activity_at, completed_at, \
    error_message, cost_usd, input_tokens, output_tokens, duration_ms, num_turns, \
    result_content, result_is_error, interrupted, exit_code, title, archived, \
    auto_accept_edits, dangerously_skip_permissions, dangerously_skip_permissions_expires_at, \
    additional_directories, cache_creation_input_tokens, cache_read_input_tokens, \
    effective_context_tokens, context_limit, live, live_until, permission_mode, worktree_id, \
    usage_limit_kind, usage_limit_resets_at, resume_on_reset, draft, editor_state";

const EVENT_COLUMNS: &str = "id, session_id, claude_session_id, sequence, event_type, \
    created_at, role, content, tool_id, tool_name, tool_input_json, tool_result_for_id, \
    tool_result_content, is_completed, is_error, approval_status, approval_id, \
    parent_tool_use_id, subtype";

const APPROVAL_COLUMNS: &str = "id, session_id, run_id, type, status, tool_name, tool_input, \
    tool_use_id, message, subject, comment, requested_at, timeout_at, responded_at, source, \
    decided_by";

/// A conversion error for column `idx` holding something this build does not understand.
fn bad_value(idx: usize, what: &str, value: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        idx,
        Type::Text,
        format!("unknown {what} {value:?}").into(),
    )
}

/// Reads a column holding a wire spelling, parsed with `parse`.
fn enum_col<T>(
    row: &Row<'_>,
    idx: usize,
    what: &str,
    parse: fn(&str) -> Option<T>,
) -> rusqlite::Result<T> {
    let s: String = row.get(idx)?;
    parse(&s).ok_or_else(|| bad_value(idx, what, &s))
}

fn json_col<T: serde::de::DeserializeOwned>(
    row: &Row<'_>,
    idx: usize,
) -> rusqlite::Result<Option<T>> {
    let Some(s) = row.get::<_, Option<String>>(idx)? else {
        return Ok(None);
    };
    serde_json::from_str(&s)
        .map(Some)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, Box::new(e)))
}

/// The value of a unit enum (approval status, type, source) that serde spells `s`, if any.
pub(super) fn parse_wire<T: serde::de::DeserializeOwned>(s: &str) -> Option<T> {
    serde_json::from_value(Value::String(s.to_owned())).ok()
}

/// A session row without its MCP servers, and whether it has a config to load.
fn session_from_row(row: &Row<'_>) -> rusqlite::Result<(SessionRow, bool)> {
    let options = SessionOptions {
        model: row.get(5)?,
        working_dir: row
            .get::<_, Option<String>>(6)?
            .map(PathBuf::from)
            .unwrap_or_default(),
        max_turns: row.get(7)?,
        system_prompt: row.get(8)?,
        append_system_prompt: row.get(9)?,
        custom_instructions: row.get(10)?,
        permission_prompt_tool: row.get(11)?,
        allowed_tools: json_col(row, 12)?,
        disallowed_tools: json_col(row, 13)?,
        mcp_config: None,
        no_approvals: row.get(15)?,
        additional_directories: json_col::<Vec<PathBuf>>(row, 37)?.unwrap_or_default(),
        worktree: row.get(45)?,
    };
    let new = NewSession {
        id: row.get(0)?,
        run_id: row.get(1)?,
        parent_session_id: row.get(2)?,
        query: row.get(3)?,
        summary: row.get(4)?,
        options,
        created_at: row.get(17)?,
        title: row.get(32)?,
        modes: Modes {
            auto_accept_edits: row.get(34)?,
            dangerously_skip_permissions: row.get(35)?,
            bypass_expires_at: row.get(36)?,
            permission_mode: enum_col(row, 44, "permission mode", PermissionMode::parse)?,
            resume_on_reset: row.get(48)?,
        },
    };
    let has_mcp_config: bool = row.get(14)?;
    let usage_limit = match row.get::<_, Option<String>>(46)? {
        Some(kind) => Some(UsageLimit {
            kind: RateLimitKind::from(kind.as_str()),
            resets_at: row.get(47)?,
        }),
        None => None,
    };
    let session = SessionRow {
        new,
        claude_session_id: row.get(18)?,
        status: enum_col(row, 19, "session status", SessionStatus::parse)?,
        last_activity_at: row.get(20)?,
        completed_at: row.get(21)?,
        error_message: row.get(22)?,
        cost_usd: row.get(23)?,
        input_tokens: row.get(24)?,
        output_tokens: row.get(25)?,
        duration_ms: row.get(26)?,
        num_turns: row.get(27)?,
        result_content: row.get(28)?,
        result_is_error: row.get(29)?,
        interrupted: row.get(30)?,
        exit_code: row.get(31)?,
        archived: row.get(33)?,
        context: ContextTokens {
            cache_creation_input_tokens: row.get(38)?,
            cache_read_input_tokens: row.get(39)?,
            effective_context_tokens: row.get(40)?,
            context_limit: row.get(41)?,
        },
        live: row.get(42)?,
        live_until: row.get(43)?,
        worktree: None,
        usage_limit,
        draft: row
            .get::<_, Option<String>>(49)?
            .map(|d| DraftState::from(d.as_str())),
        editor_state: row.get(50)?,
    };
    Ok((session, has_mcp_config))
}

fn mcp_config(conn: &Connection, session_id: &str) -> Result<McpConfig> {
    let mut stmt = conn.prepare_cached(
        "SELECT name, command, args_json, env_json, extra_json FROM mcp_servers
         WHERE session_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([session_id], |row| {
        let server = McpServer {
            command: row.get(1)?,
            args: json_col(row, 2)?,
            env: json_col::<BTreeMap<String, String>>(row, 3)?,
            extra: json_col::<Map<String, Value>>(row, 4)?.unwrap_or_default(),
        };
        Ok((row.get::<_, String>(0)?, server))
    })?;
    let mut config = McpConfig::default();
    for r in rows {
        let (name, server) = r?;
        config.mcp_servers.insert(name, server);
    }
    Ok(config)
}

/// Runs a session query and completes each row with its MCP config.
fn sessions_where(
    conn: &Connection,
    tail: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<SessionRow>> {
    let sql = format!("SELECT {SESSION_COLUMNS} FROM sessions {tail}");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt
        .query_map(params, session_from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    rows.into_iter()
        .map(|(mut session, has_mcp)| {
            if has_mcp {
                session.new.options.mcp_config = Some(mcp_config(conn, &session.new.id)?);
            }
            if let Some(id) = &session.new.options.worktree {
                session.worktree = super::worktrees::worktree(conn, id)?.map(|w| w.info);
            }
            Ok(session)
        })
        .collect()
}

pub(crate) fn session(conn: &Connection, id: &str) -> Result<Option<SessionRow>> {
    Ok(sessions_where(conn, "WHERE id = ?1", [id])?.pop())
}

pub(crate) fn session_by_run_id(conn: &Connection, run_id: &str) -> Result<Option<SessionRow>> {
    Ok(sessions_where(conn, "WHERE run_id = ?1", [run_id])?.pop())
}

/// Every session, most recently active first.
pub(crate) fn list_sessions(conn: &Connection) -> Result<Vec<SessionRow>> {
    sessions_where(
        conn,
        "WHERE draft IS NULL ORDER BY last_activity_at DESC, created_at DESC, rowid DESC",
        [],
    )
}

/// The sessions no other session continues under `filter`, most recently active first: drafts
/// only under the draft filters, which list nothing else.
pub(crate) fn leaves(conn: &Connection, filter: LeafFilter) -> Result<Vec<SessionRow>> {
    let (archived, draft) = match filter {
        LeafFilter::Normal => (Some(false), None),
        LeafFilter::Archived => (Some(true), None),
        LeafFilter::Draft => (None, Some(DraftState::Draft)),
        LeafFilter::Discarded => (None, Some(DraftState::Discarded)),
    };
    sessions_where(
        conn,
        "WHERE (?1 IS NULL OR archived = ?1) AND draft IS ?2
           AND NOT EXISTS (SELECT 1 FROM sessions c WHERE c.parent_session_id = sessions.id)
         ORDER BY last_activity_at DESC, created_at DESC, rowid DESC",
        params![archived, draft.as_ref().map(DraftState::as_str)],
    )
}

/// Sessions whose title, query or summary match the FTS5 expression `matching`, newest first
/// (as every session list; ranking would score every match before the limit), at most `limit`.
pub(crate) fn search(conn: &Connection, matching: &str, limit: i64) -> Result<Vec<SessionRow>> {
    sessions_where(
        conn,
        "JOIN (SELECT rowid AS hit FROM sessions_fts
               WHERE sessions_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?2)
           ON sessions.rowid = hit
         WHERE draft IS NULL
         ORDER BY hit DESC",
        params![matching, limit],
    )
}

/// Working directories, most recently used first: `(path, last used, sessions)`.
pub(crate) fn recent_paths(conn: &Connection, limit: i64) -> Result<Vec<(String, String, i64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT working_dir, MAX(created_at) AS last_used, COUNT(*) FROM sessions
         WHERE working_dir IS NOT NULL AND working_dir != '' AND draft IS NULL
         GROUP BY working_dir ORDER BY last_used DESC LIMIT ?1",
    )?;
    let rows = stmt
        .query_map([limit], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// The earliest expiry of a bypass still on, RFC 3339.
pub(crate) fn next_bypass_expiry(conn: &Connection) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached(
            "SELECT MIN(dangerously_skip_permissions_expires_at) FROM sessions
             WHERE dangerously_skip_permissions_expires_at IS NOT NULL
               AND dangerously_skip_permissions = 1",
        )?
        .query_row([], |r| r.get(0))?)
}

/// Each bypass still on with an expiry: session id, run id, expiry (RFC 3339).
pub(crate) fn bypass_expiries(conn: &Connection) -> Result<Vec<(String, String, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, run_id, dangerously_skip_permissions_expires_at FROM sessions
         WHERE dangerously_skip_permissions_expires_at IS NOT NULL
           AND dangerously_skip_permissions = 1",
    )?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Maps a `conversation_events` row selected with `EVENT_COLUMNS`.
fn event_from_row(row: &Row<'_>) -> rusqlite::Result<ConversationEvent> {
    Ok(ConversationEvent {
        id: row.get(0)?,
        session_id: row.get(1)?,
        claude_session_id: row.get(2)?,
        sequence: row.get(3)?,
        event_type: enum_col(row, 4, "event type", ConversationEventType::parse)?,
        created_at: row.get(5)?,
        role: row.get(6)?,
        content: row.get(7)?,
        tool_id: row.get(8)?,
        tool_name: row.get(9)?,
        tool_input_json: row.get(10)?,
        tool_result_for_id: row.get(11)?,
        tool_result_content: row.get(12)?,
        is_completed: row.get(13)?,
        is_error: row.get(14)?,
        approval_status: row.get(15)?,
        approval_id: row.get(16)?,
        parent_tool_use_id: row.get(17)?,
        subtype: row.get(18)?,
    })
}

/// The events a query of `conversation_events` (after its `FROM`) selects.
fn events_where(
    conn: &Connection,
    tail: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<ConversationEvent>> {
    let sql = format!("SELECT {EVENT_COLUMNS} FROM conversation_events {tail}");
    let mut stmt = conn.prepare_cached(&sql)?;
    let events = stmt.query_map(params, event_from_row)?;
    Ok(events.collect::<rusqlite::Result<Vec<_>>>()?)
}

pub(super) fn event(conn: &Connection, id: i64) -> Result<ConversationEvent> {
    let event = events_where(conn, "WHERE id = ?1", [id])?.pop();
    Ok(event.ok_or(rusqlite::Error::QueryReturnedNoRows)?)
}

/// The events of a session and its ancestors by sequence, or `None` if the session does not exist.
pub(crate) fn conversation_for_session(
    conn: &Connection,
    session_id: &str,
    after_sequence: Option<i64>,
    limit: Option<i64>,
) -> Result<Option<Vec<ConversationEvent>>> {
    let exists = conn
        .prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
        .query_row([session_id], |_| Ok(()))
        .optional()?
        .is_some();
    if !exists {
        return Ok(None);
    }
    let events = events_where(
        conn,
        "WHERE session_id IN (
             WITH RECURSIVE chain(id, parent, depth) AS (
                 SELECT id, parent_session_id, 0 FROM sessions WHERE id = ?1
                 UNION
                 SELECT s.id, s.parent_session_id, c.depth + 1
                 FROM sessions s JOIN chain c ON s.id = c.parent
                 WHERE c.depth < ?4
             )
             SELECT id FROM chain)
           AND sequence > ?2
         ORDER BY sequence, id LIMIT ?3",
        params![
            session_id,
            after_sequence.unwrap_or(i64::MIN),
            limit.unwrap_or(-1),
            MAX_CHAIN_DEPTH
        ],
    )?;
    Ok(Some(events))
}

/// The events of one Claude session, ordered by sequence.
pub(crate) fn conversation_for_claude_session(
    conn: &Connection,
    claude_session_id: &str,
    after_sequence: Option<i64>,
    limit: Option<i64>,
) -> Result<Vec<ConversationEvent>> {
    events_where(
        conn,
        "WHERE claude_session_id = ?1 AND sequence > ?2 ORDER BY sequence, id LIMIT ?3",
        params![
            claude_session_id,
            after_sequence.unwrap_or(i64::MIN),
            limit.unwrap_or(-1)
        ],
    )
}

/// The raw stream lines of a session, in arrival order.
#[cfg(test)]
pub(crate) fn raw_events(conn: &Connection, session_id: &str) -> Result<Vec<String>> {
    let mut stmt =
        conn.prepare_cached("SELECT event_json FROM raw_events WHERE session_id = ?1 ORDER BY id")?;
    let lines = stmt
        .query_map([session_id], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(lines)
}

/// An `approvals` row (with `new.tool_use_id` the tool use it is linked to).
pub(super) struct StoredApproval {
    pub new: NewApproval,
    pub run_id: String,
    pub status: ApprovalStatus,
    pub comment: Option<String>,
    pub responded_at: Option<String>,
    /// The rule that decided it, when no person did.
    pub decided_by: Option<String>,
}

impl StoredApproval {
    /// The wire shape, with both the flat fields and the nested HumanLayer object.
    pub(super) fn into_wire(self) -> Approval {
        let StoredApproval {
            new:
                NewApproval {
                    id,
                    session_id,
                    kind,
                    source,
                    tool_name,
                    tool_input,
                    tool_use_id,
                    message,
                    subject,
                    requested_at,
                    timeout_at,
                },
            run_id,
            status,
            comment,
            responded_at,
            decided_by,
        } = self;
        let function_call = (kind == ApprovalType::FunctionCall).then(|| FunctionCall {
            run_id: run_id.clone(),
            call_id: id.clone(),
            spec: FunctionCallSpec {
                function: tool_name.clone().unwrap_or_default(),
                kwargs: tool_input
                    .clone()
                    .unwrap_or_else(|| Value::Object(Map::new())),
            },
            status: Some(FunctionCallStatus {
                requested_at: Some(requested_at.clone()),
                responded_at: responded_at.clone(),
                approved: match status {
                    ApprovalStatus::Approved => Some(true),
                    ApprovalStatus::Denied => Some(false),
                    // Pending, answered, resolved elsewhere: neither approved nor denied.
                    _ => None,
                },
                comment: comment.clone(),
            }),
        });
        let human_contact = (kind == ApprovalType::HumanContact).then(|| HumanContact {
            run_id: run_id.clone(),
            call_id: id.clone(),
            spec: HumanContactSpec {
                msg: message.clone().unwrap_or_default(),
                subject,
            },
            status: Some(HumanContactStatus {
                requested_at: Some(requested_at.clone()),
                responded_at: responded_at.clone(),
                response: comment.clone(),
            }),
        });
        Approval {
            call_id: id.clone(),
            id,
            run_id,
            session_id,
            kind,
            status,
            source,
            function_name: tool_name,
            function_args: tool_input,
            message,
            tool_use_id,
            requested_at,
            timeout_at,
            responded_at,
            comment,
            decided_by,
            function_call,
            human_contact,
        }
    }
}

/// Maps an `approvals` row selected with `APPROVAL_COLUMNS` to the wire shape.
fn approval_from_row(row: &Row<'_>) -> rusqlite::Result<Approval> {
    Ok(StoredApproval {
        new: NewApproval {
            id: row.get(0)?,
            session_id: row.get(1)?,
            kind: enum_col(row, 3, "approval type", parse_wire)?,
            source: enum_col(row, 14, "approval source", parse_wire)?,
            tool_name: row.get(5)?,
            tool_input: json_col(row, 6)?,
            tool_use_id: row.get(7)?,
            message: row.get(8)?,
            subject: row.get(9)?,
            requested_at: row.get(11)?,
            timeout_at: row.get(12)?,
        },
        run_id: row.get(2)?,
        status: enum_col(row, 4, "approval status", parse_wire)?,
        comment: row.get(10)?,
        responded_at: row.get(13)?,
        decided_by: row.get(15)?,
    }
    .into_wire())
}

/// The approvals a query of `approvals` (after its `FROM`) selects.
fn approvals_where(
    conn: &Connection,
    tail: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<Approval>> {
    let sql = format!("SELECT {APPROVAL_COLUMNS} FROM approvals {tail}");
    let mut stmt = conn.prepare_cached(&sql)?;
    let approvals = stmt.query_map(params, approval_from_row)?;
    Ok(approvals.collect::<rusqlite::Result<Vec<_>>>()?)
}

pub(crate) fn approval(conn: &Connection, id: &str) -> Result<Option<Approval>> {
    Ok(approvals_where(conn, "WHERE id = ?1", [id])?.pop())
}

/// Up to two approvals whose id (or id after `local-`) starts with `prefix`, newest first.
pub(crate) fn approvals_by_prefix(conn: &Connection, prefix: &str) -> Result<Vec<Approval>> {
    approvals_where(
        conn,
        "WHERE substr(id, 1, length(?1)) = ?1 OR substr(id, 1, length(?2)) = ?2
         ORDER BY requested_at DESC, rowid DESC LIMIT 2",
        [prefix, &format!("local-{prefix}")],
    )
}

/// Pending approvals, of one session or of all, oldest first.
pub(crate) fn pending_approvals(
    conn: &Connection,
    session_id: Option<&str>,
) -> Result<Vec<Approval>> {
    approvals_where(
        conn,
        "WHERE status = 'pending' AND (?1 IS NULL OR session_id = ?1)
         ORDER BY requested_at, rowid",
        [session_id],
    )
}
