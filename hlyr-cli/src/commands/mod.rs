//! The command tree: one file per subcommand, the `daemon` group in `daemon/`.
//!
//! One-shot commands (a call or two, then print) run without a runtime, on the blocking
//! client: starting tokio would be most of their start-up. Commands that stream or wait on
//! several things at once (following a session, `events`, `mcp`, starting the daemon) run on
//! a single-threaded runtime built for them by [`on_runtime`].

use std::future::Future;
use std::pin::Pin;

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
    /// Runs the command.
    pub fn run(self, ctx: &Context) -> Result<Exit, CliError> {
        match self {
            Command::Launch(args) => on_runtime(Box::pin(launch::run(ctx, args))),
            Command::Sessions(args) => sessions::run(ctx, args),
            Command::Show(args) => show::run(ctx, args),
            Command::Conversation(args) => conversation::run(ctx, args),
            Command::Continue(args) => on_runtime(Box::pin(r#continue::run(ctx, args))),
            Command::Interrupt(args) => interrupt::run(ctx, args),
            Command::Approvals(args) => approvals::run(ctx, args),
            Command::Approve(args) => approve::run(ctx, args),
            Command::Deny(args) => deny::run(ctx, args),
            Command::Respond(args) => respond::run(ctx, args),
            Command::Events(args) => on_runtime(Box::pin(events::run(ctx, args))),
            Command::Daemon(command) => command.run(ctx),
            Command::Mcp(command) => on_runtime(Box::pin(command.run(ctx))),
        }
    }
}

/// A command's future, boxed: `on_runtime` is then one function rather than one per command,
/// and its stack frame a few words rather than as large as the largest command (the MCP
/// server).
type Running<'a> = Pin<Box<dyn Future<Output = Result<Exit, CliError>> + 'a>>;

/// Runs a command that needs tokio on a single-threaded runtime built for it.
fn on_runtime(command: Running<'_>) -> Result<Exit, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::failure(format!("cannot start the runtime: {e}")))?
        .block_on(command)
}

/// A flag value that must not be blank (a denial's reason, an answer).
fn non_empty(value: &str) -> Result<String, String> {
    if value.trim().is_empty() {
        Err("must not be empty".to_owned())
    } else {
        Ok(value.to_owned())
    }
}
