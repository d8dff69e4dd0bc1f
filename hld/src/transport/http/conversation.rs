//! Conversation routes: a session's messages (over `getConversation`) and its file snapshots.

use std::sync::Arc;

use hld_client::protocol::{GetConversationParams, SessionIdParams};
use hyper::StatusCode;

use super::api::{data, domain, Call};
use super::guard::Refusal;
use super::shapes::event;
use super::Reply;
use crate::daemon::Daemon;
use crate::handlers::sessions;

/// The reply to `call` if it is a conversation route.
pub async fn route(call: &Call<'_>, daemon: &Arc<Daemon>) -> Option<Result<Reply, Refusal>> {
    let reply = match (call.method.as_str(), call.segments.as_slice()) {
        ("GET", ["sessions", id, "messages"]) => messages(daemon, id).await,
        ("GET", ["sessions", id, "snapshots"]) => snapshots(daemon, id).await,
        _ => return None,
    };
    Some(reply)
}

/// `GET /sessions/{id}/messages`: the session's conversation and its ancestors', oldest
/// first, each tool call with its approval's status and id.
async fn messages(daemon: &Arc<Daemon>, id: &str) -> Result<Reply, Refusal> {
    let params = GetConversationParams {
        session_id: Some(id.to_owned()),
        ..Default::default()
    };
    let events = sessions::get_conversation(Arc::clone(daemon), params)
        .await
        .map_err(domain)?
        .events;
    let events: Vec<_> = events.iter().map(event).collect();
    Ok(data(StatusCode::OK, events))
}

/// `GET /sessions/{id}/snapshots`: the daemon keeps no file snapshots, so a known session has
/// none (the reference allows an empty list).
async fn snapshots(daemon: &Arc<Daemon>, id: &str) -> Result<Reply, Refusal> {
    let params = SessionIdParams {
        session_id: id.to_owned(),
    };
    sessions::get_session_state(Arc::clone(daemon), params)
        .await
        .map_err(domain)?;
    Ok(data(StatusCode::OK, serde_json::json!([])))
}
