//! Reading one incoming message: the JSON-RPC 2.0 envelope checked, members kept raw for the
//! router, violations turned into errors. holon-rpc (spec/002) asks for [`Strictness::Strict`].

use std::borrow::Cow;

use hld_client::protocol::{ErrorCode, ErrorObject, InvalidRequestReason, JSONRPC_VERSION};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::error::{invalid_request, parse_error};

#[derive(Debug)]
pub enum Message<'a> {
    /// A request, or a notification when `id` is `None`; `params` absent or `null` is `None`.
    Request {
        id: Option<&'a RawValue>,
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// The peer's reply to a request the server sent (strict parsing only).
    Reply { id: &'a RawValue },
}

/// A request a transport read [`Strictness::Strict`]ly (holon-rpc), kept for `serve`.
#[derive(Debug, Clone)]
pub struct Request {
    pub id: Box<RawValue>,
    pub method: String,
    pub params: Option<Box<RawValue>>,
}

/// A message that cannot be served: the error to answer with, and the id to answer to.
#[derive(Debug)]
pub struct Rejected {
    pub error: ErrorObject,
    /// The id, if readable; without one, lenient answers to `null`, strict closes the connection.
    pub id: Option<Box<RawValue>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strictness {
    /// JSON-RPC 2.0, requests only: what the Unix socket and stdio take.
    Lenient,
    /// spec/002 (holon-rpc): only the six members, each once; an `id` that is one non-empty
    /// string; `params` an object; and the peer's replies to the server's requests.
    Strict,
}

#[derive(Deserialize)]
struct Members<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
}

/// A member that is present, `null` included (serde would read `null` as absent).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// A JSON string, borrowed unless it has escapes.
#[derive(Deserialize)]
struct Str<'a>(#[serde(borrow)] Cow<'a, str>);

/// The text of `raw` if it is a JSON string; `None` for any other value.
fn string_of(raw: &RawValue) -> Option<Cow<'_, str>> {
    serde_json::from_str::<Str>(raw.get()).ok().map(|Str(s)| s)
}

/// An object's members in order, repeats included, each value raw.
struct Pairs<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl Pairs<'_> {
    /// The rejection of an object that repeats a member, to its id if that is there once.
    fn repeated(&self) -> Rejected {
        let Pairs(pairs) = self;
        let mut ids = pairs
            .iter()
            .filter(|(key, _)| key == "id")
            .map(|(_, id)| *id);
        let id = match (ids.next(), ids.next()) {
            (Some(id), None) if matches!(json_kind(id), "string" | "number" | "null") => {
                Some(id.to_owned())
            }
            _ => None,
        };
        let repeated = pairs
            .iter()
            .enumerate()
            .find(|(i, (key, _))| pairs[..*i].iter().any(|(k, _)| k == key))
            .map_or_else(String::new, |(_, (key, _))| key.escape_debug().to_string());
        Rejected {
            error: envelope_error(&format!("duplicate member \"{repeated}\"")),
            id,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Pairs<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Pairs<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Pairs<'de>, A::Error> {
                let mut pairs = Vec::new();
                while let Some((Str(name), value)) = a.next_entry::<Str<'de>, &'de RawValue>()? {
                    pairs.push((name, value));
                }
                Ok(Pairs(pairs))
            }
        }
        d.deserialize_map(Visitor)
    }
}

pub fn null_id() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).expect("null is JSON")
}

pub fn parse(bytes: &[u8], strictness: Strictness) -> Result<Message<'_>, Rejected> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Err(reject(parse_error("invalid UTF-8"), None));
    };
    match strictness {
        Strictness::Lenient => parse_lenient(text),
        Strictness::Strict => parse_strict(text),
    }
}

fn reject(error: ErrorObject, id: Option<&RawValue>) -> Rejected {
    Rejected {
        error,
        id: id.map(ToOwned::to_owned),
    }
}

/// Errors, in order: not JSON (-32700, id `null`); a batch (-32600 `batch-not-supported`); not
/// an object (-32600 `invalid-envelope`); a bad id type (-32600 `invalid-id-type`, id `null`);
/// then, to the id, a `jsonrpc` other than "2.0" or a non-string `method` (`invalid-envelope`).
fn parse_lenient(text: &str) -> Result<Message<'_>, Rejected> {
    if text.trim_start().starts_with('[') {
        let error = match serde_json::from_str::<Vec<&RawValue>>(text) {
            Ok(_) => invalid_request(
                "Batch requests not supported",
                InvalidRequestReason::BatchNotSupported,
            ),
            Err(_) => parse_error("invalid JSON"),
        };
        return Err(reject(error, None));
    }
    let members: Members = match serde_json::from_str(text) {
        Ok(m) => m,
        Err(e) if e.is_data() => {
            // Every member's type is accepted above, so an object refused here repeats one.
            return Err(match serde_json::from_str::<Pairs>(text) {
                Ok(pairs) => pairs.repeated(),
                Err(_) => reject(envelope_error("not a JSON object"), None),
            });
        }
        Err(_) => return Err(reject(parse_error("invalid JSON"), None)),
    };
    if let Some(id) = members.id {
        if !matches!(json_kind(id), "string" | "number" | "null") {
            let error = invalid_request(
                "Invalid request: id must be a string, number or null",
                InvalidRequestReason::InvalidIdType,
            );
            return Err(reject(error, None));
        }
    }
    let id = members.id;
    if !members
        .jsonrpc
        .is_some_and(|v| string_is(v, JSONRPC_VERSION))
    {
        return Err(reject(envelope_error("must be JSON-RPC 2.0"), id));
    }
    let Some(method) = members.method.and_then(string_of) else {
        return Err(reject(envelope_error("method must be a string"), id));
    };
    let params = members.params.filter(|p| p.get() != "null");
    Ok(Message::Request { id, method, params })
}

/// -32600 `invalid-envelope`, `Invalid request: {what}`.
fn envelope_error(what: &str) -> ErrorObject {
    invalid_request(
        &format!("Invalid request: {what}"),
        InvalidRequestReason::InvalidEnvelope,
    )
}

const MEMBERS: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

/// spec/002's rules: what is not one object with a readable id cannot be answered (the
/// error's message names the rule, for the close reason); the rest is answered to the id.
fn parse_strict(text: &str) -> Result<Message<'_>, Rejected> {
    let unanswerable = |code: ErrorCode, message: &str| {
        let error = ErrorObject {
            code: code.code(),
            message: message.to_owned(),
            data: None,
        };
        Err(reject(error, None))
    };
    let members = match serde_json::from_str::<Pairs>(text) {
        Ok(Pairs(members)) => members,
        Err(e) if e.is_data() => {
            return unanswerable(ErrorCode::InvalidRequest, "not a JSON object")
        }
        Err(_) => return unanswerable(ErrorCode::ParseError, "parse error: invalid JSON"),
    };
    let get = |name: &str| members.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
    let mut ids = members.iter().filter(|(name, _)| name == "id");
    let id = match (ids.next(), ids.next()) {
        (Some((_, id)), None) if is_nonempty_string(id) => *id,
        _ => return unanswerable(ErrorCode::InvalidRequest, "id must be one non-empty string"),
    };
    let invalid = |what: &str| Err(reject(envelope_error(what), Some(id)));
    for (i, (name, _)) in members.iter().enumerate() {
        if !MEMBERS.contains(&name.as_ref()) {
            return invalid(&format!("unknown member \"{}\"", name.escape_debug()));
        }
        if members[..i].iter().any(|(n, _)| n == name) {
            return invalid(&format!("duplicate member \"{name}\""));
        }
    }
    if !get("jsonrpc").is_some_and(|v| string_is(v, JSONRPC_VERSION)) {
        return invalid("jsonrpc must be \"2.0\"");
    }
    let (params, result, error) = (get("params"), get("result"), get("error"));
    if let Some(method) = get("method") {
        let Some(method) = string_of(method).filter(|m| !m.is_empty()) else {
            return invalid("method must be a non-empty string");
        };
        if result.is_some() || error.is_some() {
            return invalid("a request has no result or error");
        }
        if params.is_some_and(|p| !p.get().starts_with('{')) {
            return invalid("params must be an object");
        }
        let id = Some(id);
        return Ok(Message::Request { id, method, params });
    }
    if params.is_some() {
        return invalid("a response has no params");
    }
    match (result, error) {
        (Some(_), Some(_)) => invalid("a response has result or error, not both"),
        (None, None) => invalid("method, result or error is required"),
        (Some(_), None) => Ok(Message::Reply { id }),
        (None, Some(error)) if is_error_object(error) => Ok(Message::Reply { id }),
        (None, Some(_)) => {
            invalid("error must be an object with an integer code and a string message")
        }
    }
}

/// Whether `raw` is a JSON string of at least one character.
fn is_nonempty_string(raw: &RawValue) -> bool {
    raw.get().starts_with('"') && raw.get() != "\"\""
}

/// Whether `raw` is the JSON string `expected` (escaped or not).
fn string_is(raw: &RawValue, expected: &str) -> bool {
    string_of(raw).is_some_and(|t| t == expected)
}

/// Whether `raw` is an error object: an integer `code` and a string `message`, each once.
fn is_error_object(raw: &RawValue) -> bool {
    let Ok(Pairs(members)) = serde_json::from_str::<Pairs>(raw.get()) else {
        return false;
    };
    let one = |name: &str, valid: fn(&str) -> bool| {
        let mut found = members.iter().filter(|(n, _)| n == name);
        matches!((found.next(), found.next()), (Some((_, v)), None) if valid(v.get()))
    };
    // A JSON number without a fraction or an exponent is an integer.
    let integer = |v: &str| v.bytes().all(|b| b.is_ascii_digit() || b == b'-');
    let string = |v: &str| v.starts_with('"');
    one("code", integer) && one("message", string)
}

/// The JSON type of a raw value, as error data names it.
pub fn json_kind(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "boolean",
        Some(b'n') => "null",
        _ => "number",
    }
}

#[cfg(test)]
#[path = "envelope_tests.rs"]
mod tests;
