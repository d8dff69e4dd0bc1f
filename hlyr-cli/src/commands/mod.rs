//! The command tree: one file per subcommand, the `daemon` group in `daemon/`.

mod approvals;
mod approve;
mod r#continue;
mod conversation;
mod daemon;
mod deny;
mod events;
mod interrupt;
mod launch;
mod mcp;
mod respond;
mod sessions;
mod show;

use clap::Subcommand;

use crate::error::{CliError, Exit};
use crate::Context;

// `defer`: a subcommand's arguments are built only when that subcommand is parsed (or its
// help shown), not on every run.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Launch a Claude Code session and follow it until it ends.
    Launch(launch::Args),
    /// List sessions: id, status, age, model, cost and summary.
    Sessions(sessions::Args),
    /// Show one session's state.
    Show(show::Args),
    /// Print a session's conversation, optionally following it live.
    Conversation(conversation::Args),
    /// Continue a session with a new query, and follow the new session.
    Continue(r#continue::Args),
    /// Interrupt a running session.
    Interrupt(interrupt::Args),
    /// List pending approvals.
    Approvals(approvals::Args),
    /// Approve a pending tool call.
    Approve(approve::Args),
    /// Deny a pending tool call, saying why.
    Deny(deny::Args),
    /// Answer a pending question.
    Respond(respond::Args),
    /// Print the daemon's events as JSON lines, for scripts.
    Events(events::Args),
    /// Start, stop or check the daemon.
    #[command(subcommand)]
    Daemon(daemon::Command),
    /// Serve an MCP server on stdio (Claude Code starts it, not a person).
    #[command(subcommand)]
    Mcp(mcp::Command),
}

impl Command {
    /// Runs the command. Each command's future is boxed, so that this one, which `main` keeps
    /// on its stack, is a few words long rather than as large as the largest command (the MCP
    /// server): every stack page a short command touches is one more page fault at start-up.
    pub async fn run(self, ctx: &Context) -> Result<Exit, CliError> {
        match self {
            Command::Launch(args) => Box::pin(launch::run(ctx, args)).await,
            Command::Sessions(args) => Box::pin(sessions::run(ctx, args)).await,
            Command::Show(args) => Box::pin(show::run(ctx, args)).await,
            Command::Conversation(args) => Box::pin(conversation::run(ctx, args)).await,
            Command::Continue(args) => Box::pin(r#continue::run(ctx, args)).await,
            Command::Interrupt(args) => Box::pin(interrupt::run(ctx, args)).await,
            Command::Approvals(args) => Box::pin(approvals::run(ctx, args)).await,
            Command::Approve(args) => Box::pin(approve::run(ctx, args)).await,
            Command::Deny(args) => Box::pin(deny::run(ctx, args)).await,
            Command::Respond(args) => Box::pin(respond::run(ctx, args)).await,
            Command::Events(args) => Box::pin(events::run(ctx, args)).await,
            Command::Daemon(command) => Box::pin(command.run(ctx)).await,
            Command::Mcp(command) => Box::pin(command.run(ctx)).await,
        }
    }
}

/// A flag value that must not be blank (a denial's reason, an answer).
fn non_empty(value: &str) -> Result<String, String> {
    if value.trim().is_empty() {
        Err("must not be empty".to_owned())
    } else {
        Ok(value.to_owned())
    }
}
