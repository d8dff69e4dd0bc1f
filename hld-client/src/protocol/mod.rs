//! The wire contract between the daemon and its clients: serde types only, no I/O.
//!
//! # The protocol
//!
//! The daemon speaks [JSON-RPC 2.0](https://www.jsonrpc.org/specification) over a Unix socket
//! (`~/.humanlayer/daemon.sock` unless configured otherwise, see [`crate::config`]). The
//! framing is NDJSON: every request and every reply is one JSON object on one line, ended by
//! `\n`, and a line is at most [`DEFAULT_MAX_MESSAGE_SIZE`] bytes unless the daemon runs with
//! another `--max-message-size`. Batches are not supported. Replies carry the request's `id`,
//! so one connection can have many calls in flight.
//!
//! ```json
//! {"jsonrpc":"2.0","method":"version","params":{},"id":1}
//! {"jsonrpc":"2.0","result":{"version":"0.1.0"},"id":1}
//! ```
//!
//! A failure is an [`ErrorObject`] with one of the [`ErrorCode`]s: -32700 (not JSON), -32600
//! (not a valid request; `data` is an [`InvalidRequestData`]), -32601 (unknown method),
//! -32602 (wrong or missing params; `data` is an [`InvalidParamsData`] naming the parameter)
//! or -32603 (a fault inside the daemon; the message never holds paths or secrets).
//!
//! ```json
//! {"jsonrpc":"2.0","error":{"code":-32602,"message":"query is required","data":{"param":"query","expected":"string","received":"missing"}},"id":2}
//! ```
//!
//! # Methods
//!
//! Each method is a zero-sized type implementing [`Method`]: its wire name
//! ([`Method::NAME`]), its params ([`Method::Params`]) and its result ([`Method::Result`]),
//! described once and shared by the daemon's router, the clients and the tests. A method that
//! takes no params uses [`NoParams`]. Each method's page shows its request and reply lines and
//! the errors to expect. By domain:
//!
//! - sessions: [`LaunchSession`], [`ListSessions`], [`GetSessionState`], [`GetConversation`],
//!   [`ContinueSession`] and [`InterruptSession`], with the records they carry
//!   ([`SessionInfo`], [`SessionState`], [`ConversationEvent`], [`McpConfig`]);
//! - live sessions: [`SendMessage`], [`ListQueuedMessages`] and [`CancelQueuedMessage`], with
//!   [`QueuedMessage`]; completing a reply: [`ListSlashCommands`] and [`SuggestFiles`];
//! - approvals: [`FetchApprovals`], [`SendDecision`], [`CreateApproval`] and [`GetApproval`],
//!   with [`Approval`];
//! - organising sessions: [`UpdateSessionTitle`], [`ArchiveSession`],
//!   [`BulkArchiveSessions`], [`GetSessionLeaves`], [`UpdateSessionSettings`],
//!   [`GetRecentPaths`], [`SearchSessions`] and [`DeleteSession`], with [`SessionControl`];
//! - drafts: [`CreateDraft`], [`UpdateDraft`], [`LaunchDraft`], [`DiscardDraft`] and
//!   [`RestoreDraft`], with [`DraftState`];
//! - isolated sessions (git worktrees): [`GetSessionDiff`], [`MergeSession`] and
//!   [`DiscardSession`], with [`WorktreeInfo`];
//! - cost and limits: [`GetUsage`] and [`GetRateLimits`], with [`UsageLimit`] and
//!   [`RateLimitWindow`]; notifications arrive as [`Event::Notification`] ([`Notification`]);
//! - events: [`Subscribe`], which streams [`Event`]s;
//! - introspection: [`Health`], [`Initialize`], [`Version`], [`ListMethods`],
//!   [`DescribeMethods`], [`SetLogLevel`] and [`Shutdown`];
//! - the envelope: [`Request`], [`Response`], [`RequestId`], [`ErrorObject`] and
//!   [`ErrorCode`].
//!
//! Every type is re-exported here: `use hld_client::protocol::*` brings in all of them.
//!
//! # Calling a method
//!
//! [`crate::Client::call`] sends any method with its typed params and decodes its typed
//! result; a JSON-RPC error comes back as [`crate::Error::Rpc`].
//!
//! ```no_run
//! use hld_client::protocol::{ErrorCode, GetSessionState, SessionIdParams};
//! use hld_client::Client;
//!
//! # async fn demo() -> Result<(), hld_client::Error> {
//! let client = Client::connect_default().await?;
//! let params = SessionIdParams {
//!     session_id: "4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13".into(),
//! };
//! match client.call::<GetSessionState>(params).await {
//!     Ok(reply) => println!("{} is {}", reply.session.id, reply.session.status),
//!     Err(e) if e.rpc().is_some_and(|o| o.code == ErrorCode::InvalidParams.code()) => {
//!         eprintln!("no such session: {e}")
//!     }
//!     Err(e) => return Err(e),
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Most methods also have a helper on the client (`client.health()`,
//! `client.launch_session(params)`, `client.get_session_state(id)`, …). [`Subscribe`] takes
//! over its connection: open it with [`crate::Client::subscribe`].

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// A method: its wire name, a description, human-readable signatures for `describeMethods`,
/// and its params and result types.
pub trait Method {
    /// The wire name (case-sensitive).
    const NAME: &'static str;
    /// One line for `listMethods`.
    const DESCRIPTION: &'static str;
    /// `name: type` strings for `describeMethods`; optional params end in `?`.
    const PARAMS: &'static [&'static str];
    /// The result type for `describeMethods`.
    const RETURNS: &'static str;
    /// The params object. Absent and `null` params decode as `{}`.
    type Params: Serialize + DeserializeOwned + Send + 'static;
    /// The result.
    type Result: Serialize + DeserializeOwned + Send + 'static;
}

/// Params of a method that takes none; any object is accepted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NoParams {}

/// Declares a method: `method!(docs Type, "wireName", "description", [params], "returns",
/// Params, Result)`. The attributes first (every `///` line, however many, is one `#[doc]`)
/// go on the type. Defined before the submodules so that they can use it.
macro_rules! method {
    ($(#[$meta:meta])* $ty:ident, $name:literal, $desc:literal, [$($param:literal),*], $returns:literal, $params:ty, $result:ty) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy)]
        pub struct $ty;
        impl $crate::protocol::Method for $ty {
            const NAME: &'static str = $name;
            const DESCRIPTION: &'static str = $desc;
            const PARAMS: &'static [&'static str] = &[$($param),*];
            const RETURNS: &'static str = $returns;
            type Params = $params;
            type Result = $result;
        }
    };
}

/// Declares a string enum of the wire that keeps values it does not know:
/// `open_enum!(docs Type { docs Variant = "wire", … })`. A newer daemon may send a value this
/// version lacks; it reads as `Unknown(value)` and is written back unchanged, so that a new
/// status or event type never fails a whole reply.
macro_rules! open_enum {
    ($(#[$meta:meta])* $ty:ident { $($(#[$vmeta:meta])* $variant:ident = $wire:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $ty {
            $($(#[$vmeta])* $variant,)*
            /// A value this version does not know (from a newer daemon), kept as sent.
            Unknown(String),
        }

        impl $ty {
            /// Every value this version knows, in order.
            pub const KNOWN: [$ty; [$($wire),*].len()] = [$($ty::$variant),*];

            /// The wire spellings of [`Self::KNOWN`].
            pub const NAMES: [&'static str; [$($wire),*].len()] = [$($wire),*];

            /// The wire spelling.
            pub fn as_str(&self) -> &str {
                match self {
                    $($ty::$variant => $wire,)*
                    $ty::Unknown(other) => other,
                }
            }

            /// The known value `s` spells, if it is one.
            pub fn parse(s: &str) -> Option<Self> {
                match s {
                    $($wire => Some($ty::$variant),)*
                    _ => None,
                }
            }
        }

        impl From<&str> for $ty {
            fn from(s: &str) -> Self {
                Self::parse(s).unwrap_or_else(|| $ty::Unknown(s.to_owned()))
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s = String::deserialize(deserializer)?;
                Ok(Self::parse(&s).unwrap_or($ty::Unknown(s)))
            }
        }
    };
}

mod approvals;
mod commands;
mod control;
mod conversation;
mod drafts;
mod envelope;
mod events;
mod interrupt;
mod introspection;
mod mcp;
mod messages;
mod notify;
mod session_calls;
mod sessions;
mod usage;
mod worktrees;

pub use approvals::*;
pub use commands::*;
pub use control::*;
pub use conversation::*;
pub use drafts::*;
pub use envelope::*;
pub use events::*;
pub use interrupt::*;
pub use introspection::*;
pub use mcp::*;
pub use messages::*;
pub use notify::*;
pub use session_calls::*;
pub use sessions::*;
pub use usage::*;
pub use worktrees::*;

/// The default largest incoming message, in bytes.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 1024 * 1024;

#[cfg(test)]
mod tests;
