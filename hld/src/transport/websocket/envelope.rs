//! spec/002's envelope, checked strictly on every text frame: one JSON object with only
//! `jsonrpc`, `id`, `method`, `params`, `result` and `error`, each once; `jsonrpc` "2.0"; an
//! `id` that is a non-empty string; then the shape of a request or of a response. What each
//! violation gets is the table in the [module docs](super): -32600 to the message's own id
//! where one can be read, else the connection closes with 1002.

use std::borrow::Cow;

use hld_client::protocol::{ErrorObject, InvalidRequestReason, JSONRPC_VERSION};
use serde_json::value::RawValue;

use crate::rpc::envelope::Pairs;
use crate::rpc::error::invalid_request;

/// The reserved method every peer answers with `{}`.
pub const HEARTBEAT: &str = "rpc.heartbeat";

/// The members an envelope may have.
const MEMBERS: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

/// What a text frame holds.
#[derive(Debug)]
pub enum Checked<'a> {
    /// A request, to be served.
    Request {
        /// Its id (a non-empty JSON string, raw).
        id: &'a RawValue,
        /// Whether it is `rpc.heartbeat`.
        heartbeat: bool,
    },
    /// A response to a request the server sent.
    Reply {
        /// Its id (a non-empty JSON string, raw).
        id: &'a RawValue,
    },
    /// A violation answered with this -32600 error to the message's id.
    Invalid {
        /// The message's id (raw).
        id: &'a RawValue,
        /// The error.
        error: ErrorObject,
    },
    /// A violation with no string id to answer to: the connection closes (1002) with this
    /// reason, which starts with the JSON-RPC code it would have had.
    Unanswerable(&'static str),
}

/// Checks one text frame.
pub fn check(text: &str) -> Checked<'_> {
    let members = match serde_json::from_str::<Pairs>(text) {
        Ok(Pairs(members)) => members,
        Err(e) if e.is_data() => return Checked::Unanswerable("-32600 not a JSON object"),
        Err(_) => return Checked::Unanswerable("-32700 parse error: invalid JSON"),
    };
    let get = |name: &str| members.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
    let mut ids = members.iter().filter(|(name, _)| name == "id");
    let id = match (ids.next(), ids.next()) {
        (Some((_, id)), None) if is_nonempty_string(id) => *id,
        _ => return Checked::Unanswerable("-32600 id must be one non-empty string"),
    };
    let invalid = |message: String| Checked::Invalid {
        id,
        error: invalid_request(
            &format!("Invalid request: {message}"),
            InvalidRequestReason::InvalidEnvelope,
        ),
    };
    for (i, (name, _)) in members.iter().enumerate() {
        if !MEMBERS.contains(&name.as_ref()) {
            return invalid(format!("unknown member \"{}\"", name.escape_debug()));
        }
        if members[..i].iter().any(|(n, _)| n == name) {
            return invalid(format!("duplicate member \"{name}\""));
        }
    }
    if !get("jsonrpc").is_some_and(|v| string_is(v, JSONRPC_VERSION)) {
        return invalid("jsonrpc must be \"2.0\"".into());
    }
    let (params, result, error) = (get("params"), get("result"), get("error"));
    if let Some(method) = get("method") {
        if !is_nonempty_string(method) {
            return invalid("method must be a non-empty string".into());
        }
        if result.is_some() || error.is_some() {
            return invalid("a request has no result or error".into());
        }
        if params.is_some_and(|p| !p.get().starts_with('{')) {
            return invalid("params must be an object".into());
        }
        let heartbeat = string_is(method, HEARTBEAT);
        return Checked::Request { id, heartbeat };
    }
    if params.is_some() {
        return invalid("a response has no params".into());
    }
    match (result, error) {
        (Some(_), Some(_)) => invalid("a response has result or error, not both".into()),
        (None, None) => invalid("method, result or error is required".into()),
        (Some(_), None) => Checked::Reply { id },
        (None, Some(error)) if is_error_object(error) => Checked::Reply { id },
        (None, Some(_)) => {
            invalid("error must be an object with an integer code and a string message".into())
        }
    }
}

/// Whether `raw` is a JSON string of at least one character.
fn is_nonempty_string(raw: &RawValue) -> bool {
    raw.get().starts_with('"') && raw.get() != "\"\""
}

/// Whether `raw` is the JSON string `expected` (escaped or not).
fn string_is(raw: &RawValue, expected: &str) -> bool {
    let text = raw.get();
    if !text.starts_with('"') {
        return false;
    }
    if !text.contains('\\') {
        return text.get(1..text.len() - 1) == Some(expected);
    }
    serde_json::from_str::<Cow<str>>(text).is_ok_and(|s| s == expected)
}

/// Whether `raw` is an error object: an integer `code` and a string `message`, each once
/// (other members allowed).
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The verdict on `text`: "request", "heartbeat", "reply", the -32600 message, or the
    /// close reason.
    fn verdict(text: &str) -> String {
        match check(text) {
            Checked::Request {
                heartbeat: false, ..
            } => "request".into(),
            Checked::Request {
                heartbeat: true, ..
            } => "heartbeat".into(),
            Checked::Reply { .. } => "reply".into(),
            Checked::Invalid { id, error } => {
                assert_eq!(error.code, -32600);
                format!("{} -> {}", id.get(), error.message)
            }
            Checked::Unanswerable(reason) => format!("close: {reason}"),
        }
    }

    #[test]
    fn each_rule_gets_its_answer() {
        let cases = [
            (r#"{"jsonrpc":"2.0","id":"1","method":"health"}"#, "request"),
            (
                r#"{"jsonrpc":"2.0","id":"1","method":"x","params":{"a":1}}"#,
                "request",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"h1","method":"rpc.heartbeat","params":{}}"#,
                "heartbeat",
            ),
            (
                r#"{"jsonrpc":"2\u002e0","id":"h\u0031","method":"rpc.heart\u0062eat"}"#,
                "heartbeat",
            ),
            (r#"{"jsonrpc":"2.0","id":"s1","result":{}}"#, "reply"),
            (r#"{"jsonrpc":"2.0","id":"s1","result":null}"#, "reply"),
            (
                r#"{"jsonrpc":"2.0","id":"s1","error":{"code":12,"message":"x","data":1}}"#,
                "reply",
            ),
            ("{nope", "close: -32700 parse error: invalid JSON"),
            ("", "close: -32700 parse error: invalid JSON"),
            (r#"{"id":"1"} x"#, "close: -32700 parse error: invalid JSON"),
            ("[1]", "close: -32600 not a JSON object"),
            ("\"text\"", "close: -32600 not a JSON object"),
            (
                r#"{"jsonrpc":"2.0","method":"x"}"#,
                "close: -32600 id must be one non-empty string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#,
                "close: -32600 id must be one non-empty string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
                "close: -32600 id must be one non-empty string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"","method":"x"}"#,
                "close: -32600 id must be one non-empty string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"1","id":"2","method":"x"}"#,
                "close: -32600 id must be one non-empty string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"1","method":"x","extra":1}"#,
                r#""1" -> Invalid request: unknown member "extra""#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"1","method":"x","method":"y"}"#,
                r#""1" -> Invalid request: duplicate member "method""#,
            ),
            (
                r#"{"id":"1","method":"x"}"#,
                r#""1" -> Invalid request: jsonrpc must be "2.0""#,
            ),
            (
                r#"{"jsonrpc":"1.0","id":"1","method":"x"}"#,
                r#""1" -> Invalid request: jsonrpc must be "2.0""#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"1","method":""}"#,
                r#""1" -> Invalid request: method must be a non-empty string"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"1","method":7}"#,
                r#""1" -> Invalid request: method must be a non-empty string"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"1","method":"x","result":1}"#,
                r#""1" -> Invalid request: a request has no result or error"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"1","method":"x","params":[1]}"#,
                r#""1" -> Invalid request: params must be an object"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"1","method":"x","params":null}"#,
                r#""1" -> Invalid request: params must be an object"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"s1"}"#,
                r#""s1" -> Invalid request: method, result or error is required"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"s1","result":1,"error":{"code":1,"message":"m"}}"#,
                r#""s1" -> Invalid request: a response has result or error, not both"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"s1","result":1,"params":{}}"#,
                r#""s1" -> Invalid request: a response has no params"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"s1","error":{"code":1.5,"message":"m"}}"#,
                r#""s1" -> Invalid request: error must be an object with an integer code and a string message"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"s1","error":{"code":1}}"#,
                r#""s1" -> Invalid request: error must be an object with an integer code and a string message"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"s1","error":"boom"}"#,
                r#""s1" -> Invalid request: error must be an object with an integer code and a string message"#,
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(verdict(text), expected, "{text}");
        }
    }

    /// One member's value as a hostile or sloppy peer might send it.
    fn member_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        use serde_json::json;
        prop_oneof![
            Just(json!("2.0")),
            Just(json!("")),
            Just(json!("s1")),
            Just(json!("1")),
            Just(json!("rpc.heartbeat")),
            Just(json!("health")),
            Just(json!(1)),
            Just(json!(1.5)),
            Just(json!(null)),
            Just(json!({})),
            Just(json!([])),
            Just(json!({"code": 12, "message": "m"})),
            Just(json!({"code": 1.0, "message": "m"})),
            Just(json!({"code": 1})),
            any_json(),
        ]
    }

    /// Any JSON value, a few levels deep.
    fn any_json() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        use serde_json::Value;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            ".{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(".{0,5}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// An object's members, as written (repeats allowed): the six and a stranger.
    fn members() -> impl proptest::strategy::Strategy<Value = Vec<(String, serde_json::Value)>> {
        use proptest::prelude::*;
        let name = prop_oneof![
            Just("jsonrpc"),
            Just("id"),
            Just("method"),
            Just("params"),
            Just("result"),
            Just("error"),
            Just("extra"),
        ];
        proptest::collection::vec((name.prop_map(str::to_owned), member_value()), 0..7)
    }

    fn text_of(members: &[(String, serde_json::Value)]) -> String {
        let members: Vec<String> = members
            .iter()
            .map(|(name, value)| format!("{}:{value}", serde_json::Value::from(name.as_str())))
            .collect();
        format!("{{{}}}", members.join(","))
    }

    /// spec/002's verdict on an object's members, written from the spec, apart from
    /// [`check`].
    fn expected(members: &[(String, serde_json::Value)]) -> &'static str {
        use serde_json::Value;
        let all = |name: &str| {
            members
                .iter()
                .filter(|(n, _)| n == name)
                .collect::<Vec<_>>()
        };
        let nonempty = |v: &Value| v.as_str().is_some_and(|s| !s.is_empty());
        match all("id").as_slice() {
            [(_, id)] if nonempty(id) => {}
            _ => return "close",
        }
        let names: Vec<&str> = members.iter().map(|(n, _)| n.as_str()).collect();
        let repeated = names
            .iter()
            .enumerate()
            .any(|(i, n)| names[..i].contains(n));
        if repeated || names.contains(&"extra") {
            return "invalid";
        }
        let get = |name: &str| members.iter().find(|(n, _)| n == name).map(|(_, v)| v);
        if get("jsonrpc") != Some(&Value::from("2.0")) {
            return "invalid";
        }
        let (params, result, error) = (get("params"), get("result"), get("error"));
        if let Some(method) = get("method") {
            let valid = nonempty(method)
                && result.is_none()
                && error.is_none()
                && params.is_none_or(Value::is_object);
            return match (valid, method.as_str()) {
                (true, Some("rpc.heartbeat")) => "heartbeat",
                (true, _) => "request",
                (false, _) => "invalid",
            };
        }
        let error_ok = |e: &Value| e["code"].is_i64() && e["message"].is_string();
        match (params, result, error) {
            (None, Some(_), None) => "reply",
            (None, None, Some(e)) if e.is_object() && error_ok(e) => "reply",
            _ => "invalid",
        }
    }

    /// Checks that `check`'s verdict on `text` is an answer spec/002 allows: a reply that is
    /// itself a valid envelope to the message's id, or a close naming a JSON-RPC code.
    fn conformant(text: &str) -> &'static str {
        match check(text) {
            Checked::Request { heartbeat, .. } => {
                if heartbeat {
                    "heartbeat"
                } else {
                    "request"
                }
            }
            Checked::Reply { .. } => "reply",
            Checked::Invalid { id, error } => {
                let reply = crate::rpc::Response::error(id.to_owned(), error).to_json();
                let reply: serde_json::Value = serde_json::from_slice(&reply).unwrap();
                let object = reply.as_object().unwrap();
                assert!(object
                    .keys()
                    .all(|k| ["jsonrpc", "id", "error"].contains(&k.as_str())));
                assert_eq!(reply["jsonrpc"], "2.0");
                let sent: serde_json::Value = serde_json::from_str(id.get()).unwrap();
                assert!(sent.as_str().is_some_and(|s| !s.is_empty()));
                assert_eq!(reply["id"], sent);
                assert_eq!(reply["error"]["code"], -32600);
                assert!(reply["error"]["message"].is_string());
                "invalid"
            }
            Checked::Unanswerable(reason) => {
                assert!(reason.len() <= 123, "a close reason fits a close frame");
                assert!(reason.starts_with("-32700 ") || reason.starts_with("-32600 "));
                "close"
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(2000))]

        #[test]
        fn every_envelope_gets_the_answer_the_spec_gives(members in members()) {
            let text = text_of(&members);
            proptest::prop_assert_eq!(conformant(&text), expected(&members), "{}", text);
        }

        #[test]
        fn arbitrary_json_never_panics_and_is_answered_or_closed(value in any_json()) {
            let verdict = conformant(&value.to_string());
            if !value.is_object() {
                proptest::prop_assert_eq!(verdict, "close");
            }
        }

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,64}") {
            conformant(&text);
        }
    }
}
