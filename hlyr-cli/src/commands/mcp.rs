//! `hlyr mcp`: MCP servers that Claude Code starts over stdio.

use clap::Subcommand;

use super::{on_runtime, NoArgs, With};
use crate::error::{CliError, Exit};
use crate::{Context, Globals};

// The `mcp` group: one of its servers. (`//`: clap would take a doc comment here for the
// group's description.)
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Claude Code's permission-prompt tool (`request_permission`) and `contact_human`,
    /// answered by a human through the hld daemon. The daemon starts it for every session
    /// it launches; stdout is the MCP channel, logs go to stderr.
    #[command(name = "claude_approvals")]
    ClaudeApprovals(With<NoArgs>),
}

impl Command {
    /// Serves the chosen MCP server on stdin/stdout until the client closes stdin; `before`
    /// are the options given before its name.
    pub fn run(self, before: Globals) -> Result<Exit, CliError> {
        match self {
            Command::ClaudeApprovals(c) => c.run(before, |ctx, NoArgs {}| {
                on_runtime(Box::pin(claude_approvals(ctx)))
            }),
        }
    }
}

async fn claude_approvals(ctx: &Context) -> Result<Exit, CliError> {
    crate::mcp::serve_stdio(ctx.daemon_socket.as_deref())
        .await
        .map(|()| Exit::Ok)
        .map_err(CliError::failure)
}
