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
mod archive;
mod completions;
mod r#continue;
mod conversation;
pub mod daemon;
mod deny;
mod events;
mod interrupt;
mod launch;
mod man;
mod mcp;
mod prune;
mod rename;
mod respond;
mod search;
mod sessions;
mod settings;
mod show;
mod tui;
mod unarchive;

use clap::Subcommand;

use crate::error::{CliError, Exit};
use crate::{Context, Globals};

// `defer`: a subcommand's arguments are built only when that subcommand is parsed (or its
// help shown), not on every run.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Launch a Claude Code session and follow it until it ends.
    Launch(With<launch::Args>),
    /// List sessions, one per chain: id, status, age, model, cost, modes and title.
    Sessions(With<sessions::Args>),
    /// Find sessions by words of their title, query or summary.
    Search(With<search::Args>),
    /// Show one session's state.
    Show(With<show::Args>),
    /// Print a session's conversation, optionally following it live.
    Conversation(With<conversation::Args>),
    /// Continue a session with a new query, and follow the new session.
    Continue(With<r#continue::Args>),
    /// Interrupt a running session.
    Interrupt(With<interrupt::Args>),
    /// Set a session's title.
    Rename(With<rename::Args>),
    /// Archive sessions: their chains leave `hlyr sessions` (see `sessions --archived`).
    Archive(With<archive::Args>),
    /// Bring archived sessions back to `hlyr sessions`.
    Unarchive(With<unarchive::Args>),
    /// Show or change a session's approval modes: auto-accept of edits, bypass of permissions.
    Settings(With<settings::Args>),
    /// Delete archived sessions idle for longer than a duration.
    Prune(With<prune::Args>),
    /// List pending approvals.
    Approvals(With<approvals::Args>),
    /// Approve a pending tool call.
    Approve(With<approve::Args>),
    /// Deny a pending tool call, optionally saying why.
    Deny(With<deny::Args>),
    /// Answer a pending question.
    Respond(With<respond::Args>),
    /// Print the daemon's events as JSON lines, for scripts.
    Events(With<events::Args>),
    /// Start, stop or check the daemon.
    Daemon(With<daemon::Args>),
    /// Open the live dashboard (hld-tui): sessions, conversations and approvals.
    Tui(With<tui::Args>),
    /// Serve an MCP server on stdio (Claude Code starts it, not a person).
    Mcp(With<mcp::Args>),
    /// Print shell code that completes commands and live session and approval ids.
    Completions(With<completions::Args>),
    /// Print hlyr's manual page, or write one per command into a directory.
    Man(With<man::Args>),
}

impl Command {
    /// Runs the command; `before` are the options given before its name.
    pub fn run(self, before: Globals) -> Result<Exit, CliError> {
        match self {
            Command::Launch(c) => c.run(before, |ctx, args| {
                on_runtime(Box::pin(launch::run(ctx, args)))
            }),
            Command::Sessions(c) => c.run(before, sessions::run),
            Command::Search(c) => c.run(before, search::run),
            Command::Show(c) => c.run(before, show::run),
            Command::Conversation(c) => c.run(before, conversation::run),
            Command::Continue(c) => c.run(before, |ctx, args| {
                on_runtime(Box::pin(r#continue::run(ctx, args)))
            }),
            Command::Interrupt(c) => c.run(before, interrupt::run),
            Command::Rename(c) => c.run(before, rename::run),
            Command::Archive(c) => c.run(before, archive::run),
            Command::Unarchive(c) => c.run(before, unarchive::run),
            Command::Settings(c) => c.run(before, settings::run),
            Command::Prune(c) => c.run(before, prune::run),
            Command::Approvals(c) => c.run(before, approvals::run),
            Command::Approve(c) => c.run(before, approve::run),
            Command::Deny(c) => c.run(before, deny::run),
            Command::Respond(c) => c.run(before, respond::run),
            Command::Events(c) => c.run(before, |ctx, args| {
                on_runtime(Box::pin(events::run(ctx, args)))
            }),
            Command::Daemon(c) => {
                let (globals, group) = c.within(before);
                group.command.run(globals)
            }
            Command::Tui(c) => {
                let (globals, args) = c.within(before);
                tui::run(globals, args)
            }
            Command::Mcp(c) => {
                let (globals, group) = c.within(before);
                group.command.run(globals)
            }
            Command::Completions(c) => c.run(before, completions::run),
            Command::Man(c) => c.run(before, man::run),
        }
    }
}

// A command's own arguments, then the `Globals` given after its name. (`//`: clap would take
// a doc comment here for every command's description.)
#[derive(Debug, clap::Args)]
pub struct With<A: clap::Args> {
    #[command(flatten)]
    args: A,
    #[command(flatten)]
    globals: Globals,
}

impl<A: clap::Args> With<A> {
    /// The options in force for this command and below (see [`Globals`]), and its arguments.
    /// Errors are reported as JSON from here on when `--json` is among them.
    fn within(self, before: Globals) -> (Globals, A) {
        let globals = self.globals.over(before);
        crate::error::report_json(globals.json);
        (globals, self.args)
    }

    /// Runs `command` with its context and arguments.
    fn run(
        self,
        before: Globals,
        command: impl FnOnce(&Context, A) -> Result<Exit, CliError>,
    ) -> Result<Exit, CliError> {
        let (globals, args) = self.within(before);
        command(&globals.context(), args)
    }
}

// The arguments of a command that has none of its own.
#[derive(Debug, clap::Args)]
pub struct NoArgs {}

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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::Cli;

    /// The options in force for a command line, as the command gets them.
    fn globals(args: &[&str]) -> Globals {
        let cli = Cli::try_parse_from(args).unwrap();
        match cli.command {
            Command::Sessions(c) => c.within(cli.globals).0,
            Command::Daemon(c) => {
                let (globals, group) = c.within(cli.globals);
                match group.command {
                    daemon::Command::Status(status) => status.within(globals).0,
                    other => panic!("unexpected {other:?}"),
                }
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    /// `--json` and `--daemon-socket` are taken before and after a command's name, at any
    /// depth; the last socket given wins, as when they were clap global arguments.
    #[test]
    fn options_count_before_and_after_the_command() {
        let g = globals(&["hlyr", "--json", "sessions"]);
        assert!(g.json && g.daemon_socket.is_none());
        let g = globals(&["hlyr", "sessions", "--json", "--daemon-socket", "/s"]);
        assert!(g.json);
        assert_eq!(g.daemon_socket.as_deref(), Some(std::path::Path::new("/s")));
        let g = globals(&[
            "hlyr",
            "--daemon-socket",
            "/a",
            "sessions",
            "--daemon-socket",
            "/b",
        ]);
        assert_eq!(g.daemon_socket.as_deref(), Some(std::path::Path::new("/b")));
        assert!(!g.json);
        let g = globals(&[
            "hlyr",
            "--daemon-socket",
            "/a",
            "daemon",
            "status",
            "--json",
        ]);
        assert_eq!(g.daemon_socket.as_deref(), Some(std::path::Path::new("/a")));
        assert!(g.json);
        let g = globals(&["hlyr", "daemon", "--daemon-socket", "/a", "status"]);
        assert_eq!(g.daemon_socket.as_deref(), Some(std::path::Path::new("/a")));
    }
}
