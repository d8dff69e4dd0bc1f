//! Every method the daemon serves, each described once as a type: its name, params and result.
//! The daemon's router, the client and the tests all use these.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::types::{Approval, ConversationEvent, McpConfigParam, SessionInfo, SessionState};

/// A method: its wire name, a description, human-readable signatures for `describeMethods`,
/// and its params and result types.
pub trait Method {
    /// The wire name (case-sensitive).
    const NAME: &'static str;
    /// One line for `listMethods`.
    const DESCRIPTION: &'static str;
    /// `name: type` strings for `describeMethods`; optional params end in `?`.
    const PARAMS: &'static [&'static str];
    /// The result type for `describeMethods`.
    const RETURNS: &'static str;
    /// The params object. Absent and `null` params decode as `{}`.
    type Params: Serialize + DeserializeOwned + Send + 'static;
    /// The result.
    type Result: Serialize + DeserializeOwned + Send + 'static;
}

/// Params of a method that takes none; any object is accepted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NoParams {}

macro_rules! method {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $desc:literal, [$($param:literal),*], $returns:literal, $params:ty, $result:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $ty;
        impl Method for $ty {
            const NAME: &'static str = $name;
            const DESCRIPTION: &'static str = $desc;
            const PARAMS: &'static [&'static str] = &[$($param),*];
            const RETURNS: &'static str = $returns;
            type Params = $params;
            type Result = $result;
        }
    };
}

// ---- introspection (spec/004) ----

/// Result of `health`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthResult {
    /// Always `"ok"` while the daemon serves.
    pub status: String,
    /// The daemon's version.
    pub version: String,
    /// Whether the `claude` CLI was found, and its version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claude: Option<ClaudeAvailability>,
    /// Whether the approvals MCP server that sessions get can run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvals: Option<ApprovalsAvailability>,
    /// Live `Subscribe` connections.
    #[serde(default)]
    pub subscribers: u64,
    /// Sessions with a live process.
    #[serde(default)]
    pub active_sessions: u64,
}

/// Where `claude` was found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaudeAvailability {
    /// Whether a `claude` binary was found.
    pub available: bool,
    /// Its path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// What `claude --version` printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// The approvals MCP server each launched session gets (`hld mcp claude_approvals`, unless
/// `--approvals-command` names another).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalsAvailability {
    /// Whether the command is there and executable. When false, launches that need it fail.
    pub available: bool,
    /// The command.
    pub command: String,
    /// Whether it was configured, rather than the daemon's own binary.
    #[serde(default)]
    pub configured: bool,
    /// Why it is unavailable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

method!(
    /// Liveness and versions.
    Health, "health", "Report that the daemon is alive, its version, and whether claude was found",
    [], "{status: string, version: string, claude?: object, approvals?: object, subscribers: number, active_sessions: number}",
    NoParams, HealthResult
);

/// `serverInfo` of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// Always `"hld"`.
    pub name: String,
    /// The daemon's version.
    pub version: String,
}

/// Result of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// Who answers.
    pub server_info: ServerInfo,
    /// Always `"2.0"`.
    pub protocol_version: String,
}

method!(
    /// Server metadata.
    Initialize, "initialize", "Return server metadata (name, version, protocol version)",
    [], "{serverInfo: {name: string, version: string}, protocolVersion: string}",
    NoParams, InitializeResult
);

/// Result of `version`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersionResult {
    /// The daemon's version (SemVer).
    pub version: String,
}

method!(
    /// The daemon's version.
    Version, "version", "Return the daemon's version", [], "{version: string}",
    NoParams, VersionResult
);

/// One entry of `listMethods`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodSummary {
    /// The method name.
    pub name: String,
    /// What it does.
    pub description: String,
}

method!(
    /// The methods served.
    ListMethods, "listMethods", "List every method the daemon serves, with a description",
    [], "[{name: string, description: string}]",
    NoParams, Vec<MethodSummary>
);

/// One entry of `describeMethods`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodDescription {
    /// The method name.
    pub name: String,
    /// `name: type` strings; optional params end in `?`.
    pub params: Vec<String>,
    /// The result type.
    pub returns: String,
}

method!(
    /// The methods served, with signatures.
    DescribeMethods, "describeMethods", "Describe every method's params and result",
    [], "[{name: string, params: [string], returns: string}]",
    NoParams, Vec<MethodDescription>
);

/// Params of `setLogLevel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetLogLevelParams {
    /// `debug`, `info`, `warn` or `error`, in any case.
    pub level: String,
}

/// Result of `setLogLevel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetLogLevelResult {
    /// The level now in force, lower-case.
    pub level: String,
    /// Always true.
    pub success: bool,
}

/// The accepted log levels.
pub const LOG_LEVELS: [&str; 4] = ["debug", "info", "warn", "error"];

method!(
    /// Change the log level at run time.
    SetLogLevel, "setLogLevel", "Change the daemon's log level (debug|info|warn|error, any case)",
    ["level: string"], "{level: string, success: boolean}",
    SetLogLevelParams, SetLogLevelResult
);

/// Result of `shutdown`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShutdownResult {
    /// Always `"Shutting down gracefully"`.
    pub message: String,
}

method!(
    /// Stop the daemon gracefully.
    Shutdown, "shutdown", "Reply, then shut the daemon down gracefully",
    [], "{message: string}",
    NoParams, ShutdownResult
);

// ---- sessions (spec/000, 001, 003) ----

/// Params of `launchSession`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LaunchSessionParams {
    /// The prompt. Required and non-empty.
    pub query: String,
    /// Model alias or id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// MCP servers for Claude (object, or a string holding JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_config: Option<McpConfigParam>,
    /// `--permission-prompt-tool`; supplying one disables approval injection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_prompt_tool: Option<String>,
    /// Working directory; must exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    /// `--max-turns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<i64>,
    /// `--system-prompt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// `--append-system-prompt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append_system_prompt: Option<String>,
    /// `--allowedTools`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    /// `--disallowedTools`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disallowed_tools: Option<Vec<String>>,
    /// Appended to the system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_instructions: Option<String>,
    /// Accepted for compatibility; stream-json always runs verbose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verbose: Option<bool>,
    /// Opt out of the daemon's approvals MCP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_approvals: Option<bool>,
}

/// Result of `launchSession`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchSessionResult {
    /// The new session.
    pub session_id: String,
    /// Its run.
    pub run_id: String,
}

method!(
    /// Start a Claude Code session.
    LaunchSession, "launchSession", "Launch a new Claude Code session",
    ["query: string", "model?: string", "mcp_config?: object|string", "permission_prompt_tool?: string",
     "working_dir?: string", "max_turns?: number", "system_prompt?: string", "append_system_prompt?: string",
     "allowed_tools?: [string]", "disallowed_tools?: [string]", "custom_instructions?: string",
     "verbose?: boolean", "no_approvals?: boolean"],
    "{session_id: string, run_id: string}",
    LaunchSessionParams, LaunchSessionResult
);

/// Result of `listSessions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListSessionsResult {
    /// Newest activity first; always an array.
    pub sessions: Vec<SessionInfo>,
}

method!(
    /// Every session.
    ListSessions, "listSessions", "List all sessions, newest activity first",
    [], "{sessions: [SessionInfo]}",
    NoParams, ListSessionsResult
);

/// Params naming one session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionIdParams {
    /// The session.
    pub session_id: String,
}

/// Result of `getSessionState`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetSessionStateResult {
    /// The session.
    pub session: SessionState,
}

method!(
    /// One session's details.
    GetSessionState, "getSessionState", "Get one session's current state",
    ["session_id: string"], "{session: SessionState}",
    SessionIdParams, GetSessionStateResult
);

/// Params of `getConversation`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetConversationParams {
    /// The session: its whole parent chain, oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// One Claude session (wins over `session_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claude_session_id: Option<String>,
    /// Page start: only events with a larger `id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_sequence: Option<i64>,
    /// Page size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
}

/// Result of `getConversation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetConversationResult {
    /// Oldest first; always an array.
    pub events: Vec<ConversationEvent>,
}

method!(
    /// Stored conversation history.
    GetConversation, "getConversation",
    "Get the conversation of a session (its whole parent chain) or of one Claude session",
    ["session_id?: string", "claude_session_id?: string", "after_sequence?: number", "limit?: number"],
    "{events: [ConversationEvent]}",
    GetConversationParams, GetConversationResult
);

/// Params of `continueSession`. Unset fields are inherited from the parent (except `max_turns`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContinueSessionParams {
    /// The parent session.
    pub session_id: String,
    /// The new prompt.
    pub query: String,
    /// Overrides the parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Overrides the parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append_system_prompt: Option<String>,
    /// Overrides the parent's (a string holding JSON, or an object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_config: Option<McpConfigParam>,
    /// Overrides the parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_prompt_tool: Option<String>,
    /// Overrides the parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    /// Overrides the parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disallowed_tools: Option<Vec<String>>,
    /// Overrides the parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_instructions: Option<String>,
    /// Not inherited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<i64>,
    /// Overrides the parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Result of `continueSession`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContinueSessionResult {
    /// The new session.
    pub session_id: String,
    /// Its run.
    pub run_id: String,
    /// Always empty: Claude reports the new id in the stream.
    pub claude_session_id: String,
    /// The parent.
    pub parent_session_id: String,
}

method!(
    /// Resume a session with a new query.
    ContinueSession, "continueSession", "Continue a session with a new query (new session, resumed Claude conversation)",
    ["session_id: string", "query: string", "system_prompt?: string", "append_system_prompt?: string",
     "mcp_config?: string|object", "permission_prompt_tool?: string", "allowed_tools?: [string]",
     "disallowed_tools?: [string]", "custom_instructions?: string", "max_turns?: number", "model?: string"],
    "{session_id: string, run_id: string, claude_session_id: string, parent_session_id: string}",
    ContinueSessionParams, ContinueSessionResult
);

/// Result of `interruptSession`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterruptSessionResult {
    /// Always true on success.
    pub success: bool,
    /// The session.
    pub session_id: String,
    /// Always `"completing"`.
    pub status: String,
    /// What happens next.
    pub message: String,
}

method!(
    /// Stop a running session.
    InterruptSession, "interruptSession", "Interrupt a running session (SIGINT, then SIGKILL after a grace period)",
    ["session_id: string"], "{success: boolean, session_id: string, status: string, message: string}",
    SessionIdParams, InterruptSessionResult
);

// ---- approvals ----

/// Params of `fetchApprovals`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FetchApprovalsParams {
    /// Only this session's approvals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// Result of `fetchApprovals`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FetchApprovalsResult {
    /// Pending approvals; always an array.
    pub approvals: Vec<Approval>,
}

method!(
    /// Pending approvals.
    FetchApprovals, "fetchApprovals", "List pending approvals, optionally of one session",
    ["session_id?: string"], "{approvals: [Approval]}",
    FetchApprovalsParams, FetchApprovalsResult
);

/// Params of `sendDecision`. Validated by the handler so that each violation gets exact data.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SendDecisionParams {
    /// The approval (`approval_id` is accepted as an alias).
    #[serde(
        default,
        alias = "approval_id",
        skip_serializing_if = "Option::is_none"
    )]
    pub call_id: Option<String>,
    /// `function_call` or `human_contact`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `approve` or `deny` (function_call), `respond` (human_contact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// Required for deny and respond.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// Result of `sendDecision`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SendDecisionResult {
    /// Whether the decision was recorded.
    pub success: bool,
    /// Why not, for a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why not, for a program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<RefusalReason>,
}

/// Why `sendDecision` did not record a decision (`success: false`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalReason {
    /// No approval has this id.
    NotFound,
    /// A human already approved, denied or answered it.
    AlreadyDecided,
    /// It was resolved without a decision: its session ended, or it was answered elsewhere
    /// (a cloud approval). Nothing waits for it any more.
    Resolved,
    /// The decision does not fit the approval (a `respond` to a tool call, say).
    WrongType,
    /// The decision could not be delivered or stored; it may be sent again.
    Failed,
    /// A reason this client does not know (from a newer daemon).
    #[serde(other)]
    Unknown,
}

method!(
    /// Decide an approval.
    SendDecision, "sendDecision", "Approve, deny or respond to an approval",
    ["call_id: string", "type: string", "decision: string", "comment?: string"],
    "{success: boolean, error?: string, reason?: \"not_found\"|\"already_decided\"|\"resolved\"|\"wrong_type\"|\"failed\"}",
    SendDecisionParams, SendDecisionResult
);

/// Params of `createApproval`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CreateApprovalParams {
    /// The session asking (from `HUMANLAYER_SESSION_ID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The run asking (from `HUMANLAYER_RUN_ID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// `function_call` (default) or `human_contact`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The tool (function calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The tool input (function calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_input: Option<Value>,
    /// The Claude tool use id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// The question (human contacts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Result of `createApproval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateApprovalResult {
    /// The new approval.
    pub approval_id: String,
}

method!(
    /// Record a new approval request.
    CreateApproval, "createApproval", "Create an approval request for a session's tool call or question",
    ["session_id?: string", "run_id?: string", "type?: string", "tool_name?: string", "tool_input?: object",
     "tool_use_id?: string", "message?: string"],
    "{approval_id: string}",
    CreateApprovalParams, CreateApprovalResult
);

/// Params of `getApproval`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetApprovalParams {
    /// The approval.
    pub approval_id: String,
}

/// Result of `getApproval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetApprovalResult {
    /// The approval.
    pub approval: Approval,
}

method!(
    /// One approval.
    GetApproval, "getApproval", "Get one approval by id",
    ["approval_id: string"], "{approval: Approval}",
    GetApprovalParams, GetApprovalResult
);

// ---- events ----

/// Params of `Subscribe`; filters are ANDed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubscribeParams {
    /// Only these event types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_types: Option<Vec<String>>,
    /// Only this session's events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Only this run's events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// The first reply of `Subscribe`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscribeResult {
    /// `sub_<uuid>`.
    pub subscription_id: String,
    /// `Subscription established. Waiting for events...`
    pub message: String,
}

method!(
    /// Stream events on this connection.
    Subscribe, "Subscribe", "Take over this connection and stream matching events to it",
    ["event_types?: [string]", "session_id?: string", "run_id?: string"],
    "{subscription_id: string, message: string}, then {event} lines",
    SubscribeParams, SubscribeResult
);
