//! Reading one incoming message: JSON-RPC 2.0's envelope checked, its members kept as raw JSON
//! for the router, and every violation turned into the error the client gets.

use std::borrow::Cow;

use hld_client::protocol::{ErrorCode, ErrorObject, InvalidRequestReason, JSONRPC_VERSION};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::error::{invalid_request, parse_error};

/// A valid message.
#[derive(Debug)]
pub enum Message<'a> {
    /// A request, or a notification when `id` is `None`.
    Request {
        /// The id, echoed exactly (a string, a number or `null`).
        id: Option<&'a RawValue>,
        /// The method's name.
        method: Cow<'a, str>,
        /// The params; `None` when absent or `null`.
        params: Option<&'a RawValue>,
    },
    /// The client's reply to a request the server sent (an event, on transports that send
    /// events as requests).
    Reply {
        /// The id of the request it answers.
        id: &'a RawValue,
    },
}

/// A message that cannot be served: the error to answer with, and the id to answer to. Every
/// one is answered, one without an id too (to `null`, as JSON-RPC 2.0 says): only a valid
/// notification goes unanswered.
#[derive(Debug)]
pub struct Rejected {
    /// The error object.
    pub error: ErrorObject,
    /// The id to echo: the message's own when it could be read, else `null`.
    pub id: Box<RawValue>,
}

#[derive(Deserialize)]
struct Members<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<Text<'a>>,
    #[serde(default, borrow)]
    method: Option<Text<'a>>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// A member that is present, `null` included (serde would read `null` as absent).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// A member that must be a string: its text (borrowed unless it has escapes), or
/// [`Text::Other`] for any other JSON value, so that a wrong type is reported, not a parse
/// failure.
enum Text<'a> {
    Str(Cow<'a, str>),
    Other,
}

impl<'a> Text<'a> {
    fn as_str(&self) -> Option<&str> {
        match self {
            Text::Str(s) => Some(s),
            Text::Other => None,
        }
    }

    fn into_str(self) -> Option<Cow<'a, str>> {
        match self {
            Text::Str(s) => Some(s),
            Text::Other => None,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text::Str(Cow::Owned(v)))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_unit<E>(self) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Text<'de>, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Text::Other)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Text<'de>, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Text::Other)
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// An object's members in order, repeats included, each value raw (names borrowed unless
/// they have escapes).
pub(crate) struct Pairs<'a>(pub(crate) Vec<(Cow<'a, str>, &'a RawValue)>);

impl Pairs<'_> {
    /// The rejection of an object that repeats a member: answered to its id when that is
    /// there once and of a valid type, else to `null`.
    fn repeated(&self) -> Rejected {
        let Pairs(pairs) = self;
        let mut ids = pairs
            .iter()
            .filter(|(key, _)| key == "id")
            .map(|(_, id)| *id);
        let id = match (ids.next(), ids.next()) {
            (Some(id), None) if matches!(json_kind(id), "string" | "number" | "null") => {
                id.to_owned()
            }
            _ => null_id(),
        };
        let repeated = pairs
            .iter()
            .enumerate()
            .find(|(i, (key, _))| pairs[..*i].iter().any(|(k, _)| k == key))
            .map_or_else(String::new, |(_, (key, _))| key.escape_debug().to_string());
        Rejected {
            error: invalid_request(
                &format!("Invalid request: duplicate member \"{repeated}\""),
                InvalidRequestReason::InvalidEnvelope,
            ),
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
                while let Some((name, value)) = a.next_entry::<Text<'de>, &'de RawValue>()? {
                    // A JSON object's member names are strings.
                    pairs.push((name.into_str().unwrap_or_default(), value));
                }
                Ok(Pairs(pairs))
            }
        }
        d.deserialize_map(Visitor)
    }
}

/// The raw JSON `null`.
pub fn null_id() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).expect("null is JSON")
}

/// Reads one message. Errors, in the order they are checked: not UTF-8 or not JSON (-32700,
/// id `null`); a batch (-32600 `batch-not-supported`); not an object (-32600
/// `invalid-envelope`); an id that is not a string, a number or `null` (-32600
/// `invalid-id-type`, id `null`); then, echoing the id (`null` without one), a `jsonrpc` other
/// than "2.0" and a `method` that is not a string (-32600 `invalid-envelope`).
pub fn parse(bytes: &[u8]) -> Result<Message<'_>, Rejected> {
    let reject = |error, id: Option<&RawValue>| Rejected {
        error,
        id: id.map_or_else(null_id, ToOwned::to_owned),
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Err(reject(parse_error("invalid UTF-8"), Some(&null_id())));
    };
    if text.trim_start().starts_with('[') {
        let error = match serde_json::from_str::<Vec<&RawValue>>(text) {
            Ok(_) => invalid_request(
                "Batch requests not supported",
                InvalidRequestReason::BatchNotSupported,
            ),
            Err(_) => parse_error("invalid JSON"),
        };
        return Err(reject(error, Some(&null_id())));
    }
    let members: Members = match serde_json::from_str(text) {
        Ok(m) => m,
        Err(e) if e.is_data() => {
            // Every member's type is accepted above, so an object refused here repeats one.
            return Err(match serde_json::from_str::<Pairs>(text) {
                Ok(pairs) => pairs.repeated(),
                Err(_) => {
                    let error = invalid_request(
                        "Invalid request: not a JSON object",
                        InvalidRequestReason::InvalidEnvelope,
                    );
                    reject(error, Some(&null_id()))
                }
            });
        }
        Err(_) => return Err(reject(parse_error("invalid JSON"), Some(&null_id()))),
    };
    if let Some(id) = members.id {
        if !matches!(json_kind(id), "string" | "number" | "null") {
            let error = invalid_request(
                "Invalid request: id must be a string, number or null",
                InvalidRequestReason::InvalidIdType,
            );
            return Err(reject(error, Some(&null_id())));
        }
    }
    let id = members.id;
    let version = members.jsonrpc.as_ref().and_then(Text::as_str);
    if version != Some(JSONRPC_VERSION) {
        let error = invalid_request(
            "Invalid request: must be JSON-RPC 2.0",
            InvalidRequestReason::InvalidEnvelope,
        );
        return Err(reject(error, id));
    }
    if members.method.is_none() && (members.result.is_some() || members.error.is_some()) {
        if let Some(id) = id {
            return Ok(Message::Reply { id });
        }
    }
    let Some(method) = members.method.and_then(Text::into_str) else {
        let error = invalid_request(
            "Invalid request: method must be a string",
            InvalidRequestReason::InvalidEnvelope,
        );
        return Err(reject(error, id));
    };
    let params = members.params.filter(|p| p.get() != "null");
    Ok(Message::Request { id, method, params })
}

/// The error for a method the table does not have.
pub fn method_not_found(method: &str) -> ErrorObject {
    ErrorObject {
        code: ErrorCode::MethodNotFound.code(),
        message: format!("Method not found: {method}"),
        data: None,
    }
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
mod tests {
    use super::*;

    fn request(text: &str) -> (Option<String>, String, Option<String>) {
        match parse(text.as_bytes()).expect("valid") {
            Message::Request { id, method, params } => (
                id.map(|i| i.get().to_owned()),
                method.into_owned(),
                params.map(|p| p.get().to_owned()),
            ),
            Message::Reply { .. } => panic!("a request"),
        }
    }

    fn rejected(text: &[u8]) -> (i64, String) {
        let r = parse(text).expect_err("invalid");
        (r.error.code, r.id.get().to_owned())
    }

    #[test]
    fn requests_keep_their_id_exactly_and_null_params_are_absent() {
        assert_eq!(
            request(r#"{"jsonrpc":"2.0","method":"health","id":7}"#),
            (Some("7".into()), "health".into(), None)
        );
        assert_eq!(
            request(r#" {"id":"a\"b","params":null,"method":"he\u0061lth","jsonrpc":"2.0"} "#),
            (Some(r#""a\"b""#.into()), "health".into(), None)
        );
        assert_eq!(
            request(r#"{"jsonrpc":"2.0","method":"x","params":{"a":1},"id":null}"#),
            (Some("null".into()), "x".into(), Some(r#"{"a":1}"#.into()))
        );
        assert_eq!(
            request(r#"{"jsonrpc":"2.0","method":"x"}"#),
            (None, "x".into(), None)
        );
    }

    #[test]
    fn violations_get_the_right_code_and_id() {
        assert_eq!(rejected(b"\xff"), (-32700, "null".into()));
        assert_eq!(rejected(b"{nope"), (-32700, "null".into()));
        assert_eq!(rejected(b"[1]"), (-32600, "null".into()));
        assert_eq!(rejected(b"[1"), (-32700, "null".into()));
        assert_eq!(rejected(b"42"), (-32600, "null".into()));
        assert_eq!(
            rejected(br#"{"jsonrpc":"2.0","method":"x","id":{}}"#),
            (-32600, "null".into())
        );
        assert_eq!(
            rejected(br#"{"jsonrpc":"1.0","method":"x","id":3}"#),
            (-32600, "3".into())
        );
        assert_eq!(
            rejected(br#"{"jsonrpc":"2.0","method":5,"id":"k"}"#),
            (-32600, r#""k""#.into())
        );
        // Without an id, a violation is answered to `null`: only a valid notification is not.
        for text in [
            &br#"{"jsonrpc":"2.0","method":5}"#[..],
            b"{}",
            br#"{"method":"version"}"#,
            br#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#,
        ] {
            assert_eq!(rejected(text), (-32600, "null".into()));
        }
    }

    #[test]
    fn a_repeated_member_is_answered_to_the_id_when_it_is_readable() {
        let message = |text: &str| {
            let r = parse(text.as_bytes()).expect_err("invalid");
            (r.error.code, r.error.message, r.id.get().to_owned())
        };
        assert_eq!(
            message(r#"{"jsonrpc":"2.0","method":"a","method":"b","id":12}"#),
            (
                -32600,
                r#"Invalid request: duplicate member "method""#.into(),
                "12".into()
            )
        );
        assert_eq!(
            message(r#"{"jsonrpc":"2.0","method":"a","id":1,"id":2}"#).2,
            "null"
        );
        assert_eq!(
            message(r#"{"id":[1],"jsonrpc":"2.0","jsonrpc":"2.0"}"#).2,
            "null"
        );
    }

    #[test]
    fn a_reply_from_the_client_is_told_apart() {
        let reply = parse(br#"{"jsonrpc":"2.0","result":{},"id":"s1"}"#).unwrap();
        assert!(matches!(reply, Message::Reply { id } if id.get() == r#""s1""#));
        let error = parse(br#"{"jsonrpc":"2.0","error":{"code":1,"message":"x"},"id":"s2"}"#);
        assert!(matches!(error, Ok(Message::Reply { .. })));
    }
}
