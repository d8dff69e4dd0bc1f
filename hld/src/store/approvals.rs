//! The approval write commands: creating (rule-decided or linked to its call), syncing, deciding.

use hld_client::protocol::{Approval, ApprovalStatus, ApprovalType, PermissionMode};
use rusqlite::{params, OptionalExtension};

use super::error::{Result, StoreError};
use super::ops::{
    event_approval_status, parse_status, to_json, CORRELATION_WINDOW, UNGATED_TOOL_CALL,
};

use super::read;
use super::types::{Change, NewApproval, SessionUpdate};
use super::writer::Writer;
use crate::model::{self as rules, Happening, Modes, Settled};

impl Writer {
    /// Inserts a pending approval and links the `tool_call` it gates: the one with its tool use
    /// id, else (function calls) the newest recent open, ungated one of that tool.
    pub(crate) fn create_approval(
        &mut self,
        a: &NewApproval,
        out: &mut Vec<Change>,
    ) -> Result<Approval> {
        if a.kind == ApprovalType::FunctionCall && a.tool_name.is_none() {
            return Err(StoreError::Invalid(
                "a function_call approval needs a tool_name".into(),
            ));
        }
        if a.kind == ApprovalType::HumanContact && a.message.is_none() {
            return Err(StoreError::Invalid(
                "a human_contact approval needs a message".into(),
            ));
        }
        let (run_id, session_status, modes) = self
            .conn
            .prepare_cached(
                "SELECT run_id, status, auto_accept_edits, dangerously_skip_permissions,
                    dangerously_skip_permissions_expires_at, permission_mode
                 FROM sessions WHERE id = ?1",
            )?
            .query_row([&a.session_id], |r| {
                let modes = Modes {
                    auto_accept_edits: r.get(2)?,
                    dangerously_skip_permissions: r.get(3)?,
                    bypass_expires_at: r.get(4)?,
                    permission_mode: PermissionMode::parse(&r.get::<_, String>(5)?)
                        .unwrap_or_default(),
                    ..Modes::default()
                };
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, modes))
            })
            .optional()?
            .ok_or_else(|| StoreError::SessionNotFound(a.session_id.clone()))?;
        let tool_use_id = match (&a.tool_use_id, &a.tool_name) {
            (Some(id), _) => Some(id.clone()),
            (None, Some(tool_name)) => self.ungated_tool_call(&a.session_id, tool_name)?,
            (None, None) => None,
        };
        // One that a session rule covers, or a cloud one of an ended session, is never pending.
        let now = crate::time::now();
        let session_status = parse_status(&a.session_id, &session_status)?;
        let settled = rules::on_creation(
            a.source,
            a.kind,
            a.tool_name.as_deref(),
            &session_status,
            &modes,
            &now,
        );
        let status = settled.map_or(ApprovalStatus::Pending, Settled::status);
        let comment = settled.map(|s| s.comment().to_owned());
        let responded_at = settled.map(|_| now.clone());
        let decided_by = settled.and_then(Settled::decided_by).map(str::to_owned);
        self.conn
            .prepare_cached(
                "INSERT INTO approvals (id, session_id, run_id, type, source, status, tool_name,
                    tool_input, tool_use_id, message, subject, requested_at, timeout_at,
                    comment, responded_at, decided_by)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            )?
            .execute(params![
                a.id,
                a.session_id,
                run_id,
                a.kind.as_str(),
                a.source.as_str(),
                status.as_str(),
                a.tool_name,
                to_json(a.tool_input.as_ref())?,
                tool_use_id,
                a.message,
                a.subject,
                a.requested_at,
                a.timeout_at,
                comment,
                responded_at,
                decided_by,
            ])?;
        if let Some(tool_use_id) = &tool_use_id {
            self.link_events(&a.session_id, tool_use_id, &a.id, status, &run_id, out)?;
        }
        // What was inserted, without reading it back.
        let approval = read::StoredApproval {
            new: NewApproval {
                tool_use_id,
                ..a.clone()
            },
            run_id,
            status,
            comment,
            responded_at,
            decided_by,
        }
        .into_wire();
        let pending = self.pending_approvals(if settled.is_some() { 0 } else { 1 })?;
        out.push(Change::Approval {
            approval: Box::new(approval.clone()),
            pending,
            created: true,
        });
        if settled.is_none() {
            self.wait_for_approval(&a.session_id, out)?;
        }
        Ok(approval)
    }

    /// A pending approval: the session waits for it (if the rules say so).
    fn wait_for_approval(&mut self, session_id: &str, out: &mut Vec<Change>) -> Result<()> {
        let requested = Happening::ApprovalRequested;
        self.advance(session_id, requested, &SessionUpdate::default(), out)?;
        Ok(())
    }

    /// Stores a fetched cloud approval if it is new, or retries linking a stored, pending,
    /// unlinked one (its tool call may have been stored since). True if it linked one.
    pub(crate) fn sync_cloud_approval(
        &mut self,
        a: &NewApproval,
        out: &mut Vec<Change>,
    ) -> Result<bool> {
        let Some(existing) = read::approval(&self.conn, &a.id)? else {
            self.create_approval(a, out)?;
            return Ok(false);
        };
        let unlinked = existing.status == ApprovalStatus::Pending
            && existing.kind == ApprovalType::FunctionCall
            && existing.tool_use_id.is_none()
            && existing.session_id == a.session_id;
        let found = match (&existing.function_name, unlinked) {
            (Some(tool_name), true) => self.ungated_tool_call(&existing.session_id, tool_name)?,
            _ => None,
        };
        let Some(tool_use_id) = found else {
            return Ok(false);
        };
        self.conn
            .prepare_cached("UPDATE approvals SET tool_use_id = ?2 WHERE id = ?1")?
            .execute([&a.id, &tool_use_id])?;
        let pending = ApprovalStatus::Pending;
        let (session, run) = (&existing.session_id, &existing.run_id);
        self.link_events(session, &tool_use_id, &a.id, pending, run, out)?;
        self.wait_for_approval(session, out)?;
        Ok(true)
    }

    /// The newest open, ungated `tool_call` of `tool_name` within [`CORRELATION_WINDOW`]: its id.
    fn ungated_tool_call(&self, session_id: &str, tool_name: &str) -> Result<Option<String>> {
        let since = (chrono::Utc::now() - CORRELATION_WINDOW)
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        Ok(self
            .conn
            .prepare_cached(UNGATED_TOOL_CALL)?
            .query_row(params![session_id, tool_name, since], |r| r.get(0))
            .optional()?)
    }

    /// Decides a pending approval and updates the `tool_call` event it gates.
    pub(crate) fn decide_approval(
        &mut self,
        id: &str,
        status: ApprovalStatus,
        comment: Option<&str>,
        decided_by: Option<&str>,
        out: &mut Vec<Change>,
    ) -> Result<Approval> {
        let current = read::approval(&self.conn, id)?
            .ok_or_else(|| StoreError::ApprovalNotFound(id.into()))?;
        if current.status != ApprovalStatus::Pending {
            return Err(StoreError::AlreadyDecided {
                id: id.into(),
                status: current.status,
            });
        }
        let fits = status == ApprovalStatus::Resolved
            || match current.kind {
                ApprovalType::FunctionCall => {
                    matches!(status, ApprovalStatus::Approved | ApprovalStatus::Denied)
                }
                ApprovalType::HumanContact => status == ApprovalStatus::Responded,
                // The daemon creates no kind it does not know: nothing fits one.
                _ => false,
            };
        if !fits {
            return Err(StoreError::Invalid(format!(
                "a {} approval cannot be decided as {}",
                current.kind.as_str(),
                status.as_str()
            )));
        }
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE approvals SET status = ?2, comment = ?3, responded_at = ?4,
                    decided_by = ?5
                 WHERE id = ?1 AND status = 'pending'",
            )?
            .execute(params![
                id,
                status.as_str(),
                comment,
                crate::time::now(),
                decided_by
            ])?;
        if changed != 1 {
            return Err(StoreError::AlreadyDecided {
                id: id.into(),
                status: current.status,
            });
        }
        let (session, run) = (&current.session_id, &current.run_id);
        if let Some(tool_use_id) = &current.tool_use_id {
            self.link_events(session, tool_use_id, id, status, run, out)?;
        }
        let approval = read::approval(&self.conn, id)?
            .ok_or_else(|| StoreError::ApprovalNotFound(id.into()))?;
        out.push(Change::Approval {
            approval: Box::new(approval.clone()),
            pending: self.pending_approvals(-1)?,
            created: false,
        });
        if status == ApprovalStatus::Approved
            && approval.function_name.as_deref() == Some(rules::EXIT_PLAN_MODE)
        {
            self.leave_plan_mode(session, out)?;
        }
        self.resume_if_unblocked(session, out)?;
        Ok(approval)
    }

    /// How many approvals of every session are pending, now that `change` more are. Counted
    /// once, then kept up to date: a count at each approval would grow with them.
    fn pending_approvals(&mut self, change: i64) -> Result<u64> {
        let count = match self.pending {
            Some(before) => before + change,
            // Counted after the write: the change is in it.
            None => self
                .conn
                .prepare_cached("SELECT COUNT(*) FROM approvals WHERE status = 'pending'")?
                .query_row([], |r| r.get(0))?,
        };
        self.pending = Some(count);
        Ok(u64::try_from(count).unwrap_or_default())
    }

    /// Sets `approval_status`/`approval_id` on the `tool_call` events of `tool_use_id`, as changes.
    fn link_events(
        &mut self,
        session_id: &str,
        tool_use_id: &str,
        approval_id: &str,
        status: ApprovalStatus,
        run_id: &str,
        out: &mut Vec<Change>,
    ) -> Result<()> {
        let ids = self
            .conn
            .prepare_cached(
                "UPDATE conversation_events SET approval_status = ?4, approval_id = ?3
                 WHERE session_id = ?1 AND tool_id = ?2 AND event_type = 'tool_call'
                 RETURNING id",
            )?
            .query_map(
                params![
                    session_id,
                    tool_use_id,
                    approval_id,
                    event_approval_status(status)
                ],
                |r| r.get::<_, i64>(0),
            )?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut events = ids
            .into_iter()
            .map(|id| read::event(&self.conn, id))
            .collect::<Result<Vec<_>>>()?;
        events.sort_by_key(|e| e.sequence);
        out.extend(events.into_iter().map(|event| Change::Conversation {
            run_id: run_id.to_owned(),
            event: Box::new(event),
        }));
        Ok(())
    }
}
