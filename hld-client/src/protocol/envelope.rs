//! The JSON-RPC 2.0 envelope: request ids, requests, responses, error objects and codes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The only protocol version spoken.
pub const JSONRPC_VERSION: &str = "2.0";

/// A request id: a JSON number, string or `null`, kept with its exact JSON type and value.
/// Exhaustive: JSON-RPC 2.0 allows no other id, and the daemon must echo each exactly.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A numeric id; `serde_json::Number` keeps integers and floats apart.
    Number(serde_json::Number),
    /// A string id.
    String(String),
    /// An explicit `null` id (a request, not a notification).
    Null,
}

impl From<u64> for RequestId {
    fn from(n: u64) -> Self {
        RequestId::Number(n.into())
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

/// An outgoing request, as a client writes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request<P> {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The method name, case-sensitive.
    pub method: String,
    /// The params object.
    pub params: P,
    /// The id; absent for a notification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
}

impl<P> Request<P> {
    /// A request with an id.
    pub fn new(method: &str, params: P, id: RequestId) -> Self {
        Request {
            jsonrpc: JSONRPC_VERSION.to_owned(),
            method: method.to_owned(),
            params,
            id: Some(id),
        }
    }
}

/// A response line as a client reads it. Subscription lines reuse this shape with `id: null`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Response {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The result on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
    /// The echoed request id (`null` for framing errors and subscription lines).
    #[serde(default)]
    pub id: Option<RequestId>,
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// One of [`ErrorCode`]'s values.
    pub code: i64,
    /// A short human-readable message; never contains paths or secrets.
    pub message: String,
    /// Structured detail; see [`InvalidRequestData`] and [`InvalidParamsData`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// Whether this refuses a message over the daemon's size limit (-32600, `oversize`).
    pub fn is_oversize(&self) -> bool {
        self.detail::<InvalidRequestData>(ErrorCode::InvalidRequest)
            .is_some_and(|d| d.reason == InvalidRequestReason::Oversize)
    }

    /// The parameter refused and why, for an invalid-params error (-32602) that says it.
    pub fn invalid_params(&self) -> Option<InvalidParamsData> {
        self.detail(ErrorCode::InvalidParams)
    }

    /// `data` read as `T`, when this is a `code` error whose data is one.
    fn detail<T: serde::de::DeserializeOwned>(&self, code: ErrorCode) -> Option<T> {
        let data = self.data.clone().filter(|_| self.code == code.code())?;
        serde_json::from_value(data).ok()
    }
}

impl std::fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RPC error {}: {}", self.code, self.message)
    }
}

/// The error codes used by the daemon: JSON-RPC's reserved ones, and Holon-RPC's (spec/002,
/// gRPC's numbering) on the WebSocket transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorCode {
    /// Invalid JSON or UTF-8.
    ParseError,
    /// Not a valid request object (see [`InvalidRequestReason`]).
    InvalidRequest,
    /// Unknown method.
    MethodNotFound,
    /// Wrong or missing params (see [`InvalidParamsData`]).
    InvalidParams,
    /// A fault inside the daemon.
    InternalError,
    /// Holon-RPC's 8 (`RESOURCE_EXHAUSTED`): a reply over the WebSocket transport's 1 MiB
    /// limit; ask for less (page with `after_sequence` and `limit`).
    ResourceExhausted,
}

impl ErrorCode {
    /// The numeric code on the wire.
    pub const fn code(self) -> i64 {
        match self {
            ErrorCode::ParseError => -32700,
            ErrorCode::InvalidRequest => -32600,
            ErrorCode::MethodNotFound => -32601,
            ErrorCode::InvalidParams => -32602,
            ErrorCode::InternalError => -32603,
            ErrorCode::ResourceExhausted => 8,
        }
    }

    /// The code for a numeric value, if it is one of ours.
    pub fn from_code(code: i64) -> Option<Self> {
        [
            ErrorCode::ParseError,
            ErrorCode::InvalidRequest,
            ErrorCode::MethodNotFound,
            ErrorCode::InvalidParams,
            ErrorCode::InternalError,
            ErrorCode::ResourceExhausted,
        ]
        .into_iter()
        .find(|c| c.code() == code)
    }
}

/// `error.data.reason` values of a -32600 reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum InvalidRequestReason {
    /// The message was longer than the configured limit.
    Oversize,
    /// The id was an object, array or boolean.
    InvalidIdType,
    /// A JSON array (batch) was sent.
    BatchNotSupported,
    /// `jsonrpc` was not `"2.0"`, `method` not a string, or the message not an object.
    InvalidEnvelope,
    /// A stdio frame's `Content-Type` was not `application/vscode-jsonrpc`.
    UnsupportedContentType,
    /// A stdio frame's charset was not UTF-8.
    BadCharset,
    /// A stdio frame's header section was too large.
    HeaderTooLarge,
}

/// `error.data` of a -32600 reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvalidRequestData {
    /// Why the request was refused.
    pub reason: InvalidRequestReason,
}

/// `received` of [`InvalidParamsData`] when an id names nothing.
pub const UNKNOWN_ID: &str = "unknown id";

/// `error.data` of a -32602 reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvalidParamsData {
    /// The offending parameter (`params` for the params value itself).
    pub param: String,
    /// What was expected, e.g. `string`.
    pub expected: String,
    /// What was received, e.g. `integer`, `missing`, or [`UNKNOWN_ID`].
    pub received: String,
    /// The accepted values, when the parameter is an enumeration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted: Option<Vec<String>>,
}
