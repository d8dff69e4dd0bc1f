//! What the database holds, for a debugging panel: its tables and the rows of the main ones.

use rusqlite::Connection;

use super::Result;

/// The tables counted in [`stats`], by the name they are reported under.
const COUNTED: [(&str, &str); 3] = [
    ("sessions", "sessions"),
    ("approvals", "approvals"),
    ("events", "conversation_events"),
];

/// The number of tables, and the rows of sessions, approvals and conversation events.
pub(crate) fn stats(conn: &Connection) -> Result<(i64, Vec<(&'static str, i64)>)> {
    let tables = conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'",
        [],
        |r| r.get(0),
    )?;
    let mut rows = Vec::new();
    for (name, table) in COUNTED {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        rows.push((name, conn.query_row(&sql, [], |r| r.get(0))?));
    }
    Ok((tables, rows))
}
