//! `hlyr`: the terminal workflow for the hld daemon. Parses the command line, then runs one
//! command on a single-threaded runtime and turns its outcome into an exit code.

mod activity;
mod ask;
mod board;
mod claude;
mod commands;
mod complete;
mod composer;
mod connect;
mod contexts;
mod decision;
mod duration;
mod error;
mod follow;
mod hint;
mod ids;
mod keys;
mod notify;
mod output;
mod prompt;
mod reconnect;
mod session;
mod table;
mod transcript;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use crate::error::Exit;
use crate::output::Printer;

pub const EXIT_CODES: &str = "\
Exit codes:
  0    success (a followed session completed; `daemon stop` when no daemon runs)
  1    failure: a followed session failed (or stopped at a usage limit), the daemon
       refused the request, an approval was decided already or ended with its session, or
       the patch `diff` wrote lacks a file (named on stderr)
  2    usage: bad arguments or flag values, or an id that names nothing or several things
  3    the daemon is not running, could not be reached, or could not be started
  4    a followed session was interrupted from elsewhere (`hlyr interrupt`, another client)
  130  Ctrl-C: `launch` and `continue` interrupted their session; with --keep-running, and
       in `conversation --follow` and `events`, it only stopped watching (the session keeps
       running)

With --json, output is JSON (one document, or one line per item of a stream, each with a
`type`), and an error is one line on stderr: {\"error\": {message, hint, kind, exit_code}}.
Colour is used only on a terminal, and never with NO_COLOR set.";

/// Launch, follow and steer Claude Code sessions run by the hld daemon.
#[derive(Debug, Parser)]
#[command(name = "hlyr", version, after_help = EXIT_CODES)]
struct Cli {
    /// The daemon's socket [default: $HUMANLAYER_DAEMON_SOCKET, `daemon_socket` in
    /// humanlayer.json, then ~/.humanlayer/daemon.sock].
    #[arg(long, value_name = "PATH", global = true)]
    daemon_socket: Option<PathBuf>,
    /// The daemon to talk to, by its context's name (`hlyr context list`) [default: the
    /// one `hlyr context use` chose, else `local`: the socket above].
    #[arg(long, value_name = "NAME", env = "HLD_CONTEXT", global = true)]
    context: Option<String>,
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
    context: Option<String>,
    pub out: Printer,
}

/// The environment variable a shell sets to ask for completions (see `hlyr completions`).
pub const COMPLETE_ENV: &str = "COMPLETE";

fn main() -> ExitCode {
    clap_complete::CompleteEnv::with_factory(Cli::command)
        .var(COMPLETE_ENV)
        .complete();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return rejected(e),
    };
    error::report_json(cli.json);
    let ctx = Context {
        daemon_socket: cli.daemon_socket,
        context: cli.context.filter(|name| !name.is_empty()),
        out: Printer::new(cli.json),
    };
    // A contexts file that cannot be read is reported by the commands that need it.
    let contexts = contexts::Contexts::load().unwrap_or_default();
    hint::choose(
        &contexts,
        ctx.context.as_deref(),
        ctx.daemon_socket.as_deref(),
    );
    let outcome = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| error::CliError::failure(format!("cannot start the runtime: {e}")))
        .and_then(|runtime| runtime.block_on(cli.command.run(&ctx)));
    match outcome {
        Ok(exit) => exit.into(),
        Err(e) => e.report(),
    }
}

/// A command line clap did not take (or `--help`, `--version`): clap's own report, or a
/// JSON error when `--json` was among the options.
fn rejected(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let json = std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json");
    if !json || matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        e.exit();
    }
    error::report_json(true);
    let (message, hint) = json_report(&e.render().to_string());
    error::CliError::usage(message).hint(hint).report()
}

/// clap's report as a JSON error's message and hint: its first paragraph (what is wrong,
/// with the arguments it names) on one line, then its tips and usage line.
fn json_report(text: &str) -> (String, String) {
    let paragraphs: Vec<String> = text
        .split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect();
    let message = paragraphs.first().map_or("", |p| p.as_str());
    let message = message
        .strip_prefix("error: ")
        .unwrap_or(message)
        .to_owned();
    let mut hint: Vec<&str> = paragraphs
        .iter()
        .skip(1)
        .map(String::as_str)
        .filter(|p| p.starts_with("tip: ") || p.starts_with("Usage: "))
        .collect();
    hint.push("see `--help`");
    (message, hint.join("; "))
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JSON error keeps what clap names: the arguments missing, a tip, the usage.
    #[test]
    fn a_json_usage_error_keeps_the_arguments_clap_names() {
        let missing = Cli::try_parse_from(["hlyr", "show"]).unwrap_err();
        let (message, hint) = json_report(&missing.render().to_string());
        assert_eq!(
            message,
            "the following required arguments were not provided: <ID>"
        );
        assert_eq!(hint, "Usage: hlyr show <ID>; see `--help`");
        let typo = Cli::try_parse_from(["hlyr", "launch", "--modle", "x"]).unwrap_err();
        let (message, hint) = json_report(&typo.render().to_string());
        assert_eq!(message, "unexpected argument '--modle' found");
        assert!(
            hint.starts_with("tip: a similar argument exists: '--mode'"),
            "{hint}"
        );
    }

    /// Builds the whole command tree and checks it.
    #[test]
    fn command_tree_is_valid() {
        Cli::command().debug_assert();
    }

    /// A command's own help opens with the description its parent's command list gives it
    /// (arguments it flattens in must not replace it), at every depth.
    #[test]
    fn each_command_help_opens_with_its_description() {
        fn check(command: &clap::Command, path: &[&str]) {
            for sub in command.get_subcommands() {
                let name = sub.get_name();
                if name == "help" {
                    continue;
                }
                let path = [path, &[name]].concat();
                let listed = sub
                    .get_about()
                    .expect("every command is described")
                    .to_string();
                let help = Cli::command()
                    .try_get_matches_from(path.iter().copied().chain(["--help"]))
                    .expect_err("--help stops parsing")
                    .to_string();
                assert_eq!(
                    help.lines().next(),
                    Some(listed.as_str()),
                    "{path:?} --help"
                );
                let mut sub = sub.clone();
                sub.build();
                check(&sub, &path);
            }
        }
        check(&Cli::command(), &["hlyr"]);
    }
}
