//! The WAL checkpointer: a thread with its own connection that copies the WAL into the
//! database in the background, so that the writer thread does not stall its commits on it,
//! and in the batch scheduling class, so that waking it does not take a CPU from request
//! handling either.
//!
//! The writer's connection gets a WAL hook instead of SQLite's auto-checkpoint (which would run
//! the checkpoint, and its `fsync`s, on the writer thread every 1000 pages). The hook sees the
//! WAL's size after each commit:
//! - once the WAL holds [`CHECKPOINT_PAGES`], it asks the thread for a passive checkpoint
//!   (which never blocks the writer), one at a time, and again whenever more than
//!   [`BATCH_PAGES`] frames are left to copy. (It used to ask after every commit: under a
//!   steady stream of small commits the thread then copied a few frames, and synced twice,
//!   per commit.)
//! - SQLite rewinds the WAL (writes it again from its start) only when a write transaction
//!   begins with every frame copied, which a stream of commits seldom allows; so once no
//!   commit has come for [`IDLE`] with a large WAL not wholly copied, the thread copies the
//!   rest, and the next commit rewinds the WAL (the thread keeps this time itself, whichever
//!   thread commits);
//! - at [`WAL_LIMIT_PAGES`] the committing thread waits for a checkpoint the thread is running
//!   to end, then checkpoints whatever is left itself, so the WAL cannot grow without bound
//!   even if the stream never pauses: the next commit finds every frame copied and rewinds it.
//!   (It used not to wait: its checkpoint failed at once while the thread was checkpointing,
//!   and under a stream of large commits, with the disk slow to sync, the WAL grew past 14,000
//!   pages.) Only the writer thread gets there: a command is applied on its caller's thread
//!   only while the WAL is well short of the limit ([`WalGauge`]);
//! - the first commit after a rewind syncs the WAL's header (SQLite does, in WAL mode with
//!   `synchronous = NORMAL`, so that frames written later cannot reach the disk before it),
//!   and waits for the disk. That commit goes to the writer thread too: while every frame is
//!   copied, a command is not applied on its caller's thread either ([`WalGauge`]).
//!
//! Durability is unchanged: a commit is in the WAL before it returns either way; a checkpoint
//! only moves committed pages into the database file (and syncs both).

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::hooks::Wal;
use rusqlite::wal::CheckpointMode;
use rusqlite::{Connection, MAIN_DB};

use super::error::{Result, StoreError};
use super::schema;
use super::writer::Stats;

/// WAL pages that start checkpointing (SQLite's auto-checkpoint default).
const CHECKPOINT_PAGES: i32 = 1000;
/// Frames left to copy that start another background checkpoint (a megabyte of 4 KiB pages).
const BATCH_PAGES: i32 = 256;
/// How long without a commit before the thread copies what is left of a large WAL.
pub(super) const IDLE: Duration = Duration::from_secs(1);
/// WAL pages at which the committing thread checkpoints (about 32 MiB of 4 KiB pages).
pub(super) const WAL_LIMIT_PAGES: i32 = 8 * CHECKPOINT_PAGES;

/// What the writer's hook and the thread share.
#[derive(Default)]
struct State {
    /// A checkpoint is asked for; the thread takes the request when it starts one.
    wanted: bool,
    /// A checkpoint is running: the thread's, or the committing thread's at the limit.
    running: bool,
    /// Stop the thread.
    stop: bool,
    /// The idle pass was asked for since the latest commit.
    idle_asked: bool,
    /// Commits seen by the hook.
    commits: u64,
    /// The thread is waiting for [`IDLE`] to pass without a commit.
    timing: bool,
    /// The WAL's size after the latest commit (a smaller one means it was rewound).
    pages: i32,
    /// How often the WAL has been rewound: a checkpoint's count of copied frames is only
    /// kept if the WAL was not rewound while it ran.
    rewinds: u64,
    /// Frames of the current WAL known to be copied into the database.
    copied: i32,
}

impl State {
    fn busy(&self) -> bool {
        self.running || self.wanted
    }

    /// Whether, with no commit for [`IDLE`], the rest of the WAL should be copied.
    fn idle_pass_due(&self) -> bool {
        !self.idle_asked && self.left() > 0
    }

    /// Frames of a large WAL left to copy (0 for a small WAL).
    fn left(&self) -> i32 {
        if self.pages < CHECKPOINT_PAGES {
            0
        } else {
            self.pages - self.copied.min(self.pages)
        }
    }
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the thread.
    wake: Condvar,
    /// Wakes a commit waiting at the limit: the thread's checkpoint ended, or it stopped.
    ended: Condvar,
    stats: Arc<Stats>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks the thread for a checkpoint.
    fn want(&self, state: &mut State) {
        state.wanted = true;
        self.wake.notify_one();
    }

    /// The limit's checkpoint, on the committing thread: waits for one the thread is running
    /// (which copies only the frames it found when it began, and holds SQLite's checkpoint
    /// lock) to end, keeps the thread from starting another, and copies what is left.
    fn checkpoint_at_limit(&self, wal: &mut Wal) {
        let mut state = self.lock();
        while state.running && !state.stop {
            state = self
                .ended
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.running = true;
        let rewinds = state.rewinds;
        drop(state);
        let result = wal.checkpoint_v2(CheckpointMode::PASSIVE);
        self.ended_checkpoint(result, rewinds, "WAL checkpoint at the limit");
        // The thread may have been asked for one meanwhile.
        self.wake.notify_one();
    }

    /// Records the end of a checkpoint begun when the WAL had been rewound `rewinds` times:
    /// its count of copied frames is kept only if the WAL was not rewound meanwhile.
    fn ended_checkpoint(&self, result: rusqlite::Result<(i32, i32)>, rewinds: u64, what: &str) {
        let mut state = self.lock();
        state.running = false;
        self.ended.notify_all();
        match result {
            Ok((_, copied)) => {
                self.stats.checkpointed();
                if state.rewinds == rewinds {
                    state.copied = copied;
                }
            }
            Err(e) => tracing::warn!(error = %e, "{what}"),
        }
    }
}

/// What follows a commit.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    Nothing,
    /// Ask the thread for a checkpoint.
    Background,
    /// The committing thread checkpoints, after one the thread is running: the WAL is at its
    /// limit.
    Limit,
}

/// The hook's side of the policy in the module docs.
fn after_commit(state: &State) -> Step {
    if state.pages >= WAL_LIMIT_PAGES {
        Step::Limit
    } else if state.busy() {
        Step::Nothing
    } else if state.left() > BATCH_PAGES {
        Step::Background
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
    /// Checkpoints are counted in `stats`.
    pub(super) fn start(
        path: &Path,
        writer: &mut Connection,
        stats: &Arc<Stats>,
    ) -> Result<Checkpointer> {
        let conn = schema::open_checkpointer(path)?;
        let shared = Arc::new(Shared {
            state: Mutex::default(),
            wake: Condvar::new(),
            ended: Condvar::new(),
            stats: Arc::clone(stats),
        });
        let thread_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("hld-store-ckpt".into())
            .spawn(move || {
                yield_to_others();
                run(&conn, &thread_shared)
            })
            .map_err(|source| StoreError::Io {
                context: "starting the WAL checkpointer thread".into(),
                source,
            })?;
        let hook_shared = Arc::clone(&shared);
        writer.wal_hook(Some(move |wal: &mut Wal, pages| {
            let step = {
                let mut state = hook_shared.lock();
                if pages < state.pages {
                    state.rewinds += 1;
                    state.copied = 0;
                }
                state.pages = pages;
                state.commits += 1;
                state.idle_asked = false;
                let step = after_commit(&state);
                if step == Step::Background {
                    hook_shared.want(&mut state);
                } else if state.idle_pass_due() && !state.timing && !state.busy() {
                    // The thread waits without a timeout: have it start timing.
                    hook_shared.wake.notify_one();
                }
                step
            };
            if step == Step::Limit {
                hook_shared.checkpoint_at_limit(wal);
            }
            Ok(())
        }))?;
        Ok(Checkpointer {
            shared,
            thread: Some(thread),
        })
    }

    /// A gauge of the WAL's size, for the store to read.
    pub(super) fn gauge(&self) -> WalGauge {
        WalGauge(Arc::clone(&self.shared))
    }
}

/// Pages a command applied on its caller's thread may add to the WAL at most, for it to stay
/// short of [`WAL_LIMIT_PAGES`] (so that the checkpoint there runs on the writer thread).
const INLINE_HEADROOM_PAGES: i32 = 1000;

/// Reads the WAL's state after the latest commit and checkpoint.
#[derive(Clone)]
pub(super) struct WalGauge(Arc<Shared>);

impl WalGauge {
    /// Whether the next commit may wait on the WAL: it is within [`INLINE_HEADROOM_PAGES`] of
    /// the limit at which the committing thread checkpoints it, or every frame of it has been
    /// copied, so that the next commit rewinds it and syncs its header. A commit that may wait
    /// is left to the writer thread, not made on a thread that serves requests.
    pub(super) fn commit_may_wait(&self) -> bool {
        let state = self.0.lock();
        let near_limit = state.pages >= WAL_LIMIT_PAGES - INLINE_HEADROOM_PAGES;
        let rewind_due = state.copied > 0 && state.copied >= state.pages;
        near_limit || rewind_due
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_one();
        self.shared.ended.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Puts the calling thread in Linux's `SCHED_BATCH` class: a thread woken there does not
/// preempt the one running on its CPU, but it keeps its fair share of CPU time. Copying the
/// WAL is background work. In the normal class the thread, woken by a commit's hook on the
/// committing thread's CPU, took that CPU from it at once for the 1–3 ms a copy of 1000 pages
/// takes (scheduler traces of a pinned fan-out run: the main thread preempted in the middle of
/// `createApproval` and the event delivered ~2 ms late); at nice 19 it still did. `SCHED_IDLE`
/// would starve the copy on a busy machine and leave the WAL to the writer's hard limit.
fn yield_to_others() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler(2) reads the `sched_param` it is given, which lives until it
    // returns, and touches no other memory of ours. On Linux a policy belongs to a thread, and
    // pid 0 names the calling thread.
    #[allow(unsafe_code)]
    let failed = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) } != 0;
    if failed {
        tracing::debug!(
            error = %std::io::Error::last_os_error(),
            "the checkpointer keeps its normal scheduling class"
        );
    }
}

/// The thread's body: a passive checkpoint whenever a commit asks, or when no commit has come
/// for [`IDLE`] with a large WAL not wholly copied, until stopped.
fn run(conn: &Connection, shared: &Shared) {
    loop {
        let rewinds = {
            let mut state = shared.lock();
            while !state.wanted && !state.stop {
                if !state.idle_pass_due() {
                    state = shared
                        .wake
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                    continue;
                }
                let commits = state.commits;
                state.timing = true;
                let (waited, timeout) = shared
                    .wake
                    .wait_timeout(state, IDLE)
                    .unwrap_or_else(PoisonError::into_inner);
                state = waited;
                state.timing = false;
                if timeout.timed_out() && state.commits == commits && state.idle_pass_due() {
                    state.idle_asked = true;
                    state.wanted = true;
                }
            }
            // The committing thread is checkpointing at the limit.
            while state.running && !state.stop {
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
        shared.ended_checkpoint(result, rewinds, "background WAL checkpoint");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(pages: i32, copied: i32) -> State {
        State {
            pages,
            copied,
            ..State::default()
        }
    }

    #[test]
    fn a_large_wal_is_copied_in_batches_one_checkpoint_at_a_time() {
        assert_eq!(after_commit(&state(CHECKPOINT_PAGES - 1, 0)), Step::Nothing);
        assert_eq!(after_commit(&state(CHECKPOINT_PAGES, 0)), Step::Background);
        // Copied up to 1000 while the writer went on: not for a few more frames...
        let some_more = CHECKPOINT_PAGES + BATCH_PAGES;
        let copied = state(some_more, CHECKPOINT_PAGES);
        assert_eq!(after_commit(&copied), Step::Nothing);
        // ... but again for a batch.
        let batch = state(some_more + 1, CHECKPOINT_PAGES);
        assert_eq!(after_commit(&batch), Step::Background);
        for busy in [
            State {
                running: true,
                ..state(some_more + 1, CHECKPOINT_PAGES)
            },
            State {
                wanted: true,
                ..state(some_more + 1, CHECKPOINT_PAGES)
            },
        ] {
            assert_eq!(after_commit(&busy), Step::Nothing);
            // Except at the limit, where the writer checkpoints by itself.
            let full = State {
                pages: WAL_LIMIT_PAGES,
                ..busy
            };
            assert_eq!(after_commit(&full), Step::Limit);
        }
    }

    #[test]
    fn an_idle_pass_is_due_for_a_large_wal_not_wholly_copied_once_per_commit() {
        // A small WAL is left alone, and so is one wholly copied.
        assert!(!state(CHECKPOINT_PAGES - 1, 0).idle_pass_due());
        assert!(!state(CHECKPOINT_PAGES + 10, CHECKPOINT_PAGES + 10).idle_pass_due());
        let large = state(CHECKPOINT_PAGES + 10, CHECKPOINT_PAGES);
        assert!(large.idle_pass_due());
        // Asked once until the next commit, whatever the thread managed.
        let asked = State {
            idle_asked: true,
            ..large
        };
        assert!(!asked.idle_pass_due());
    }
}
