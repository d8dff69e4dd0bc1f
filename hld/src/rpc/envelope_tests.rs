//! The envelope parser's rules, both strictnesses: tables of `message => verdict` lines, and
//! spec/002's rules checked against arbitrary members.

use super::*;

/// Checks each `message => verdict` line of `table` with `verdict`.
fn check_table(table: &str, verdict: fn(&[u8]) -> String) {
    for case in table
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
    {
        let (message, expected) = case.rsplit_once(" => ").expect("message => verdict");
        // `<ff>` stands for a byte that is not UTF-8.
        let bytes = match message {
            "<ff>" => vec![0xff],
            text => text.as_bytes().to_vec(),
        };
        assert_eq!(verdict(&bytes), expected, "{message}");
    }
}

/// The lenient verdict: id, method and params, or the error code and the id answered to.
fn lenient(text: &[u8]) -> String {
    match parse(text, Strictness::Lenient) {
        Ok(Message::Request { id, method, params }) => {
            let raw = |r: Option<&RawValue>| r.map_or("-", RawValue::get).to_owned();
            format!("{} {method} {}", raw(id), raw(params))
        }
        Ok(Message::Reply { .. }) => unreachable!(),
        Err(r) => format!(
            "{} to {}",
            r.error.code,
            r.id.as_deref().map_or("null", RawValue::get)
        ),
    }
}

#[test]
fn lenient_parsing_keeps_ids_exactly_and_answers_each_violation() {
    check_table(
        r#"
        {"jsonrpc":"2.0","method":"health","id":7} => 7 health -
         {"id":"a\"b","params":null,"method":"he\u0061lth","jsonrpc":"2.0"} => "a\"b" health -
        {"jsonrpc":"2.0","method":"x","params":{"a":1},"id":null} => null x {"a":1}
        {"jsonrpc":"2.0","method":"x"} => - x -
        <ff> => -32700 to null
        {nope => -32700 to null
        [1] => -32600 to null
        [1 => -32700 to null
        42 => -32600 to null
        {"jsonrpc":"2.0","method":"x","id":{}} => -32600 to null
        {"jsonrpc":"1.0","method":"x","id":3} => -32600 to 3
        {"jsonrpc":"2.0","method":5,"id":"k"} => -32600 to "k"
        // Without an id, a violation is answered to `null`: only a valid notification is not.
        {"jsonrpc":"2.0","method":5} => -32600 to null
        {} => -32600 to null
        {"method":"version"} => -32600 to null
        // A reply is no request here.
        {"jsonrpc":"2.0","result":{},"id":"s1"} => -32600 to "s1"
        // A repeated member is answered to the id when it is there once.
        {"jsonrpc":"2.0","method":"a","method":"b","id":12} => -32600 to 12
        {"jsonrpc":"2.0","method":"a","id":1,"id":2} => -32600 to null
        {"id":[1],"jsonrpc":"2.0","jsonrpc":"2.0"} => -32600 to null
        "#,
        lenient,
    );
}

/// The strict verdict: request, heartbeat, reply, the -32600 message to the id, or the close.
fn strict(text: &[u8]) -> String {
    match parse(text, Strictness::Strict) {
        Ok(Message::Request { method, .. }) if method == "rpc.heartbeat" => "heartbeat".into(),
        Ok(Message::Request { .. }) => "request".into(),
        Ok(Message::Reply { .. }) => "reply".into(),
        Err(Rejected {
            id: Some(id),
            error,
        }) => {
            assert_eq!(error.code, -32600);
            format!("{} -> {}", id.get(), error.message)
        }
        Err(Rejected { id: None, error }) => format!("close: {} {}", error.code, error.message),
    }
}

#[test]
fn each_strict_rule_gets_its_answer() {
    check_table(
        r#"
        // The other rules are e2e::websocket's; these are what a client cannot easily send.
        {"jsonrpc":"2\u002e0","id":"h\u0031","method":"rpc.heart\u0062eat"} => heartbeat
        {"jsonrpc":"2.0","id":"s1","result":null} => reply
        {"id":"1"} x => close: -32700 parse error: invalid JSON
        "text" => close: -32600 not a JSON object
        {"jsonrpc":"2.0","id":"s1","error":{"code":1.5,"message":"m"}} => "s1" -> Invalid request: error must be an object with an integer code and a string message
        "#,
        strict,
    );
    // Nothing at all is no JSON either.
    assert_eq!(strict(b""), "close: -32700 parse error: invalid JSON");
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

/// spec/002's verdict on an object's members, written from the spec apart from [`parse`].
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
    match parse(text.as_bytes(), Strictness::Strict) {
        Ok(Message::Request { method, .. }) if method == "rpc.heartbeat" => "heartbeat",
        Ok(Message::Request { .. }) => "request",
        Ok(Message::Reply { .. }) => "reply",
        Err(Rejected {
            id: Some(id),
            error,
        }) => {
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
        Err(Rejected { id: None, error }) => {
            let reason = format!("{} {}", error.code, error.message);
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
}
