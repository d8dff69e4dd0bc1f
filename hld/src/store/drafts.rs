//! Writes of drafts: sessions a person composes before launching them. A draft is stored as a
//! `completed` session with no `completed_at` and its `draft` column set, so that nothing that
//! watches running sessions (recovery, limits, live processes) ever counts it.

use hld_client::protocol::{DraftFields, DraftState};
use rusqlite::params;

use super::error::{Result, StoreError};
use super::types::NewSession;
use super::writer::Writer;

/// The error message of a discarded draft, as upstream words it.
pub const DISCARDED: &str = "Draft session discarded";

impl Writer {
    /// Inserts a draft with the fields given.
    pub(crate) fn create_draft(
        &mut self,
        id: &str,
        run_id: &str,
        fields: &DraftFields,
    ) -> Result<()> {
        let now = crate::time::now();
        self.conn
            .prepare_cached(
                "INSERT INTO sessions (id, run_id, query, summary, initial_status, status,
                    created_at, last_activity_at, draft)
                 VALUES (?1, ?2, '', '', 'completed', 'completed', ?3, ?3, 'draft')",
            )?
            .execute(params![id, run_id, now])?;
        self.update_draft(id, fields)
    }

    /// Changes the fields given of a draft or discarded draft; an empty title or editor state
    /// clears it.
    pub(crate) fn update_draft(&mut self, id: &str, f: &DraftFields) -> Result<()> {
        let summary = f.query.as_deref().map(super::summarize);
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE sessions SET
                    working_dir = COALESCE(?2, working_dir),
                    query = COALESCE(?3, query),
                    summary = COALESCE(?4, summary),
                    title = CASE WHEN ?5 IS NULL THEN title ELSE NULLIF(?5, '') END,
                    model = CASE WHEN ?6 IS NULL THEN model ELSE NULLIF(?6, '') END,
                    auto_accept_edits = COALESCE(?7, auto_accept_edits),
                    dangerously_skip_permissions = COALESCE(?8, dangerously_skip_permissions),
                    editor_state = CASE WHEN ?9 IS NULL THEN editor_state
                        ELSE NULLIF(?9, '') END,
                    last_activity_at = ?10
                 WHERE id = ?1 AND draft IS NOT NULL",
            )?
            .execute(params![
                id,
                f.working_dir,
                f.query,
                summary,
                f.title,
                f.model,
                f.auto_accept_edits,
                f.dangerously_skip_permissions,
                f.editor_state,
                crate::time::now(),
            ])?;
        match changed {
            0 => Err(StoreError::SessionNotFound(id.to_owned())),
            _ => Ok(()),
        }
    }

    /// Moves a draft from `from` to `to`; false when it is not in `from`. A discard records
    /// [`DISCARDED`] as the error message.
    pub(crate) fn move_draft(
        &mut self,
        id: &str,
        from: &DraftState,
        to: &DraftState,
    ) -> Result<bool> {
        // The reason a discard gives stays when the draft is restored, as upstream keeps it.
        let reason = (*to == DraftState::Discarded).then_some(DISCARDED);
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE sessions SET draft = ?3, last_activity_at = ?4,
                    error_message = COALESCE(?5, error_message)
                 WHERE id = ?1 AND draft = ?2",
            )?
            .execute(params![
                id,
                from.as_str(),
                to.as_str(),
                crate::time::now(),
                reason
            ])?;
        Ok(changed == 1)
    }

    /// Replaces the draft `id` (still being composed) by the session `new` of the same id.
    pub(crate) fn launch_draft(&mut self, id: &str, new: &NewSession) -> Result<()> {
        let removed = self
            .conn
            .prepare_cached("DELETE FROM sessions WHERE id = ?1 AND draft = 'draft'")?
            .execute([id])?;
        if removed == 0 {
            return Err(StoreError::SessionNotFound(id.to_owned()));
        }
        self.create_session(new)
    }
}
