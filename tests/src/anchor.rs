//! Strict mirrors of what the anchor's clients decode (hld-anchor.md, peers.md §1): the Rust
//! daemon client of the HumanLayer desktop app (WUI, later CodeLayer) parses a listed
//! session's status into a closed enum and its times as RFC 3339, and needs every field it
//! does not mark optional. A reply these types cannot decode is one that client fails on.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

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
    pub result: Option<Value>,
}

/// The WUI's `ListSessionsResponse`.
#[derive(Debug, Clone, Deserialize)]
pub struct WuiListSessions {
    pub sessions: Vec<WuiSessionInfo>,
}

/// The WUI's `SessionState`: its status is a plain string.
#[derive(Debug, Clone, Deserialize)]
pub struct WuiSessionState {
    pub id: String,
    pub run_id: String,
    pub status: String,
    pub query: String,
    pub summary: String,
    pub created_at: String,
    pub last_activity_at: String,
}

/// The WUI's `GetSessionStateResponse`.
#[derive(Debug, Clone, Deserialize)]
pub struct WuiGetSessionState {
    pub session: WuiSessionState,
}
