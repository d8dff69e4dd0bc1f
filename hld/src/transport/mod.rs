//! Transports turn bytes into messages and messages into bytes; the connection loop
//! (`rpc::serve`) and everything above it are shared.

pub mod content_length;
pub mod ndjson;
pub mod pipes;
pub mod unix;
pub mod websocket;

use bytes::Bytes;
use hld_client::protocol::ErrorObject;

use crate::rpc::Response;

/// One unit read from a transport.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// A complete message (not yet parsed).
    Message(Bytes),
    /// A message the framing refused (over the size limit, say), already discarded: answered
    /// with this error and `id: null`.
    Rejected(ErrorObject),
    /// A message the transport answered itself (a protocol's own method, or a violation it
    /// can answer to the message's id): this reply goes out in its turn.
    Answered(Response),
    /// The peer's reply to a server-initiated request, already checked: the request's id.
    Replied(String),
}
