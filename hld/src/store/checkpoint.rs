//! The WAL checkpointer: a thread with its own connection that copies the WAL into the
//! database in the background, so that the writer thread does not stall its commits on it.
//!
//! The writer's connection gets a WAL hook instead of SQLite's auto-checkpoint (which would run
//! the checkpoint, and its `fsync`s, on the writer thread every 1000 pages). The hook sees the
//! WAL's size after each commit. SQLite rewinds the WAL (writes it again from its start) only
//! when a write transaction begins with every frame already copied; a background checkpoint
//! that takes longer than the gap between two commits never leaves it so, and a hook that
//! asked for one after every commit once the WAL was large kept the thread checkpointing a few
//! frames, and syncing twice, per commit while the WAL grew to its limit. So:
//! - once the WAL holds [`CHECKPOINT_PAGES`], the hook asks the thread for a passive
//!   checkpoint (which never blocks the writer), one at a time, while more than
//!   [`CATCH_UP_PAGES`] frames are left to copy;
//! - when no more than that are left, the writer copies them itself between two
//!   transactions (a short stall: two `fsync`s and a few pages), and its next transaction
//!   rewinds the WAL;
//! - at [`WAL_LIMIT_PAGES`] the writer checkpoints whatever is left, so the WAL cannot grow
//!   without bound even if the thread falls behind.
//!
//! Durability is unchanged: a commit is in the WAL before it returns either way; a checkpoint
//! only moves committed pages into the database file (and syncs both).

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use rusqlite::hooks::Wal;
use rusqlite::wal::CheckpointMode;
use rusqlite::{Connection, MAIN_DB};

use super::error::{Result, StoreError};
use super::schema;

/// WAL pages that start checkpointing (SQLite's auto-checkpoint default).
const CHECKPOINT_PAGES: i32 = 1000;
/// Frames left to copy that the writer copies itself, so that its next transaction rewinds
/// the WAL (half a megabyte of 4 KiB pages).
const CATCH_UP_PAGES: i32 = 128;
/// WAL pages at which the writer checkpoints by itself (about 32 MiB of 4 KiB pages).
const WAL_LIMIT_PAGES: i32 = 8 * CHECKPOINT_PAGES;

/// What the writer's hook and the thread share.
#[derive(Default)]
struct State {
    /// The hook asks for a checkpoint; the thread takes the request when it starts one.
    wanted: bool,
    /// The thread is checkpointing.
    running: bool,
    /// Stop the thread.
    stop: bool,
    /// How often the WAL has been rewound: a checkpoint's count of copied frames is only
    /// kept if the WAL was not rewound while it ran.
    rewinds: u64,
    /// Frames of the current WAL known to be copied into the database.
    copied: i32,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What the writer does after a commit that left `pages` frames in the WAL.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    Nothing,
    /// Ask the thread for a checkpoint.
    Background,
    /// Checkpoint on the writer, now.
    Writer,
}

/// The writer's side of the policy in the module docs. `retry_at`: after a writer checkpoint
/// that could not copy everything (a reader still used older frames), the WAL size below
/// which the writer does not try again.
fn next_step(state: &State, pages: i32, retry_at: i32) -> Step {
    if pages >= WAL_LIMIT_PAGES {
        return Step::Writer;
    }
    if pages < CHECKPOINT_PAGES || state.running || state.wanted {
        return Step::Nothing;
    }
    if pages - state.copied.min(pages) > CATCH_UP_PAGES {
        Step::Background
    } else if pages >= retry_at {
        Step::Writer
    } else {
        Step::Nothing
    }
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
        // The WAL's size after the previous commit (a smaller one means it was rewound).
        let mut last_pages = 0;
        let mut retry_at = 0;
        writer.wal_hook(Some(move |wal: &mut Wal, pages| {
            let step = {
                let mut state = hook_shared.lock();
                if pages < last_pages {
                    state.rewinds += 1;
                    state.copied = 0;
                    retry_at = 0;
                }
                last_pages = pages;
                let step = next_step(&state, pages, retry_at);
                if step == Step::Background {
                    state.wanted = true;
                    hook_shared.wake.notify_one();
                }
                step
            };
            if step == Step::Writer {
                match wal.checkpoint_v2(CheckpointMode::PASSIVE) {
                    Ok((_, copied)) => {
                        hook_shared.lock().copied = copied;
                        if copied < pages {
                            retry_at = pages + CATCH_UP_PAGES;
                        }
                    }
                    // Busy (the thread is checkpointing) is fine: a later commit retries.
                    Err(e) => tracing::debug!(error = %e, pages, "writer-side WAL checkpoint"),
                }
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
        self.shared.lock().stop = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread's body: a passive checkpoint whenever the writer asks, until stopped.
fn run(conn: &Connection, shared: &Shared) {
    loop {
        let rewinds = {
            let mut state = shared.lock();
            while !state.wanted && !state.stop {
                state = shared
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if state.stop {
                return;
            }
            state.wanted = false;
            state.running = true;
            state.rewinds
        };
        let result = conn.wal_checkpoint_v2(Some(MAIN_DB), CheckpointMode::PASSIVE);
        let mut state = shared.lock();
        state.running = false;
        match result {
            Ok((_, copied)) if state.rewinds == rewinds => state.copied = copied,
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "background WAL checkpoint"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(copied: i32) -> State {
        State {
            copied,
            ..State::default()
        }
    }

    #[test]
    fn a_large_wal_is_copied_in_the_background_and_its_last_frames_by_the_writer() {
        assert_eq!(next_step(&state(0), CHECKPOINT_PAGES - 1, 0), Step::Nothing);
        assert_eq!(next_step(&state(0), CHECKPOINT_PAGES, 0), Step::Background);
        // The thread copied most of it while the writer went on: the writer copies the rest.
        let pages = CHECKPOINT_PAGES + 60;
        assert_eq!(next_step(&state(CHECKPOINT_PAGES), pages, 0), Step::Writer);
        // Too much left for the writer: the thread again.
        let pages = CHECKPOINT_PAGES + CATCH_UP_PAGES + 1;
        assert_eq!(
            next_step(&state(CHECKPOINT_PAGES), pages, 0),
            Step::Background
        );
    }

    #[test]
    fn one_checkpoint_at_a_time_except_at_the_limit() {
        let running = State {
            running: true,
            ..State::default()
        };
        let wanted = State {
            wanted: true,
            ..State::default()
        };
        for busy in [&running, &wanted] {
            assert_eq!(next_step(busy, CHECKPOINT_PAGES * 2, 0), Step::Nothing);
            assert_eq!(next_step(busy, WAL_LIMIT_PAGES, 0), Step::Writer);
        }
    }

    #[test]
    fn the_writer_does_not_retry_at_once_when_readers_held_frames_back() {
        let pages = CHECKPOINT_PAGES + 10;
        let retry_at = pages + CATCH_UP_PAGES;
        assert_eq!(
            next_step(&state(CHECKPOINT_PAGES), pages, retry_at),
            Step::Nothing
        );
        // Once the WAL has grown that much, the writer tries again (if little is left).
        assert_eq!(
            next_step(&state(retry_at - 10), retry_at, retry_at),
            Step::Writer
        );
    }
}
