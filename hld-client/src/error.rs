//! The client's error type: one variant per thing a caller can act on.

use crate::protocol::ErrorObject;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The daemon answered with a JSON-RPC error.
    #[error("{0}")]
    Rpc(ErrorObject),
    /// The connection closed before the reply arrived.
    #[error("disconnected from the daemon")]
    Disconnected,
    /// No reply within the call's timeout.
    #[error("timed out waiting for the daemon")]
    Timeout,
    /// Connecting, reading or writing failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// A reply could not be decoded into the expected type.
    #[error("could not decode the daemon's reply: {0}")]
    Decode(#[from] serde_json::Error),
}

impl Error {
    /// The JSON-RPC error, if the daemon sent one.
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            Error::Rpc(e) => Some(e),
            _ => None,
        }
    }
}
