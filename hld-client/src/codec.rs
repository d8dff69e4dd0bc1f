//! The wire steps shared by calls and subscriptions: a request as one NDJSON line, a reply
//! as its outcome, and a reply line as the call it answers.

use serde::Serialize;
use serde_json::Value;

use crate::error::Error;
use crate::protocol::{Request, RequestId, Response};

/// The request line (with its newline) calling `method` with `params` under `id`.
pub(crate) fn request_line<P: Serialize>(
    method: &str,
    params: P,
    id: u64,
) -> Result<Vec<u8>, Error> {
    let mut line = serde_json::to_vec(&Request::new(method, params, RequestId::from(id)))?;
    line.push(b'\n');
    Ok(line)
}

/// A reply's outcome: the daemon's error, or its result (`null` when absent).
pub(crate) fn outcome(response: Response) -> Result<Value, Error> {
    match (response.error, response.result) {
        (Some(err), _) => Err(Error::Rpc(err)),
        (None, result) => Ok(result.unwrap_or(Value::Null)),
    }
}

/// The numeric id a reply line answers, and its outcome. `None` for a line that is not a
/// reply to one of our calls (unparsable, or a `null`/string id): callers skip it.
pub(crate) fn reply(line: &[u8]) -> Option<(u64, Result<Value, Error>)> {
    let response = serde_json::from_slice::<Response>(line).ok()?;
    let Some(RequestId::Number(n)) = &response.id else {
        return None;
    };
    let id = n.as_u64()?;
    Some((id, outcome(response)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_one_line_with_its_id() {
        let line = request_line("health", serde_json::json!({}), 7).unwrap();
        assert_eq!(line.last(), Some(&b'\n'));
        let sent: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(
            sent,
            serde_json::json!({"jsonrpc": "2.0", "method": "health", "params": {}, "id": 7})
        );
    }

    #[test]
    fn replies_map_to_results_and_rpc_errors() {
        let (id, ok) = reply(br#"{"jsonrpc":"2.0","result":{"a":1},"id":3}"#).unwrap();
        assert_eq!((id, ok.unwrap()), (3, serde_json::json!({"a": 1})));
        let (_, empty) = reply(br#"{"jsonrpc":"2.0","id":4}"#).unwrap();
        assert_eq!(empty.unwrap(), Value::Null);
        let (id, err) =
            reply(br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"nope"},"id":5}"#).unwrap();
        match (id, err) {
            (5, Err(Error::Rpc(e))) => assert_eq!((e.code, e.message.as_str()), (-32601, "nope")),
            other => panic!("expected an RPC error for id 5, got {other:?}"),
        }
    }

    #[test]
    fn lines_that_answer_no_call_are_skipped() {
        assert!(reply(b"not json").is_none());
        assert!(reply(br#"{"jsonrpc":"2.0","result":1,"id":null}"#).is_none());
        assert!(reply(br#"{"jsonrpc":"2.0","result":1,"id":"x"}"#).is_none());
        assert!(reply(br#"{"jsonrpc":"2.0","result":1,"id":-1}"#).is_none());
    }
}
