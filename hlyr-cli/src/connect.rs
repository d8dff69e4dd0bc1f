//! Reaching the daemon: resolving its socket, connecting (the blocking client for one-shot
//! commands, the async one for the rest), and starting `hld` in the background when a command
//! that may start it (`launch`, `continue`, `daemon start`) finds none.

use std::fs::{DirBuilder, OpenOptions};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hld_client::Client;

use crate::error::{CliError, START_HINT};
use crate::output::{paint, DIM};
use crate::Context;

/// How long a freshly started daemon has to answer `health`.
const START_TIMEOUT: Duration = Duration::from_secs(10);

// How to find `hld` when it has to be started. (A plain comment: clap would take a doc
// comment as the description of every command that flattens these arguments.)
#[derive(Debug, clap::Args)]
pub struct StartArgs {
    /// The `hld` binary to start when no daemon answers [default: next to hlyr, then PATH].
    #[arg(long, env = "HLD_PATH", value_name = "PATH")]
    pub hld_path: Option<PathBuf>,
}

/// A daemon this invocation started.
#[derive(Debug)]
pub struct Started {
    pub pid: u32,
    pub log: PathBuf,
}

impl Started {
    /// Says on stderr that a daemon was started, for commands whose output is something else.
    pub fn announce(&self) {
        let note = format!(
            "started hld (pid {}), logging to {}",
            self.pid,
            self.log.display()
        );
        anstream::eprintln!("{}", paint(DIM, note));
    }
}

impl Context {
    /// The socket path: `--daemon-socket`, `HUMANLAYER_DAEMON_SOCKET`, `humanlayer.json`, default.
    pub fn socket(&self) -> Result<PathBuf, CliError> {
        hld_client::config::resolve_socket_path(self.daemon_socket.as_deref())
            .map_err(|e| CliError::usage(e).hint("fix or remove that humanlayer.json"))
    }

    /// Connects to a running daemon with the blocking client; a missing daemon is exit code 3
    /// with a hint.
    pub fn connect(&self) -> Result<hld_client::blocking::Client, CliError> {
        let socket = self.socket()?;
        hld_client::blocking::Client::connect(&socket).map_err(|e| not_running(&socket, e))
    }

    /// [`Context::connect`] with the async client, for commands that run on a runtime.
    pub async fn connect_async(&self) -> Result<Client, CliError> {
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

fn not_running(socket: &Path, e: hld_client::Error) -> CliError {
    let message = match &e {
        hld_client::Error::Io(io)
            if matches!(
                io.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            format!(
                "the daemon is not running (nothing answers at {})",
                socket.display()
            )
        }
        _ => format!("cannot connect to the daemon at {}: {e}", socket.display()),
    };
    CliError::unreachable(message).hint(START_HINT)
}

/// Whether a daemon answers `health` at `socket` within a short probe timeout.
pub async fn healthy(socket: &Path) -> bool {
    match Client::connect_with_timeout(socket, Duration::from_secs(2)).await {
        Ok(client) => client.health().await.is_ok(),
        Err(_) => false,
    }
}

/// The `hld` to start: `--hld-path`/`HLD_PATH`, else the one next to this executable, else PATH.
pub fn hld_binary(start: &StartArgs) -> PathBuf {
    if let Some(path) = &start.hld_path {
        return path.clone();
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("hld")))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("hld"))
}

/// The log file of a daemon started by hlyr: next to its socket (`daemon.sock` → `daemon.log`).
fn log_path(socket: &Path) -> PathBuf {
    socket.with_extension("log")
}

/// Starts `hld` detached (own process group, no terminal, logging to a file) and waits for it
/// to answer `health`, showing a spinner on a terminal.
async fn start_daemon(socket: &Path, start: &StartArgs) -> Result<Started, CliError> {
    let hld = hld_binary(start);
    let log = log_path(socket);
    if let Some(dir) = socket.parent().filter(|d| !d.as_os_str().is_empty()) {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| CliError::unreachable(format!("cannot create {}: {e}", dir.display())))?;
    }
    // Start-up errors printed before the daemon's logging is set up land in the log too.
    let stderr = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .map_err(|e| CliError::unreachable(format!("cannot open {}: {e}", log.display())))?;
    let mut command = Command::new(&hld);
    command
        .arg("--socket")
        .arg(socket)
        .arg("--log-file")
        .arg(&log);
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        // Its own process group: Ctrl-C in this terminal must not reach the daemon.
        .process_group(0)
        .spawn()
        .map_err(|e| {
            CliError::unreachable(format!("cannot start {}: {e}", hld.display()))
                .hint("install hld next to hlyr, put it on PATH, or give --hld-path / HLD_PATH")
        })?;

    let spinner = indicatif::ProgressBar::new_spinner().with_message("starting hld…");
    spinner.enable_steady_tick(Duration::from_millis(80));
    let deadline = Instant::now() + START_TIMEOUT;
    let result = loop {
        if healthy(socket).await {
            break Ok(Started {
                pid: child.id(),
                log: log.clone(),
            });
        }
        if let Ok(Some(status)) = child.try_wait() {
            break Err(CliError::unreachable(format!(
                "hld exited at start-up ({status})"
            )));
        }
        if Instant::now() > deadline {
            break Err(CliError::unreachable(format!(
                "hld did not answer within {}s",
                START_TIMEOUT.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    spinner.finish_and_clear();
    result.map_err(|e| e.hint(format!("see its log: {}", log.display())))
}
