//! What each turn cost: one `usage_turns` row per turn and model, written with the turn's
//! `result`, and read back for `getUsage` with the session's working directory.

use rusqlite::{params, Connection};

use super::error::Result;
use super::writer::Writer;

/// One model's share of one turn: the turn's own tokens and cost, not a process's totals.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnUsage {
    /// The model id as Claude Code names it; empty when it named none (the session's model
    /// stands in when read).
    pub model: String,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_creation_input_tokens: i64,
    pub cache_read_input_tokens: i64,
    pub cost_usd: f64,
}

/// A stored row, with what `getUsage` groups by.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageRecord {
    pub session_id: String,
    /// The turn's number in its session: the rows of one turn share it.
    pub turn: i64,
    /// When the turn's `result` was stored, RFC 3339 UTC.
    pub ended_at: String,
    /// The session's directory; an isolated session's as in its repository's checkout, so
    /// that its worktree counts with the repository.
    pub working_dir: Option<String>,
    /// Its model (empty when neither Claude Code nor the session named one) and figures.
    pub usage: TurnUsage,
}

impl Writer {
    /// Stores the rows of one turn of `session_id` that ended `now`, numbered after its last.
    pub(super) fn record_usage(
        &mut self,
        session_id: &str,
        rows: &[TurnUsage],
        now: &str,
    ) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let turn: i64 = self
            .conn
            .prepare_cached(
                "SELECT COALESCE(MAX(turn), 0) + 1 FROM usage_turns WHERE session_id = ?1",
            )?
            .query_row([session_id], |r| r.get(0))?;
        let mut insert = self.conn.prepare_cached(
            "INSERT INTO usage_turns (session_id, turn, ended_at, model, input_tokens,
                output_tokens, cache_creation_input_tokens, cache_read_input_tokens, cost_usd)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
        for row in rows {
            insert.execute(params![
                session_id,
                turn,
                now,
                row.model,
                row.input_tokens,
                row.output_tokens,
                row.cache_creation_input_tokens,
                row.cache_read_input_tokens,
                row.cost_usd,
            ])?;
        }
        Ok(())
    }
}

/// Every row of the turns that ended at or after `since` (RFC 3339 UTC as stored; `None`: all),
/// oldest first.
pub fn records(conn: &Connection, since: Option<&str>) -> Result<Vec<UsageRecord>> {
    let mut stmt = conn.prepare_cached(
        "SELECT u.session_id, u.turn, u.ended_at,
            CASE WHEN s.working_dir = w.path THEN w.repository
                WHEN substr(s.working_dir, 1, length(w.path) + 1) = w.path || '/'
                THEN w.repository || substr(s.working_dir, length(w.path) + 1)
                ELSE s.working_dir END,
            COALESCE(NULLIF(u.model, ''), s.model, ''), u.input_tokens, u.output_tokens,
            u.cache_creation_input_tokens, u.cache_read_input_tokens, u.cost_usd
         FROM usage_turns u JOIN sessions s ON s.id = u.session_id
            LEFT JOIN worktrees w ON w.id = s.worktree_id
         WHERE ?1 IS NULL OR u.ended_at >= ?1
         ORDER BY u.ended_at, u.id",
    )?;
    let rows = stmt.query_map([since], |r| {
        Ok(UsageRecord {
            session_id: r.get(0)?,
            turn: r.get(1)?,
            ended_at: r.get(2)?,
            working_dir: r.get(3)?,
            usage: TurnUsage {
                model: r.get(4)?,
                input_tokens: r.get(5)?,
                output_tokens: r.get(6)?,
                cache_creation_input_tokens: r.get(7)?,
                cache_read_input_tokens: r.get(8)?,
                cost_usd: r.get(9)?,
            },
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Ingest, Store};

    fn figures(model: &str, input_tokens: i64, cost_usd: f64) -> TurnUsage {
        TurnUsage {
            model: model.to_owned(),
            input_tokens,
            output_tokens: 2,
            cache_creation_input_tokens: 3,
            cache_read_input_tokens: 4,
            cost_usd,
        }
    }

    #[tokio::test]
    async fn usage_of_sessions_stored_before_counts_once_then_each_turn() {
        let (_dir, path, conn) = super::super::tests::old_database(11);
        conn.execute_batch(
            "INSERT INTO sessions (id, run_id, query, model, working_dir, initial_status, status,
                created_at, last_activity_at, completed_at, cost_usd, input_tokens,
                output_tokens, cache_creation_input_tokens, cache_read_input_tokens)
             VALUES ('ran', 'run-ran', 'q', 'sonnet', '/w', 'starting', 'completed',
                '2026-11-01T10:00:00.000Z', '2026-11-01T10:05:00.000Z',
                '2026-11-01T10:04:00.000Z', 0.5, 10, 2, 3, 4),
             ('never', 'run-never', 'q', NULL, '/w', 'starting', 'failed',
                '2026-11-01T11:00:00.000Z', '2026-11-01T11:00:00.000Z', NULL, NULL, NULL,
                NULL, NULL, NULL)",
        )
        .unwrap();
        drop(conn);
        let store = Store::open(&path).unwrap();
        // A turn after the upgrade; its model unnamed, so the session's stands in.
        let turn = Ingest {
            usage: vec![figures("", 7, 0.25), figures("haiku", 1, 0.125)],
            ..Ingest::default()
        };
        (store.write(move |w, out| w.ingest("ran", turn, out)))
            .await
            .unwrap();
        let all = store.read(|c| records(c, None)).await.unwrap();
        let seen: Vec<(i64, &str, &str, i64, f64)> = all
            .iter()
            .map(|r| {
                let u = &r.usage;
                (
                    r.turn,
                    r.session_id.as_str(),
                    u.model.as_str(),
                    u.input_tokens,
                    u.cost_usd,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (1, "ran", "sonnet", 10, 0.5),
                (2, "ran", "sonnet", 7, 0.25),
                (2, "ran", "haiku", 1, 0.125)
            ]
        );
        assert_eq!(all[0].ended_at, "2026-11-01T10:04:00.000Z");
        assert_eq!(all[0].working_dir.as_deref(), Some("/w"));
        assert_eq!(all[0].usage, figures("sonnet", 10, 0.5));

        let since = "2026-11-02T00:00:00.000Z";
        let later = store.read(move |c| records(c, Some(since))).await.unwrap();
        assert_eq!(later.len(), 2);
        assert!(later.iter().all(|r| r.turn == 2));

        // A deleted session's turns go with it.
        store.write(|w, _| w.delete_session("ran")).await.unwrap();
        assert!(store.read(|c| records(c, None)).await.unwrap().is_empty());
    }
}
