//! The session methods (spec/000, 001, 003): `launchSession`, `listSessions`,
//! `getSessionState` and `continueSession`, with the params `launchSession` and
//! `continueSession` share.

use serde::{Deserialize, Serialize};

use super::mcp::McpConfigParam;
use super::sessions::{PermissionMode, SessionInfo, SessionState};
use super::worktrees::WorktreeParams;
use super::NoParams;

/// Declares the params of a method that starts a turn of Claude: the struct's own fields,
/// then the fields `launchSession` and `continueSession` share, each declared once here.
macro_rules! turn_params {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$own:meta])* pub $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        pub struct $name {
            $($(#[$own])* pub $field: $ty,)*
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
            /// `--max-turns` (a continuation does not inherit it).
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
            /// A title (else the query's first line is shown).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub title: Option<String>,
            /// Extra directories `claude` may use (`--add-dir`); each must exist.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub additional_directories: Option<Vec<String>>,
            /// `default` or `plan` (`--permission-mode`); a continuation inherits its parent's.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub permission_mode: Option<PermissionMode>,
            /// Image files sent with the query (see [`super::SendMessageParams::images`]).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub images: Option<Vec<String>>,
            /// Resume the session when a usage limit that stopped it resets [default:
            /// `resume_on_reset` in humanlayer.json, else false; a continuation inherits its
            /// parent's].
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub resume_on_reset: Option<bool>,
        }
    };
}

turn_params! {
    /// Params of `launchSession`.
    pub struct LaunchSessionParams {
        /// Working directory; must exist.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub working_dir: Option<String>,
        /// Accepted for compatibility; stream-json always runs verbose.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub verbose: Option<bool>,
        /// Opt out of the daemon's approvals MCP server.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub no_approvals: Option<bool>,
        /// Approve Edit, Write and MultiEdit without asking.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub auto_accept_edits: Option<bool>,
        /// Approve every tool call without asking (the daemon decides; `claude`'s own flag is
        /// not used).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub dangerously_skip_permissions: Option<bool>,
        /// How long that bypass lasts, in milliseconds; none: until turned off.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub dangerously_skip_permissions_timeout: Option<i64>,
        /// Run isolated: in a new git worktree of the repository holding `working_dir`, on a
        /// new branch (see [`WorktreeParams`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub worktree: Option<WorktreeParams>,
    }
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
    ///
    /// Stores a new session, starts `claude` in `working_dir` (`~` is expanded; the daemon's own
    /// directory when absent) and replies once the process runs. The session then moves on by
    /// itself: follow it with [`Subscribe`](super::Subscribe) (`session_status_changed`,
    /// `conversation_updated`) or poll [`GetSessionState`]. Unless the launch names its own
    /// `permission_prompt_tool` or sets `no_approvals`, Claude's tool calls ask for approval
    /// through the daemon (see [`FetchApprovals`](super::FetchApprovals)).
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"launchSession","params":{"query":"Fix the failing test in src/lib.rs","model":"sonnet","working_dir":"~/src/app","max_turns":20},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","run_id":"a3e9d0c4-5b61-4f2e-8c7d-19b0f6e2a845"},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// - -32602 when `query` is missing or empty (`query is required`), `max_turns` is negative,
    ///   `working_dir` does not exist (`working_dir does not exist: …`), `mcp_config` is a
    ///   string that is not JSON (`invalid mcp_config JSON: …`), `permission_mode` is not
    ///   `default` or `plan`, or an image is missing, too large or not an image;
    ///   `data.param` names the parameter:
    ///
    ///   ```json
    ///   {"jsonrpc":"2.0","error":{"code":-32602,"message":"query is required","data":{"param":"query","expected":"non-empty string","received":"empty string"}},"id":1}
    ///   ```
    /// - -32603 when `claude` is not found (`claude CLI not found: install it or set
    ///   HUMANLAYER_CLAUDE_PATH`), when the approvals MCP server cannot run (see
    ///   [`Health`](super::Health); fix `--approvals-command`, or launch with `no_approvals`), or
    ///   when the session cannot be stored or its process started.
    ///
    /// # Example
    ///
    /// ```no_run
    /// use hld_client::protocol::LaunchSessionParams;
    /// use hld_client::Client;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = Client::connect_default().await?;
    /// // Or `client.call::<LaunchSession>(params)`, the same call.
    /// let launched = client
    ///     .launch_session(LaunchSessionParams {
    ///         query: "Fix the failing test in src/lib.rs".into(),
    ///         model: Some("sonnet".into()),
    ///         working_dir: Some("~/src/app".into()),
    ///         max_turns: Some(20),
    ///         ..Default::default()
    ///     })
    ///     .await?;
    /// println!("session {} (run {})", launched.session_id, launched.run_id);
    /// # Ok(())
    /// # }
    /// ```
    LaunchSession, "launchSession", "Launch a new Claude Code session",
    ["query: string", "model?: string", "mcp_config?: object|string", "permission_prompt_tool?: string",
     "working_dir?: string", "max_turns?: number", "system_prompt?: string", "append_system_prompt?: string",
     "allowed_tools?: [string]", "disallowed_tools?: [string]", "custom_instructions?: string",
     "verbose?: boolean", "no_approvals?: boolean", "title?: string",
     "additional_directories?: [string]", "auto_accept_edits?: boolean",
     "dangerously_skip_permissions?: boolean", "dangerously_skip_permissions_timeout?: number",
     "permission_mode?: \"default\" | \"plan\"", "images?: [string]",
     "worktree?: {branch?: string, base?: string}"],
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
    ///
    /// Every session, newest activity first. A session being interrupted is listed as `running`
    /// with `interrupting: true` (see [`SessionInfo`]).
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"listSessions","params":{},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"sessions":[{"id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","run_id":"a3e9d0c4-5b61-4f2e-8c7d-19b0f6e2a845","claude_session_id":"0b8e5f3a-2c41-4d7e-9f60-7a1d3c5e8b24","status":"running","interrupting":false,"start_time":"2025-06-12T09:14:03.512Z","last_activity_at":"2025-06-12T09:15:41.207Z","query":"Fix the failing test in src/lib.rs","summary":"Fix the failing test in src/lib.rs","model":"sonnet","working_dir":"/home/ada/src/app","interrupted":false}]},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// None but -32603 (`failed to list sessions`) when the store fails. From Rust:
    /// `client.list_sessions()` returns the `sessions` array.
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
    ///
    /// Unlike the lists, the status here is exact: an interrupted session reads `completing`.
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"getSessionState","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13"},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"session":{"id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","run_id":"a3e9d0c4-5b61-4f2e-8c7d-19b0f6e2a845","claude_session_id":"0b8e5f3a-2c41-4d7e-9f60-7a1d3c5e8b24","status":"completed","query":"Fix the failing test in src/lib.rs","summary":"Fix the failing test in src/lib.rs","model":"sonnet","working_dir":"/home/ada/src/app","created_at":"2025-06-12T09:14:03.512Z","last_activity_at":"2025-06-12T09:14:52.044Z","completed_at":"2025-06-12T09:14:52.044Z","cost_usd":0.0421,"total_tokens":18342,"duration_ms":48210,"num_turns":6,"result_content":"The test passes again: `parse` now trims the input.","input_tokens":15120,"output_tokens":3222,"interrupted":false,"exit_code":0,"max_turns":20}},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// -32602 when `session_id` is missing or empty (`session_id is required`) or names no
    /// session:
    ///
    /// ```json
    /// {"jsonrpc":"2.0","error":{"code":-32602,"message":"failed to get session: session not found: 0f0e0d0c-0b0a-4908-8706-050403020100","data":{"param":"session_id","expected":"existing session id","received":"unknown id"}},"id":1}
    /// ```
    ///
    /// From Rust: `client.get_session_state(id)` returns the `session`.
    GetSessionState, "getSessionState", "Get one session's current state",
    ["session_id: string"], "{session: SessionState}",
    SessionIdParams, GetSessionStateResult
);

turn_params! {
    /// Params of `continueSession`. Unset fields are inherited from the parent (except
    /// `max_turns`); set ones override the parent's.
    pub struct ContinueSessionParams {
        /// The parent session.
        pub session_id: String,
        /// A worktree of its own, on a new branch from the parent's (`branch` only); else a
        /// continuation of an isolated session works in its parent's worktree.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub worktree: Option<WorktreeParams>,
    }
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
    ///
    /// Starts a new session that forks the parent's Claude conversation (`--resume` with
    /// `--fork-session`) with `query`, so two continuations of one parent are two independent
    /// branches. Unset params are inherited from the parent (except `max_turns`), and so are
    /// its title, auto-accept and a bypass until the parent's own expiry. A parent that is still
    /// running is interrupted first, and the call waits for it to end; an archived parent is
    /// unarchived.
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"continueSession","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","query":"Now add a regression test for it"},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"session_id":"9d3b6e21-7f4a-4c08-a1e5-3b2c9f8d6a70","run_id":"e5c2a7f9-1d84-4b3e-96a0-8f7d2c4b1e63","claude_session_id":"","parent_session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13"},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// - -32602 when `query` or `session_id` is missing or empty (`query is required`), when
    ///   `session_id` names no session (`failed to get session: session not found: …`), when the
    ///   parent has no Claude session to resume (`parent session missing claude_session_id
    ///   (cannot resume)`), or for the bad params [`LaunchSession`] refuses (a working directory
    ///   that is gone, `mcp_config` that is not JSON, a negative `max_turns`).
    /// - -32603 for the faults of [`LaunchSession`] (`claude` not found, approvals server
    ///   unavailable, process not started).
    ///
    /// From Rust: `client.continue_session(params)`.
    ContinueSession, "continueSession", "Continue a session with a new query (a new session forking the Claude conversation)",
    ["session_id: string", "query: string", "system_prompt?: string", "append_system_prompt?: string",
     "mcp_config?: string|object", "permission_prompt_tool?: string", "allowed_tools?: [string]",
     "disallowed_tools?: [string]", "custom_instructions?: string", "max_turns?: number", "model?: string",
     "title?: string", "additional_directories?: [string]",
     "permission_mode?: \"default\" | \"plan\"", "images?: [string]",
     "worktree?: {branch?: string}"],
    "{session_id: string, run_id: string, claude_session_id: string, parent_session_id: string}",
    ContinueSessionParams, ContinueSessionResult
);
