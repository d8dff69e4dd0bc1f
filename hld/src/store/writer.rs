//! The one write connection and its thread: commands queued together run in savepoints of one
//! transaction (group commit), answered after the commit; a failed one rolls back alone.
//! Checkpoints run on a thread of their own.

use std::collections::HashMap;
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, Receiver};

use rusqlite::hooks::Wal;
use rusqlite::Connection;
use thread_priority::unix::{
    set_thread_priority_and_policy, thread_native_id, NormalThreadSchedulePolicy,
    ThreadSchedulePolicy,
};
use thread_priority::ThreadPriority;
use tokio::sync::oneshot;

use super::error::{Result, StoreError};

pub(super) enum Msg {
    Write(Box<dyn Command>),
    /// Checkpoint the WAL into the database, answer and stop.
    Close(oneshot::Sender<Result<()>>),
}

/// A write command and its caller.
pub(super) trait Command: Send {
    /// Applies the command in the open transaction and keeps its outcome.
    fn apply(&mut self, writer: &mut Writer);
    /// Answers the caller: its outcome if its transaction committed, else why it did not.
    fn answer(self: Box<Self>, committed: Result<(), &StoreError>);
}

/// A write: the function to apply, its outcome, and what to do with it after the transaction.
pub(super) struct Write<T, F, D> {
    f: Option<F>,
    outcome: Option<Result<T>>,
    done: D,
}

impl<T, F, D> Write<T, F, D> {
    pub(super) fn new(f: F, done: D) -> Self {
        Write {
            f: Some(f),
            outcome: None,
            done,
        }
    }
}

impl<T, F, D> Command for Write<T, F, D>
where
    T: Send,
    F: FnOnce(&mut Writer) -> Result<T> + Send,
    D: FnOnce(Result<T>) + Send,
{
    fn apply(&mut self, writer: &mut Writer) {
        if let Some(f) = self.f.take() {
            self.outcome = Some(writer.savepoint(f));
        }
    }

    fn answer(self: Box<Self>, committed: Result<(), &StoreError>) {
        let outcome = match (self.outcome, committed) {
            (Some(Err(e)), _) => Err(e),
            (Some(Ok(value)), Ok(())) => Ok(value),
            (_, Err(e)) => Err(StoreError::commit(e)),
            (None, Ok(())) => Err(StoreError::Commit {
                why: "the command was not applied".into(),
                code: None,
            }),
        };
        (self.done)(outcome);
    }
}

/// The writer's state: the connection and the next sequence number of each session seen.
pub(crate) struct Writer {
    pub(super) conn: Connection,
    /// Next `sequence` per session, including the open transaction: cleared on any rollback.
    pub(super) next_seq: HashMap<String, i64>,
    /// Pending approvals, once counted, kept by `pending_approvals`; cleared as `next_seq` is.
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

    /// Runs `f` in a savepoint: released if it succeeds, rolled back if it fails or panics.
    fn savepoint<T>(&mut self, f: impl FnOnce(&mut Writer) -> Result<T>) -> Result<T> {
        self.exec("SAVEPOINT command")?;
        let outcome = catch_unwind(AssertUnwindSafe(|| f(self)))
            .unwrap_or(Err(StoreError::Panicked))
            .and_then(|value| Ok(self.exec("RELEASE command").map(|()| value)?));
        if outcome.is_err() {
            self.forget();
            // SQLite may have rolled the whole transaction back itself (disk full, I/O error).
            if !self.conn.is_autocommit() {
                self.rollback("ROLLBACK TO command; RELEASE command");
            }
        }
        outcome
    }

    /// Applies `first` and those queued behind it in one transaction; returns a close it met.
    fn apply_queued(&mut self, first: Box<dyn Command>, commands: &Receiver<Msg>) -> Option<Msg> {
        let mut applied = vec![first];
        let mut next = None;
        let mut committed = self.exec("BEGIN IMMEDIATE").map_err(StoreError::from);
        if committed.is_ok() {
            applied[0].apply(self);
            while !self.conn.is_autocommit() {
                match commands.try_recv() {
                    Ok(Msg::Write(mut command)) => {
                        command.apply(self);
                        applied.push(command);
                    }
                    Ok(close) => {
                        next = Some(close);
                        break;
                    }
                    Err(_) => break,
                }
            }
            committed = if self.conn.is_autocommit() {
                Err(StoreError::Commit {
                    why: "SQLite rolled the transaction back".into(),
                    code: None,
                })
            } else {
                self.exec("COMMIT")
                    .map_err(|e| StoreError::commit(&e.into()))
            };
        }
        if committed.is_err() {
            self.forget();
            if !self.conn.is_autocommit() {
                self.rollback("ROLLBACK");
            }
        }
        for command in applied {
            command.answer(committed.as_ref().map(|_| ()));
        }
        next
    }

    /// Forgets what was counted in a transaction that was rolled back.
    fn forget(&mut self) {
        self.next_seq.clear();
        self.pending = None;
    }

    fn rollback(&self, sql: &str) {
        if let Err(e) = self.conn.execute_batch(sql) {
            tracing::error!(error = %e, "rolling back a failed store command");
        }
    }

    /// Runs a statement without parameters or rows, prepared once (`BEGIN`, `COMMIT`).
    fn exec(&self, sql: &str) -> rusqlite::Result<()> {
        self.conn.prepare_cached(sql)?.execute([])?;
        Ok(())
    }
}

/// WAL pages past which a commit asks for a checkpoint (SQLite's own threshold).
const CHECKPOINT_PAGES: c_int = 1000;

impl Writer {
    /// Hands checkpoints to `checkpointer`, on a thread of its own: a commit that leaves the WAL
    /// past [`CHECKPOINT_PAGES`] asks it for a PASSIVE checkpoint, which copies the WAL into the
    /// database beside the writer, so that neither the copy nor its fsyncs delay the next
    /// commits (nor the events published after them). The WAL starts over at the first write
    /// after a checkpoint that copied it all, so it grows while the writer never pauses and
    /// shrinks back once it does. The thread ends with the writer's connection.
    ///
    /// The thread runs at `SCHED_IDLE`: a checkpoint is housekeeping, so it takes only CPU time
    /// that the writer, the runtime and the agents leave, and never delays a commit or an event;
    /// under a load that fills every CPU the WAL grows until the load eases.
    pub(super) fn checkpoint_apart(&mut self, checkpointer: Connection) -> Result<()> {
        let (ask, asked) = mpsc::sync_channel(1);
        // Registering the hook turns SQLite's auto-checkpoint off for this connection.
        self.conn.wal_hook(Some(move |_: &mut Wal, pages: c_int| {
            if pages >= CHECKPOINT_PAGES {
                let _ = ask.try_send(());
            }
            Ok(())
        }))?;
        let checkpoints = move || {
            let idle = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle);
            if let Err(e) =
                set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Min, idle)
            {
                tracing::warn!(error = ?e, "the checkpoint thread runs at normal priority");
            }
            asked
                .iter()
                .for_each(|()| drop(checkpoint(&checkpointer, "PASSIVE")))
        };
        std::thread::Builder::new()
            .name("hld-checkpoint".into())
            .spawn(checkpoints)
            .map(drop)
            .map_err(|source| StoreError::Io {
                context: "starting the store's checkpoint thread".into(),
                source,
            })
    }
}

fn checkpoint(conn: &Connection, mode: &str) -> Result<()> {
    let done = conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |_| Ok(()));
    if let Err(e) = &done {
        tracing::warn!(error = %e, mode, "checkpointing the store's WAL");
    }
    Ok(done?)
}

/// The writer thread: applies what is queued, in order, until closed or every `Store` dropped.
pub(super) fn run(mut writer: Writer, commands: Receiver<Msg>) {
    let mut next = commands.recv().ok();
    while let Some(msg) = next {
        next = match msg {
            Msg::Write(command) => writer.apply_queued(command, &commands),
            Msg::Close(reply) => {
                let _ = reply.send(checkpoint(&writer.conn, "TRUNCATE"));
                return;
            }
        }
        .or_else(|| commands.recv().ok());
    }
}
