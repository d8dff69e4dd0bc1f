//! Exit codes and the one error type: a one-line message, an optional hint, and the exit code
//! it maps to. Every failure reaches the user through [`CliError::report`].

use std::process::ExitCode;

use hld_client::protocol::{ErrorCode, InvalidParamsData};

/// The process exit codes (listed in `hlyr --help`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success.
    Ok = 0,
    /// A followed session failed, or the daemon refused a request.
    Failure = 1,
    /// Bad arguments, flag values or ids (clap uses 2 as well).
    Usage = 2,
    /// The daemon is not running, unreachable, or could not be started.
    Unreachable = 3,
    /// A followed session was interrupted from elsewhere.
    Interrupted = 4,
    /// Ctrl-C: the followed session was interrupted, or left running and no longer followed.
    CtrlC = 130,
}

/// A failure to report: `error: <message>`, then `hint: <hint>`.
#[derive(Debug)]
pub struct CliError {
    pub exit: Exit,
    pub message: String,
    pub hint: Option<String>,
}

/// The hint for every "daemon not running" error.
pub const START_HINT: &str = "start it with `hlyr daemon start`";

impl CliError {
    pub fn new(exit: Exit, message: impl Into<String>) -> CliError {
        CliError {
            exit,
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

    pub fn hint(mut self, hint: impl Into<String>) -> CliError {
        self.hint = Some(hint.into());
        self
    }

    /// Prints the error on stderr (nothing for an empty message).
    pub fn print(&self) {
        if self.message.is_empty() {
            return;
        }
        let red = anstyle::AnsiColor::Red.on_default().bold();
        let dim = anstyle::Style::new().dimmed();
        anstream::eprintln!("{red}error:{red:#} {}", self.message);
        if let Some(hint) = &self.hint {
            anstream::eprintln!("{dim}hint:{dim:#} {hint}");
        }
    }

    /// Prints the error and returns its exit code.
    pub fn report(self) -> ExitCode {
        self.print();
        self.exit.into()
    }
}

impl From<hld_client::Error> for CliError {
    fn from(e: hld_client::Error) -> CliError {
        use hld_client::Error;
        match e {
            Error::Rpc(err) => {
                let hint = match ErrorCode::from_code(err.code) {
                    Some(ErrorCode::MethodNotFound) => {
                        Some("this daemon is older than hlyr; update and restart hld".to_owned())
                    }
                    Some(ErrorCode::InvalidParams) => err
                        .data
                        .and_then(|d| serde_json::from_value::<InvalidParamsData>(d).ok())
                        .map(|d| format!("`{}` expects {}", d.param, d.expected)),
                    _ => None,
                };
                CliError {
                    exit: Exit::Failure,
                    message: err.message,
                    hint,
                }
            }
            Error::Disconnected => CliError::unreachable("the daemon closed the connection")
                .hint("it may have stopped; check with `hlyr daemon status`"),
            Error::Timeout => CliError::unreachable("the daemon did not answer in time").hint(
                "check its log, or restart it with `hlyr daemon stop` and `hlyr daemon start`",
            ),
            Error::DaemonNotRunning { .. } => CliError::unreachable(e.to_string()).hint(START_HINT),
            Error::Io(e) => {
                CliError::unreachable(format!("cannot talk to the daemon: {e}")).hint(START_HINT)
            }
            Error::Decode(e) => CliError::failure(format!("unexpected reply from the daemon: {e}"))
                .hint("hlyr and hld may be different versions; see `hlyr daemon status`"),
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
