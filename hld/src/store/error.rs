//! What the store can fail with.

use hld_client::protocol::ApprovalStatus;

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
    #[error("commit failed: {0}")]
    Commit(String),
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
