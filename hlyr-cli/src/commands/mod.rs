//! The command tree: one file per subcommand, the `daemon` group in `daemon/`. Every command
//! runs on the single-threaded runtime `main` builds.

mod approvals;
mod approve;
mod archive;
mod completions;
mod context;
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
mod queue;
mod rename;
mod respond;
mod review;
mod search;
mod send;
mod sessions;
mod settings;
mod show;
mod tui;
mod unarchive;
mod usage;
mod watch;
mod watch_all;
mod watch_keys;

use clap::Subcommand;

use hld_client::protocol::PermissionMode;

use crate::error::{CliError, Exit};
use crate::Context;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Launch a Claude Code session and follow it; on a terminal, talk on after each turn
    ///
    /// On a terminal, after each turn a prompt takes the next message (Enter sends it into the
    /// same session; an empty line or Ctrl-D ends). While the agent works, a line typed is
    /// queued for the end of its turn (Enter) or steers it at once (Tab). At any time,
    /// Shift+Tab cycles the mode (accept edits, plan, default) and `/model NAME` switches the
    /// model; other `/` commands (such as /compact) go to Claude. In a pipe or with --json,
    /// hlyr exits after the first turn.
    Launch(launch::Args),
    /// List sessions, one per chain: id, status (a usage limit with its reset), age, model,
    /// cost, context share, modes and title; the 20 most recent (--json: every one).
    Sessions(sessions::Args),
    /// Find sessions by words of their title, query or summary.
    Search(search::Args),
    /// Show one session's state.
    Show(show::Args),
    /// Print a session's conversation, optionally following it live.
    Conversation(conversation::Args),
    /// Continue a session with a new query, and follow the new session; on a terminal, talk
    /// on after each turn, as with launch.
    Continue(r#continue::Args),
    /// Send a message into a session: queued while the agent works (or steering it), else
    /// starting its next turn; the same session goes on.
    Send(send::Args),
    /// List a session's queued messages, or cancel one.
    Queue(queue::Args),
    /// Interrupt a running session.
    Interrupt(interrupt::Args),
    /// Set a session's title.
    Rename(rename::Args),
    /// Show an isolated session's changes against its base: through the pager on a terminal,
    /// else as the patch `git apply` takes (`hlyr diff ID > x.patch`).
    Diff(review::DiffArgs),
    /// Merge an isolated session's branch into its base branch in the main checkout.
    Merge(review::MergeArgs),
    /// Remove an isolated session's worktree and branch.
    Discard(review::DiscardArgs),
    /// Archive sessions: their chains leave `hlyr sessions` (see `sessions --archived`).
    Archive(archive::Args),
    /// Bring archived sessions back to `hlyr sessions`.
    Unarchive(unarchive::Args),
    /// Show or change a session's model, mode (plan or default) and approval modes: auto-accept
    /// of edits, bypass of permissions.
    Settings(settings::Args),
    /// Delete archived sessions idle for longer than a duration.
    Prune(prune::Args),
    /// Show what sessions cost: tokens and cost by day, model or working directory.
    Usage(usage::Args),
    /// List pending approvals.
    Approvals(approvals::Args),
    /// Approve a pending tool call.
    Approve(approve::Args),
    /// Deny a pending tool call, optionally saying why.
    Deny(deny::Args),
    /// Answer a pending question.
    Respond(respond::Args),
    /// Watch every session live, a line each: status, what it waits for, cost; Enter answers.
    Watch(watch::Args),
    /// Print the daemon's events as JSON lines, for scripts.
    Events(events::Args),
    /// Start, stop or check the daemon.
    Daemon(daemon::Args),
    /// Name daemons on this machine or others and choose which one commands talk to.
    Context(context::Args),
    /// Open the live dashboard (hld-tui): sessions, conversations and approvals.
    Tui(tui::Args),
    /// Serve an MCP server on stdio (Claude Code starts it, not a person).
    Mcp(mcp::Args),
    /// Print shell code that completes commands and live session and approval ids.
    Completions(completions::Args),
    /// Print hlyr's manual page, or write one per command into a directory.
    Man(man::Args),
}

impl Command {
    pub async fn run(self, ctx: &Context) -> Result<Exit, CliError> {
        match self {
            Command::Launch(args) => launch::run(ctx, args).await,
            Command::Sessions(args) => sessions::run(ctx, args).await,
            Command::Search(args) => search::run(ctx, args).await,
            Command::Show(args) => show::run(ctx, args).await,
            Command::Conversation(args) => conversation::run(ctx, args).await,
            Command::Continue(args) => r#continue::run(ctx, args).await,
            Command::Send(args) => send::run(ctx, args).await,
            Command::Queue(args) => queue::run(ctx, args).await,
            Command::Interrupt(args) => interrupt::run(ctx, args).await,
            Command::Rename(args) => rename::run(ctx, args).await,
            Command::Diff(args) => review::diff(ctx, args).await,
            Command::Merge(args) => review::merge(ctx, args).await,
            Command::Discard(args) => review::discard(ctx, args).await,
            Command::Archive(args) => archive::run(ctx, args).await,
            Command::Unarchive(args) => unarchive::run(ctx, args).await,
            Command::Settings(args) => settings::run(ctx, args).await,
            Command::Prune(args) => prune::run(ctx, args).await,
            Command::Usage(args) => usage::run(ctx, args).await,
            Command::Approvals(args) => approvals::run(ctx, args).await,
            Command::Approve(args) => approve::run(ctx, args).await,
            Command::Deny(args) => deny::run(ctx, args).await,
            Command::Respond(args) => respond::run(ctx, args).await,
            Command::Watch(args) => watch::run(ctx, args).await,
            Command::Events(args) => events::run(ctx, args).await,
            Command::Daemon(group) => group.command.run(ctx).await,
            Command::Context(group) => group.command.run(ctx).await,
            Command::Tui(args) => tui::run(ctx, args),
            Command::Mcp(group) => group.command.run(ctx),
            Command::Completions(args) => completions::run(ctx, args),
            Command::Man(args) => man::run(ctx, args),
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

/// A title: one line, its runs of spaces, tabs and newlines made one space each.
fn one_line(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `--title`'s value: a title (see [`one_line`]), not blank.
fn title(value: &str) -> Result<String, String> {
    non_empty(value).map(|title| one_line(&title))
}

/// `--mode`'s value: `plan` or `default` (accepting edits is `--auto-accept-edits`).
fn permission_mode(value: &str) -> Result<PermissionMode, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "plan" => Ok(PermissionMode::Plan),
        "default" => Ok(PermissionMode::Default),
        _ => Err("expected plan or default (accepting edits is --auto-accept-edits)".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use clap::Parser;

    use crate::Cli;

    /// `--json` and `--daemon-socket` are taken before and after a command's name, at any
    /// depth; the last socket given wins.
    #[test]
    fn options_count_before_and_after_the_command() {
        let cases: [(&[&str], bool, Option<&str>); 5] = [
            (&["hlyr", "--json", "sessions"], true, None),
            (
                &["hlyr", "sessions", "--json", "--daemon-socket", "/s"],
                true,
                Some("/s"),
            ),
            (
                &[
                    "hlyr",
                    "--daemon-socket",
                    "/a",
                    "sessions",
                    "--daemon-socket",
                    "/b",
                ],
                false,
                Some("/b"),
            ),
            (
                &[
                    "hlyr",
                    "--daemon-socket",
                    "/a",
                    "daemon",
                    "status",
                    "--json",
                ],
                true,
                Some("/a"),
            ),
            (
                &["hlyr", "daemon", "--daemon-socket", "/a", "status"],
                false,
                Some("/a"),
            ),
        ];
        for (args, json, socket) in cases {
            let cli = Cli::try_parse_from(args).unwrap();
            assert_eq!(cli.json, json, "{args:?}");
            assert_eq!(
                cli.daemon_socket.as_deref(),
                socket.map(Path::new),
                "{args:?}"
            );
        }
    }
}
