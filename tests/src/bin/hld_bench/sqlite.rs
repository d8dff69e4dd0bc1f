//! SQLite outside the daemon: databases in the daemon's own schema (created by
//! `hld::store::Store::open`) filled fast with rusqlite, and the raw baselines of the ingest,
//! history and search figures.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use hld_client::protocol::{
    ConversationEvent, ConversationEventType, GetConversationResult, SessionControl, SessionInfo,
    SessionResult, SessionStatus, SessionsResult,
};
use rusqlite::{params, Connection};

/// Rows per transaction when filling a database.
const FILL_BATCH: usize = 100_000;

/// The Claude session id every stored event carries (36 characters, like a real one).
pub const CLAUDE_SESSION: &str = "00000000-0000-4000-8000-000000000000";

/// Creates an empty database in the daemon's schema, closed cleanly.
pub fn create(path: &Path) -> anyhow::Result<()> {
    let store = hld::store::Store::open(path).context("create the schema")?;
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(store.close())?;
    Ok(())
}

/// A connection with the daemon's pragmas (WAL is a property of the file already).
fn open(path: &Path) -> anyhow::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", true)?;
    Ok(conn)
}

/// The id of session `i` of a filled database (a UUID-shaped string).
pub fn session_id(i: usize) -> String {
    format!("00000000-0000-4000-8000-{i:012}")
}

/// Creates a database holding `sessions` completed sessions with `per_session` message events
/// each (200-byte contents), written interleaved (event 1 of every session, then event 2, …) as
/// live sessions would write them.
pub fn fill(path: &Path, sessions: usize, per_session: usize) -> anyhow::Result<()> {
    create(path)?;
    let mut conn = open(path)?;
    conn.pragma_update(None, "cache_size", -262_144)?;
    let now = hld::time::now();
    let tx = conn.transaction()?;
    {
        let mut stmt = tx.prepare(
            "INSERT INTO sessions (id, run_id, claude_session_id, query, summary, model,
                working_dir, initial_status, status, created_at, last_activity_at, completed_at)
             VALUES (?1, ?2, ?3, 'benchmark', 'benchmark', 'claude-bench', '/tmp', 'starting',
                'completed', ?4, ?4, ?4)",
        )?;
        for i in 0..sessions {
            stmt.execute(params![
                session_id(i),
                format!("run-{i}"),
                CLAUDE_SESSION,
                now
            ])?;
        }
    }
    tx.commit()?;
    let content = "x".repeat(200);
    let mut rows = 0;
    let mut tx = conn.transaction()?;
    for seq in 1..=per_session as i64 {
        for i in 0..sessions {
            tx.prepare_cached(
                "INSERT INTO conversation_events (session_id, claude_session_id, sequence,
                    event_type, created_at, role, content)
                 VALUES (?1, ?2, ?3, 'message', ?4, 'assistant', ?5)",
            )?
            .execute(params![session_id(i), CLAUDE_SESSION, seq, now, content])?;
            rows += 1;
            if rows % FILL_BATCH == 0 {
                tx.commit()?;
                tx = conn.transaction()?;
            }
        }
    }
    tx.commit()?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    Ok(())
}

/// A stream-json `assistant` line shaped like the ones `fake-claude` prints.
pub fn assistant_line(i: u64) -> String {
    format!(
        r#"{{"type":"assistant","message":{{"id":"msg_01tSQd9bFLzy0edcXATub471","type":"message","role":"assistant","model":"claude-opus-4-8[1m]","content":[{{"type":"text","text":"line {i}"}}],"stop_reason":null,"stop_sequence":null,"usage":{{"input_tokens":4,"cache_creation_input_tokens":15873,"cache_read_input_tokens":0,"output_tokens":2,"service_tier":"standard"}},"context_management":null}},"parent_tool_use_id":null,"session_id":"{CLAUDE_SESSION}","uuid":"df9dfb88-d101-441d-b091-defd8a69e460","request_id":"req_011CVmh23sV76XsfoFfMFY"}}"#
    )
}

/// The ingest baseline: `lines` stream lines stored as the daemon stores them (the raw line,
/// its conversation event, the session's activity time), `batch` lines per transaction, with
/// the daemon's pragmas and statements but no parsing and no process in between. Returns the
/// events stored per second.
pub fn raw_ingest(path: &Path, lines: u64, batch: u64) -> anyhow::Result<f64> {
    create(path)?;
    let mut conn = open(path)?;
    let session = session_id(0);
    let now = hld::time::now();
    conn.execute(
        "INSERT INTO sessions (id, run_id, query, initial_status, status, created_at,
            last_activity_at)
         VALUES (?1, 'run-0', 'benchmark', 'starting', 'running', ?2, ?2)",
        params![session, now],
    )?;
    let texts: Vec<String> = (1..=lines).map(assistant_line).collect();
    let started = Instant::now();
    let mut seq = 0i64;
    for chunk in texts.chunks(batch as usize) {
        let tx = conn.transaction()?;
        let now = hld::time::now();
        tx.prepare_cached("UPDATE sessions SET last_activity_at = ?2 WHERE id = ?1")?
            .execute(params![session, now])?;
        for line in chunk {
            seq += 1;
            tx.prepare_cached(
                "INSERT INTO raw_events (session_id, event_json, created_at) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![session, line, now])?;
            tx.prepare_cached(
                "INSERT INTO conversation_events (session_id, claude_session_id, sequence,
                    event_type, created_at, role, content, tool_id, tool_name, tool_input_json,
                    tool_result_for_id, tool_result_content, is_completed, is_error,
                    approval_status, approval_id, parent_tool_use_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 0, ?13, ?14, ?15,
                    ?16)",
            )?
            .execute(params![
                session,
                CLAUDE_SESSION,
                seq,
                "message",
                now,
                "assistant",
                format!("line {seq}"),
                None::<String>,
                None::<String>,
                None::<String>,
                None::<String>,
                None::<String>,
                false,
                None::<String>,
                None::<String>,
                None::<String>,
            ])?;
        }
        tx.commit()?;
    }
    Ok(lines as f64 / started.elapsed().as_secs_f64())
}

/// Counts the conversation events and raw lines stored for a session.
pub fn stored_counts(path: &Path, session: &str) -> anyhow::Result<(u64, u64)> {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let count = |table: &str| -> anyhow::Result<u64> {
        let n: i64 = conn.query_row(
            &format!("SELECT COUNT(*) FROM {table} WHERE session_id = ?1"),
            [session],
            |r| r.get(0),
        )?;
        Ok(n.try_into()?)
    };
    Ok((count("conversation_events")?, count("raw_events")?))
}

/// The history baseline: the raw SQL query of one session's events mapped to the wire struct,
/// then serialised as the `getConversation` result. Returns the time and the JSON size.
pub fn raw_history(conn: &Connection, session: &str) -> anyhow::Result<(Duration, usize)> {
    let started = Instant::now();
    let mut stmt = conn.prepare_cached(
        "SELECT id, session_id, claude_session_id, sequence, event_type, created_at, role,
            content, tool_id, tool_name, tool_input_json, tool_result_for_id,
            tool_result_content, is_completed, is_error, approval_status, approval_id,
            parent_tool_use_id, subtype
         FROM conversation_events WHERE session_id = ?1 ORDER BY sequence",
    )?;
    let events = stmt
        .query_map([session], |row| {
            let kind: String = row.get(4)?;
            Ok(ConversationEvent {
                id: row.get(0)?,
                session_id: row.get(1)?,
                claude_session_id: row.get(2)?,
                sequence: row.get(3)?,
                event_type: ConversationEventType::parse(&kind)
                    .unwrap_or(ConversationEventType::Message),
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
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let json = serde_json::to_vec(&GetConversationResult { events })?;
    Ok((started.elapsed(), json.len()))
}

/// A read connection for the history baseline.
pub fn reader(path: &Path) -> anyhow::Result<Connection> {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    Ok(conn)
}

/// The columns of a session that `searchSessions` sends.
const SEARCH_COLUMNS: &str = "id, run_id, claude_session_id, parent_session_id, status, \
    created_at, completed_at, last_activity_at, error_message, query, summary, model, \
    working_dir, result_content, result_is_error, duration_ms, num_turns, cost_usd, \
    interrupted, title, archived, auto_accept_edits, dangerously_skip_permissions, \
    dangerously_skip_permissions_expires_at, additional_directories";

/// How the search baseline orders its matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// `ORDER BY rowid DESC`: the most recently created first, as `searchSessions` lists them.
    Newest,
    /// `ORDER BY rank`: FTS5's BM25 relevance, as the FTS5 documentation writes it.
    Rank,
}

impl Order {
    /// The query: the first `?2` matches of the FTS5 expression `?1` in this order, joined to
    /// their sessions.
    fn sql(self) -> String {
        let (score, order) = match self {
            Order::Newest => ("", "hit DESC"),
            Order::Rank => (", rank", "rank"),
        };
        format!(
            "SELECT {SEARCH_COLUMNS} FROM sessions
             JOIN (SELECT rowid AS hit{score} FROM sessions_fts WHERE sessions_fts MATCH ?1
                   ORDER BY {order} LIMIT ?2) ON sessions.rowid = hit
             ORDER BY {order}"
        )
    }
}

/// The FTS5 expression hld searches for typed words: each word quoted, as a prefix.
pub fn fts_expression(words: &str) -> String {
    words
        .split_whitespace()
        .map(|w| format!("\"{}\"*", w.replace('"', "")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The search baseline: the best `limit` matches of `matching` in this order, rows mapped to
/// the wire struct, serialised as the `searchSessions` result. Returns the time, the ids found
/// (in order) and the JSON size.
pub fn raw_search(
    conn: &Connection,
    order: Order,
    matching: &str,
    limit: i64,
) -> anyhow::Result<(Duration, Vec<String>, usize)> {
    let started = Instant::now();
    let mut stmt = conn.prepare_cached(&order.sql())?;
    let sessions = stmt
        .query_map(params![matching, limit], |row| {
            let status: String = row.get(4)?;
            let status = SessionStatus::parse(&status).unwrap_or(SessionStatus::Failed);
            let query: String = row.get(9)?;
            let title: Option<String> = row.get(19)?;
            let directories: Option<String> = row.get(24)?;
            let (result_content, num_turns, cost_usd, duration_ms): (
                Option<String>,
                Option<i64>,
                Option<f64>,
                Option<i64>,
            ) = (row.get(13)?, row.get(16)?, row.get(17)?, row.get(15)?);
            let claude_session_id: Option<String> = row.get(2)?;
            let error: Option<String> = row.get(8)?;
            let is_error: Option<bool> = row.get(14)?;
            let has_result = result_content.is_some()
                || num_turns.is_some()
                || cost_usd.is_some()
                || duration_ms.is_some();
            Ok(SessionInfo {
                live: false,
                live_until: None,
                worktree: None,
                usage_limit: None,
                effective_context_tokens: None,
                context_limit: None,
                id: row.get(0)?,
                run_id: row.get(1)?,
                parent_session_id: row.get(3)?,
                status: status.clone(),
                interrupting: false,
                start_time: row.get(5)?,
                end_time: row.get(6)?,
                last_activity_at: row.get(7)?,
                summary: row.get(10)?,
                model: row.get(11)?,
                working_dir: row.get(12)?,
                result: has_result.then(|| SessionResult {
                    kind: "result".into(),
                    subtype: "session_completed".into(),
                    total_cost_usd: cost_usd.unwrap_or_default(),
                    is_error: is_error.unwrap_or(false) || status == SessionStatus::Failed,
                    duration_ms: duration_ms.unwrap_or_default(),
                    duration_api_ms: 0,
                    num_turns: num_turns.unwrap_or_default(),
                    result: result_content.clone().unwrap_or_default(),
                    session_id: claude_session_id.clone().unwrap_or_default(),
                    error: error.clone(),
                }),
                interrupted: row.get(18)?,
                cost_usd,
                control: SessionControl {
                    title: title
                        .unwrap_or_else(|| query.lines().next().unwrap_or("").trim().to_owned()),
                    archived: row.get(20)?,
                    auto_accept_edits: row.get(21)?,
                    dangerously_skip_permissions: row.get(22)?,
                    dangerously_skip_permissions_expires_at: row.get(23)?,
                    additional_directories: directories
                        .and_then(|d| serde_json::from_str(&d).ok())
                        .unwrap_or_default(),
                    permission_mode: Default::default(),
                    resume_on_reset: false,
                    draft: None,
                    editor_state: None,
                },
                query,
                claude_session_id,
                error,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let result = SessionsResult { sessions };
    let json = serde_json::to_vec(&result)?;
    let elapsed = started.elapsed();
    let ids = result.sessions.into_iter().map(|s| s.id).collect();
    Ok((elapsed, ids, json.len()))
}

/// How many sessions match the FTS5 expression.
pub fn search_matches(conn: &Connection, matching: &str) -> anyhow::Result<i64> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM sessions_fts WHERE sessions_fts MATCH ?1",
        [matching],
        |r| r.get(0),
    )?)
}
