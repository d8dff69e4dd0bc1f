//! Organising sessions after launch (HumanLayer HEAD's methods and shapes): titles, archive,
//! the leaf list, approval modes, recent paths, search and deletion.

use serde::{Deserialize, Serialize};

use super::{PermissionMode, SessionIdParams, SessionInfo};

/// `{success}`: the change was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuccessResult {
    /// Always true in a reply; failures are errors.
    pub success: bool,
}

/// The longest title the daemon keeps, in characters: a title is one line of a list, and 200
/// holds a sentence or two while a pasted document is refused.
pub const TITLE_MAX_CHARS: usize = 200;

/// Params of `updateSessionTitle`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UpdateSessionTitleParams {
    /// The session.
    pub session_id: String,
    /// The new title, at most [`TITLE_MAX_CHARS`] characters once each run of whitespace is
    /// one space; empty clears it (the query's first line shows again).
    pub title: String,
}

method!(
    /// Renames a session.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"updateSessionTitle","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","title":"Fix the flaky test"},"id":1}
    /// {"jsonrpc":"2.0","result":{"success":true},"id":1}
    /// ```
    ///
    /// -32602 for an unknown session, or a title with control characters other than
    /// whitespace or over [`TITLE_MAX_CHARS`] characters.
    UpdateSessionTitle, "updateSessionTitle", "Set a session's title",
    ["session_id: string", "title: string"], "{success: boolean}",
    UpdateSessionTitleParams, SuccessResult
);

/// Params of `archiveSession`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ArchiveSessionParams {
    /// The session.
    pub session_id: String,
    /// Archive (true) or restore (false).
    pub archived: bool,
}

method!(
    /// Archives or restores a session.
    ///
    /// Archiving a chain's leaf hides the whole chain from the normal leaf list.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"archiveSession","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","archived":true},"id":1}
    /// {"jsonrpc":"2.0","result":{"success":true},"id":1}
    /// ```
    ///
    /// -32602 for an unknown session.
    ArchiveSession, "archiveSession", "Archive or unarchive a session",
    ["session_id: string", "archived: boolean"], "{success: boolean}",
    ArchiveSessionParams, SuccessResult
);

/// Params of `bulkArchiveSessions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BulkArchiveSessionsParams {
    /// The sessions.
    pub session_ids: Vec<String>,
    /// Archive (true) or restore (false).
    pub archived: bool,
}

/// Result of `bulkArchiveSessions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BulkArchiveSessionsResult {
    /// Whether every session was changed.
    pub success: bool,
    /// The ids that name no session.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_sessions: Vec<String>,
}

method!(
    /// Archives or restores several sessions at once, in one transaction.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"bulkArchiveSessions","params":{"session_ids":["4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","nope"],"archived":true},"id":1}
    /// {"jsonrpc":"2.0","result":{"success":false,"failed_sessions":["nope"]},"id":1}
    /// ```
    ///
    /// -32602 when `session_ids` is empty.
    BulkArchiveSessions, "bulkArchiveSessions", "Archive or unarchive several sessions",
    ["session_ids: [string]", "archived: boolean"], "{success: boolean, failed_sessions?: [string]}",
    BulkArchiveSessionsParams, BulkArchiveSessionsResult
);

/// Which leaves `getSessionLeaves` returns.
/// Exhaustive: only clients send it, and the daemon must handle every value it accepts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeafFilter {
    /// Chains whose leaf is not archived.
    #[default]
    Normal,
    /// Chains whose leaf is archived.
    Archived,
    /// Drafts being composed (see [`super::DraftState`]); no other filter lists them.
    Draft,
    /// Drafts set aside by `discardDraft`.
    Discarded,
}

/// Params of `getSessionLeaves`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetSessionLeavesParams {
    /// `normal` (the default), `archived`, `draft` or `discarded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<LeafFilter>,
}

/// A list of sessions (`getSessionLeaves`, `searchSessions`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionsResult {
    /// Newest activity first; always an array.
    pub sessions: Vec<SessionInfo>,
}

method!(
    /// The sessions no other session continues: one per chain (or per branch of a fork),
    /// newest activity first.
    ///
    /// Listed like `listSessions` (a session being interrupted is `running` with
    /// `interrupting: true`).
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"getSessionLeaves","params":{"filter":"archived"},"id":1}
    /// ```
    ///
    /// -32602 for a filter other than `normal`, `archived`, `draft` or `discarded`.
    GetSessionLeaves, "getSessionLeaves", "Sessions without children, newest first",
    ["filter?: \"normal\"|\"archived\"|\"draft\"|\"discarded\""], "{sessions: [SessionInfo]}",
    GetSessionLeavesParams, SessionsResult
);

/// Params of `updateSessionSettings`. Unset fields are left alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UpdateSessionSettingsParams {
    /// The session.
    pub session_id: String,
    /// Approve Edit, Write and MultiEdit without asking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_accept_edits: Option<bool>,
    /// Approve every tool call without asking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerously_skip_permissions: Option<bool>,
    /// With bypass on: how long it lasts, in milliseconds, from now; none: until turned off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerously_skip_permissions_timeout_ms: Option<i64>,
    /// The model alias or id, passed to `claude` unchecked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `default` or `plan`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<PermissionMode>,
    /// Resume the session when a usage limit that stopped it resets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_on_reset: Option<bool>,
    /// Extra directories `claude` may use (`--add-dir`), each existing; they replace the
    /// session's, and take effect at its next start (a draft's launch, a resume, a continue).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_directories: Option<Vec<String>>,
}

method!(
    /// Changes a session's model, permission mode, auto-accept of edits or bypass of
    /// permissions.
    ///
    /// `model` and `permission_mode` are applied at once to a live process (the control
    /// requests `set_model` and `set_permission_mode`), else at the next resume; the model
    /// string goes to `claude` unchecked. The daemon enforces auto-accept and bypass in its
    /// approval path: turning one on approves the pending approvals it covers at once, and a
    /// bypass with a timeout ends on the daemon's clock when due. Questions to the human and
    /// plans (`ExitPlanMode`) are never answered automatically; in plan mode, edits are
    /// denied at once. Every change publishes `session_settings_changed`.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"updateSessionSettings","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","dangerously_skip_permissions":true,"dangerously_skip_permissions_timeout_ms":900000},"id":1}
    /// {"jsonrpc":"2.0","result":{"success":true},"id":1}
    /// ```
    ///
    /// -32602 for an unknown session, a non-positive timeout, a timeout without bypass, an
    /// empty model, an additional directory that does not exist, or a permission mode other
    /// than `default` and `plan` (the CLI's `acceptEdits` and `bypassPermissions` are the
    /// daemon's `auto_accept_edits` and `dangerously_skip_permissions`).
    UpdateSessionSettings, "updateSessionSettings", "Set a session's model, permission mode, auto-accept and bypass",
    ["session_id: string", "auto_accept_edits?: boolean", "dangerously_skip_permissions?: boolean",
     "dangerously_skip_permissions_timeout_ms?: number", "model?: string",
     "permission_mode?: \"default\" | \"plan\"", "resume_on_reset?: boolean",
     "additional_directories?: [string]"], "{success: boolean}",
    UpdateSessionSettingsParams, SuccessResult
);

/// Params of `getRecentPaths`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetRecentPathsParams {
    /// At most this many (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
}

/// A working directory sessions used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecentPath {
    /// The directory.
    pub path: String,
    /// When a session last started there, RFC 3339.
    pub last_used: String,
    /// How many sessions started there.
    pub usage_count: i64,
}

/// Result of `getRecentPaths`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetRecentPathsResult {
    /// Most recently used first.
    pub paths: Vec<RecentPath>,
}

method!(
    /// The working directories of past sessions, most recently used first, for launch forms.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"getRecentPaths","params":{"limit":5},"id":1}
    /// {"jsonrpc":"2.0","result":{"paths":[{"path":"/home/ada/src/app","last_used":"2025-06-12T09:14:03.512Z","usage_count":12}]},"id":1}
    /// ```
    GetRecentPaths, "getRecentPaths", "Recently used working directories",
    ["limit?: number"], "{paths: [{path, last_used, usage_count}]}",
    GetRecentPathsParams, GetRecentPathsResult
);

/// Params of `searchSessions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchSessionsParams {
    /// Words to find in a session's title, query or summary (each word as a prefix).
    pub query: String,
    /// At most this many (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
}

method!(
    /// Full-text search (SQLite FTS5) over sessions' titles, queries and summaries, the most
    /// recently created first.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"searchSessions","params":{"query":"flaky test","limit":10},"id":1}
    /// ```
    ///
    /// -32602 for an empty query or a non-positive limit.
    SearchSessions, "searchSessions", "Search sessions by title, query and summary",
    ["query: string", "limit?: number"], "{sessions: [SessionInfo]}",
    SearchSessionsParams, SessionsResult
);

method!(
    /// Deletes a session that is not running, with its conversation, raw output and approvals.
    ///
    /// Its children keep their `parent_session_id`, which then names no session: clients show
    /// it as deleted.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"deleteSession","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13"},"id":1}
    /// {"jsonrpc":"2.0","result":{"success":true},"id":1}
    /// ```
    ///
    /// -32602 for an unknown session or one still running (interrupt it first).
    DeleteSession, "deleteSession", "Delete a finished session and everything stored for it",
    ["session_id: string"], "{success: boolean}",
    SessionIdParams, SuccessResult
);
