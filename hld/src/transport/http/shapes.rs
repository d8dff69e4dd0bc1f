//! The reference's JSON shapes (hld-rest.md section 2), made from the protocol's types.

use hld_client::protocol::{SessionInfo, SessionState};
use serde_json::{json, Value};

/// The reference's context window, reported for every session.
const CONTEXT_LIMIT: u64 = 168_000;

/// A session in the reference's shape (section 2): a draft's status is its draft state, and
/// the figures lists leave out (tokens, duration) are null, as upstream's lists send them.
pub fn session(s: &SessionInfo) -> Value {
    let control = &s.control;
    let status = match (&control.draft, s.interrupting) {
        (Some(draft), _) => Value::from(draft.to_string()),
        (None, true) => Value::from("interrupting"),
        (None, false) => serde_json::to_value(&s.status).unwrap_or(Value::Null),
    };
    let mut v = json!({
        "id": s.id,
        "run_id": s.run_id,
        "status": status,
        "created_at": s.start_time,
        "last_activity_at": s.last_activity_at,
        "query": s.query,
        "completed_at": s.end_time,
        "dangerously_skip_permissions_expires_at": control.dangerously_skip_permissions_expires_at,
        "cost_usd": s.cost_usd.filter(|c| *c > 0.0),
        "duration_ms": null,
        "input_tokens": null,
        "output_tokens": null,
        "cache_creation_input_tokens": null,
        "cache_read_input_tokens": null,
        "effective_context_tokens": null,
        "context_limit": CONTEXT_LIMIT,
        "auto_accept_edits": control.auto_accept_edits,
        "dangerously_skip_permissions": control.dangerously_skip_permissions,
        "archived": control.archived,
        "proxy_enabled": false,
        "editor_state": control.editor_state.as_deref().filter(|e| !e.is_empty()),
    });
    let optional = [
        ("claude_session_id", s.claude_session_id.as_deref()),
        ("parent_session_id", s.parent_session_id.as_deref()),
        (
            "summary",
            Some(s.summary.as_str()).filter(|t| !t.is_empty()),
        ),
        ("title", Some(control.title.as_str())),
        ("model", s.model.as_deref()),
        ("working_dir", s.working_dir.as_deref()),
        ("error_message", s.error.as_deref()),
    ];
    for (key, value) in optional {
        if let Some(value) = value.filter(|t| !t.is_empty()) {
            v[key] = Value::from(value);
        }
    }
    v
}

/// One session in the reference's shape (`GET /sessions/{id}`): [`session`] with the figures
/// lists leave out, each null unless known, and the extra directories. `model_id` is left out:
/// the daemon keeps one model string, shown as `model`.
pub fn session_detail(info: &SessionInfo, state: &SessionState) -> Value {
    let mut v = session(info);
    let positive = |n: Option<i64>| n.filter(|n| *n > 0);
    v["duration_ms"] = json!(positive(state.duration_ms));
    v["input_tokens"] = json!(state.input_tokens);
    v["output_tokens"] = json!(state.output_tokens);
    v["cache_creation_input_tokens"] = json!(state.cache_creation_input_tokens);
    v["cache_read_input_tokens"] = json!(state.cache_read_input_tokens);
    v["effective_context_tokens"] = json!(state.effective_context_tokens);
    let dirs = &state.control.additional_directories;
    if !dirs.is_empty() {
        v["additional_directories"] = json!(dirs);
    }
    v
}
