//! Usage limits in the store: the latest state of each window (one row per kind, whichever
//! session's `claude` reported it last), and the limit a session stopped on, which the
//! daemon may resume it after.

use hld_client::protocol::{RateLimitKind, RateLimitStatus, RateLimitWindow, UsageLimit};
use rusqlite::{params, Connection, OptionalExtension};

use super::error::Result;
use super::types::Change;
use super::writer::Writer;

impl Writer {
    /// Stores the windows `claude` reported for session `session_id` (run `run_id`); each that
    /// differs from the stored one (status, use or reset) is a change.
    pub(super) fn store_rate_limits(
        &mut self,
        session_id: &str,
        run_id: &str,
        windows: Vec<RateLimitWindow>,
        out: &mut Vec<Change>,
    ) -> Result<()> {
        for window in windows {
            let kind = window.kind.as_str();
            let stored = rate_limit(&self.conn, kind)?;
            let same = stored.is_some_and(|s| {
                s.status == window.status
                    && s.utilization == window.utilization
                    && s.resets_at == window.resets_at
            });
            if same {
                continue;
            }
            self.conn
                .prepare_cached(
                    "INSERT INTO rate_limit_windows
                        (kind, status, utilization, resets_at, updated_at, session_id)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT (kind) DO UPDATE SET status = ?2, utilization = ?3,
                        resets_at = ?4, updated_at = ?5, session_id = ?6",
                )?
                .execute(params![
                    kind,
                    window.status.as_str(),
                    window.utilization,
                    window.resets_at,
                    window.updated_at,
                    session_id
                ])?;
            out.push(Change::RateLimit {
                session_id: session_id.to_owned(),
                run_id: run_id.to_owned(),
                window: Box::new(window),
            });
        }
        Ok(())
    }

    /// Records the usage limit a session's turn stopped on; without a reset time of its own
    /// it takes the stored window's.
    pub(super) fn set_usage_limit(&mut self, session_id: &str, limit: &UsageLimit) -> Result<()> {
        let kind = limit.kind.as_str();
        let resets_at = match &limit.resets_at {
            Some(at) => Some(at.clone()),
            None => rate_limit(&self.conn, kind)?.and_then(|w| w.resets_at),
        };
        self.conn
            .prepare_cached(
                "UPDATE sessions SET usage_limit_kind = ?2, usage_limit_resets_at = ?3
                 WHERE id = ?1",
            )?
            .execute(params![session_id, kind, resets_at])?;
        Ok(())
    }
}

/// The stored window of `kind`.
fn rate_limit(conn: &Connection, kind: &str) -> Result<Option<RateLimitWindow>> {
    Ok(conn
        .prepare_cached(
            "SELECT kind, status, utilization, resets_at, updated_at FROM rate_limit_windows
             WHERE kind = ?1",
        )?
        .query_row([kind], window_from_row)
        .optional()?)
}

fn window_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RateLimitWindow> {
    Ok(RateLimitWindow {
        kind: RateLimitKind::from(row.get::<_, String>(0)?.as_str()),
        status: RateLimitStatus::from(row.get::<_, String>(1)?.as_str()),
        utilization: row.get(2)?,
        resets_at: row.get(3)?,
        updated_at: row.get(4)?,
    })
}

/// Every stored window, by kind.
pub(crate) fn rate_limits(conn: &Connection) -> Result<Vec<RateLimitWindow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT kind, status, utilization, resets_at, updated_at FROM rate_limit_windows
         ORDER BY kind",
    )?;
    let windows = stmt
        .query_map([], window_from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(windows)
}

/// The sessions to resume when their limit resets: stopped by one with a known reset,
/// `resume_on_reset` on, resumable (a Claude session to `--resume`), and not continued since
/// (the continuation carries the work on). `(id, resets_at)`, earliest first.
pub(crate) fn limit_resets(conn: &Connection) -> Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.id, s.usage_limit_resets_at FROM sessions s
         WHERE s.usage_limit_resets_at IS NOT NULL AND s.resume_on_reset = 1
            AND s.status = 'failed' AND s.claude_session_id IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM sessions c
                WHERE c.parent_session_id = s.id AND c.created_at >= s.completed_at)
         ORDER BY s.usage_limit_resets_at, s.id",
    )?;
    let due = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(due)
}

#[cfg(test)]
mod tests;
