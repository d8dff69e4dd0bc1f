//! `hlyr mcp claude_approvals`: an alias of `hld mcp claude_approvals`, which serves the
//! approvals MCP server from the daemon's own binary. `hlyr` replaces itself with that `hld`.

use std::os::unix::process::CommandExt;
use std::process::Command as Process;

use clap::Subcommand;

use crate::connect::{hld_binary, StartArgs};
use crate::error::{CliError, Exit};
use crate::Context;

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
    /// answered by a human through the hld daemon: runs `hld mcp claude_approvals`, which
    /// the daemon itself starts for every session it launches.
    #[command(name = "claude_approvals")]
    ClaudeApprovals(StartArgs),
}

impl Command {
    /// Replaces this process with `hld mcp claude_approvals`; returns only if that fails.
    pub fn run(self, ctx: &Context) -> Result<Exit, CliError> {
        let Command::ClaudeApprovals(start) = self;
        let hld = hld_binary(&start);
        let mut command = Process::new(&hld);
        if let Some(socket) = &ctx.daemon_socket {
            command.arg("--socket").arg(socket);
        }
        let error = command.args(["mcp", "claude_approvals"]).exec();
        Err(
            CliError::failure(format!("cannot run {}: {error}", hld.display()))
                .hint("install hld next to hlyr, put it on PATH, or give --hld-path / HLD_PATH"),
        )
    }
}
