//! Tests of the store against real SQLite files in temporary directories.

use std::os::unix::fs::PermissionsExt;

use hld_client::protocol::{
    Approval, ApprovalSource, ApprovalStatus, ConversationEvent, ConversationEventType,
    SessionStatus,
};
use serde_json::json;

use super::*;
use crate::model::{Happening, Modes, SessionOptions};

/// A session created at `created_at`, with every optional field empty.
fn session(id: &str, created_at: &str) -> NewSession {
    NewSession {
        id: id.into(),
        run_id: format!("run-{id}"),
        parent_session_id: None,
        query: format!("query of {id}"),
        summary: summarize(&format!("query of {id}")),
        options: SessionOptions::default(),
        created_at: created_at.into(),
        title: None,
        modes: Modes::default(),
    }
}

fn messages(claude: &str, texts: &[&str]) -> Ingest {
    Ingest {
        raw_lines: texts
            .iter()
            .map(|t| format!("{{\"raw\":\"{t}\"}}"))
            .collect(),
        events: texts
            .iter()
            .map(|t| NewEvent::message(claude, "assistant", *t))
            .collect(),
        ..Ingest::default()
    }
}

fn tool_call(claude: &str, tool_id: &str, name: &str) -> NewEvent {
    NewEvent {
        role: Some("assistant".into()),
        tool_id: Some(tool_id.into()),
        tool_name: Some(name.into()),
        tool_input_json: Some(r#"{"command":"ls"}"#.into()),
        ..NewEvent::new(claude, ConversationEventType::ToolCall)
    }
}

fn tool_result(claude: &str, for_id: &str) -> NewEvent {
    NewEvent {
        role: Some("user".into()),
        tool_result_for_id: Some(for_id.into()),
        tool_result_content: Some("ok".into()),
        ..NewEvent::new(claude, ConversationEventType::ToolResult)
    }
}

fn one(event: NewEvent) -> Ingest {
    Ingest {
        events: vec![event],
        ..Ingest::default()
    }
}

fn sequences(events: &[hld_client::protocol::ConversationEvent]) -> Vec<i64> {
    events.iter().map(|e| e.sequence).collect()
}

/// What one write recorded, gathered for assertions.
#[derive(Debug, Default)]
struct Changed {
    /// Approvals stored or decided, each with the pending total after it.
    approvals: Vec<(Approval, u64)>,
    events: Vec<ConversationEvent>,
    /// Sessions that moved: the status before, and the row after.
    moves: Vec<(SessionStatus, SessionRow)>,
}

impl Changed {
    fn gather(changes: Vec<Change>) -> Changed {
        let mut c = Changed::default();
        for change in changes {
            match change {
                Change::Session {
                    old_status,
                    session,
                    ..
                } => c.moves.push((old_status, *session)),
                Change::Conversation { event, .. } => c.events.push(*event),
                Change::Approval {
                    approval, pending, ..
                } => c.approvals.push((*approval, pending)),
                _ => {}
            }
        }
        c
    }

    fn approval(&self) -> &Approval {
        &self.approvals[0].0
    }

    fn pending(&self) -> u64 {
        self.approvals.last().expect("an approval").1
    }

    /// The first session move, as (before, after).
    fn moved(&self) -> Option<(SessionStatus, SessionStatus)> {
        self.moves
            .first()
            .map(|(old, row)| (old.clone(), row.status.clone()))
    }
}

/// The writes as the tests call them: each returns what it recorded.
impl Store {
    async fn recorded<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Writer, &mut Vec<Change>) -> Result<T> + Send + 'static,
    ) -> Result<Changed> {
        let changes = self.write(move |w, out| {
            f(w, out)?;
            Ok(out.clone())
        });
        changes.await.map(Changed::gather)
    }

    async fn ingested(&self, id: &str, batch: Ingest) -> Result<Vec<ConversationEvent>> {
        let id = id.to_owned();
        let changed = self.recorded(move |w, out| w.ingest(&id, batch, out));
        Ok(changed.await?.events)
    }

    async fn advanced(
        &self,
        id: &str,
        happening: Happening,
        update: SessionUpdate,
    ) -> Result<Changed> {
        let id = id.to_owned();
        self.recorded(move |w, out| w.advance(&id, happening, &update, out))
            .await
    }

    async fn create(&self, new: NewApproval) -> Result<Changed> {
        self.recorded(move |w, out| w.create_approval(&new, out))
            .await
    }

    async fn decide(
        &self,
        id: &str,
        status: ApprovalStatus,
        comment: Option<&str>,
    ) -> Result<Changed> {
        let (id, comment) = (id.to_owned(), comment.map(str::to_owned));
        self.recorded(move |w, out| w.decide_approval(&id, status, comment.as_deref(), None, out))
            .await
    }

    async fn get_session(&self, id: &str) -> Result<Option<SessionRow>> {
        let id = id.to_owned();
        self.read(move |c| read::session(c, &id)).await
    }

    async fn get_approval(&self, id: &str) -> Result<Option<Approval>> {
        let id = id.to_owned();
        self.read(move |c| read::approval(c, &id)).await
    }
}

/// A raw connection to the file, to inspect or tamper with it.
fn raw(path: &Path) -> Connection {
    Connection::open(path).unwrap()
}

/// A fresh store holding one session, `s1`.
async fn open_with_session() -> (tempfile::TempDir, Store) {
    let (dir, store) = Store::open_temp();
    store
        .write(move |w, _| w.create_session(&session("s1", "2026-01-01T00:00:00.000Z")))
        .await
        .unwrap();
    (dir, store)
}

/// Puts a session in `status` whatever the rules say, to set up a test.
async fn force_status(store: &Store, id: &str, status: SessionStatus) {
    let id = id.to_owned();
    store
        .write(move |w, _| {
            w.conn.execute(
                "UPDATE sessions SET status = ?2 WHERE id = ?1",
                [id.as_str(), status.as_str()],
            )?;
            Ok(())
        })
        .await
        .unwrap();
}

/// A database migrated only up to `version`, as an older hld left it, and a raw connection.
pub(super) fn old_database(version: i64) -> (tempfile::TempDir, PathBuf, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hld.db");
    let mut conn = raw(&path);
    schema::migrate_up_to(&mut conn, version).unwrap();
    (dir, path, conn)
}

/// Queues at once (not when awaited) a command holding the writer until `release` fires, so
/// that commands sent meanwhile are applied together; put the releasing future last in `join!`.
fn hold_writer(
    store: &Store,
    release: std::sync::mpsc::Receiver<()>,
) -> impl Future<Output = Result<()>> {
    store.write(move |_, _| {
        let _ = release.recv_timeout(std::time::Duration::from_secs(10));
        Ok(())
    })
}

#[tokio::test]
async fn migrations_are_recorded_once_and_idempotent_on_reopen() {
    let (dir, store) = Store::open_temp();
    let path = store.path().to_owned();
    store.close().await.unwrap();
    drop(store);
    let store = Store::open(&path).unwrap();
    store.close().await.unwrap();
    let conn = raw(&path);
    let versions: Vec<(i64, String, String)> = conn
        .prepare("SELECT version, applied_at, description FROM schema_version ORDER BY version")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let numbers: Vec<i64> = versions.iter().map(|v| v.0).collect();
    // Each once and in order, from 1 to the latest.
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    assert_eq!(
        (numbers.first(), numbers.last()),
        (Some(&1), Some(&schema::latest_version()))
    );
    assert!(versions
        .iter()
        .all(|v| v.1.ends_with('Z') && !v.2.is_empty()));
    drop(dir);
}

#[tokio::test]
async fn a_newer_schema_is_refused_with_a_clear_error() {
    let (_dir, store) = Store::open_temp();
    let path = store.path().to_owned();
    store.close().await.unwrap();
    drop(store);
    raw(&path)
        .execute(
            "INSERT INTO schema_version (version, applied_at, description)
             VALUES (99, '2030-01-01T00:00:00.000Z', 'from the future')",
            [],
        )
        .unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::SchemaTooNew { found: 99, .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "database schema version 99 is newer than this hld supports ({})",
            schema::latest_version()
        )
    );
}

#[tokio::test]
async fn open_creates_a_private_directory_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/hld.db");
    let store = Store::open(&path).unwrap();
    let dir_mode = std::fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    let file_mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(dir_mode & 0o777, 0o700);
    assert_eq!(file_mode & 0o777, 0o600);
    store.close().await.unwrap();
}

#[tokio::test]
async fn a_second_store_on_the_database_is_refused_until_the_first_closes() {
    let (dir, store) = open_with_session().await;
    let path = dir.path().join("hld.db");
    let refused = Store::open(&path).unwrap_err();
    assert!(matches!(refused, StoreError::InUse(_)), "{refused:?}");
    assert!(
        refused.to_string().contains("in use by another hld"),
        "{refused}"
    );
    // The first store goes on; once it is closed, the database opens again.
    assert!(store.get_session("s1").await.unwrap().is_some());
    store.close().await.unwrap();
    let again = Store::open(&path).unwrap();
    assert!(again.get_session("s1").await.unwrap().is_some());
    again.close().await.unwrap();
}

#[tokio::test]
async fn a_session_moves_only_by_the_lifecycle_and_with_its_update() {
    let (_dir, store) = open_with_session().await;
    let started = SessionUpdate {
        claude_session_id: Some("c1".into()),
        ..SessionUpdate::default()
    };
    let change = store
        .advanced("s1", Happening::Started, started)
        .await
        .unwrap();
    let (old, row) = &change.moves[0];
    assert_eq!(
        (old, &row.status),
        (&SessionStatus::Starting, &SessionStatus::Running)
    );
    assert_eq!(row.claude_session_id.as_deref(), Some("c1"));
    assert!(row.last_activity_at > row.new.created_at);

    // A happening the rules ignore in this status writes nothing, its update neither.
    let ignored = SessionUpdate {
        cost_usd: Some(9.0),
        ..SessionUpdate::default()
    };
    let settled = Happening::ApprovalsSettled;
    assert!(store
        .advanced("s1", settled, ignored)
        .await
        .unwrap()
        .moves
        .is_empty());
    assert_eq!(
        store.get_session("s1").await.unwrap().unwrap().cost_usd,
        None
    );

    let ended = SessionUpdate {
        cost_usd: Some(0.25),
        ..SessionUpdate::default()
    };
    let exited = Happening::Exited { failed: false };
    let mut change = store.advanced("s1", exited, ended).await.unwrap();
    let (old, row) = change.moves.remove(0);
    assert_eq!(
        (old, &row.status),
        (SessionStatus::Running, &SessionStatus::Completed)
    );
    assert_eq!(row.cost_usd, Some(0.25));
    assert_eq!(
        row.claude_session_id.as_deref(),
        Some("c1"),
        "untouched fields stay"
    );
    assert_eq!(store.get_session("s1").await.unwrap(), Some(row));
    // A final status moves only by a new turn, through the same compare-and-set.
    let none = SessionUpdate::default;
    assert!(store
        .advanced("s1", Happening::Orphaned, none())
        .await
        .unwrap()
        .moves
        .is_empty());
    let turn = store
        .advanced("s1", Happening::NewTurn, none())
        .await
        .unwrap();
    assert_eq!(
        turn.moved(),
        Some((SessionStatus::Completed, SessionStatus::Running))
    );
    assert!(store
        .advanced("s1", Happening::NewTurn, none())
        .await
        .unwrap()
        .moves
        .is_empty());

    let err = store
        .advanced("ghost", Happening::Started, none())
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::SessionNotFound(ref id) if id == "ghost"),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "session not found: ghost");
}

#[tokio::test]
async fn a_failing_or_panicking_command_leaves_nothing_and_the_others_stand() {
    let (_dir, store) = open_with_session().await;
    // Held behind one command, these are applied in one transaction.
    let (release, gate) = std::sync::mpsc::channel();
    let held = hold_writer(&store, gate);
    let before = store.ingested("s1", messages("c", &["before"]));
    let failing = store.write(|w, out| {
        w.ingest("s1", messages("c", &["doomed"]), out)?;
        Err::<(), _>(StoreError::Invalid("deliberate".into()))
    });
    let panicking = store.write(|w, out| {
        w.ingest("s1", messages("c", &["doomed"]), out)?;
        panic!("deliberate");
    });
    let after = store.ingested("s1", messages("c", &["after"]));
    let (held, before, failing, panicking, after, ()) =
        tokio::join!(held, before, failing, panicking, after, async move {
            release.send(()).unwrap()
        });
    held.unwrap();
    assert!(
        matches!(failing, Err(StoreError::Invalid(_))),
        "{failing:?}"
    );
    assert!(
        matches!(panicking, Err::<(), _>(StoreError::Panicked)),
        "{panicking:?}"
    );
    // Nothing of either was kept, and their sequences are reused: no gap.
    assert_eq!(sequences(&before.unwrap()), [1]);
    assert_eq!(sequences(&after.unwrap()), [2]);
    let alive = store
        .ingested("s1", messages("c", &["alive"]))
        .await
        .unwrap();
    assert_eq!(sequences(&alive), [3]);
    assert_eq!(
        store
            .read(|c| read::raw_events(c, "s1"))
            .await
            .unwrap()
            .len(),
        3
    );
}

/// A session with one tool call `toolu_1` (sequence 1).
async fn session_with_tool_call(store: &Store) {
    store
        .write(move |w, _| w.create_session(&session("s1", "2026-01-01T00:00:00.000Z")))
        .await
        .unwrap();
    store
        .ingested("s1", one(tool_call("c1", "toolu_1", "Bash")))
        .await
        .unwrap();
}

/// A cloud function call `id` for session `s1`'s tool `tool`, without a tool use id.
fn cloud_call(id: &str, tool: &str) -> NewApproval {
    NewApproval {
        source: ApprovalSource::Cloud,
        ..NewApproval::function_call(id, "s1", tool, json!({"command": "ls"}), None)
    }
}

#[tokio::test]
async fn without_a_tool_use_id_the_newest_ungated_call_of_the_tool_is_linked() {
    let (_dir, store) = open_with_session().await;
    // toolu_1 (Bash) completed, toolu_2 (Bash) open, toolu_3 (Write), toolu_4 (Bash) open.
    let ingest = Ingest {
        events: vec![
            tool_call("c1", "toolu_1", "Bash"),
            tool_result("c1", "toolu_1"),
            tool_call("c1", "toolu_2", "Bash"),
            tool_call("c1", "toolu_3", "Write"),
            tool_call("c1", "toolu_4", "Bash"),
        ],
        ..Ingest::default()
    };
    store.ingested("s1", ingest).await.unwrap();

    let first = store.create(cloud_call("fc-1", "Bash")).await.unwrap();
    assert_eq!(first.approval().tool_use_id.as_deref(), Some("toolu_4"));
    assert_eq!(first.approval().source, ApprovalSource::Cloud);
    assert_eq!(
        store.get_approval("fc-1").await.unwrap().as_ref(),
        Some(first.approval())
    );
    assert_eq!(first.events.len(), 1);
    assert_eq!(first.events[0].tool_id.as_deref(), Some("toolu_4"));
    assert_eq!(first.events[0].approval_id.as_deref(), Some("fc-1"));
    assert_eq!(first.events[0].approval_status.as_deref(), Some("pending"));

    // The next one takes the newest call that is still ungated; then none is left.
    let second = store.create(cloud_call("fc-2", "Bash")).await.unwrap();
    assert_eq!(second.approval().tool_use_id.as_deref(), Some("toolu_2"));
    let third = store.create(cloud_call("fc-3", "Bash")).await.unwrap();
    assert_eq!(third.approval().tool_use_id, None);
    assert!(third.events.is_empty());
    let other = store.create(cloud_call("fc-4", "Edit")).await.unwrap();
    assert_eq!(other.approval().tool_use_id, None);

    // Deciding goes through the link found by name.
    let denied = store
        .decide("fc-1", ApprovalStatus::Denied, Some("no"))
        .await
        .unwrap();
    assert_eq!(denied.events[0].tool_id.as_deref(), Some("toolu_4"));
    assert_eq!(denied.events[0].approval_status.as_deref(), Some("denied"));
}

#[tokio::test]
async fn a_tool_call_older_than_the_correlation_window_is_not_linked() {
    let (_dir, store) = Store::open_temp();
    session_with_tool_call(&store).await;
    let old = (chrono::Utc::now() - CORRELATION_WINDOW - chrono::Duration::seconds(1))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    store
        .write(move |w, _| {
            w.conn.execute(
                "UPDATE conversation_events SET created_at = ?1 WHERE tool_id = 'toolu_1'",
                [&old],
            )?;
            Ok(())
        })
        .await
        .unwrap();
    let change = store.create(cloud_call("fc-1", "Bash")).await.unwrap();
    assert_eq!(change.approval().tool_use_id, None);
    assert!(change.events.is_empty());
}

#[tokio::test]
async fn a_running_session_waits_while_any_of_its_approvals_is_pending() {
    let (_dir, store) = open_with_session().await;
    force_status(&store, "s1", SessionStatus::Running).await;
    let (running, waiting) = (SessionStatus::Running, SessionStatus::WaitingInput);
    let wait = Some((running.clone(), waiting.clone()));
    // Each approval asked (true) or answered, the move its write stores, and the status after.
    let steps = [
        ("local-1", true, wait.clone(), &waiting),
        ("local-2", true, None, &waiting),
        ("local-1", false, None, &waiting),
        (
            "local-2",
            false,
            Some((waiting.clone(), running.clone())),
            &running,
        ),
        ("local-3", true, wait, &waiting),
    ];
    for (id, ask, moved, status) in steps {
        let change = if ask {
            store
                .create(NewApproval::human_contact(id, "s1", "Go on?"))
                .await
        } else {
            store
                .decide(id, ApprovalStatus::Responded, Some("yes"))
                .await
        };
        assert_eq!(change.unwrap().moved(), moved, "{id}");
        let now = store.get_session("s1").await.unwrap().unwrap().status;
        assert_eq!(&now, status, "{id}");
    }
}

/// The scheduling policy of each of this process's threads named `name` (field 41 of `stat`).
fn policies_of(name: &str) -> Vec<u32> {
    let tasks = std::fs::read_dir("/proc/self/task").unwrap();
    let named = tasks.flatten().filter(|task| {
        std::fs::read_to_string(task.path().join("comm")).is_ok_and(|comm| comm.trim() == name)
    });
    let stats = named.filter_map(|task| std::fs::read_to_string(task.path().join("stat")).ok());
    // The fields after the command's closing parenthesis start at field 3.
    stats
        .filter_map(|stat| {
            stat.rsplit_once(") ")?
                .1
                .split(' ')
                .nth(41 - 3)?
                .parse()
                .ok()
        })
        .collect()
}

#[tokio::test]
async fn checkpoints_run_on_a_thread_at_idle_priority() {
    const SCHED_IDLE: u32 = 5;
    let (_dir, _store) = Store::open_temp();
    // The thread sets its policy as it starts; other tests' stores have threads of their own.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !policies_of("hld-checkpoint").contains(&SCHED_IDLE) {
        assert!(
            std::time::Instant::now() < deadline,
            "no checkpoint thread at SCHED_IDLE: {:?}",
            policies_of("hld-checkpoint")
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(!policies_of("hld-store-writer").contains(&SCHED_IDLE));
}

#[tokio::test]
async fn the_wal_is_checkpointed_as_it_grows() {
    let (_dir, store) = Store::open_temp();
    let page_size: u32 = raw(store.path())
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    let threshold = 1000 * u64::from(page_size);
    // Forty pages of query text per session: five times the checkpoint threshold in all.
    let text = "q".repeat(40 * usize::try_from(page_size).unwrap());
    for i in 0..125 {
        let new = NewSession {
            query: text.clone(),
            ..session(&format!("s{i}"), "2026-01-01T00:00:00.000Z")
        };
        store
            .write(move |w, _| w.create_session(&new))
            .await
            .unwrap();
    }
    // The checkpointer copies the WAL into the database while the store stays open.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let copied = || std::fs::metadata(store.path()).unwrap().len() >= 4 * threshold;
    while !copied() {
        assert!(
            std::time::Instant::now() < deadline,
            "the WAL was never checkpointed into the database"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let sessions = store.read(read::list_sessions).await.unwrap();
    assert_eq!(sessions.len(), 125);
    assert!(sessions.iter().all(|s| s.new.query == text));
}

#[tokio::test]
async fn the_pending_total_follows_every_change_and_forgets_rolled_back_ones() {
    let (_dir, store) = open_with_session().await;
    let create = |id: &'static str| {
        store.create(NewApproval::function_call(
            id,
            "s1",
            "Bash",
            json!({}),
            None,
        ))
    };
    assert_eq!(create("a1").await.unwrap().pending(), 1);
    assert_eq!(create("a2").await.unwrap().pending(), 2);
    let decided = store
        .decide("a1", ApprovalStatus::Approved, None)
        .await
        .unwrap();
    assert_eq!(decided.pending(), 1);
    // A transaction that adds an approval and then fails leaves the total as it was.
    let failed = store
        .write(|w, out| {
            let new = NewApproval::function_call("a3", "s1", "Bash", json!({}), None);
            w.create_approval(&new, out)?;
            Err::<(), _>(StoreError::Invalid("changed my mind".into()))
        })
        .await;
    assert!(failed.is_err());
    assert_eq!(create("a4").await.unwrap().pending(), 2);
    // Resolving one, as the end of its session does, lowers it too.
    let ended = store
        .decide("a2", ApprovalStatus::Resolved, None)
        .await
        .unwrap();
    assert_eq!(ended.pending(), 1);
    assert_eq!(
        store
            .read(|c| read::pending_approvals(c, None))
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_version_1_database_keeps_every_row_through_every_migration() {
    let (_dir, path, conn) = old_database(1);
    conn.execute_batch(
        "INSERT INTO sessions (id, run_id, query, summary, initial_status, status, created_at,
            last_activity_at)
         VALUES ('p', 'run-p', 'fix the flaky parser test', 'fix the flaky parser test',
            'starting', 'running', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
         INSERT INTO sessions (id, run_id, parent_session_id, query, initial_status, status,
            created_at, last_activity_at)
         VALUES ('c', 'run-c', 'p', 'and the lexer', 'starting', 'completed',
            '2026-01-01T00:01:00.000Z', '2026-01-01T00:01:00.000Z');
         INSERT INTO approvals (id, session_id, run_id, type, status, tool_name, tool_input,
            requested_at)
         VALUES ('local-1', 'p', 'run-p', 'function_call', 'pending', 'Bash', '{}',
            '2026-01-01T00:00:01.000Z');
         INSERT INTO conversation_events (session_id, sequence, event_type, created_at, role,
            content, tool_id)
         VALUES ('p', 1, 'message', '2026-01-01T00:00:01.000Z', 'user', 'hi', NULL),
            ('p', 2, 'tool_call', '2026-01-01T00:00:02.000Z', 'assistant', NULL, 'toolu_1'),
            ('p', 3, 'message', '2026-01-01T00:00:03.000Z', 'assistant', 'gone', NULL);
         DELETE FROM conversation_events WHERE sequence = 3;",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    let parent = store.get_session("p").await.unwrap().unwrap();
    assert_eq!(parent.title(), "fix the flaky parser test");
    assert!(!parent.archived && parent.new.modes == Modes::default());
    // Its approval is a local one, and the rebuilt table accepts the new status.
    let a = store.get_approval("local-1").await.unwrap().unwrap();
    assert_eq!(
        (a.source, a.status),
        (ApprovalSource::Local, ApprovalStatus::Pending)
    );
    let resolved = store
        .decide("local-1", ApprovalStatus::Resolved, None)
        .await;
    assert_eq!(
        resolved.unwrap().approval().status,
        ApprovalStatus::Resolved
    );
    // Events keep their ids, the deleted one is not reused, and the tool index finds the call.
    let done = store.ingested("p", one(tool_result("c1", "toolu_1"))).await;
    let done = done.unwrap();
    assert_eq!((done[0].id, done[0].sequence), (4, 3));
    let events = store
        .read(|c| read::conversation_for_session(c, "p", None, None))
        .await
        .unwrap();
    let events = events.unwrap();
    let ids: Vec<_> = events.iter().map(|e| (e.id, e.sequence)).collect();
    assert_eq!(ids, [(1, 1), (2, 2), (4, 3)]);
    assert!(events[1].is_completed);
    // Rows from before the migration are in the search index, as later ones are.
    let found = store
        .read(|c| read::search(c, "\"flak\"*", 10))
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    // The parent goes with its events; its child stays, naming it.
    force_status(&store, "p", SessionStatus::Completed).await;
    store.write(|w, _| w.delete_session("p")).await.unwrap();
    let child = store.get_session("c").await.unwrap().unwrap();
    assert_eq!(child.new.parent_session_id.as_deref(), Some("p"));
    let conn = raw(&path);
    let check = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, String>(0)).unwrap();
    assert_eq!(check("PRAGMA integrity_check"), "ok");
    let bogus = "INSERT INTO conversation_events (session_id, sequence, event_type, created_at)
        VALUES ('c', 9, 'bogus', 'now')";
    assert!(conn.execute(bogus, []).is_err(), "the CHECK still holds");
    store.close().await.unwrap();
}

/// A sink that keeps the text of every conversation event it is handed.
struct Kept(Arc<Mutex<Vec<String>>>);

impl Sink for Kept {
    fn changed(&self, change: Change) {
        if let Change::Conversation { event, .. } = change {
            let text = event.content.unwrap_or_default();
            self.0.lock().unwrap().push(text);
        }
    }
}

#[tokio::test]
async fn committed_changes_reach_the_sink_in_commit_order_before_published_resolves() {
    let (_dir, store) = open_with_session().await;
    let kept = Arc::default();
    store.publish_to(Kept(Arc::clone(&kept)));
    let texts: Vec<String> = (0..40).map(|i| format!("line {i}")).collect();
    // Queued together, so that the writer commits several in one transaction.
    let writes = texts.iter().map(|text| {
        let batch = messages("c", &[text.as_str()]);
        store.write(move |w, out| w.ingest("s1", batch, out))
    });
    for written in futures::future::join_all(writes).await {
        written.unwrap();
    }
    store.published().await;
    assert_eq!(*kept.lock().unwrap(), texts);
}
