//! The WAL checkpointer: a thread with its own connection that copies the WAL into the
//! database in the background, so that the writer thread does not stall its commits on it.
//!
//! The writer's connection gets a WAL hook instead of SQLite's auto-checkpoint (which would run
//! the checkpoint, and its `fsync`s, on the writer thread every 1000 pages). After each commit
//! the hook hands the WAL's size to this thread, which runs `PRAGMA wal_checkpoint(PASSIVE)`
//! once the WAL holds [`CHECKPOINT_PAGES`]. A passive checkpoint never blocks the writer, but
//! SQLite only rewinds the WAL when a write transaction begins with everything copied, which a
//! writer that never pauses rarely allows: so when the WAL reaches [`WAL_LIMIT_PAGES`] the
//! writer checkpoints it itself, between two transactions. By then the background has already
//! copied nearly all of it, the writer's share is small, and the WAL cannot grow without bound.
//!
//! Durability is unchanged: a commit is in the WAL before it returns either way; a checkpoint
//! only moves committed pages into the database file (and syncs both).

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

use rusqlite::hooks::Wal;
use rusqlite::wal::CheckpointMode;
use rusqlite::{Connection, MAIN_DB};

use super::error::{Result, StoreError};
use super::schema;

/// WAL pages that start a background checkpoint (SQLite's auto-checkpoint default).
const CHECKPOINT_PAGES: i32 = 1000;
/// WAL pages at which the writer checkpoints by itself (about 32 MiB of 4 KiB pages).
const WAL_LIMIT_PAGES: i32 = 8 * CHECKPOINT_PAGES;

/// What the writer tells the checkpointer.
#[derive(Default)]
struct Request {
    /// Pages in the WAL after the latest commit not checkpointed yet (0: nothing to do).
    pages: i32,
    /// Stop the thread.
    stop: bool,
}

#[derive(Default)]
struct Shared {
    request: Mutex<Request>,
    wake: Condvar,
}

/// The running checkpointer; dropping it stops the thread and waits for it.
pub(super) struct Checkpointer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread on its own connection to `path`, and hooks the writer's connection
    /// `writer` to it (which replaces SQLite's auto-checkpoint on that connection).
    pub(super) fn start(path: &Path, writer: &mut Connection) -> Result<Checkpointer> {
        let conn = schema::open_checkpointer(path)?;
        let shared = Arc::new(Shared::default());
        let thread_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("hld-store-ckpt".into())
            .spawn(move || run(&conn, &thread_shared))
            .map_err(|source| StoreError::Io {
                context: "starting the WAL checkpointer thread".into(),
                source,
            })?;
        let hook_shared = Arc::clone(&shared);
        writer.wal_hook(Some(move |wal: &mut Wal, pages| {
            if pages >= WAL_LIMIT_PAGES {
                // Busy (the background is checkpointing) is fine: the next commit retries.
                if let Err(e) = wal.checkpoint() {
                    tracing::debug!(error = %e, pages, "writer-side WAL checkpoint");
                }
            } else if pages >= CHECKPOINT_PAGES {
                let mut request = hook_shared
                    .request
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                request.pages = pages;
                hook_shared.wake.notify_one();
            }
            Ok(())
        }))?;
        Ok(Checkpointer {
            shared,
            thread: Some(thread),
        })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.shared
            .request
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stop = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread's body: a passive checkpoint whenever the WAL has grown enough, until stopped.
fn run(conn: &Connection, shared: &Shared) {
    loop {
        {
            let mut request = shared
                .request
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            while request.pages == 0 && !request.stop {
                request = shared
                    .wake
                    .wait(request)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if request.stop {
                return;
            }
            request.pages = 0;
        }
        if let Err(e) = conn.wal_checkpoint_v2(Some(MAIN_DB), CheckpointMode::PASSIVE) {
            tracing::warn!(error = %e, "background WAL checkpoint");
        }
    }
}
