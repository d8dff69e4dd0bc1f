//! Domain types carried in params, results and events: sessions, conversation events,
//! approvals, MCP configuration and bus events.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A session's status. Only these six values ever appear on the wire: strict clients reject
/// anything else, so detail (interrupted, exit code, error) lives in other fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// The row exists; the process is being started.
    Starting,
    /// Claude is working.
    Running,
    /// An approval of this session is pending.
    WaitingInput,
    /// An interrupt was requested; the process is winding down.
    Completing,
    /// Finished (successfully, or interrupted: see `interrupted`).
    Completed,
    /// Finished with an error.
    Failed,
}

impl SessionStatus {
    /// Every status, in lifecycle order.
    pub const ALL: [SessionStatus; 6] = [
        SessionStatus::Starting,
        SessionStatus::Running,
        SessionStatus::WaitingInput,
        SessionStatus::Completing,
        SessionStatus::Completed,
        SessionStatus::Failed,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Starting => "starting",
            SessionStatus::Running => "running",
            SessionStatus::WaitingInput => "waiting_input",
            SessionStatus::Completing => "completing",
            SessionStatus::Completed => "completed",
            SessionStatus::Failed => "failed",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether a process may still be attached to a session in this status.
    pub fn is_active(self) -> bool {
        !matches!(self, SessionStatus::Completed | SessionStatus::Failed)
    }
}

impl std::fmt::Display for SessionStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One MCP server entry of an `--mcp-config` file. Stdio servers use `command`/`args`/`env`;
/// other kinds (`type: "http"`, `url`, `headers`) are kept verbatim in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpServer {
    /// The executable of a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// Extra environment for the server process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    /// Any other keys, kept as given.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `--mcp-config` JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpConfig {
    /// Servers by name; Claude exposes their tools as `mcp__<name>__<tool>`.
    #[serde(rename = "mcpServers", default)]
    pub mcp_servers: BTreeMap<String, McpServer>,
}

/// `mcp_config` as clients send it: an object in `launchSession`, a JSON string in
/// `continueSession` (spec/003). Both shapes are accepted by both methods.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum McpConfigParam {
    /// The config as an object.
    Object(McpConfig),
    /// The config as a string holding JSON.
    Json(String),
}

/// The session result object in `listSessions` (built by the daemon, Go-compatible shape).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionResult {
    /// Always `"result"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Always `"session_completed"`.
    pub subtype: String,
    /// Total cost reported by Claude.
    pub total_cost_usd: f64,
    /// Whether the session ended in error.
    pub is_error: bool,
    /// Duration reported by Claude.
    pub duration_ms: i64,
    /// Always 0 (not tracked).
    pub duration_api_ms: i64,
    /// Turns reported by Claude.
    pub num_turns: i64,
    /// Final text.
    pub result: String,
    /// The Claude session id.
    pub session_id: String,
    /// The error text, when `is_error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A session as listed by `listSessions` (the Go `session.Info` shape plus extras).
///
/// **The status rule of lists.** The anchor's desktop client (the WUI, later CodeLayer)
/// decodes a listed session's status into a closed enum of `starting`, `running`,
/// `completed`, `failed` and `waiting_input`: one `completing` in a list would make the whole
/// call fail for as long as an interrupt lasts. So every method that returns session lists
/// reports a session being interrupted as `running`, with `interrupting: true`.
/// `getSessionState` and the events keep `completing`, which those clients read as a plain
/// string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The daemon's session id.
    pub id: String,
    /// The run id handed to MCP servers.
    pub run_id: String,
    /// Claude's own session id, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claude_session_id: Option<String>,
    /// The session this one continues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<String>,
    /// Status. In lists a session being interrupted reports `running` (see the type's docs).
    pub status: SessionStatus,
    /// Whether an interrupt was requested and the process is winding down (the status
    /// `completing` of `getSessionState` and the events).
    #[serde(default)]
    pub interrupting: bool,
    /// Creation time, RFC 3339.
    pub start_time: String,
    /// End time, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<String>,
    /// Last activity, RFC 3339.
    pub last_activity_at: String,
    /// Error text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The first query.
    pub query: String,
    /// The query shortened to 50 characters.
    pub summary: String,
    /// The model alias or id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    /// The result, once Claude reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<SessionResult>,
    /// Whether the session was ended by an interrupt.
    #[serde(default)]
    pub interrupted: bool,
    /// Total cost reported by Claude.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// A session as returned by `getSessionState` (the Go `SessionState` shape plus extras).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionState {
    /// The daemon's session id.
    pub id: String,
    /// The run id handed to MCP servers.
    pub run_id: String,
    /// Claude's own session id, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claude_session_id: Option<String>,
    /// The session this one continues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<String>,
    /// Status.
    pub status: SessionStatus,
    /// The first query.
    pub query: String,
    /// The query shortened to 50 characters.
    pub summary: String,
    /// The model alias or id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    /// Creation time, RFC 3339.
    pub created_at: String,
    /// Last activity, RFC 3339.
    pub last_activity_at: String,
    /// End time, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// Error text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Total cost reported by Claude.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Input plus output tokens reported by Claude.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<i64>,
    /// Duration reported by Claude.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
    /// Turns reported by Claude.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_turns: Option<i64>,
    /// Final text reported by Claude.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_content: Option<String>,
    /// Input tokens reported by Claude.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<i64>,
    /// Output tokens reported by Claude.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<i64>,
    /// Whether the session was ended by an interrupt.
    #[serde(default)]
    pub interrupted: bool,
    /// The `claude` process exit code, once it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// `--max-turns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<i64>,
    /// `--permission-prompt-tool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_prompt_tool: Option<String>,
}

/// The kind of a stored conversation event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConversationEventType {
    /// Text from the user, the assistant or the system.
    Message,
    /// A tool invocation by the assistant.
    ToolCall,
    /// The result of a tool invocation.
    ToolResult,
    /// A system notice.
    System,
    /// Assistant thinking.
    Thinking,
}

impl ConversationEventType {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ConversationEventType::Message => "message",
            ConversationEventType::ToolCall => "tool_call",
            ConversationEventType::ToolResult => "tool_result",
            ConversationEventType::System => "system",
            ConversationEventType::Thinking => "thinking",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        [
            ConversationEventType::Message,
            ConversationEventType::ToolCall,
            ConversationEventType::ToolResult,
            ConversationEventType::System,
            ConversationEventType::Thinking,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

/// One stored conversation event (`getConversation`, `conversation_updated`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationEvent {
    /// Row id.
    pub id: i64,
    /// The daemon session it belongs to.
    pub session_id: String,
    /// The Claude session it belongs to (empty before Claude reported one).
    pub claude_session_id: String,
    /// Per-session position, strictly increasing.
    pub sequence: i64,
    /// Kind.
    pub event_type: ConversationEventType,
    /// Time stored, RFC 3339.
    pub created_at: String,
    /// `user`, `assistant` or `system`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Text content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Tool use id of a tool call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_id: Option<String>,
    /// Tool name of a tool call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Tool input of a tool call, as a JSON string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_input_json: Option<String>,
    /// For a tool result: the tool use id it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result_for_id: Option<String>,
    /// For a tool result: its content as text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result_content: Option<String>,
    /// For a tool call: whether its result arrived. Always present.
    pub is_completed: bool,
    /// For a tool result: whether the tool reported an error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// `pending`, `approved`, `denied` or `resolved`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_status: Option<String>,
    /// The linked approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    /// The Task tool use this event was produced under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_tool_use_id: Option<String>,
    /// For `system` events, what Claude reported: `api_retry` (an API call failed and is
    /// retried; `content` says the attempt, the error and the delay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtype: Option<String>,
}

/// The kind of an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalType {
    /// Permission for a tool call (approve or deny).
    FunctionCall,
    /// A question to the human (respond).
    HumanContact,
}

impl ApprovalType {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalType::FunctionCall => "function_call",
            ApprovalType::HumanContact => "human_contact",
        }
    }
}

/// The state of an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// Waiting for a human.
    Pending,
    /// A function call was approved.
    Approved,
    /// A function call was denied.
    Denied,
    /// A human contact was answered.
    Responded,
    /// Answered outside this daemon (a HumanLayer cloud approval that left the pending list,
    /// or whose respond call got 409): the outcome is not known here.
    Resolved,
}

impl ApprovalStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::Denied => "denied",
            ApprovalStatus::Responded => "responded",
            ApprovalStatus::Resolved => "resolved",
        }
    }
}

/// Where an approval lives: in this daemon only, or in the HumanLayer cloud (decisions are
/// sent to the HumanLayer API first).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalSource {
    /// Created with `createApproval`.
    #[default]
    Local,
    /// Fetched from the HumanLayer API; its id is the cloud `call_id`.
    Cloud,
}

impl ApprovalSource {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalSource::Local => "local",
            ApprovalSource::Cloud => "cloud",
        }
    }
}

/// The HumanLayer `FunctionCall` spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCallSpec {
    /// The tool name.
    #[serde(rename = "fn")]
    pub function: String,
    /// The tool input.
    pub kwargs: Value,
}

/// The HumanLayer `FunctionCall` status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionCallStatus {
    /// When it was requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_at: Option<String>,
    /// When it was answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responded_at: Option<String>,
    /// The decision, once answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<bool>,
    /// The reviewer's comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// The HumanLayer `FunctionCall` object (spec/001's nested shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The run it belongs to.
    pub run_id: String,
    /// Its id.
    pub call_id: String,
    /// What is asked.
    pub spec: FunctionCallSpec,
    /// Its state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<FunctionCallStatus>,
}

/// The HumanLayer `HumanContact` spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HumanContactSpec {
    /// The question.
    pub msg: String,
    /// An optional subject line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

/// The HumanLayer `HumanContact` status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HumanContactStatus {
    /// When it was requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_at: Option<String>,
    /// When it was answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responded_at: Option<String>,
    /// The answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
}

/// The HumanLayer `HumanContact` object (spec/001's nested shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HumanContact {
    /// The run it belongs to.
    pub run_id: String,
    /// Its id.
    pub call_id: String,
    /// What is asked.
    pub spec: HumanContactSpec,
    /// Its state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<HumanContactStatus>,
}

/// An approval, carrying both the flat fields of spec/003 and the nested object of spec/001
/// so that every existing client can read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    /// Its id (equal to `call_id`).
    pub id: String,
    /// Its id, as the HumanLayer API names it.
    pub call_id: String,
    /// The run it belongs to.
    pub run_id: String,
    /// The session it belongs to.
    pub session_id: String,
    /// Kind.
    #[serde(rename = "type")]
    pub kind: ApprovalType,
    /// State.
    pub status: ApprovalStatus,
    /// Where it lives.
    #[serde(default)]
    pub source: ApprovalSource,
    /// The tool name (function calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_name: Option<String>,
    /// The tool input (function calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_args: Option<Value>,
    /// The question (human contacts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The Claude tool use id it gates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// When it was requested, RFC 3339.
    pub requested_at: String,
    /// When it times out, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_at: Option<String>,
    /// When it was answered, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responded_at: Option<String>,
    /// The reviewer's comment or answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The nested HumanLayer object of a function call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_call: Option<FunctionCall>,
    /// The nested HumanLayer object of a human contact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub human_contact: Option<HumanContact>,
}

/// The names of the bus event types, as used in `Subscribe.event_types`.
pub const EVENT_TYPES: [&str; 5] = [
    "new_approval",
    "approval_resolved",
    "session_status_changed",
    "conversation_updated",
    "lagged",
];

/// A bus event: one closed enum, serialised as `{"type": …, "data": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum Event {
    /// A session changed status.
    SessionStatusChanged {
        /// The session.
        session_id: String,
        /// Its run.
        run_id: String,
        /// The status before.
        old_status: SessionStatus,
        /// The status after.
        new_status: SessionStatus,
        /// The parent session, for continuations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_session_id: Option<String>,
        /// The error text, for failures.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A conversation event was stored.
    ConversationUpdated {
        /// The session.
        session_id: String,
        /// Its run.
        run_id: String,
        /// The Claude session.
        claude_session_id: String,
        /// The stored event.
        event: Box<ConversationEvent>,
    },
    /// An approval was requested.
    NewApproval {
        /// The approval.
        approval: Box<Approval>,
        /// Its session.
        session_id: String,
        /// Its run.
        run_id: String,
        /// Its kind (the Go daemon's `new_approval` carried `type`, `count`, `total`).
        #[serde(rename = "type")]
        kind: ApprovalType,
        /// How many approvals this event announces (always 1).
        count: u64,
        /// Pending approvals, of every session, now that this one is.
        total: u64,
    },
    /// An approval was decided.
    ApprovalResolved {
        /// The approval.
        approval_id: String,
        /// Same as `approval_id`.
        call_id: String,
        /// Its session.
        session_id: String,
        /// Its run.
        run_id: String,
        /// `approved`, `denied`, `responded`, or `resolved` (answered elsewhere).
        decision: ApprovalStatus,
        /// The reviewer's comment or answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        comment: Option<String>,
        /// The approval's kind.
        #[serde(rename = "type")]
        kind: ApprovalType,
        /// Pending approvals, of every session, now that this one is not.
        total: u64,
    },
    /// This subscriber fell behind and `missed` events were dropped for it.
    Lagged {
        /// How many events were dropped.
        missed: u64,
    },
}

impl Event {
    /// The event's type name (one of [`EVENT_TYPES`]).
    pub fn type_name(&self) -> &'static str {
        match self {
            Event::SessionStatusChanged { .. } => "session_status_changed",
            Event::ConversationUpdated { .. } => "conversation_updated",
            Event::NewApproval { .. } => "new_approval",
            Event::ApprovalResolved { .. } => "approval_resolved",
            Event::Lagged { .. } => "lagged",
        }
    }

    /// The session the event is about, if any.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Event::SessionStatusChanged { session_id, .. }
            | Event::ConversationUpdated { session_id, .. }
            | Event::NewApproval { session_id, .. }
            | Event::ApprovalResolved { session_id, .. } => Some(session_id),
            Event::Lagged { .. } => None,
        }
    }

    /// The run the event is about, if any.
    pub fn run_id(&self) -> Option<&str> {
        match self {
            Event::SessionStatusChanged { run_id, .. }
            | Event::ConversationUpdated { run_id, .. }
            | Event::NewApproval { run_id, .. }
            | Event::ApprovalResolved { run_id, .. } => Some(run_id),
            Event::Lagged { .. } => None,
        }
    }
}

/// An event with its publication time, as sent to subscribers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimedEvent {
    /// The event (`type` and `data`).
    #[serde(flatten)]
    pub event: Event,
    /// When it was published, RFC 3339.
    pub timestamp: String,
}

/// One `result` of a subscription line after the confirmation: an event or a heartbeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SubscriptionMessage {
    /// `{"event": {...}}`.
    Event {
        /// The event.
        event: Box<TimedEvent>,
    },
    /// `{"type": "heartbeat", "message": "Connection alive"}`.
    Heartbeat {
        /// Always `"heartbeat"`.
        #[serde(rename = "type")]
        kind: String,
        /// Always `"Connection alive"`.
        message: String,
    },
}
