//! JSON-RPC dispatch: validates one incoming message, routes it through the method table and
//! serialises the reply. Transport-independent.

pub mod envelope;
pub mod error;
pub mod table;

use std::borrow::Cow;
use std::sync::Arc;

use hld_client::protocol::{ErrorObject, InvalidRequestReason, SubscribeParams, JSONRPC_VERSION};
use serde_json::value::RawValue;

use self::error::{invalid_request, parse_error, RpcError};
use self::table::{decode_params, json_kind, Kind};
use crate::daemon::Daemon;

/// What the connection loop should do with one message.
#[derive(Debug)]
pub enum Outcome {
    /// Write this line (it ends in `\n`).
    Reply(Vec<u8>),
    /// A notification: nothing to write.
    Silent,
    /// `Subscribe`: hand the connection to the subscription loop.
    Subscribe {
        /// The raw JSON of the request id.
        id: String,
        /// The validated filter.
        params: SubscribeParams,
    },
}

const NULL_ID: &str = "null";

/// The start of every success line, before the result.
pub const SUCCESS_HEAD: &[u8] = b"{\"jsonrpc\":\"2.0\",\"result\":";

/// Serialises a success line.
pub fn success_line(result: &[u8], id: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(SUCCESS_HEAD.len() + result.len() + id.len() + 8);
    out.extend_from_slice(SUCCESS_HEAD);
    out.extend_from_slice(result);
    finish_success(out, id)
}

/// Completes a success line that holds [`SUCCESS_HEAD`] and the result: adds the id.
pub fn finish_success(mut line: Vec<u8>, id: &str) -> Vec<u8> {
    line.extend_from_slice(b",\"id\":");
    line.extend_from_slice(id.as_bytes());
    line.extend_from_slice(b"}\n");
    line
}

/// Serialises an error line.
pub fn error_line(error: &ErrorObject, id: &str) -> Vec<u8> {
    let mut out = b"{\"jsonrpc\":\"2.0\",\"error\":".to_vec();
    // An ErrorObject always serialises.
    serde_json::to_writer(&mut out, error).expect("error object serialises");
    out.extend_from_slice(b",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b"}\n");
    out
}

/// The reply to a message that was over the size limit.
pub fn oversize_line() -> Vec<u8> {
    tracing::warn!("rejected an oversize message");
    error_line(
        &invalid_request("Message too large", InvalidRequestReason::Oversize),
        NULL_ID,
    )
}

/// Handles one message (the bytes of one frame). A success reply is written into `buf`, an
/// empty buffer whose capacity the caller wants reused.
pub async fn handle_message(daemon: &Arc<Daemon>, bytes: &[u8], buf: Vec<u8>) -> Outcome {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(_) => return reject(parse_error("invalid UTF-8"), NULL_ID),
    };
    // Whitespace around the message is JSON's: the envelope's parsers skip it.
    if text.trim_start().starts_with('[') {
        return match serde_json::from_str::<Vec<&RawValue>>(text) {
            Ok(_) => reject(
                invalid_request(
                    "Batch requests not supported",
                    InvalidRequestReason::BatchNotSupported,
                ),
                NULL_ID,
            ),
            Err(_) => reject(parse_error("invalid JSON"), NULL_ID),
        };
    }
    let incoming = match envelope::parse(text) {
        Ok(i) => i,
        Err(e) if e.is_data() => {
            return reject(
                invalid_request(
                    "Invalid request: not a JSON object",
                    InvalidRequestReason::InvalidEnvelope,
                ),
                NULL_ID,
            )
        }
        Err(_) => return reject(parse_error("invalid JSON"), NULL_ID),
    };

    let id = match incoming.id {
        None => None,
        Some(raw) if matches!(json_kind(raw), "string" | "number" | "null") => Some(raw),
        Some(_) => {
            return reject(
                invalid_request(
                    "Invalid request: id must be a string, number or null",
                    InvalidRequestReason::InvalidIdType,
                ),
                NULL_ID,
            )
        }
    };
    let reply_id = id.unwrap_or(NULL_ID);

    let version_ok = incoming.jsonrpc.and_then(json_str).as_deref() == Some(JSONRPC_VERSION);
    if !version_ok {
        return reply_unless_notification(
            id,
            invalid_request(
                "Invalid request: must be JSON-RPC 2.0",
                InvalidRequestReason::InvalidEnvelope,
            ),
        );
    }
    let Some(method) = incoming.method.and_then(json_str) else {
        return reply_unless_notification(
            id,
            invalid_request(
                "Invalid request: method must be a string",
                InvalidRequestReason::InvalidEnvelope,
            ),
        );
    };

    let Some(entry) = daemon.methods.get(&method) else {
        return reply_unless_notification(
            id,
            ErrorObject {
                code: hld_client::protocol::ErrorCode::MethodNotFound.code(),
                message: format!("Method not found: {method}"),
                data: None,
            },
        );
    };
    tracing::debug!(method = %method, id = reply_id, "request");

    match &entry.kind {
        Kind::Subscribe => {
            let Some(id) = id else {
                tracing::warn!("Subscribe sent as a notification; ignored");
                return Outcome::Silent;
            };
            match decode_params::<hld_client::protocol::Subscribe>(incoming.params) {
                Ok(params) => Outcome::Subscribe {
                    id: id.to_owned(),
                    params,
                },
                Err(e) => finish(&method, id, Some(id), Err(e)),
            }
        }
        Kind::Call(handler) => {
            let result = handler(daemon.clone(), incoming.params, buf).await;
            finish(&method, reply_id, id, result)
        }
    }
}

/// The string a raw JSON value holds, if it is a string: borrowed unless it has escapes.
fn json_str(raw: &str) -> Option<Cow<'_, str>> {
    // A raw value is valid JSON: a string without a backslash is its bytes between the quotes.
    match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        // A byte loop: these strings are a few bytes long, too short for `memchr` to pay.
        Some(inner) if !inner.bytes().any(|b| b == b'\\') => Some(Cow::Borrowed(inner)),
        _ => serde_json::from_str::<String>(raw).ok().map(Cow::Owned),
    }
}

fn finish(
    method: &str,
    reply_id: &str,
    id: Option<&str>,
    result: Result<Vec<u8>, RpcError>,
) -> Outcome {
    match result {
        Ok(line) => match id {
            Some(id) => Outcome::Reply(finish_success(line, id)),
            None => Outcome::Silent,
        },
        Err(err) => {
            // Client errors are logged at warn by `reject`; faults are logged here in full.
            if let RpcError::Internal { public, source } = &err {
                tracing::error!(method, id = reply_id, error = %public, detail = %source, "request failed");
            }
            reply_unless_notification(id, err.to_object())
        }
    }
}

fn reply_unless_notification(id: Option<&str>, error: ErrorObject) -> Outcome {
    match id {
        Some(id) => reject(error, id),
        None => Outcome::Silent,
    }
}

fn reject(error: ErrorObject, id: &str) -> Outcome {
    if error.code != hld_client::protocol::ErrorCode::InternalError.code() {
        tracing::warn!(code = error.code, id, error = %error.message, "rejected request");
    }
    Outcome::Reply(error_line(&error, id))
}

#[cfg(test)]
mod tests {
    use super::json_str;

    #[test]
    fn json_str_borrows_plain_strings_and_decodes_escaped_ones() {
        assert!(matches!(
            json_str(r#""health""#),
            Some(std::borrow::Cow::Borrowed("health"))
        ));
        assert_eq!(json_str(r#""he\u0061lth""#).as_deref(), Some("health"));
        assert_eq!(json_str(r#""a\"b""#).as_deref(), Some("a\"b"));
        assert_eq!(json_str(r#""""#).as_deref(), Some(""));
        assert_eq!(json_str("2.0"), None);
        assert_eq!(json_str("null"), None);
        assert_eq!(json_str(r#"["2.0"]"#), None);
    }
}
