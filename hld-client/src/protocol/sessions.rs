//! Sessions: their records (status, info, state, result, control). The methods that launch,
//! list, inspect and continue them are in `session_calls`; the stored conversation is in
//! `conversation`.

use serde::{Deserialize, Serialize};

use super::drafts::DraftState;
use super::usage::UsageLimit;
use super::worktrees::WorktreeInfo;

open_enum!(
    /// A session's status. This daemon only ever sends these six values: strict clients reject
    /// anything else, so detail (interrupted, exit code, error) lives in other fields. A value
    /// from a newer daemon reads as `Unknown`.
    SessionStatus {
        /// The row exists; the process is being started.
        Starting = "starting",
        /// Claude is working.
        Running = "running",
        /// An approval of this session is pending.
        WaitingInput = "waiting_input",
        /// An interrupt was requested; the process is winding down.
        Completing = "completing",
        /// Finished (successfully, or interrupted: see `interrupted`).
        Completed = "completed",
        /// Finished with an error.
        Failed = "failed",
    }
);

impl SessionStatus {
    /// Whether a process may still be attached to a session in this status. An unknown status
    /// counts as active: only `completed` and `failed` are known to be final.
    pub fn is_active(&self) -> bool {
        !matches!(self, SessionStatus::Completed | SessionStatus::Failed)
    }
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
    /// Whether the session's `claude` process is alive: between turns it reads the next
    /// message at once. The status stays the anchor's (`completed` or `failed` between turns).
    #[serde(default)]
    pub live: bool,
    /// Until when a process waiting between turns is kept, RFC 3339 (none while it works).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_until: Option<String>,
    /// Total cost reported by Claude.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The usage limit that stopped the session, with the status `failed`; front ends show it
    /// as a limit with its reset time, not as an ordinary failure. Cleared when it runs again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_limit: Option<UsageLimit>,
    /// The context the last model call used (see [`SessionState::effective_context_tokens`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_context_tokens: Option<i64>,
    /// The model's context window, in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_limit: Option<i64>,
    /// The git worktree an isolated session runs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreeInfo>,
    /// Title, archive state and approval modes.
    #[serde(flatten)]
    pub control: SessionControl,
}

open_enum!(
    /// The permission mode `claude` runs in. The CLI's own `acceptEdits` and
    /// `bypassPermissions` are never set: they would hide tool calls from the daemon's approvals
    /// (the daemon's `auto_accept_edits` and `dangerously_skip_permissions` do that job).
    #[derive(Default)]
    PermissionMode {
        /// Tool calls ask for approval as the rules say.
        #[default]
        Default = "default",
        /// Claude plans without editing (the daemon denies Edit, Write and MultiEdit at once);
        /// the plan arrives as an approval of the tool `ExitPlanMode`, and approving it leaves
        /// plan mode for `default`.
        Plan = "plan",
    }
);

/// What a person sets on a session after launch, shown in lists and state alike (HumanLayer
/// HEAD's names).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionControl {
    /// The title: the one given, else the query's first line.
    #[serde(default)]
    pub title: String,
    /// Hidden from the normal list (`getSessionLeaves`).
    #[serde(default)]
    pub archived: bool,
    /// Edit, Write and MultiEdit are approved without asking.
    #[serde(default)]
    pub auto_accept_edits: bool,
    /// Every tool call is approved without asking (never a question to the human).
    #[serde(default)]
    pub dangerously_skip_permissions: bool,
    /// When that bypass ends, RFC 3339; none: until turned off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerously_skip_permissions_expires_at: Option<String>,
    /// Extra directories `claude` may use (`--add-dir`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_directories: Vec<String>,
    /// `default` or `plan`: what the live process runs in, else what the next resume uses.
    #[serde(default)]
    pub permission_mode: PermissionMode,
    /// When the session stops at a usage limit, the daemon resumes it (the same session) when
    /// the limit resets.
    #[serde(default)]
    pub resume_on_reset: bool,
    /// Set on a draft (`draft` or `discarded`), which is listed only under `filter: "draft"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<DraftState>,
    /// A draft's editor contents, as its client stored them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor_state: Option<String>,
}

/// One turn's own figures, as its `result` reported them (the session's are its totals): on
/// the `session_status_changed` event that ends the turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnResult {
    /// Its cost: what the process's reported total grew by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// How long it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
    /// The agent's turns in it (model calls with their tool use).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_turns: Option<i64>,
    /// Its input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<i64>,
    /// Its output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<i64>,
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
    /// Whether the session's `claude` process is alive: between turns it reads the next
    /// message at once. The status stays the anchor's (`completed` or `failed` between turns).
    #[serde(default)]
    pub live: bool,
    /// Until when a process waiting between turns is kept, RFC 3339 (none while it works).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_until: Option<String>,
    /// The `claude` process exit code, once it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// `--max-turns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<i64>,
    /// `--permission-prompt-tool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_prompt_tool: Option<String>,
    /// Tokens written to the prompt cache, over the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<i64>,
    /// Tokens read from the prompt cache, over the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<i64>,
    /// The context the last model call used: its input, cache-creation and cache-read tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_context_tokens: Option<i64>,
    /// The model's context window, in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_limit: Option<i64>,
    /// The usage limit that stopped the session, with the status `failed`; front ends show it
    /// as a limit with its reset time, not as an ordinary failure. Cleared when it runs again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_limit: Option<UsageLimit>,
    /// The git worktree an isolated session runs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreeInfo>,
    /// Title, archive state and approval modes.
    #[serde(flatten)]
    pub control: SessionControl,
}
