//! `hlyr`: the terminal workflow for the hld daemon. Parses the command line, then runs one
//! command (one-shot commands without a runtime, see [`commands`]) and turns its outcome into
//! an exit code.

mod commands;
mod connect;
mod decision;
mod error;
mod follow;
mod ids;
mod mcp;
mod output;
mod prompt;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use crate::error::Exit;
use crate::output::Printer;

const EXIT_CODES: &str = "\
Exit codes:
  0    success (a followed session completed)
  1    failure: a followed session failed, or the daemon refused the request
  2    usage: bad arguments, flag values or ids
  3    the daemon is not running, could not be reached, or could not be started
  130  stopped following a session with Ctrl-C (the session keeps running)

Colour is used only on a terminal, and never with NO_COLOR set.";

/// Launch, follow and steer Claude Code sessions run by the hld daemon.
#[derive(Debug, Parser)]
#[command(name = "hlyr", version, after_help = EXIT_CODES)]
struct Cli {
    /// The daemon's socket [default: $HUMANLAYER_DAEMON_SOCKET, `daemon_socket` in
    /// humanlayer.json, then ~/.humanlayer/daemon.sock].
    #[arg(long, global = true, value_name = "PATH")]
    daemon_socket: Option<PathBuf>,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: commands::Command,
}

/// What every command gets: where the daemon is, and how to print.
#[derive(Debug)]
pub struct Context {
    daemon_socket: Option<PathBuf>,
    pub out: Printer,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let ctx = Context {
        daemon_socket: cli.daemon_socket,
        out: Printer::new(cli.json),
    };
    match cli.command.run(&ctx) {
        Ok(exit) => exit.into(),
        Err(e) => e.report(),
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit as u8)
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Builds the whole command tree, deferred subcommands included, and checks it.
    #[test]
    fn command_tree_is_valid() {
        super::Cli::command().debug_assert();
    }
}
