//! Writes that organise sessions: titles, the archive, approval modes and expiry, deletion.

use hld_client::protocol::ApprovalStatus;
use rusqlite::{params, OptionalExtension};

use super::error::{Result, StoreError};
use super::read;
use super::types::Change;
use super::writer::Writer;
use crate::model::{self as rules, Modes};

impl Writer {
    /// Records the session's settings as changed.
    pub(super) fn settings_changed(
        &self,
        id: &str,
        expired: bool,
        out: &mut Vec<Change>,
    ) -> Result<()> {
        let session = Box::new(self.session_after(id)?);
        out.push(Change::Settings { session, expired });
        Ok(())
    }

    /// Sets a session's title; `None` clears it.
    pub(crate) fn set_title(
        &mut self,
        id: &str,
        title: Option<&str>,
        out: &mut Vec<Change>,
    ) -> Result<()> {
        let changed = self
            .conn
            .prepare_cached("UPDATE sessions SET title = ?2 WHERE id = ?1")?
            .execute(params![id, title])?;
        if changed == 0 {
            return Err(StoreError::SessionNotFound(id.into()));
        }
        self.settings_changed(id, false, out)
    }

    /// Archives or restores sessions. Returns the ids that name no session.
    pub(crate) fn set_archived(
        &mut self,
        ids: &[String],
        archived: bool,
        out: &mut Vec<Change>,
    ) -> Result<Vec<String>> {
        let mut missing = Vec::new();
        for id in ids {
            let before: Option<bool> = self
                .conn
                .prepare_cached("SELECT archived FROM sessions WHERE id = ?1")?
                .query_row([id], |r| r.get(0))
                .optional()?;
            match before {
                None => missing.push(id.clone()),
                Some(was) if was == archived => {}
                Some(_) => {
                    self.conn
                        .prepare_cached("UPDATE sessions SET archived = ?2 WHERE id = ?1")?
                        .execute(params![id, archived])?;
                    self.settings_changed(id, false, out)?;
                }
            }
        }
        Ok(missing)
    }

    /// Sets a session's modes (its permission mode apart: see `set_run_settings`),
    /// approving at once its pending local ones they cover.
    pub(crate) fn set_modes(
        &mut self,
        id: &str,
        modes: &Modes,
        out: &mut Vec<Change>,
    ) -> Result<()> {
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE sessions SET auto_accept_edits = ?2, dangerously_skip_permissions = ?3,
                    dangerously_skip_permissions_expires_at = ?4, resume_on_reset = ?5
                 WHERE id = ?1",
            )?
            .execute(params![
                id,
                modes.auto_accept_edits,
                modes.dangerously_skip_permissions,
                modes.bypass_expires_at,
                modes.resume_on_reset
            ])?;
        if changed == 0 {
            return Err(StoreError::SessionNotFound(id.into()));
        }
        self.settings_changed(id, false, out)?;
        let now = crate::time::now();
        let covered: Vec<(String, rules::Rule)> = read::pending_approvals(&self.conn, Some(id))?
            .into_iter()
            .filter(|a| a.source == hld_client::protocol::ApprovalSource::Local)
            .filter_map(|a| {
                rules::automatic(modes, a.kind, a.function_name.as_deref(), &now)
                    .map(|rule| (a.id, rule))
            })
            .collect();
        for (approval, rule) in covered {
            let (approved, comment) = (ApprovalStatus::Approved, Some(rule.comment()));
            self.decide_approval(&approval, approved, comment, Some(rule.name()), out)?;
        }
        Ok(())
    }

    /// Replaces a session's extra directories (`--add-dir`), used from its next start on.
    pub(crate) fn set_additional_directories(
        &mut self,
        id: &str,
        dirs: &[std::path::PathBuf],
        out: &mut Vec<Change>,
    ) -> Result<()> {
        let dirs = super::ops::to_json(Some(&dirs).filter(|d| !d.is_empty()))?;
        let changed = self
            .conn
            .prepare_cached("UPDATE sessions SET additional_directories = ?2 WHERE id = ?1")?
            .execute(params![id, dirs])?;
        if changed == 0 {
            return Err(StoreError::SessionNotFound(id.into()));
        }
        self.settings_changed(id, false, out)
    }

    /// Turns off every bypass whose expiry is not after `now`. Returns the sessions changed.
    pub(crate) fn expire_bypasses(
        &mut self,
        now: &str,
        out: &mut Vec<Change>,
    ) -> Result<Vec<String>> {
        let ids = self
            .conn
            .prepare_cached(
                "UPDATE sessions SET dangerously_skip_permissions = 0,
                    dangerously_skip_permissions_expires_at = NULL
                 WHERE dangerously_skip_permissions_expires_at IS NOT NULL
                    AND dangerously_skip_permissions_expires_at <= ?1
                 RETURNING id",
            )?
            .query_map([now], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for id in &ids {
            self.settings_changed(id, true, out)?;
        }
        Ok(ids)
    }

    /// Deletes a session not running, with all of it; its continuations keep their parent id.
    pub(crate) fn delete_session(&mut self, id: &str) -> Result<()> {
        let session = self.session_after(id)?;
        if session.status.is_active() {
            return Err(StoreError::SessionActive(id.into()));
        }
        for table in [
            "approvals",
            "conversation_events",
            "raw_events",
            "mcp_servers",
            "queued_messages",
            "usage_turns",
        ] {
            self.conn
                .prepare_cached(&format!("DELETE FROM {table} WHERE session_id = ?1"))?
                .execute([id])?;
        }
        self.conn
            .prepare_cached("DELETE FROM sessions WHERE id = ?1")?
            .execute([id])?;
        // A cloud approval may have been pending: count them again when next asked.
        self.pending = None;
        Ok(())
    }
}
