//! The write connection and the writer thread, which applies queued commands with group
//! commit.
//!
//! A command whose caller finds the connection idle (nothing queued, no batch being applied)
//! is applied at once on the caller's thread, in a transaction of its own: a single small
//! write — an approval, a decision, a status change — then costs no hand-over to the thread
//! and back (two wake-ups, each a context switch, and on this 2-vCPU machine often a wait for
//! a CPU). Commands that come while the connection is busy, and the bursts a session streams
//! (which the store always queues), go to the thread.
//!
//! Each loop takes the first queued message, drains whatever else is already queued (up to
//! [`MAX_BATCH`]), runs every command inside one `BEGIN IMMEDIATE` transaction, each in its own
//! `SAVEPOINT` so that a failing command rolls back only itself, commits once and only then
//! answers the callers. A session streaming many lines thus costs one commit per burst, and no
//! caller hears "ok" for something that is not committed. The WAL is checkpointed by another
//! thread (see the `checkpoint` module), not between these commits.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::checkpoint::{Checkpointer, WalGauge};
use super::error::{Result, StoreError};
use super::types::WriteStats;

/// The most commands applied in one transaction, to bound the latency of the first.
const MAX_BATCH: usize = 512;

/// What the writer thread receives.
pub(super) enum Msg {
    /// A write command.
    Job(Box<dyn Job>),
    /// Apply what was queued before, checkpoint the WAL, answer and stop.
    Close(oneshot::Sender<Result<()>>),
}

/// A write command with its reply channel.
pub(super) trait Job: Send {
    /// Runs the command and keeps the outcome: inside a savepoint of its own, unless it is
    /// `alone` in its transaction.
    fn run(&mut self, writer: &mut Writer, alone: bool);
    /// Whether the kept outcome is a success (its changes are part of the transaction).
    fn succeeded(&self) -> bool;
    /// Sends the kept outcome.
    fn reply(self: Box<Self>);
    /// Sends `err` instead: the transaction holding the command was not committed.
    fn fail(self: Box<Self>, err: StoreError);
}

/// A closure to run on the writer and the channel its result goes back on.
pub(super) struct Pending<T, F> {
    f: Option<F>,
    outcome: Option<Result<T>>,
    reply: oneshot::Sender<Result<T>>,
}

impl<T, F> Pending<T, F> {
    /// Wraps `f`, whose result is sent on `reply` once committed.
    pub(super) fn new(f: F, reply: oneshot::Sender<Result<T>>) -> Self {
        Pending {
            f: Some(f),
            outcome: None,
            reply,
        }
    }
}

impl<T, F> Job for Pending<T, F>
where
    T: Send,
    F: FnOnce(&mut Writer) -> Result<T> + Send,
{
    fn run(&mut self, writer: &mut Writer, alone: bool) {
        if let Some(f) = self.f.take() {
            self.outcome = Some(writer.command(f, alone));
        }
    }

    fn succeeded(&self) -> bool {
        matches!(self.outcome, Some(Ok(_)))
    }

    fn reply(self: Box<Self>) {
        let outcome = self.outcome.unwrap_or(Err(StoreError::Panicked));
        // The caller may have stopped waiting; the write stands regardless.
        let _ = self.reply.send(outcome);
    }

    fn fail(self: Box<Self>, err: StoreError) {
        let _ = self.reply.send(Err(err));
    }
}

/// Counters shared with the [`Store`](super::Store) handle.
#[derive(Debug, Default)]
pub(super) struct Stats {
    commands: AtomicU64,
    transactions: AtomicU64,
    checkpoints: AtomicU64,
}

impl Stats {
    /// A snapshot.
    pub(super) fn snapshot(&self) -> WriteStats {
        WriteStats {
            commands: self.commands.load(Ordering::Relaxed),
            transactions: self.transactions.load(Ordering::Relaxed),
            checkpoints: self.checkpoints.load(Ordering::Relaxed),
        }
    }

    /// Counts a WAL checkpoint that ran.
    pub(super) fn checkpointed(&self) {
        self.checkpoints.fetch_add(1, Ordering::Relaxed);
    }
}

/// The write connection, shared by the writer thread and by callers that find it idle.
pub(super) struct Slot {
    writer: Mutex<Writer>,
    /// Jobs queued for the thread and not yet applied.
    queued: AtomicUsize,
    wal: WalGauge,
}

impl Slot {
    pub(super) fn new(conn: Connection, wal: WalGauge) -> Slot {
        Slot {
            writer: Mutex::new(Writer::new(conn)),
            queued: AtomicUsize::new(0),
            wal,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Writer> {
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a job about to be queued for the thread.
    pub(super) fn queueing(&self) {
        self.queued.fetch_add(1, Ordering::SeqCst);
    }

    /// Applies `job` on the calling thread, in a transaction of its own, if nothing is queued
    /// for the thread (whose jobs must go first), the thread is not applying a batch, and the
    /// commit will not wait on the WAL (a checkpoint at its size limit, or the sync of its
    /// header after a rewind); otherwise gives the job back.
    pub(super) fn try_apply(&self, job: Box<dyn Job>, stats: &Stats) -> Option<Box<dyn Job>> {
        if self.queued.load(Ordering::SeqCst) != 0 || self.wal.commit_may_wait() {
            return Some(job);
        }
        let mut writer = match self.writer.try_lock() {
            Ok(writer) => writer,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return Some(job),
        };
        let committed = writer.apply(vec![job], stats);
        drop(writer);
        reply_all(committed);
        None
    }
}

/// The writer's state: the connection and the next sequence number of each session seen.
pub(super) struct Writer {
    pub(super) conn: Connection,
    /// Next `sequence` per session. Only valid for committed state plus the current
    /// transaction; cleared whenever anything is rolled back.
    pub(super) next_seq: HashMap<String, i64>,
}

impl Writer {
    fn new(conn: Connection) -> Self {
        Writer {
            conn,
            next_seq: HashMap::new(),
        }
    }

    /// Runs a statement without parameters or rows through the statement cache (these run
    /// for every command and transaction, so they are not parsed again each time).
    fn exec(&self, sql: &str) -> rusqlite::Result<()> {
        self.conn.prepare_cached(sql)?.execute([])?;
        Ok(())
    }

    /// Runs `f` in a savepoint: kept on success, rolled back (alone) on error or panic. A
    /// command `alone` in its transaction needs no savepoint (which would also copy each page
    /// it changes to a sub-journal): on error the whole transaction is rolled back.
    fn command<T>(&mut self, f: impl FnOnce(&mut Writer) -> Result<T>, alone: bool) -> Result<T> {
        if !alone {
            self.exec("SAVEPOINT cmd")?;
        }
        let outcome = match catch_unwind(AssertUnwindSafe(|| f(self))) {
            Ok(r) => r,
            Err(_) => Err(StoreError::Panicked),
        };
        let outcome = outcome.and_then(|v| {
            if !alone {
                self.exec("RELEASE cmd")?;
            }
            Ok(v)
        });
        if outcome.is_err() {
            self.next_seq.clear();
            if !self.conn.is_autocommit() {
                let undo = if alone {
                    "ROLLBACK"
                } else {
                    "ROLLBACK TO cmd; RELEASE cmd"
                };
                if let Err(e) = self.conn.execute_batch(undo) {
                    tracing::error!(error = %e, "rolling back a failed store command");
                }
            }
        }
        outcome
    }

    /// Applies one batch: one transaction, one commit. Returns the committed commands, to be
    /// answered once the connection is released (so that a caller woken by its answer finds
    /// the connection free); failed ones are answered here.
    #[must_use]
    fn apply(&mut self, jobs: Vec<Box<dyn Job>>, stats: &Stats) -> Vec<Box<dyn Job>> {
        let alone = jobs.len() == 1;
        let mut open: Vec<Box<dyn Job>> = Vec::with_capacity(jobs.len());
        for mut job in jobs {
            if self.conn.is_autocommit() {
                if let Err(e) = self.exec("BEGIN IMMEDIATE") {
                    job.fail(e.into());
                    stats.commands.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            }
            job.run(self, alone);
            if self.conn.is_autocommit() {
                // The transaction is gone: a command alone in it failed and rolled it back,
                // or SQLite aborted it (disk full, I/O error), in which case every command of
                // it is lost, this one included if it had succeeded.
                self.next_seq.clear();
                stats
                    .commands
                    .fetch_add(open.len() as u64 + 1, Ordering::Relaxed);
                let lost = "the transaction was rolled back by SQLite";
                for done in open.drain(..) {
                    done.fail(StoreError::Commit(lost.into()));
                }
                if job.succeeded() {
                    job.fail(StoreError::Commit(lost.into()));
                } else {
                    job.reply();
                }
                continue;
            }
            open.push(job);
        }
        if open.is_empty() {
            return open;
        }
        stats
            .commands
            .fetch_add(open.len() as u64, Ordering::Relaxed);
        match self.exec("COMMIT") {
            Ok(()) => {
                stats.transactions.fetch_add(1, Ordering::Relaxed);
                open
            }
            Err(e) => {
                tracing::error!(error = %e, "store commit failed");
                self.next_seq.clear();
                if !self.conn.is_autocommit() {
                    let _ = self.conn.execute_batch("ROLLBACK");
                }
                let msg = e.to_string();
                for job in open {
                    job.fail(StoreError::Commit(msg.clone()));
                }
                Vec::new()
            }
        }
    }

    /// Copies the WAL into the database and truncates it.
    fn checkpoint(&self) -> Result<()> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }
}

/// The writer thread's body. Returns when asked to close or when every `Store` is dropped.
/// `checkpointer` is hooked to the slot's connection; it is stopped before the final
/// checkpoint.
pub(super) fn run(slot: &Slot, checkpointer: Checkpointer, rx: Receiver<Msg>, stats: &Stats) {
    while let Ok(first) = rx.recv() {
        let mut jobs = Vec::new();
        let mut close = None;
        let mut next = Some(first);
        while let Some(msg) = next {
            match msg {
                Msg::Job(job) => jobs.push(job),
                Msg::Close(reply) => {
                    close = Some(reply);
                    break;
                }
            }
            next = if jobs.len() < MAX_BATCH {
                rx.try_recv().ok()
            } else {
                None
            };
        }
        let mut writer = slot.lock();
        let applied = jobs.len();
        let committed = writer.apply(jobs, stats);
        if let Some(reply) = close {
            reply_all(committed);
            // A checkpoint in progress elsewhere would make this one fail as busy.
            drop(checkpointer);
            let _ = reply.send(writer.checkpoint());
            return;
        }
        drop(writer);
        // Only now may a caller apply its command itself: the queued ones are committed.
        slot.queued.fetch_sub(applied, Ordering::SeqCst);
        reply_all(committed);
    }
}

/// Answers the commands [`Writer::apply`] committed.
fn reply_all(committed: Vec<Box<dyn Job>>) {
    committed.into_iter().for_each(|job| job.reply());
}
