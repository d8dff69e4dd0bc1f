//! The client's error type: one variant per thing a caller can act on.

use std::path::PathBuf;

use crate::protocol::{ErrorCode, ErrorObject, RefusalReason};

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No daemon listens at the socket: the file is missing, or nothing accepts on it (a
    /// daemon that stopped without removing it).
    #[error("the daemon is not running (nothing answers at {})", socket.display())]
    DaemonNotRunning {
        /// The socket path tried.
        socket: PathBuf,
    },
    /// The socket is not this user's own daemon's: it, or its directory, belongs to someone
    /// else or others can write it ([`crate::trust::check_socket`]). Nothing was sent.
    #[error("refusing to talk to {}: {problem}, so it may not be your daemon", socket.display())]
    UntrustedSocket {
        /// The socket path.
        socket: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// A daemon address, token or certificate setting that cannot be used, with why.
    #[error("{0}")]
    Address(String),
    /// A remote daemon could not be reached (no answer at its host and port, or the
    /// connection failed before its handshake ended).
    #[error("cannot reach the daemon at {address}: {reason}")]
    Unreachable {
        /// The URL tried.
        address: String,
        /// Why.
        reason: String,
    },
    /// The TLS handshake with a remote daemon failed: most often its certificate did not pass
    /// the check (the reason then names the fingerprint seen). Nothing was sent.
    #[error("refusing the daemon at {address}: {reason}")]
    Tls {
        /// The URL tried.
        address: String,
        /// Why, with the certificate's fingerprint when it was the certificate.
        reason: String,
    },
    /// A remote daemon refused the WebSocket handshake: 401 for a wrong token, 403 for an
    /// origin not allowed, 503 when it has too many connections.
    #[error("the daemon at {address} refused the connection ({status}): {reason}")]
    Rejected {
        /// The URL tried.
        address: String,
        /// The HTTP status.
        status: u16,
        /// The daemon's one-line reason.
        reason: String,
    },
    /// The daemon answered with a JSON-RPC error.
    #[error("{0}")]
    Rpc(ErrorObject),
    /// The daemon did not record a decision (`sendDecision` answered `success: false`).
    #[error("{message}")]
    Refused {
        /// The approval.
        approval_id: String,
        /// Why, for a program ([`RefusalReason::Unknown`] when the daemon gave none).
        reason: RefusalReason,
        /// Why, for a person.
        message: String,
    },
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

    /// Whether the reply was too large for the transport (error 8, a WebSocket's 1 MiB): the
    /// same request for less (a shorter page) may pass.
    pub fn is_too_large(&self) -> bool {
        self.rpc()
            .is_some_and(|e| e.code == ErrorCode::ResourceExhausted.code())
    }

    /// Whether the daemon refused the request for its size (`--max-message-size`).
    pub fn is_oversize(&self) -> bool {
        self.rpc().is_some_and(ErrorObject::is_oversize)
    }

    /// Whether the connection to the daemon is gone (closed, or failing to read or write):
    /// a new connection may succeed where this one cannot.
    pub fn is_lost(&self) -> bool {
        matches!(self, Error::Disconnected | Error::Io(_))
    }

    /// The refusal's reason, if the daemon refused a decision.
    pub fn refusal(&self) -> Option<RefusalReason> {
        match self {
            Error::Refused { reason, .. } => Some(*reason),
            _ => None,
        }
    }

    /// The error of connecting to `socket`: a missing socket file, or one nobody accepts on,
    /// is [`Error::DaemonNotRunning`].
    pub(crate) fn connecting(socket: &std::path::Path, e: std::io::Error) -> Error {
        match e.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
                Error::DaemonNotRunning {
                    socket: socket.to_owned(),
                }
            }
            _ => Error::Io(e),
        }
    }
}
