//! Exit codes and the one error type: a one-line message, an optional hint, its kind and the
//! exit code it maps to. Every failure reaches the user through [`CliError::report`]: as text,
//! or under `--json` as one JSON object on stderr.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use hld_client::protocol::{ErrorCode, InvalidParamsData, WORKTREE_MISSING};
use hld_client::view::clean;
use serde::Serialize;

use crate::hint::{hlyr, hlyr_daemon};

/// The process exit codes (listed in `hlyr --help`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success.
    Ok = 0,
    /// A followed session failed, or the daemon refused a request.
    Failure = 1,
    /// Bad arguments, flag values, or ids that name nothing or several things (clap uses 2
    /// as well).
    Usage = 2,
    /// The daemon is not running, unreachable, or could not be started.
    Unreachable = 3,
    /// A followed session was interrupted from elsewhere.
    Interrupted = 4,
    /// Ctrl-C: the followed session was interrupted, or left running and no longer followed.
    CtrlC = 130,
}

/// What went wrong, for scripts: `--json` errors carry it as `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The daemon refused or could not do it, or a followed session failed.
    Failure,
    /// Bad arguments or flag values.
    Usage,
    /// An id names nothing.
    NotFound,
    /// An id prefix names several things.
    Ambiguous,
    /// The approval was decided already.
    AlreadyDecided,
    /// The approval ended with its session (or was answered elsewhere): nobody decided it.
    Resolved,
    /// The daemon is not running, or cannot be reached or started.
    DaemonUnreachable,
    /// The daemon found no `claude` to run.
    ClaudeNotFound,
    /// The user declined a confirmation.
    Cancelled,
    /// The session's worktree was removed by hand: nothing more runs or is read in it.
    WorktreeMissing,
}

/// A failure to report: `error: <message>`, then `hint: <hint>`.
#[derive(Debug)]
pub struct CliError {
    pub exit: Exit,
    pub kind: Kind,
    pub message: String,
    pub hint: Option<String>,
}

/// The hint for every "daemon not running" error, about the daemon of `context` (`None`: the
/// one in use).
pub fn start_hint(context: Option<&str>) -> String {
    format!("start it with {}", hlyr_daemon(context, "start"))
}

/// The hint for the daemon of `context` (`None`: the one in use) that stopped answering.
pub fn stopped_hint(context: Option<&str>) -> String {
    format!(
        "it may have stopped; check with {}",
        hlyr_daemon(context, "status")
    )
}

/// Whether errors are reported as JSON (`--json` given to the command that runs).
static JSON_ERRORS: AtomicBool = AtomicBool::new(false);

/// Reports errors as JSON from now on when `json` is set.
pub fn report_json(json: bool) {
    JSON_ERRORS.store(json, Ordering::Relaxed);
}

/// A `--json` error as printed: `{"error": {…}}`.
#[derive(Serialize)]
struct JsonError<'a> {
    error: JsonErrorBody<'a>,
}

#[derive(Serialize)]
struct JsonErrorBody<'a> {
    message: &'a str,
    hint: Option<&'a str>,
    kind: Kind,
    exit_code: u8,
}

impl CliError {
    pub fn new(exit: Exit, message: impl Into<String>) -> CliError {
        let kind = match exit {
            Exit::Usage => Kind::Usage,
            Exit::Unreachable => Kind::DaemonUnreachable,
            _ => Kind::Failure,
        };
        CliError {
            exit,
            kind,
            message: message.into(),
            hint: None,
        }
    }

    pub fn failure(message: impl Into<String>) -> CliError {
        Self::new(Exit::Failure, message)
    }

    pub fn usage(message: impl Into<String>) -> CliError {
        Self::new(Exit::Usage, message)
    }

    pub fn unreachable(message: impl Into<String>) -> CliError {
        Self::new(Exit::Unreachable, message)
    }

    /// An id that names nothing: a usage error (exit 2), like an ambiguous one.
    pub fn not_found(message: impl Into<String>) -> CliError {
        Self::usage(message).kind(Kind::NotFound)
    }

    pub fn hint(mut self, hint: impl Into<String>) -> CliError {
        self.hint = Some(hint.into());
        self
    }

    pub fn kind(mut self, kind: Kind) -> CliError {
        self.kind = kind;
        self
    }

    /// A refusal about session `id` (as the user named it) whose worktree was removed by
    /// hand, with the cleaning up as hlyr spells it; any other error as it is.
    pub fn about_session(self, id: &str) -> CliError {
        if self.kind != Kind::WorktreeMissing {
            return self;
        }
        let hint = format!(
            "made again, the worktree serves the session as before; {} deletes its branch",
            hlyr(&format!("discard {id}"))
        );
        self.hint(hint)
    }

    /// Prints the error on stderr (nothing for an empty message): as text, or as one JSON
    /// line under `--json`.
    pub fn print(&self) {
        if self.message.is_empty() {
            return;
        }
        if JSON_ERRORS.load(Ordering::Relaxed) {
            let json = JsonError {
                error: JsonErrorBody {
                    message: &self.message,
                    hint: self.hint.as_deref(),
                    kind: self.kind,
                    exit_code: self.exit as u8,
                },
            };
            let line = serde_json::to_string(&json).unwrap_or_default();
            let _ = writeln!(std::io::stderr().lock(), "{line}");
            return;
        }
        anstream::eprintln!("{}", self.human());
    }

    /// The error as text: `error: MESSAGE` and `hint: HINT` below it. A message may quote the
    /// daemon (a title, an answer), so both are cleaned for the terminal.
    fn human(&self) -> String {
        let red = anstyle::AnsiColor::Red.on_default().bold();
        let dim = anstyle::Style::new().dimmed();
        let mut text = format!("{red}error:{red:#} {}", clean(&self.message));
        if let Some(hint) = &self.hint {
            text.push_str(&format!("\n{dim}hint:{dim:#} {}", clean(hint)));
        }
        text
    }

    /// Prints the error and returns its exit code.
    pub fn report(self) -> ExitCode {
        self.print();
        self.exit.into()
    }
}

impl From<hld_client::Error> for CliError {
    fn from(e: hld_client::Error) -> CliError {
        CliError::from_sdk(e, None)
    }
}

impl CliError {
    /// The error for `e`, from the daemon of `context` (`None`: the one in use), which the
    /// commands its hint names reach.
    pub fn from_sdk(e: hld_client::Error, context: Option<&str>) -> CliError {
        use hld_client::Error;
        match e {
            Error::Rpc(err) => {
                if err.is_oversize() {
                    return CliError::usage(
                        "the request is larger than the daemon takes (1 MiB, unless hld runs \
                         with --max-message-size)",
                    )
                    .hint("put a long text in a file and mention it (@path): the agent reads it");
                }
                if err.message == hld_client::claude_path::NOT_FOUND {
                    return crate::claude::not_found();
                }
                let invalid = err.invalid_params();
                if invalid
                    .as_ref()
                    .is_some_and(|d| d.received == WORKTREE_MISSING)
                {
                    return CliError::failure(err.message).kind(Kind::WorktreeMissing);
                }
                if let Some(error) = invalid.and_then(|d| flag_refused(&err.message, &d)) {
                    return error;
                }
                let error = CliError::failure(err.message);
                match ErrorCode::from_code(err.code) {
                    Some(ErrorCode::MethodNotFound) => {
                        error.hint("this daemon is older than hlyr; update and restart hld")
                    }
                    _ => error,
                }
            }
            Error::Disconnected => CliError::unreachable("the daemon closed the connection")
                .hint(stopped_hint(context)),
            Error::Timeout => {
                CliError::unreachable("the daemon did not answer in time").hint(format!(
                    "check its log ({}), or {}",
                    hlyr_daemon(context, "logs"),
                    hlyr_daemon(context, "restart")
                ))
            }
            Error::DaemonNotRunning { .. } => {
                CliError::unreachable(e.to_string()).hint(start_hint(context))
            }
            Error::UntrustedSocket { .. } => CliError::unreachable(e.to_string()).hint(
                "point --daemon-socket or HUMANLAYER_DAEMON_SOCKET at your own daemon's socket \
                 (by default ~/.humanlayer/daemon.sock)",
            ),
            Error::Address(_) => CliError::usage(e.to_string()),
            Error::Unreachable { .. } => CliError::unreachable(e.to_string())
                .hint("is hld running there with --ws, and the address right?"),
            Error::Tls { .. } => CliError::unreachable(e.to_string()).hint(
                "compare with `hlyr daemon url` on the daemon's machine; if the certificate \
                 changed on purpose, add the context again",
            ),
            Error::Rejected { status: 401, .. } => CliError::unreachable(e.to_string())
                .hint("the token is not the daemon's: copy daemon.ws-token from its machine"),
            Error::Rejected { .. } => CliError::unreachable(e.to_string()),
            Error::Io(e) => CliError::unreachable(format!("cannot talk to the daemon: {e}"))
                .hint(start_hint(context)),
            Error::Decode(e) => CliError::failure(format!("unexpected reply from the daemon: {e}"))
                .hint(format!(
                    "hlyr and hld may be different versions; see {}",
                    hlyr_daemon(context, "status")
                )),
            // A refused decision, or a failure this version does not know: its message.
            other => CliError::failure(other.to_string()),
        }
    }
}

impl From<std::io::Error> for CliError {
    /// Output errors: a closed pipe (`hlyr sessions | head`) ends quietly and successfully.
    fn from(e: std::io::Error) -> CliError {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CliError::new(Exit::Ok, String::new())
        } else {
            CliError::failure(format!("cannot write output: {e}"))
        }
    }
}

/// A parameter a flag set, refused: the user's to fix (exit 2), said with the flag's name
/// and with what it expects, since the API's name of a parameter means nothing on a command
/// line. `None` for parameters no flag sets (a session's id, which the message names).
fn flag_refused(message: &str, data: &InvalidParamsData) -> Option<CliError> {
    let (flag, default) = match data.param.as_str() {
        // Its message says the rule and what was given; rename's TITLE is no flag.
        "title" => return Some(CliError::usage(message)),
        "working_dir" => ("-w", " (by default the current directory)"),
        "additional_directories" => ("--add-dir", ""),
        "model" => ("--model", ""),
        "max_turns" => ("--max-turns", ""),
        "mcp_config" => ("--mcp-config", ""),
        "permission_mode" => ("--mode", ""),
        // hlyr sends every image's path made absolute: what is left to say is in the message.
        "images" => ("--image", ""),
        "worktree.base" => ("--base", ""),
        // A worktree git cannot make (a branch taken, a repository without a commit): the
        // message says why.
        "worktree" => ("--worktree", ""),
        "limit" => ("--limit", ""),
        _ => return None,
    };
    // "invalid images[0]: /a.txt is not a PNG…" reads "--image /a.txt is not a PNG…".
    let message = match message.strip_prefix(&format!("invalid {}: ", data.received)) {
        Some(rest) => format!("{flag} {rest}"),
        None => message.to_owned(),
    };
    let error = CliError::usage(message);
    // A refusal's message says why; so does an image's.
    if data.received == "refused" || data.param == "images" {
        return Some(error);
    }
    Some(error.hint(format!("{flag}{default} expects {}", data.expected)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_quoting_the_daemon_is_printed_cleaned() {
        let error =
            CliError::usage("matches local-1 (Evil \u{1b}]0;pwned\u{7})").hint("see \u{1b}[2J");
        let text = error.human();
        assert!(
            text.ends_with("matches local-1 (Evil �]0;pwned�)\n\u{1b}[2mhint:\u{1b}[0m see �[2J"),
            "{text:?}"
        );
    }
}
