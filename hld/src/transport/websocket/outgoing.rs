//! What the WebSocket transport writes, at most [`MAX_MESSAGE`] bytes a message: a larger event
//! is cut to fit (the store keeps it whole); so are a larger reply's strings that no message
//! could carry whole (one event's huge output), while a reply too large for its many items
//! becomes error 8, for the client to ask for fewer.

use bytes::Bytes;
use hld_client::protocol::{ErrorCode, ErrorObject};
use serde_json::Value;

use super::MAX_MESSAGE;
use crate::bus::Published;
use crate::rpc::{event_message, Response};

/// The bytes of a reply around its result and id.
const REPLY_FRAME: usize = 33;

/// A reply's strings longer than this could not go whole in any message: those alone are cut.
const UNCARRIED: usize = MAX_MESSAGE - 64 * 1024;

/// The server-initiated request `rpc.heartbeat` number `request`.
pub fn heartbeat_request(request: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":"s{request}","method":"rpc.heartbeat","params":{{}}}}"#)
}

/// A reply; one too large with its `UNCARRIED` strings cut is error 8.
pub fn reply(response: Response) -> String {
    let size = match &response.outcome {
        Ok(result) => result.len() + response.id.get().len() + REPLY_FRAME,
        Err(_) => 0,
    };
    if size <= MAX_MESSAGE {
        return text(response.to_json());
    }
    if let Ok(result) = &response.outcome {
        let mut value: Value = serde_json::from_slice(result).expect("a result is JSON");
        if cut_strings(&mut value, size - MAX_MESSAGE, UNCARRIED) {
            tracing::warn!(
                bytes = size,
                "a reply too large for the WebSocket; sent cut"
            );
            let result = serde_json::to_vec(&value).expect("JSON serialises");
            let cut = Response {
                id: response.id,
                outcome: Ok(result),
            };
            return text(cut.to_json());
        }
    }
    tracing::warn!(
        bytes = size,
        "a reply too large for the WebSocket; answered with error 8"
    );
    let error = ErrorObject {
        code: ErrorCode::ResourceExhausted.code(),
        message: format!(
            "Reply too large: {size} bytes, over this transport's limit of {MAX_MESSAGE}; ask \
             for less, e.g. getConversation with after_sequence and limit, one page at a time"
        ),
        data: None,
    };
    text(Response::error(response.id, error).to_json())
}

fn text(json: Vec<u8>) -> String {
    String::from_utf8(json).expect("JSON is UTF-8")
}

/// An event as server request `s<request>`, cut to fit if it must be.
pub fn event(event: &Published, request: u64) -> String {
    let message = event_message(event, Some(request));
    if message.len() <= MAX_MESSAGE {
        return text(message);
    }
    let frame = message.len() - event.json().len();
    let mut value: Value = serde_json::from_slice(event.json()).expect("a published event is JSON");
    fit(&mut value, MAX_MESSAGE - frame);
    tracing::warn!(
        bytes = event.json().len(),
        kind = %event.event.event.type_name(),
        "an event too large for the WebSocket; sent cut"
    );
    let json = Bytes::from(serde_json::to_vec(&value).expect("JSON serialises"));
    let cut = Published::with_json(event.event.clone(), json);
    text(event_message(&cut, Some(request)))
}

/// The marker ending a string that was cut.
fn marker(cut: usize) -> String {
    format!(" [… {cut} bytes cut: over the 1 MiB WebSocket limit; the daemon stores it whole]")
}

fn marker_room() -> usize {
    marker(usize::MAX).len()
}

/// Makes `value` serialise in `budget` bytes: long strings cut, else containers replaced.
pub fn fit(value: &mut Value, budget: usize) {
    // Each round fits the strings or replaces a container larger than a marker.
    for _ in 0..16 {
        let size = json_len(value);
        if size <= budget {
            return;
        }
        let excess = size - budget;
        if !cut_strings(value, excess, 0) && !replace_container(value, excess) {
            return;
        }
    }
}

/// Cuts the strings (of those over `over` bytes) longer than the longest common length that
/// saves `excess` bytes, each at a char boundary and marked; `false` (nothing cut) if cutting
/// them all would not save that much.
fn cut_strings(value: &mut Value, excess: usize, over: usize) -> bool {
    let mut strings = Vec::new();
    collect_strings(value, &mut strings);
    strings.retain(|s| s.len() > over);
    let room = marker_room();
    let saving = |keep: usize| -> usize {
        strings
            .iter()
            .map(|s| s.len().saturating_sub(keep + room))
            .sum()
    };
    if saving(0) < excess {
        return false;
    }
    // The largest `keep` that still saves enough: saving(keep) falls as keep grows.
    let (mut low, mut high) = (0, strings.iter().map(|s| s.len()).max().unwrap_or(0));
    while low < high {
        let mid = (low + high).div_ceil(2);
        if saving(mid) >= excess {
            low = mid;
        } else {
            high = mid - 1;
        }
    }

    for s in strings {
        if s.len() > low + room {
            let mut end = low;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            let cut = s.len() - end;
            s.truncate(end);
            s.push_str(&marker(cut));
        }
    }
    true
}

fn collect_strings<'a>(value: &'a mut Value, out: &mut Vec<&'a mut String>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter_mut().for_each(|v| collect_strings(v, out)),
        Value::Object(members) => members.values_mut().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// Replaces with a marker the deepest container whose removal saves `excess` bytes (else the
/// largest top-level one); `false` if none is larger than a marker.
fn replace_container(value: &mut Value, excess: usize) -> bool {
    let room = marker_room();
    let mut node = value;
    let mut top = true;
    loop {
        match largest_container(node) {
            Some((n, i)) if n > excess + room => {
                node = child(node, i);
                top = false;
            }
            Some((n, i)) if top && n > room => {
                let node = child(node, i);
                *node = Value::String(marker(n));
                return true;
            }
            _ if top => return false,
            _ => {
                let n = json_len(node);
                *node = Value::String(marker(n));
                return true;
            }
        }
    }
}

/// The JSON length and index of the largest array or object directly inside `value`.
fn largest_container(value: &Value) -> Option<(usize, usize)> {
    let children: Box<dyn Iterator<Item = &Value>> = match value {
        Value::Array(items) => Box::new(items.iter()),
        Value::Object(members) => Box::new(members.values()),
        _ => return None,
    };
    children
        .enumerate()
        .filter(|(_, v)| v.is_array() || v.is_object())
        .map(|(i, v)| (json_len(v), i))
        .max()
}

fn child(value: &mut Value, i: usize) -> &mut Value {
    match value {
        Value::Array(items) => &mut items[i],
        Value::Object(members) => members.values_mut().nth(i).expect("an index found above"),
        _ => unreachable!("only arrays and objects have children"),
    }
}

fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).expect("counting does not fail");
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_longest_strings_are_cut_to_one_length_at_character_boundaries_and_marked() {
        let (a, b, e) = ("a".repeat(5000), "b".repeat(3000), "é".repeat(2000));
        let mut value = json!({"type": "x", "data": {"a": a, "b": b, "e": e, "c": "short"}});
        fit(&mut value, 4000);
        assert!(json_len(&value) <= 4000, "{}", json_len(&value));
        let cut = |key: &str| value["data"][key].as_str().unwrap();
        let (a, b) = (cut("a"), cut("b"));
        assert!(a.starts_with("aaa") && a.contains("bytes cut"), "{a}");
        assert!(b.starts_with("bbb") && b.contains("bytes cut"), "{b}");
        assert!(cut("e").starts_with('é') && cut("e").contains("bytes cut"));
        assert_eq!((cut("c"), value["type"].as_str()), ("short", Some("x")));
        // Cut to one common length: both kept the same number of their own characters.
        let kept = |s: &str, c: char| s.chars().take_while(|&x| x == c).count();
        assert_eq!(kept(a, 'a'), kept(b, 'b'));
    }

    #[test]
    fn a_large_array_of_numbers_is_replaced_when_strings_cannot_do() {
        let numbers: Vec<u32> = (0..5000).collect();
        let mut value =
            json!({"type": "new_approval", "data": {"tool_input": {"n": numbers}, "id": "a1"}});
        fit(&mut value, 2000);
        assert!(json_len(&value) <= 2000);
        assert_eq!(value["data"]["id"], "a1");
        assert!(value["data"]["tool_input"]["n"]
            .as_str()
            .is_some_and(|m| m.contains("bytes cut")));
    }
}
