//! `hlyr mcp`: MCP servers that Claude Code starts over stdio.

use clap::Subcommand;

use crate::error::{CliError, Exit};
use crate::Context;

#[derive(Debug, Clone, Copy, Subcommand)]
pub enum Command {
    /// Claude Code's permission-prompt tool (`request_permission`) and `contact_human`,
    /// answered by a human through the hld daemon. The daemon starts it for every session
    /// it launches; stdout is the MCP channel, logs go to stderr.
    #[command(name = "claude_approvals")]
    ClaudeApprovals,
}

impl Command {
    /// Serves the chosen MCP server on stdin/stdout until the client closes stdin.
    pub async fn run(self, ctx: &Context) -> Result<Exit, CliError> {
        match self {
            Command::ClaudeApprovals => crate::mcp::serve_stdio(ctx.daemon_socket.as_deref())
                .await
                .map(|()| Exit::Ok)
                .map_err(CliError::failure),
        }
    }
}
