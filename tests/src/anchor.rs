//! Strict mirrors of what the anchor's clients decode (hld-anchor.md §2, §4.6–4.7, §5, §7.4;
//! peers.md §1). A reply these types cannot decode is one that some existing client fails on.
//!
//! - The Rust daemon client of the HumanLayer desktop app (WUI, later CodeLayer,
//!   `humanlayer-wui/src-tauri/src/daemon_client/types.rs`) deserialises with serde: it needs
//!   every field it does not mark optional, parses a listed session's status into a closed enum
//!   and its times as RFC 3339, and reads numbers into `i64`/`i32`/`f64` fields. Those are the
//!   `Wui*` types.
//! - The Go client (`hld/client`, used by the Go TUI) and `humanlayer-go` unmarshal with
//!   `encoding/json`: a missing field is its zero value, but a value of the wrong JSON type (a
//!   number sent as a string, a time that is not RFC 3339, an object that is not an object)
//!   fails the whole reply. The approval types mirror those (`PendingApproval` and the cloud
//!   objects it carries).
//! - The TypeScript `DaemonClient` and the approvals MCP server of `hlyr` read a few fields and
//!   match the reply `id` with `===`.
//!
//! None of these clients rejects unknown fields, so neither do the mirrors: the point is that a
//! missing or renamed field, a value of another type, or a status outside its enum fails.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Map, Value};

/// `"jsonrpc": "2.0"`, the only version the clients accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum JsonRpcVersion {
    /// `"2.0"`.
    #[serde(rename = "2.0")]
    V2,
}

/// A reply on a client's main connection. The clients send numeric ids and match the reply by
/// its id with its JSON type (the TS client's `===`), so the id must come back a number.
#[derive(Debug, Clone, Deserialize)]
pub struct Reply<T> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The result.
    pub result: T,
    /// The request's numeric id.
    pub id: u64,
}

/// A line of a subscription: the confirmation, an event or a heartbeat. Its id may be null
/// (the anchor's daemon sent `"id": null` on every one) or the request's.
#[derive(Debug, Clone, Deserialize)]
pub struct SubscriptionLine<T> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The confirmation, event or heartbeat.
    pub result: T,
    /// Null, or the `Subscribe` request's id.
    pub id: Option<u64>,
}

/// The WUI's `HealthCheckResponse`; the TS client also throws unless `status` is `ok`.
#[derive(Debug, Clone, Deserialize)]
pub struct WuiHealth {
    /// `ok`.
    pub status: String,
    /// The daemon's version (required by the WUI).
    pub version: String,
}

/// The WUI's `SessionStatus`: exactly these five.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WuiSessionStatus {
    Starting,
    Running,
    Completed,
    Failed,
    WaitingInput,
}

/// The result object of a listed session, as the Go TUI reads it (`claudecode.Result`: it
/// shows `num_turns`); every field optional, every type strict.
#[derive(Debug, Clone, Deserialize)]
pub struct GoSessionResult {
    /// `result`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// `session_completed`.
    pub subtype: Option<String>,
    /// Cost in dollars.
    pub total_cost_usd: Option<f64>,
    /// Whether the session failed.
    pub is_error: Option<bool>,
    /// Duration in milliseconds.
    pub duration_ms: Option<i64>,
    /// API duration in milliseconds.
    pub duration_api_ms: Option<i64>,
    /// Turns.
    pub num_turns: Option<i64>,
    /// The final text.
    pub result: Option<String>,
    /// The Claude session id.
    pub session_id: Option<String>,
    /// The error text.
    pub error: Option<String>,
}

/// The WUI's `SessionInfo`, as `listSessions` must satisfy it.
#[derive(Debug, Clone, Deserialize)]
pub struct WuiSessionInfo {
    pub id: String,
    pub run_id: String,
    pub claude_session_id: Option<String>,
    pub parent_session_id: Option<String>,
    pub status: WuiSessionStatus,
    pub start_time: DateTime<Utc>,
    pub end_time: Option<DateTime<Utc>>,
    pub last_activity_at: DateTime<Utc>,
    pub error: Option<String>,
    pub query: String,
    pub summary: String,
    pub model: Option<String>,
    pub working_dir: Option<String>,
    pub result: Option<GoSessionResult>,
}

/// The WUI's `ListSessionsResponse`.
#[derive(Debug, Clone, Deserialize)]
pub struct WuiListSessions {
    pub sessions: Vec<WuiSessionInfo>,
}

/// The WUI's `SessionState`: its status is a plain string, its numbers are numbers.
#[derive(Debug, Clone, Deserialize)]
pub struct WuiSessionState {
    pub id: String,
    pub run_id: String,
    pub claude_session_id: Option<String>,
    pub parent_session_id: Option<String>,
    pub status: String,
    pub query: String,
    pub summary: String,
    pub model: Option<String>,
    pub working_dir: Option<String>,
    pub created_at: String,
    pub last_activity_at: String,
    pub completed_at: Option<String>,
    pub error_message: Option<String>,
    pub cost_usd: Option<f64>,
    pub total_tokens: Option<i32>,
    pub duration_ms: Option<i32>,
}

/// The WUI's `GetSessionStateResponse`.
#[derive(Debug, Clone, Deserialize)]
pub struct WuiGetSessionState {
    pub session: WuiSessionState,
}

/// The WUI's `LaunchSessionResponse` (also what `hlyr launch` prints).
#[derive(Debug, Clone, Deserialize)]
pub struct WuiLaunchSession {
    pub session_id: String,
    pub run_id: String,
}

/// The WUI's `ContinueSessionResponse`: `claude_session_id` is present even when empty.
#[derive(Debug, Clone, Deserialize)]
pub struct WuiContinueSession {
    pub session_id: String,
    pub run_id: String,
    pub claude_session_id: String,
    pub parent_session_id: String,
}

/// The WUI's `InterruptSessionResponse`.
#[derive(Debug, Clone, Deserialize)]
pub struct WuiInterruptSession {
    pub success: bool,
    pub session_id: String,
    pub status: String,
}

/// The WUI's `ConversationEvent`: the row id is an `i64`, the sequence an `i32`, and
/// `is_completed` is always there. `event_type` is a string (the Go TUI shows an unknown one
/// as `[<type> event]`).
#[derive(Debug, Clone, Deserialize)]
pub struct WuiConversationEvent {
    pub id: i64,
    pub session_id: String,
    pub claude_session_id: String,
    pub sequence: i32,
    pub event_type: String,
    pub created_at: String,
    pub role: Option<String>,
    pub content: Option<String>,
    pub tool_id: Option<String>,
    pub tool_name: Option<String>,
    /// A string holding the tool input's JSON (the Go TUI prints it as it is).
    pub tool_input_json: Option<String>,
    pub tool_result_for_id: Option<String>,
    pub tool_result_content: Option<String>,
    pub is_completed: bool,
    pub approval_status: Option<String>,
    pub approval_id: Option<String>,
}

/// The WUI's `GetConversationResponse`.
#[derive(Debug, Clone, Deserialize)]
pub struct WuiGetConversation {
    pub events: Vec<WuiConversationEvent>,
}

/// The kind of a pending approval: exactly these two (the Go TUI dereferences the matching
/// object).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PendingApprovalType {
    FunctionCall,
    HumanContact,
}

/// `PendingApproval` of the anchor's `fetchApprovals` (hld-anchor.md §2.8), read by the Go
/// client and TUI and by `hlyr`.
#[derive(Debug, Clone, Deserialize)]
pub struct PendingApproval {
    #[serde(rename = "type")]
    pub kind: PendingApprovalType,
    pub function_call: Option<FunctionCall>,
    pub human_contact: Option<HumanContact>,
}

impl PendingApproval {
    /// Whether the object that `kind` names is there (the Go TUI dereferences it).
    pub fn is_consistent(&self) -> bool {
        match self.kind {
            PendingApprovalType::FunctionCall => self.function_call.is_some(),
            PendingApprovalType::HumanContact => self.human_contact.is_some(),
        }
    }
}

/// The `fetchApprovals` result.
#[derive(Debug, Clone, Deserialize)]
pub struct FetchApprovals {
    pub approvals: Vec<PendingApproval>,
}

/// `humanlayer-go`'s `ResponseOption`.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponseOption {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub prompt_fill: Option<String>,
    pub interactive: Option<bool>,
}

/// `humanlayer-go`'s `FunctionCall`.
#[derive(Debug, Clone, Deserialize)]
pub struct FunctionCall {
    pub run_id: String,
    pub call_id: String,
    pub spec: FunctionCallSpec,
    pub status: Option<FunctionCallStatus>,
}

/// `humanlayer-go`'s `FunctionCallSpec`: `kwargs` is a JSON object (or null).
#[derive(Debug, Clone, Deserialize)]
pub struct FunctionCallSpec {
    #[serde(rename = "fn")]
    pub function: String,
    pub kwargs: Option<Map<String, Value>>,
    pub channel: Option<Value>,
    pub reject_options: Option<Vec<ResponseOption>>,
    pub state: Option<Map<String, Value>>,
}

/// `humanlayer-go`'s `FunctionCallStatus`: times are Go `time.Time` (RFC 3339).
#[derive(Debug, Clone, Deserialize)]
pub struct FunctionCallStatus {
    pub requested_at: Option<DateTime<Utc>>,
    pub responded_at: Option<DateTime<Utc>>,
    pub approved: Option<bool>,
    pub comment: Option<String>,
    pub user_info: Option<Map<String, Value>>,
    pub reject_option_name: Option<String>,
}

/// `humanlayer-go`'s `HumanContact`.
#[derive(Debug, Clone, Deserialize)]
pub struct HumanContact {
    pub run_id: String,
    pub call_id: String,
    pub spec: HumanContactSpec,
    pub status: Option<HumanContactStatus>,
}

/// `humanlayer-go`'s `HumanContactSpec`.
#[derive(Debug, Clone, Deserialize)]
pub struct HumanContactSpec {
    pub msg: String,
    pub subject: Option<String>,
    pub channel: Option<Value>,
    pub response_options: Option<Vec<ResponseOption>>,
    pub state: Option<Map<String, Value>>,
}

/// `humanlayer-go`'s `HumanContactStatus`.
#[derive(Debug, Clone, Deserialize)]
pub struct HumanContactStatus {
    pub requested_at: Option<DateTime<Utc>>,
    pub responded_at: Option<DateTime<Utc>>,
    pub response: Option<String>,
    pub response_option_name: Option<String>,
}

/// The `sendDecision` result; the TS client throws `Decision failed: <error>` when `success`
/// is false.
#[derive(Debug, Clone, Deserialize)]
pub struct SendDecision {
    pub success: bool,
    pub error: Option<String>,
}

/// The `createApproval` result the local approvals MCP server reads (hld-anchor.md §4.6).
#[derive(Debug, Clone, Deserialize)]
pub struct CreateApproval {
    pub approval_id: String,
}

/// The states of a local approval that the approvals MCP server acts on (the `approvals`
/// table's CHECK constraint of #261): it polls while `pending`, allows on `approved`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LocalApprovalStatus {
    Pending,
    Approved,
    Denied,
}

/// The approval of `getApproval`, as the approvals MCP server reads it: the status, and the
/// comment it hands Claude with a denial.
#[derive(Debug, Clone, Deserialize)]
pub struct LocalApproval {
    pub id: String,
    pub status: LocalApprovalStatus,
    pub comment: Option<String>,
}

/// The `getApproval` result.
#[derive(Debug, Clone, Deserialize)]
pub struct GetApproval {
    pub approval: LocalApproval,
}

/// The WUI's `SubscribeResponse`; the Go and TS clients wait for a non-empty
/// `subscription_id` as the confirmation.
#[derive(Debug, Clone, Deserialize)]
pub struct SubscribeConfirmation {
    pub subscription_id: String,
    pub message: String,
}

/// The WUI's `EventNotification`: `result.event`.
#[derive(Debug, Clone, Deserialize)]
pub struct EventNotification {
    pub event: WuiEvent,
}

/// The WUI's `Event`: a type, an RFC 3339 time and the data object.
#[derive(Debug, Clone, Deserialize)]
pub struct WuiEvent {
    #[serde(rename = "type")]
    pub event_type: String,
    pub timestamp: DateTime<Utc>,
    pub data: Map<String, Value>,
}

/// The WUI's `Heartbeat`: `result.type == "heartbeat"`.
#[derive(Debug, Clone, Deserialize)]
pub struct Heartbeat {
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
}
