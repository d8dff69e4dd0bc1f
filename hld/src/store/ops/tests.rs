//! What one agent line writes to the database file, page by page: an agent's every line
//! updates its session, and each page a commit changes is one more frame in the WAL.

use super::super::*;
use crate::model::{Modes, SessionOptions};

/// The pages of the frames in the WAL at `path` (its header, then a header and a page each).
fn wal_pages(path: &Path) -> Vec<u32> {
    let wal = std::fs::read(path.with_extension("db-wal")).expect("the WAL");
    let word = |at: usize| u32::from_be_bytes(wal[at..at + 4].try_into().expect("4 bytes"));
    let frame = 24 + word(8) as usize;
    (32..wal.len()).step_by(frame).map(word).collect()
}

/// The root page of a table or index of the store, by name.
async fn root_page(store: &Store, name: &'static str) -> u32 {
    store
        .read(move |c| {
            let sql = "SELECT rootpage FROM sqlite_master WHERE name = ?1";
            Ok(c.query_row(sql, [name], |r| r.get(0))?)
        })
        .await
        .expect("a root page")
}

/// An assistant line as the session's actor stores it: the line, its message, and the
/// context the message reports.
fn line(text: &str) -> Ingest {
    let update = SessionUpdate {
        context: ContextTokens {
            effective_context_tokens: Some(1200),
            ..ContextTokens::default()
        },
        ..SessionUpdate::default()
    };
    Ingest {
        raw_lines: vec![format!("{{\"text\":\"{text}\"}}")],
        events: vec![NewEvent::message("claude-1", "assistant", text)],
        update: Some(update),
        ..Ingest::default()
    }
}

#[tokio::test]
async fn an_agent_line_rewrites_no_page_of_the_status_or_claude_id_indexes() {
    let (_dir, store) = Store::open_temp();
    let session = NewSession {
        id: "s1".into(),
        run_id: "r1".into(),
        parent_session_id: None,
        query: "hello".into(),
        summary: "hello".into(),
        options: SessionOptions::default(),
        created_at: crate::time::now(),
        title: None,
        modes: Modes::default(),
    };
    store
        .write(move |w, _| w.create_session(&session))
        .await
        .expect("created");
    let named = Ingest {
        update: Some(SessionUpdate {
            claude_session_id: Some("claude-1".into()),
            ..SessionUpdate::default()
        }),
        ..line("first")
    };
    store
        .write(|w, out| w.ingest("s1", named, out))
        .await
        .expect("first line");
    // The WAL emptied, it holds what the next line writes and nothing else.
    let conn = rusqlite::Connection::open(store.path()).expect("a connection");
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .expect("a busy timeout");
    let truncate = "PRAGMA wal_checkpoint(TRUNCATE)";
    let busy: i64 = conn
        .query_row(truncate, [], |r| r.get(0))
        .expect("checkpointed");
    assert_eq!(busy, 0, "the checkpoint could not complete");
    store
        .write(|w, out| w.ingest("s1", line("second"), out))
        .await
        .expect("second line");

    let written = wal_pages(store.path());
    let sessions = root_page(&store, "sessions").await;
    assert!(written.contains(&sessions), "{written:?} lacks {sessions}");
    for index in ["idx_sessions_status", "idx_sessions_claude"] {
        let root = root_page(&store, index).await;
        assert!(
            !written.contains(&root),
            "{index} (page {root}) in {written:?}"
        );
    }
}
