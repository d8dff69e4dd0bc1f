//! Transports turn bytes into messages and messages into bytes; everything else is shared.

pub mod ndjson;
pub mod unix;

use bytes::Bytes;

/// One unit read from a transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A complete message (not yet parsed).
    Message(Bytes),
    /// A message over the size limit; its bytes were discarded.
    Oversize,
}
