//! A session's launch settings, one type for both launch methods, the store and the command line.

use std::path::PathBuf;

use hld_client::protocol::McpConfig;

use super::Modes;

/// What a person sets on a session besides how its `claude` runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    pub title: Option<String>,
    pub modes: Modes,
}

/// How a session's `claude` runs. Empty strings and lists count as not given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionOptions {
    /// `--model`: an alias or a full model id.
    pub model: Option<String>,
    /// The working directory, absolute.
    pub working_dir: PathBuf,
    /// `--max-turns`; never inherited by a continuation.
    pub max_turns: Option<i64>,
    pub system_prompt: Option<String>,
    /// `--append-system-prompt`, as requested (custom instructions are kept apart).
    pub append_system_prompt: Option<String>,
    /// Appended to the system prompt after `append_system_prompt`.
    pub custom_instructions: Option<String>,
    /// `--permission-prompt-tool`; one given means the daemon injects no approvals server.
    pub permission_prompt_tool: Option<String>,
    pub allowed_tools: Option<Vec<String>>,
    pub disallowed_tools: Option<Vec<String>>,
    /// MCP servers as requested, before the daemon adds its own.
    pub mcp_config: Option<McpConfig>,
    pub no_approvals: bool,
    /// `--add-dir`, each absolute and checked to exist.
    pub additional_directories: Vec<PathBuf>,
    /// The git worktree the session runs in (its id), when isolated.
    pub worktree: Option<String>,
}

impl SessionOptions {
    /// Whether the session gets the daemon's approvals server (no opt-out, no tool of its own).
    pub fn needs_approvals_server(&self) -> bool {
        self.permission_prompt_tool.is_none() && !self.no_approvals
    }
}
