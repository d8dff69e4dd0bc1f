//! The wire contract between the daemon and its clients: serde types only, no I/O.

mod envelope;
pub mod methods;
mod types;

pub use envelope::*;
pub use methods::*;
pub use types::*;

/// The `message` of a `Subscribe` confirmation.
pub const SUBSCRIPTION_ESTABLISHED: &str = "Subscription established. Waiting for events...";

/// The `message` of a heartbeat line.
pub const HEARTBEAT_MESSAGE: &str = "Connection alive";

/// The default largest incoming message, in bytes.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 1024 * 1024;
