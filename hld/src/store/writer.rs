//! The one write connection, owned by one thread. Each command runs in a transaction of its
//! own (`BEGIN IMMEDIATE` … `COMMIT`), and its caller hears back only after the commit: what a
//! caller is told is stored is durable. However many callers write, one thread does it.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::Receiver;

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::error::{Result, StoreError};

/// A command for the writer thread: runs its transaction and answers its caller.
pub(super) type Job = Box<dyn FnOnce(&mut Writer) + Send>;

/// What the writer thread receives.
pub(super) enum Msg {
    /// A write command.
    Job(Job),
    /// Checkpoint the WAL into the database, answer and stop.
    Close(oneshot::Sender<Result<()>>),
}

/// The writer's state: the connection and the next sequence number of each session seen.
pub(super) struct Writer {
    pub(super) conn: Connection,
    /// Next `sequence` per session: valid for what is committed plus the current
    /// transaction, so it is cleared whenever a transaction is rolled back.
    pub(super) next_seq: HashMap<String, i64>,
}

impl Writer {
    pub(super) fn new(conn: Connection) -> Self {
        Writer {
            conn,
            next_seq: HashMap::new(),
        }
    }

    /// Runs `f` in a transaction: committed if it succeeds, rolled back if it fails or
    /// panics.
    pub(super) fn transaction<T>(&mut self, f: impl FnOnce(&mut Writer) -> Result<T>) -> Result<T> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        let outcome =
            catch_unwind(AssertUnwindSafe(|| f(self))).unwrap_or(Err(StoreError::Panicked));
        let committed = outcome.and_then(|value| {
            self.conn
                .execute_batch("COMMIT")
                .map_err(|e| StoreError::Commit(e.to_string()))?;
            Ok(value)
        });
        if committed.is_err() {
            self.next_seq.clear();
            // SQLite may have rolled the transaction back itself (disk full, I/O error).
            if !self.conn.is_autocommit() {
                if let Err(e) = self.conn.execute_batch("ROLLBACK") {
                    tracing::error!(error = %e, "rolling back a failed store command");
                }
            }
        }
        committed
    }
}

/// The writer thread's body: runs each command as it comes, until asked to close or every
/// `Store` is dropped.
pub(super) fn run(mut writer: Writer, commands: Receiver<Msg>) {
    while let Ok(msg) = commands.recv() {
        match msg {
            Msg::Job(job) => job(&mut writer),
            Msg::Close(reply) => {
                let checkpoint = writer
                    .conn
                    .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                    .map_err(StoreError::from);
                let _ = reply.send(checkpoint);
                return;
            }
        }
    }
}
