//! Strict mirrors of the REST shapes of conversations, approvals and the small reads
//! (hld-rest.md sections 2–4): `Option` for "null", `#[serde(default)]` for "omit", unknown
//! fields refused.

use serde::Deserialize;

pub use crate::rest::Data;

/// A ConversationEvent (`GET /sessions/{id}/messages`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    pub id: i64,
    pub session_id: String,
    pub claude_session_id: String,
    pub sequence: i64,
    pub event_type: String,
    pub created_at: String,
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub tool_id: Option<String>,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input_json: Option<String>,
    #[serde(default)]
    pub tool_result_for_id: Option<String>,
    #[serde(default)]
    pub tool_result_content: Option<String>,
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    pub is_completed: bool,
    pub approval_status: Option<String>,
    pub approval_id: Option<String>,
}

/// A FileSnapshot (`GET /sessions/{id}/snapshots`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    pub tool_id: String,
    pub file_path: String,
    pub content: String,
    pub created_at: String,
}

/// An Approval (`GET /approvals`, `GET /approvals/{id}`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    pub id: String,
    pub run_id: String,
    pub session_id: String,
    pub status: String,
    pub created_at: String,
    pub responded_at: Option<String>,
    pub tool_name: String,
    pub tool_input: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    pub comment: Option<String>,
}

/// `POST /approvals` → 201.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Created {
    pub approval_id: String,
}

/// `POST /approvals/{id}/decide` → 200.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decided {
    pub success: bool,
}

/// `GET /user-settings`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserSettings {
    pub advanced_providers: bool,
    #[serde(default)]
    pub opt_in_telemetry: Option<bool>,
    pub created_at: String,
    pub updated_at: String,
}

/// A RecentPath (`GET /recent-paths`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecentPath {
    pub path: String,
    pub last_used: String,
    pub usage_count: i64,
}

/// `GET /config` (unwrapped).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub claude_path: String,
    pub claude_detected_path: String,
    pub claude_available: bool,
}

/// `POST /validate-directory` (unwrapped, camelCase).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DirectoryState {
    pub exists: bool,
    #[serde(default)]
    pub is_directory: Option<bool>,
    #[serde(default)]
    pub can_create: Option<bool>,
    pub expanded_path: String,
    #[serde(default)]
    pub error: Option<String>,
}

/// A slash command (`GET /slash-commands`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlashCommand {
    pub name: String,
    pub source: String,
}

/// `GET /debug-info` (unwrapped).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DebugInfo {
    pub path: String,
    pub size: u64,
    pub table_count: i64,
    pub stats: DebugStats,
    pub cli_command: String,
    pub last_modified: Option<String>,
}

/// The rows of `DebugInfo::stats`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DebugStats {
    pub sessions: i64,
    pub approvals: i64,
    pub events: i64,
}
