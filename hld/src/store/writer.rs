//! The one write connection. Each command runs in a transaction of its own (`BEGIN
//! IMMEDIATE` … `COMMIT`), and its caller hears back only after the commit: what a caller is
//! told is stored is durable.
//!
//! A command whose caller finds the connection idle (nothing queued, nothing being applied)
//! runs at once on the caller's thread ([`Slot::try_apply`]); the others, and every burst of a
//! streaming session, are queued for the writer thread, which applies them in order. A hop to
//! the thread and back would cost two wake-ups, and on a busy runtime the caller would then
//! wait a whole round of its tasks before going on: an approval's event would reach its
//! subscribers that much later. An inline commit is cheap because it never syncs: with
//! `synchronous = NORMAL` a commit only appends to the WAL, and the checkpoints, which copy
//! the WAL into the database and sync it, run on the writer thread alone (SQLite's own
//! automatic checkpoints are replaced by [`Slot::checkpoint`]).

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};

use rusqlite::hooks::Wal;
use rusqlite::Connection;
use tokio::sync::oneshot;

use super::error::{Result, StoreError};

/// A command for the writer thread: runs its transaction and answers its caller.
pub(super) type Job = Box<dyn FnOnce(&mut Writer) + Send>;

/// What the writer thread receives.
pub(super) enum Msg {
    /// A write command.
    Job(Job),
    /// Checkpoint the WAL: one fell due after a command applied on its caller's thread.
    Checkpoint,
    /// Checkpoint the WAL into the database, answer and stop.
    Close(oneshot::Sender<Result<()>>),
}

/// The writer's state: the connection and the next sequence number of each session seen.
pub(super) struct Writer {
    pub(super) conn: Connection,
    /// Next `sequence` per session: valid for what is committed plus the current
    /// transaction, so it is cleared whenever a transaction is rolled back.
    pub(super) next_seq: HashMap<String, i64>,
    /// How many approvals are pending, once counted: every write that changes an approval's
    /// status or adds one says by how much (`pending_approvals`). Cleared as `next_seq` is.
    pub(super) pending: Option<i64>,
}

impl Writer {
    pub(super) fn new(conn: Connection) -> Self {
        Writer {
            conn,
            next_seq: HashMap::new(),
            pending: None,
        }
    }

    /// Runs `f` in a transaction: committed if it succeeds, rolled back if it fails or
    /// panics.
    pub(super) fn transaction<T>(&mut self, f: impl FnOnce(&mut Writer) -> Result<T>) -> Result<T> {
        self.exec("BEGIN IMMEDIATE")?;
        let outcome =
            catch_unwind(AssertUnwindSafe(|| f(self))).unwrap_or(Err(StoreError::Panicked));
        let committed = outcome.and_then(|value| {
            self.exec("COMMIT")
                .map_err(|e| StoreError::Commit(e.to_string()))?;
            Ok(value)
        });
        if committed.is_err() {
            self.next_seq.clear();
            self.pending = None;
            // SQLite may have rolled the transaction back itself (disk full, I/O error).
            if !self.conn.is_autocommit() {
                if let Err(e) = self.conn.execute_batch("ROLLBACK") {
                    tracing::error!(error = %e, "rolling back a failed store command");
                }
            }
        }
        committed
    }

    /// Runs a statement without parameters or rows, prepared once (`BEGIN`, `COMMIT`).
    fn exec(&self, sql: &str) -> rusqlite::Result<()> {
        self.conn.prepare_cached(sql)?.execute([])?;
        Ok(())
    }
}

/// Pages in the WAL past which a checkpoint is due: SQLite's own automatic threshold.
const CHECKPOINT_PAGES: i32 = 1000;

/// The write connection, shared by the writer thread and the callers that find it idle.
pub(super) struct Slot {
    writer: Mutex<Writer>,
    /// Commands queued for the thread and not applied yet: while there are any, a caller
    /// queues its own behind them.
    queued: AtomicUsize,
    /// Set after a commit that left the WAL past [`CHECKPOINT_PAGES`].
    checkpoint_due: Arc<AtomicBool>,
}

impl Slot {
    /// The slot for `writer`, whose connection now reports when a checkpoint is due instead of
    /// checkpointing at the commit that crossed the threshold.
    pub(super) fn new(mut writer: Writer) -> Result<Slot> {
        let checkpoint_due = Arc::new(AtomicBool::new(false));
        let due = Arc::clone(&checkpoint_due);
        writer.conn.wal_hook(Some(move |_: &mut Wal, pages: i32| {
            if pages >= CHECKPOINT_PAGES {
                due.store(true, Ordering::Relaxed);
            }
            Ok(())
        }))?;
        Ok(Slot {
            writer: Mutex::new(writer),
            queued: AtomicUsize::new(0),
            checkpoint_due,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Writer> {
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `job` now if nothing is queued and the connection is free; otherwise gives it
    /// back, to be queued with [`queueing`](Self::queueing).
    pub(super) fn try_apply(&self, job: Job) -> Option<Job> {
        if self.queued.load(Ordering::SeqCst) != 0 {
            return Some(job);
        }
        let mut writer = match self.writer.try_lock() {
            Ok(writer) => writer,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return Some(job),
        };
        job(&mut writer);
        None
    }

    /// Counts a command about to be queued for the thread.
    pub(super) fn queueing(&self) {
        self.queued.fetch_add(1, Ordering::SeqCst);
    }

    /// Whether a checkpoint is due; clears the mark, so that one checkpoint answers it.
    pub(super) fn take_checkpoint_due(&self) -> bool {
        self.checkpoint_due.swap(false, Ordering::Relaxed)
    }

    /// Copies what it can of the WAL into the database without waiting for readers (a
    /// `PASSIVE` checkpoint, as SQLite's automatic ones are).
    fn checkpoint(&self) {
        let copied = self
            .lock()
            .conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        if let Err(e) = copied {
            tracing::warn!(error = %e, "checkpointing the database");
        }
    }
}

/// The writer thread's body: applies each queued command in turn, and each checkpoint that
/// falls due, until asked to close or every `Store` is dropped.
pub(super) fn run(slot: &Slot, commands: Receiver<Msg>) {
    while let Ok(msg) = commands.recv() {
        match msg {
            Msg::Job(job) => {
                job(&mut slot.lock());
                slot.queued.fetch_sub(1, Ordering::SeqCst);
                if slot.take_checkpoint_due() {
                    slot.checkpoint();
                }
            }
            Msg::Checkpoint => slot.checkpoint(),
            Msg::Close(reply) => {
                let checkpoint = slot
                    .lock()
                    .conn
                    .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                    .map_err(StoreError::from);
                let _ = reply.send(checkpoint);
                return;
            }
        }
    }
}
