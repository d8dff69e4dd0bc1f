//! The reference's JSON shapes (hld-rest.md section 2), made from the protocol's types.

use hld_client::protocol::{
    Approval, ConversationEvent, ConversationEventType, SessionInfo, SessionState, SessionStatus,
};
use serde::Serialize;
use serde_json::{json, Value};

/// The reference's context window, reported for every session.
const CONTEXT_LIMIT: u64 = 168_000;

/// A session in the reference's shape (section 2): a draft's status is its draft state, cost
/// and duration null unless positive, and the tokens, which lists leave out, null.
pub fn session(s: &SessionInfo) -> Value {
    let control = &s.control;
    let mut v = json!({
        "id": s.id,
        "run_id": s.run_id,
        "status": status(s),
        "created_at": s.start_time,
        "last_activity_at": s.last_activity_at,
        "query": s.query,
        "completed_at": s.end_time,
        "dangerously_skip_permissions_expires_at": control.dangerously_skip_permissions_expires_at,
        "cost_usd": s.cost_usd.filter(|c| *c > 0.0),
        "duration_ms": s.result.as_ref().map(|r| r.duration_ms).filter(|d| *d > 0),
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

/// A session's status as the reference names it: a draft's is its draft state, and
/// `interrupted` is a completed session that was interrupted (resumable), as the event stream
/// says too.
pub fn status(s: &SessionInfo) -> Value {
    match (&s.control.draft, s.interrupting) {
        (Some(draft), _) => Value::from(draft.to_string()),
        (None, true) => Value::from("interrupting"),
        (None, false) if s.interrupted && s.status == SessionStatus::Completed => {
            Value::from("interrupted")
        }
        (None, false) => serde_json::to_value(&s.status).unwrap_or(Value::Null),
    }
}

/// One session in the reference's shape (`GET /sessions/{id}`): [`session`] with the tokens
/// lists leave out, each null unless known, and the extra directories. `model_id` is left out:
/// the daemon keeps one model string, shown as `model`.
pub fn session_detail(info: &SessionInfo, state: &SessionState) -> Value {
    let mut v = session(info);
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

/// A conversation event in the reference's shape (section 2): the approval's status and id
/// always present (null when none), our `is_error` and `subtype` left out. Serialised straight
/// from the stored event, as `getConversation`'s are.
#[derive(Debug, Serialize)]
pub struct Event<'a> {
    id: i64,
    session_id: &'a str,
    claude_session_id: &'a str,
    sequence: i64,
    event_type: ConversationEventType,
    created_at: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_input_json: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_result_for_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_result_content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_tool_use_id: Option<&'a str>,
    is_completed: bool,
    approval_status: Option<&'a str>,
    approval_id: Option<&'a str>,
}

pub fn event(e: &ConversationEvent) -> Event<'_> {
    Event {
        id: e.id,
        session_id: &e.session_id,
        claude_session_id: &e.claude_session_id,
        sequence: e.sequence,
        event_type: e.event_type,
        created_at: &e.created_at,
        role: e.role.as_deref(),
        content: e.content.as_deref(),
        tool_id: e.tool_id.as_deref(),
        tool_name: e.tool_name.as_deref(),
        tool_input_json: e.tool_input_json.as_deref(),
        tool_result_for_id: e.tool_result_for_id.as_deref(),
        tool_result_content: e.tool_result_content.as_deref(),
        parent_tool_use_id: e.parent_tool_use_id.as_deref(),
        is_completed: e.is_completed,
        approval_status: e.approval_status.as_deref(),
        approval_id: e.approval_id.as_deref(),
    }
}

/// The tool an approval is shown as, and its input. A human contact (which CodeLayer does not
/// know) is Claude Code's `AskUserQuestion` with its input when it holds one (asked over the
/// control channel), else a tool named `human_contact` whose input is the question.
pub fn tool_of(a: &Approval) -> (&str, Value) {
    match (&a.function_name, &a.function_args) {
        (Some(name), args) => (name.as_str(), args.clone().unwrap_or_else(|| json!({}))),
        (None, Some(args)) => (hld_client::view::ASK_USER_QUESTION, args.clone()),
        (None, None) => ("human_contact", json!({ "message": a.message })),
    }
}

/// An approval in the reference's shape (section 2), its tool as [`tool_of`] says.
pub fn approval(a: &Approval) -> Value {
    let (tool_name, tool_input) = tool_of(a);
    let mut v = json!({
        "id": a.id,
        "run_id": a.run_id,
        "session_id": a.session_id,
        "status": a.status.as_str(),
        "created_at": a.requested_at,
        "responded_at": a.responded_at,
        "tool_name": tool_name,
        "tool_input": tool_input,
    });
    if let Some(comment) = a.comment.as_deref().filter(|c| !c.is_empty()) {
        v["comment"] = Value::from(comment);
    }
    v
}
