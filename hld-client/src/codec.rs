//! The wire steps shared by calls and subscriptions: a request as one message, and a message
//! read as what it is. On the Unix socket ids are numbers; holon-rpc (`wss://`, spec/002)
//! wants non-empty strings, so there a call's id is its number as a string.

use serde::Serialize;
use serde_json::Value;

use crate::error::Error;
use crate::protocol::{ErrorObject, Request, RequestId, Response, SubscriptionMessage, TimedEvent};

/// The request calling `method` with `params` under `id` (no newline), with a string id for
/// holon-rpc.
pub(crate) fn request<P: Serialize>(
    method: &str,
    params: P,
    id: u64,
    holon: bool,
) -> Result<String, Error> {
    let id = match holon {
        true => RequestId::String(id.to_string()),
        false => RequestId::from(id),
    };
    Ok(serde_json::to_string(&Request::new(method, params, id))?)
}

/// A reply's outcome: the daemon's error, or its result (`null` when absent).
pub(crate) fn outcome(response: Response) -> Result<Value, Error> {
    match (response.error, response.result) {
        (Some(err), _) => Err(Error::Rpc(err)),
        (None, result) => Ok(result.unwrap_or(Value::Null)),
    }
}

/// What a message from the daemon is.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A reply to call `id` (a number, or its digits as a string).
    Reply(u64, Response),
    /// A reply to no call of ours: on the socket, a line of a subscription (`"id": null`).
    Unmatched(Response),
    /// The refusal of a message over the daemon's size limit, which it could not read an id
    /// from (`"id": null`).
    Oversize(Response),
    /// A request from the daemon (holon-rpc): an event, or `rpc.heartbeat`.
    Request {
        id: String,
        method: String,
        params: Value,
    },
    /// Anything else: skipped.
    Other,
}

/// Reads one message.
pub(crate) fn incoming(text: &str) -> Incoming {
    #[derive(serde::Deserialize)]
    struct ServerRequest {
        id: String,
        method: String,
        #[serde(default)]
        params: Value,
    }
    if let Ok(r) = serde_json::from_str::<ServerRequest>(text) {
        return Incoming::Request {
            id: r.id,
            method: r.method,
            params: r.params,
        };
    }
    let Ok(response) = serde_json::from_str::<Response>(text) else {
        return Incoming::Other;
    };
    let id = match &response.id {
        Some(RequestId::Number(n)) => n.as_u64(),
        Some(RequestId::String(s)) => s.parse().ok(),
        _ => None,
    };
    match id {
        Some(id) => Incoming::Reply(id, response),
        None if response
            .error
            .as_ref()
            .is_some_and(ErrorObject::is_oversize) =>
        {
            Incoming::Oversize(response)
        }
        None => Incoming::Unmatched(response),
    }
}

/// The event a subscription message carries (a `Subscribe` line's result on the socket, an
/// `event` request's params over holon-rpc); `None` for a heartbeat or anything else.
pub(crate) fn event(message: Value) -> Option<Box<TimedEvent>> {
    match serde_json::from_value(message) {
        Ok(SubscriptionMessage::Event { event }) => Some(event),
        _ => None,
    }
}

/// The reply to a request from the daemon: `result`, or error `code` with `message`.
pub(crate) fn answer(id: &str, outcome: Result<Value, (i64, &str)>) -> String {
    let message = match outcome {
        Ok(result) => serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, message)) => serde_json::json!({
            "jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}
        }),
    };
    message.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_has_a_number_id_on_the_socket_and_a_string_one_over_holon_rpc() {
        let sent: Value =
            serde_json::from_str(&request("health", json(), 7, false).unwrap()).unwrap();
        assert_eq!(
            sent,
            serde_json::json!({"jsonrpc": "2.0", "method": "health", "params": {}, "id": 7})
        );
        let sent: Value =
            serde_json::from_str(&request("health", json(), 7, true).unwrap()).unwrap();
        assert_eq!(sent["id"], "7");
    }

    fn json() -> Value {
        serde_json::json!({})
    }

    fn reply(text: &str) -> Option<(u64, Result<Value, Error>)> {
        match incoming(text) {
            Incoming::Unmatched(_) => None,
            Incoming::Reply(id, response) => Some((id, outcome(response))),
            _ => None,
        }
    }

    #[test]
    fn replies_map_to_results_and_rpc_errors() {
        let (id, ok) = reply(r#"{"jsonrpc":"2.0","result":{"a":1},"id":3}"#).unwrap();
        assert_eq!((id, ok.unwrap()), (3, serde_json::json!({"a": 1})));
        let (id, ok) = reply(r#"{"jsonrpc":"2.0","result":{"a":1},"id":"12"}"#).unwrap();
        assert_eq!((id, ok.unwrap()), (12, serde_json::json!({"a": 1})));
        let (_, empty) = reply(r#"{"jsonrpc":"2.0","id":4}"#).unwrap();
        assert_eq!(empty.unwrap(), Value::Null);
        let (id, err) =
            reply(r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"nope"},"id":5}"#).unwrap();
        match (id, err) {
            (5, Err(Error::Rpc(e))) => assert_eq!((e.code, e.message.as_str()), (-32601, "nope")),
            other => panic!("expected an RPC error for id 5, got {other:?}"),
        }
    }

    #[test]
    fn messages_that_answer_no_call_are_skipped() {
        assert!(reply("not json").is_none());
        assert!(reply(r#"{"jsonrpc":"2.0","result":1,"id":null}"#).is_none());
        assert!(reply(r#"{"jsonrpc":"2.0","result":1,"id":"x"}"#).is_none());
        assert!(reply(r#"{"jsonrpc":"2.0","result":1,"id":-1}"#).is_none());
    }

    #[test]
    fn a_subscription_line_on_the_socket_answers_no_call_and_carries_its_event() {
        let line = r#"{"jsonrpc":"2.0","result":{"event":{"type":"lagged","timestamp":"t","data":{"missed":2}}},"id":null}"#;
        let Incoming::Unmatched(response) = incoming(line) else {
            panic!("a line of a subscription");
        };
        assert!(event(response.result.unwrap()).is_some());
        let heartbeat = serde_json::json!({"type": "heartbeat", "message": "Connection alive"});
        assert!(event(heartbeat).is_none());
    }

    #[test]
    fn a_server_request_is_told_from_a_reply_and_answered() {
        let text = r#"{"jsonrpc":"2.0","id":"s1","method":"rpc.heartbeat","params":{}}"#;
        let Incoming::Request { id, method, .. } = incoming(text) else {
            panic!("a request");
        };
        assert_eq!((id.as_str(), method.as_str()), ("s1", "rpc.heartbeat"));
        let ok: Value = serde_json::from_str(&answer("s1", Ok(json()))).unwrap();
        assert_eq!(
            ok,
            serde_json::json!({"jsonrpc": "2.0", "id": "s1", "result": {}})
        );
        let err: Value = serde_json::from_str(&answer("s2", Err((-32601, "no")))).unwrap();
        assert_eq!(err["error"]["code"], -32601);
    }
}
