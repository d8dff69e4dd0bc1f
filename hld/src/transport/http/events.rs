//! `GET /stream/events` (reference hld-rest.md section 6): the bus as Server-Sent Events, one
//! `data: {"type","timestamp","data"}` line and a blank line per event, in the reference's
//! shapes, and `: keepalive` every 30 s from connect.
//!
//! The body is pulled: hyper asks for the next event only when the connection can take it,
//! so a slow reader leaves its events in the bus's ring, which is bounded
//! (`--subscriber-buffer`). Once it falls out of the ring, the events it lost are dropped and
//! the next line says how many: `{"type":"lagged","timestamp":…,"data":{"missed":N}}`, an
//! event `EventSource` delivers and CodeLayer, which knows no such type, ignores. The stream
//! ends when the bus closes at shutdown, after the sessions' last events.
//!
//! A `session_status_changed` with `reason: "token_update"` follows each assistant row of a
//! session's own conversation (not a sub-agent's): the commit that stored it saved the token
//! counts of that model call (`session::transcript`), so CodeLayer refetches the session and
//! its context meter moves during a turn. Its statuses are the session's as read then.
//!
//! An approval that a rule settles as it is requested comes, as the reference sends every
//! approval, as a `new_approval` and then its `approval_resolved`; the bus carries only the
//! decision, marked `settled_on_request`.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hld_client::protocol::{
    Approval, ApprovalStatus, ConversationEvent, Event, EventType, SessionStatus,
};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::header::{self, HeaderValue};
use hyper::Response;
use serde::Serialize;
use serde_json::{json, Value};
use tokio::time::{interval_at, Instant, Interval, MissedTickBehavior};

use super::api::{Call, Query};
use super::guard::Refusal;
use super::Reply;
use crate::bus::{Filter, Received, Subscriber};
use crate::daemon::Daemon;

/// The reference's event types; `eventTypes` values naming others are dropped.
const TYPES: [EventType; 5] = [
    EventType::SessionStatusChanged,
    EventType::NewApproval,
    EventType::ApprovalResolved,
    EventType::SessionSettingsChanged,
    EventType::ConversationUpdated,
];

/// How often a keepalive comment is written, counted from connect.
pub const KEEPALIVE: Duration = Duration::from_secs(30);

/// The reply to `call` if it is the event stream.
pub async fn route(call: &Call<'_>, daemon: &Arc<Daemon>) -> Option<Result<Reply, Refusal>> {
    match (call.method.as_str(), call.segments.as_slice()) {
        ("GET", ["stream", "events"]) => Some(Ok(stream(daemon, &call.query))),
        _ => None,
    }
}

/// The stream, subscribed before the answer's head leaves: what is published from then on
/// is sent.
fn stream(daemon: &Arc<Daemon>, query: &Query) -> Reply {
    let mut types: Vec<EventType> = query
        .all("eventTypes")
        .filter_map(|name| TYPES.iter().find(|t| t.as_str() == name).cloned())
        .collect();
    if types.is_empty() {
        types = TYPES.to_vec();
    }
    let given = |key| query.get(key).filter(|v| !v.is_empty()).map(str::to_owned);
    let mut subscribed = types.clone();
    // Token updates are derived from stored assistant rows, and the `new_approval` of an
    // approval settled as it was requested from its `approval_resolved`.
    let derived = [
        (
            EventType::SessionStatusChanged,
            EventType::ConversationUpdated,
        ),
        (EventType::NewApproval, EventType::ApprovalResolved),
    ];
    for (wanted, source) in derived {
        if types.contains(&wanted) && !subscribed.contains(&source) {
            subscribed.push(source);
        }
    }
    let filter = Filter {
        types: subscribed,
        session_id: given("sessionId"),
        // Matched on the data sent (below): an event whose data has no `run_id` is left out.
        run_id: None,
    };
    let every = daemon
        .config
        .http
        .as_ref()
        .map_or(KEEPALIVE, |http| http.keepalive);
    let mut keepalive = interval_at(Instant::now() + every, every);
    keepalive.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let feed = Feed {
        events: daemon.bus.subscribe(filter),
        keepalive,
        run_id: given("runId"),
        types,
        daemon: Arc::clone(daemon),
        ready: VecDeque::new(),
    };
    let chunks = futures::stream::unfold(feed, |mut feed| async move {
        let chunk = feed.next().await?;
        Some((Ok(Frame::data(chunk)), feed))
    });
    let mut response = Response::new(StreamBody::new(chunks).boxed());
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_TYPE, "text/event-stream"),
        (header::CACHE_CONTROL, "no-cache"),
        (header::CONNECTION, "keep-alive"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// One subscriber's stream.
struct Feed {
    events: Subscriber,
    keepalive: Interval,
    /// `runId`: only events whose data names this run.
    run_id: Option<String>,
    /// The types asked for.
    types: Vec<EventType>,
    /// Where a token update reads the session's status.
    daemon: Arc<Daemon>,
    /// Lines made from one bus event and not sent yet.
    ready: VecDeque<Bytes>,
}

impl Feed {
    /// The next chunk: an event, a `lagged` event, or a keepalive; `None` once the bus closed.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(line) = self.ready.pop_front() {
                return Some(line);
            }
            let received = tokio::select! {
                received = self.events.next() => received?,
                _ = self.keepalive.tick() => return Some(Bytes::from_static(b": keepalive\n\n")),
            };
            let published = match received {
                Received::Event(published) => published,
                Received::Lagged(missed) => {
                    let data = json!({ "missed": missed });
                    return Some(line("lagged", &crate::time::now(), &data));
                }
            };
            let timed = &published.event;
            let (event, timestamp) = (&timed.event, &timed.timestamp);
            if self.types.contains(&EventType::NewApproval) {
                if let Some(data) = self.unasked(event).await {
                    self.push("new_approval", timestamp, &data);
                }
            }
            if let Some((kind, data)) = shape(event, timestamp) {
                if self.types.iter().any(|t| t.as_str() == kind) {
                    self.push(kind, timestamp, &data);
                }
            }
            if self.types.contains(&EventType::SessionStatusChanged) {
                if let Some(data) = self.token_update(event).await {
                    self.push("session_status_changed", timestamp, &data);
                }
            }
        }
    }

    /// Queues the line of an event, unless `runId` leaves it out.
    fn push(&mut self, kind: &str, timestamp: &str, data: &Value) {
        let run = data.get("run_id").and_then(Value::as_str);
        if self.run_id.as_deref().is_none_or(|r| run == Some(r)) {
            self.ready.push_back(line(kind, timestamp, data));
        }
    }

    /// The `new_approval` that the reference sends before the `approval_resolved` of an
    /// approval a rule settled as it was requested (the bus announces only its decision), in
    /// the shape of any other; `None` for other events, or an approval gone.
    async fn unasked(&self, event: &Event) -> Option<Value> {
        let Event::ApprovalResolved {
            approval_id,
            settled_on_request: true,
            ..
        } = event
        else {
            return None;
        };
        let id = approval_id.clone();
        let approval = self
            .daemon
            .store
            .read(move |c| crate::store::read::approval(c, &id))
            .await
            .ok()??;
        Some(new_approval(&approval))
    }

    /// The token update an assistant row of a session's own conversation stands for (see the
    /// module's docs), with the session's status now; `None` for other events, or a session
    /// gone.
    async fn token_update(&self, event: &Event) -> Option<Value> {
        let Event::ConversationUpdated {
            session_id, event, ..
        } = event
        else {
            return None;
        };
        if event.role.as_deref() != Some("assistant") || event.parent_tool_use_id.is_some() {
            return None;
        }
        let row = crate::handlers::sessions::session(&self.daemon, session_id)
            .await
            .ok()?;
        let status = super::shapes::status(&row.to_info());
        Some(json!({
            "session_id": session_id,
            "old_status": status,
            "new_status": status,
            "reason": "token_update",
        }))
    }
}

/// The JSON of one event line, its keys in the reference's order.
#[derive(Serialize)]
struct Line<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    timestamp: &'a str,
    data: &'a Value,
}

/// `data: <json>` and a blank line: one line, as JSON escapes every newline.
fn line(kind: &str, timestamp: &str, data: &Value) -> Bytes {
    let mut out = b"data: ".to_vec();
    serde_json::to_writer(
        &mut out,
        &Line {
            kind,
            timestamp,
            data,
        },
    )
    .expect("a JSON value serialises");
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// The reference's type and data for a bus event (section 6's table); `None` for the types it
/// does not carry.
fn shape(event: &Event, timestamp: &str) -> Option<(&'static str, Value)> {
    let shaped = match event {
        Event::SessionStatusChanged {
            session_id,
            run_id,
            old_status,
            new_status,
            parent_session_id,
            ..
        } => {
            let mut data = json!({
                "session_id": session_id,
                "run_id": run_id,
                "old_status": status(old_status, None),
                "new_status": status(new_status, Some(old_status)),
            });
            if let Some(parent) = parent_session_id {
                data["parent_session_id"] = Value::from(parent.as_str());
            }
            ("session_status_changed", data)
        }
        Event::NewApproval { approval, .. } => ("new_approval", new_approval(approval)),
        Event::ApprovalResolved {
            approval_id,
            session_id,
            decision,
            comment,
            ..
        } => (
            "approval_resolved",
            json!({
                "approval_id": approval_id,
                "session_id": session_id,
                "approved": *decision == ApprovalStatus::Approved,
                "response_text": comment.as_deref().unwrap_or_default(),
            }),
        ),
        Event::SessionSettingsChanged {
            session_id,
            run_id,
            reason,
            ..
        } if reason == "expired" => (
            "session_settings_changed",
            json!({
                "session_id": session_id,
                "run_id": run_id,
                "dangerously_skip_permissions": false,
                "reason": "expired",
                "expired_at": timestamp,
            }),
        ),
        Event::SessionSettingsChanged {
            session_id,
            control,
            ..
        } => (
            "session_settings_changed",
            json!({"session_id": session_id, "auto_accept_edits": control.auto_accept_edits}),
        ),
        Event::ConversationUpdated {
            session_id,
            claude_session_id,
            event,
            ..
        } => (
            "conversation_updated",
            conversation(session_id, claude_session_id, event),
        ),
        _ => return None,
    };
    Some(shaped)
}

/// `new_approval`'s data.
fn new_approval(approval: &Approval) -> Value {
    json!({
        "approval_id": approval.id,
        "session_id": approval.session_id,
        "tool_name": super::shapes::tool_of(approval).0,
    })
}

/// A status as the reference names it: ours winds an interrupt down in `completing`, which
/// ends `completed` only by that interrupt.
fn status<'a>(status: &'a SessionStatus, before: Option<&SessionStatus>) -> &'a str {
    match (status, before) {
        (SessionStatus::Completing, _) => "interrupting",
        (SessionStatus::Completed, Some(SessionStatus::Completing)) => "interrupted",
        _ => status.as_str(),
    }
}

/// `conversation_updated`'s data: the stored row's fields that are set, its tool input as an
/// object, and `content_type` as upstream names the content block.
fn conversation(session_id: &str, claude_session_id: &str, row: &ConversationEvent) -> Value {
    let event_type = row.event_type.as_str();
    let content_type = match event_type {
        "message" => "text",
        "tool_call" => "tool_use",
        other => other,
    };
    let mut data = json!({
        "session_id": session_id,
        "claude_session_id": claude_session_id,
        "event_type": event_type,
        "content_type": content_type,
    });
    let texts = [
        ("role", &row.role),
        ("content", &row.content),
        ("tool_id", &row.tool_id),
        ("tool_name", &row.tool_name),
        ("tool_result_for_id", &row.tool_result_for_id),
        ("tool_result_content", &row.tool_result_content),
        ("parent_tool_use_id", &row.parent_tool_use_id),
        ("subtype", &row.subtype),
    ];
    for (key, value) in texts {
        if let Some(value) = value {
            data[key] = Value::from(value.as_str());
        }
    }
    if let Some(input) = &row.tool_input_json {
        data["tool_input"] = serde_json::from_str(input).unwrap_or(Value::Null);
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupt_reads_as_the_references_interrupting_then_interrupted() {
        use SessionStatus::*;
        assert_eq!(status(&Completing, Some(&Running)), "interrupting");
        assert_eq!(status(&Completing, None), "interrupting");
        assert_eq!(status(&Completed, Some(&Completing)), "interrupted");
        assert_eq!(status(&Completed, Some(&Running)), "completed");
        assert_eq!(status(&WaitingInput, Some(&Running)), "waiting_input");
    }

    #[test]
    fn a_tool_result_and_a_denial_carry_what_codelayer_reads() {
        let row: ConversationEvent = serde_json::from_value(json!({
            "id": 7, "session_id": "s", "claude_session_id": "c", "sequence": 3,
            "event_type": "tool_result", "created_at": "2026-01-01T00:00:00Z", "role": "user",
            "tool_result_for_id": "toolu_1", "tool_result_content": "done", "is_completed": true
        }))
        .unwrap();
        assert_eq!(
            conversation("s", "c", &row),
            json!({"session_id": "s", "claude_session_id": "c", "event_type": "tool_result",
                   "content_type": "tool_result", "role": "user",
                   "tool_result_for_id": "toolu_1", "tool_result_content": "done"})
        );
        let denied: Event = serde_json::from_value(json!({"type": "approval_resolved",
            "data": {"approval_id": "a", "call_id": "a", "session_id": "s", "run_id": "r",
                     "decision": "denied", "type": "function_call", "total": 0}}))
        .unwrap();
        let data = json!({"approval_id": "a", "session_id": "s", "approved": false,
                          "response_text": ""});
        assert_eq!(shape(&denied, "t"), Some(("approval_resolved", data)));
        assert_eq!(shape(&Event::Lagged { missed: 1 }, "t"), None);
    }

    #[test]
    fn a_line_is_data_one_json_line_and_a_blank_line() {
        let data = json!({"content": "two\nlines"});
        let text = line("conversation_updated", "2026-01-01T00:00:00Z", &data);
        assert_eq!(
            &text[..],
            b"data: {\"type\":\"conversation_updated\",\"timestamp\":\"2026-01-01T00:00:00Z\",\
              \"data\":{\"content\":\"two\\nlines\"}}\n\n"
        );
    }
}
