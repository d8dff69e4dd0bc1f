//! The event stream of the REST transport (`GET /stream/events`, hld-rest.md section 6): a
//! Server-Sent Events reader over reqwest that keeps the raw blocks (so tests see the exact
//! framing and the keepalive comments an `EventSource` hides), and strict mirrors of each
//! event's shape: `Option` with `#[serde(default)]` for a key sent only sometimes, unknown
//! keys refused.

use std::time::Duration;

use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::Value;

/// How long a test waits for the next block of the stream.
const WAIT: Duration = Duration::from_secs(30);

/// An open event stream.
pub struct EventStream {
    response: reqwest::Response,
    /// Bytes received and not yet returned as a block.
    pending: Vec<u8>,
}

impl EventStream {
    /// Sends `request` (a GET of the stream, with its query), checking that it answers as an event
    /// stream; returns once the answer's head arrived, so the daemon has subscribed.
    pub async fn open(request: reqwest::RequestBuilder) -> EventStream {
        let response = request.send().await.expect("an HTTP answer");
        assert_eq!(response.status(), StatusCode::OK);
        let headers = response.headers();
        assert_eq!(headers["content-type"], "text/event-stream");
        assert_eq!(headers["cache-control"], "no-cache");
        assert!(headers.get("content-encoding").is_none(), "{headers:?}");
        EventStream {
            response,
            pending: Vec::new(),
        }
    }

    /// The answer's headers.
    pub fn headers(&self) -> &reqwest::header::HeaderMap {
        self.response.headers()
    }

    /// The next block (the text before a blank line); `None` once the stream ended.
    pub async fn next_block(&mut self) -> Option<String> {
        loop {
            if let Some(end) = self.pending.windows(2).position(|w| w == b"\n\n") {
                let block: Vec<u8> = self.pending.drain(..end + 2).take(end).collect();
                return Some(String::from_utf8(block).expect("UTF-8 blocks"));
            }
            let chunk = tokio::time::timeout(WAIT, self.response.chunk())
                .await
                .expect("the stream went silent")
                .expect("the stream reads");
            match chunk {
                Some(bytes) => self.pending.extend_from_slice(&bytes),
                None => {
                    assert!(self.pending.is_empty(), "a cut block: {:?}", self.pending);
                    return None;
                }
            }
        }
    }

    /// The next event (keepalives skipped): the JSON of its one `data:` line.
    pub async fn next_event(&mut self) -> Value {
        loop {
            let block = self.next_block().await.expect("an event before the end");
            if block == ": keepalive" {
                continue;
            }
            return event(&block);
        }
    }

    /// Events up to and including the first that `last` accepts.
    pub async fn until(&mut self, mut last: impl FnMut(&Value) -> bool) -> Vec<Value> {
        let mut events = Vec::new();
        loop {
            let event = self.next_event().await;
            let done = last(&event);
            events.push(event);
            if done {
                return events;
            }
        }
    }
}

/// The event of a block: exactly one line, `data: ` and compact JSON.
pub fn event(block: &str) -> Value {
    let json = block
        .strip_prefix("data: ")
        .unwrap_or_else(|| panic!("not a data line: {block:?}"));
    assert!(!json.contains('\n'), "one line per event: {block:?}");
    let value: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    // Compact (the same length as serde's own rendering), `type` first as the reference has it.
    assert_eq!(value.to_string().len(), json.len(), "compact JSON: {json}");
    assert!(json.starts_with(r#"{"type":"#), "{json}");
    value
}

/// Whether `event` is `session_id`'s status change to `status` (not a token update).
pub fn became(event: &Value, session_id: &str, status: &str) -> bool {
    event["type"] == "session_status_changed"
        && event["data"]["session_id"] == session_id
        && event["data"]["new_status"] == status
        && event["data"].get("reason").is_none()
}

/// One line of the stream, its data of shape `D`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Line<D> {
    #[serde(rename = "type")]
    pub kind: String,
    pub timestamp: String,
    pub data: D,
}

/// `session_status_changed`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusChanged {
    pub session_id: String,
    #[serde(default)]
    pub run_id: Option<String>,
    pub old_status: String,
    pub new_status: String,
    #[serde(default)]
    pub parent_session_id: Option<String>,
    /// `token_update` when token counts were saved (statuses then the same, `run_id` absent).
    #[serde(default)]
    pub reason: Option<String>,
}

/// `new_approval`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewApproval {
    pub approval_id: String,
    pub session_id: String,
    pub tool_name: String,
}

/// `approval_resolved`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalResolved {
    pub approval_id: String,
    pub session_id: String,
    pub approved: bool,
    pub response_text: String,
    #[serde(default)]
    pub tool_use_id: Option<String>,
}

/// `session_settings_changed`: after a change of `auto_accept_edits`, or an expired bypass.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingsChanged {
    pub session_id: String,
    #[serde(default)]
    pub auto_accept_edits: Option<bool>,
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub dangerously_skip_permissions: Option<bool>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub expired_at: Option<String>,
}

/// `conversation_updated`: the stored row's fields that are set.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConversationUpdated {
    pub session_id: String,
    pub claude_session_id: String,
    pub event_type: String,
    pub content_type: String,
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub tool_id: Option<String>,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    pub tool_result_for_id: Option<String>,
    #[serde(default)]
    pub tool_result_content: Option<String>,
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    #[serde(default)]
    pub subtype: Option<String>,
}

/// `lagged`, ours: the reader fell behind and this many events were dropped for it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lagged {
    pub missed: u64,
}
