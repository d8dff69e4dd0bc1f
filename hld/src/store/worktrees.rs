//! The worktrees isolated sessions run in: made (`creating`, then `active`), merged, discarded.

use hld_client::protocol::{WorktreeInfo, WorktreeState};
use rusqlite::{params, Connection, OptionalExtension, Row};

use super::error::{Result, StoreError};
use super::writer::Writer;

/// The stored state of a worktree still being made: a daemon that stops before it is
/// `active` left it half-made, and the next start removes it.
pub const CREATING: &str = "creating";

/// A worktree row.
#[derive(Debug, Clone, PartialEq)]
pub struct WorktreeRow {
    pub id: String,
    pub info: WorktreeInfo,
    /// Still being made (`creating`): not yet usable.
    pub creating: bool,
}

const COLUMNS: &str = "id, repository, path, branch, base_branch, base_commit, state, setup_output";

fn from_row(row: &Row<'_>) -> rusqlite::Result<WorktreeRow> {
    let state: String = row.get(6)?;
    Ok(WorktreeRow {
        id: row.get(0)?,
        creating: state == CREATING,
        info: WorktreeInfo {
            repository: row.get(1)?,
            path: row.get(2)?,
            branch: row.get(3)?,
            base_branch: row.get(4)?,
            base_commit: row.get(5)?,
            // A half-made worktree is never shown as one that works.
            state: WorktreeState::parse(&state).unwrap_or(WorktreeState::Discarded),
            setup_output: row.get(7)?,
        },
    })
}

/// One worktree.
pub(crate) fn worktree(conn: &Connection, id: &str) -> Result<Option<WorktreeRow>> {
    let sql = format!("SELECT {COLUMNS} FROM worktrees WHERE id = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([id], from_row)
        .optional()?)
}

/// Every worktree not discarded, with how many sessions use it.
pub(crate) fn kept_worktrees(conn: &Connection) -> Result<Vec<(WorktreeRow, i64)>> {
    let sql = format!(
        "SELECT {COLUMNS}, (SELECT COUNT(*) FROM sessions s WHERE s.worktree_id = worktrees.id)
         FROM worktrees WHERE state != 'discarded' ORDER BY created_at"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([], |r| Ok((from_row(r)?, r.get(8)?)))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// The sessions working in a worktree, with their status.
pub(crate) fn sessions_using(conn: &Connection, id: &str) -> Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare_cached("SELECT id, status FROM sessions WHERE worktree_id = ?1")?;
    let rows = stmt.query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

impl Writer {
    /// Records a worktree about to be made (`creating`).
    pub(crate) fn create_worktree(&mut self, w: &WorktreeRow, created_at: &str) -> Result<()> {
        let i = &w.info;
        self.conn
            .prepare_cached(
                "INSERT INTO worktrees (id, repository, path, branch, base_branch, base_commit,
                    state, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'creating', ?7)",
            )?
            .execute(params![
                w.id,
                i.repository,
                i.path,
                i.branch,
                i.base_branch,
                i.base_commit,
                created_at
            ])?;
        Ok(())
    }

    /// Sets a worktree's state (and, when given, its setup command's output).
    pub(crate) fn set_worktree_state(
        &mut self,
        id: &str,
        state: &str,
        setup_output: Option<&str>,
    ) -> Result<()> {
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE worktrees SET state = ?2, setup_output = COALESCE(?3, setup_output)
                 WHERE id = ?1",
            )?
            .execute(params![id, state, setup_output])?;
        if changed == 0 {
            return Err(StoreError::SessionNotFound(id.into()));
        }
        Ok(())
    }

    /// Forgets a worktree that was never used (its making failed).
    pub(crate) fn delete_worktree(&mut self, id: &str) -> Result<()> {
        self.conn
            .prepare_cached("DELETE FROM worktrees WHERE id = ?1")?
            .execute([id])?;
        Ok(())
    }
}
