//! Reaching the daemon: resolving its socket, connecting, and starting `hld` in the background
//! when a command that may start it (`launch`, `continue`, `daemon start`) finds none.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hld_client::autostart::{StartError, Started};
use hld_client::Client;

use crate::error::{CliError, START_HINT};
use crate::output::{paint, DIM};
use crate::Context;

// How to find `hld` when it has to be started. (A plain comment: clap would take a doc
// comment as the description of every command that flattens these arguments.)
#[derive(Debug, clap::Args)]
pub struct StartArgs {
    /// The `hld` binary to start when no daemon answers [default: next to hlyr, then PATH].
    #[arg(long, env = "HLD_PATH", value_name = "PATH")]
    pub hld_path: Option<PathBuf>,
}

impl StartArgs {
    /// The arguments when none were parsed: `HLD_PATH` alone.
    pub fn from_env() -> StartArgs {
        StartArgs {
            hld_path: std::env::var_os("HLD_PATH").map(PathBuf::from),
        }
    }
}

/// Says on stderr that a daemon was started, for commands whose output is something else.
pub fn announce(started: &Started) {
    let note = format!(
        "started hld (pid {}), logging to {}",
        started.pid,
        started.log.display()
    );
    anstream::eprintln!("{}", paint(DIM, note));
}

impl Context {
    /// The socket path: `--daemon-socket`, `HUMANLAYER_DAEMON_SOCKET`, `humanlayer.json`, default.
    pub fn socket(&self) -> Result<PathBuf, CliError> {
        hld_client::config::resolve_socket_path(self.daemon_socket.as_deref())
            .map_err(|e| CliError::usage(e).hint("fix or remove that humanlayer.json"))
    }

    /// Connects to a running daemon; a missing daemon is exit code 3 with a hint.
    pub async fn connect(&self) -> Result<Client, CliError> {
        let socket = self.socket()?;
        Client::connect(&socket)
            .await
            .map_err(|e| not_running(&socket, e))
    }

    /// Connects, starting `hld` first when no daemon answers. Returns the daemon it started.
    pub async fn connect_or_start(
        &self,
        start: &StartArgs,
    ) -> Result<(Client, Option<Started>), CliError> {
        let socket = self.socket()?;
        hld_client::trust::check_socket(&socket)?;
        let started = if healthy(&socket).await {
            None
        } else {
            Some(start_daemon(&socket, start).await?)
        };
        let client = Client::connect(&socket)
            .await
            .map_err(|e| not_running(&socket, e))?;
        Ok((client, started))
    }
}

/// Whether connecting failed because no daemon serves the socket (none there, or a stale
/// one that refuses), rather than for another reason.
pub fn is_not_running(e: &hld_client::Error) -> bool {
    matches!(e, hld_client::Error::DaemonNotRunning { .. })
}

/// The error for a failed connection to `socket`.
pub fn not_running(socket: &Path, e: hld_client::Error) -> CliError {
    if matches!(e, hld_client::Error::UntrustedSocket { .. }) {
        return e.into();
    }
    let message = if is_not_running(&e) {
        format!(
            "the daemon is not running (nothing answers at {})",
            socket.display()
        )
    } else {
        format!("cannot connect to the daemon at {}: {e}", socket.display())
    };
    CliError::unreachable(message).hint(START_HINT)
}

pub use hld_client::autostart::healthy;

/// The `hld` to start: `--hld-path`/`HLD_PATH`, else the one next to this executable, else PATH.
pub fn hld_binary(start: &StartArgs) -> PathBuf {
    hld_client::autostart::hld_binary(start.hld_path.as_deref())
}

/// Starts `hld` and waits for it to answer `health`, showing a spinner on a terminal.
async fn start_daemon(socket: &Path, start: &StartArgs) -> Result<Started, CliError> {
    let hld = hld_binary(start);
    let spinner = indicatif::ProgressBar::new_spinner().with_message("starting hld…");
    spinner.enable_steady_tick(Duration::from_millis(80));
    let result = hld_client::autostart::start(&hld, socket).await;
    spinner.finish_and_clear();
    result.map_err(|e| {
        let error = CliError::unreachable(e.to_string());
        match e {
            StartError::Spawn { .. } => error
                .hint("install hld next to hlyr, put it on PATH, or give --hld-path / HLD_PATH"),
            StartError::Failed { log: Some(log), .. } => {
                error.hint(format!("see its log: {}", log.display()))
            }
            StartError::Failed { log: None, .. } => error,
            // A failure this version does not know: its message says it.
            _ => error,
        }
    })
}
