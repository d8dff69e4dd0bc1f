//! What the store can fail with.

use hld_client::protocol::ApprovalStatus;
use rusqlite::ErrorCode;

/// A store error; not-found and already-decided cases are their own, for precise RPC errors.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("session not found: {0}")]
    SessionNotFound(String),
    /// The session is still running (it cannot be deleted).
    #[error("session is still running: {0}")]
    SessionActive(String),
    #[error("approval not found: {0}")]
    ApprovalNotFound(String),
    /// No message of that id waits in a queue (unknown, or delivered or cancelled already).
    #[error("no queued message {0}")]
    MessageNotQueued(String),
    /// The approval was already decided (by an earlier or racing decision).
    #[error("approval {id} already decided: {}", status.as_str())]
    AlreadyDecided { id: String, status: ApprovalStatus },
    /// The request is inconsistent (a decision of the wrong kind, a missing tool name, …).
    #[error("{0}")]
    Invalid(String),
    #[error("database schema version {found} is newer than this hld supports ({supported})")]
    SchemaTooNew { found: i64, supported: i64 },
    /// Another store (another hld) holds the database.
    #[error(
        "the database {0} is in use by another hld: stop that daemon, or give this one a \
         database of its own (--database)"
    )]
    InUse(String),
    #[error("store is closed")]
    Closed,
    /// The transaction holding this command could not be committed; nothing of it was stored.
    #[error("commit failed: {why}")]
    Commit {
        why: String,
        /// SQLite's code for the failure, when SQLite failed.
        code: Option<ErrorCode>,
    },
    /// A store command panicked; its changes were rolled back.
    #[error("store command panicked")]
    Panicked,
    /// Creating the database directory or setting permissions failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

impl StoreError {
    /// A transaction that did not commit because of `e`.
    pub(super) fn commit(e: &StoreError) -> StoreError {
        match e {
            StoreError::Commit { why, code } => StoreError::Commit {
                why: why.clone(),
                code: *code,
            },
            e => StoreError::Commit {
                why: e.to_string(),
                code: e.sqlite_code(),
            },
        }
    }

    fn sqlite_code(&self) -> Option<ErrorCode> {
        match self {
            StoreError::Sqlite(e) => e.sqlite_error_code(),
            StoreError::Commit { code, .. } => *code,
            _ => None,
        }
    }

    /// Why the database refused, in words its user can act on, when the cause lies around the
    /// daemon (another process, the disk) rather than in it.
    pub fn cause(&self) -> Option<&'static str> {
        Some(match self.sqlite_code()? {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
                "the database is locked by another process"
            }
            ErrorCode::DiskFull => "the disk is full",
            ErrorCode::ReadOnly => "the database is read-only",
            ErrorCode::SystemIoFailure => "the disk failed to read or write",
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::ffi;

    use super::*;

    /// A failure as SQLite reports it: its code and message.
    fn sqlite(code: std::ffi::c_int, message: &str) -> StoreError {
        let error = ffi::Error::new(code);
        StoreError::Sqlite(rusqlite::Error::SqliteFailure(error, Some(message.into())))
    }

    #[test]
    fn a_refusal_from_around_the_daemon_says_its_cause() {
        assert_eq!(
            sqlite(ffi::SQLITE_FULL, "database or disk is full").cause(),
            Some("the disk is full")
        );
        let locked = StoreError::commit(&sqlite(ffi::SQLITE_BUSY, "database is locked"));
        assert_eq!(locked.to_string(), "commit failed: database is locked");
        assert_eq!(
            locked.cause(),
            Some("the database is locked by another process")
        );
        // A command of the same transaction fails with the same cause.
        assert_eq!(StoreError::commit(&locked).cause(), locked.cause());
        // A fault of the daemon's own is not dressed as one of its surroundings.
        assert_eq!(
            sqlite(
                ffi::SQLITE_CONSTRAINT,
                "UNIQUE constraint failed: sessions.id"
            )
            .cause(),
            None
        );
        assert_eq!(StoreError::SessionNotFound("s".into()).cause(), None);
    }
}
