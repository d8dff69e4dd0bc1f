//! `hlyr mcp`: MCP servers that Claude Code starts over stdio.

use clap::Subcommand;

/// The MCP servers `hlyr` can serve.
#[derive(Debug, Clone, Copy, Subcommand)]
pub enum McpCommand {
    /// Claude Code's permission-prompt tool (`request_permission`) and `contact_human`,
    /// answered by a human through the hld daemon. The daemon starts it for every session
    /// it launches; stdout is the MCP channel, logs go to stderr.
    #[command(name = "claude_approvals")]
    ClaudeApprovals,
}

/// Serves the chosen MCP server on stdin/stdout until the client closes stdin.
pub async fn run(command: McpCommand) -> anyhow::Result<()> {
    match command {
        McpCommand::ClaudeApprovals => crate::mcp::serve_stdio().await,
    }
}
