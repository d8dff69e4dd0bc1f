//! Starting `hld` in the background when nothing listens at its socket, for the front ends that
//! may start one (`hlyr launch`, `hld-tui`): detached in its own process group, with no
//! terminal, logging to a file next to its socket.

use std::ffi::OsString;
use std::fs::{DirBuilder, OpenOptions};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::Client;

/// How long a freshly started daemon has to answer `health`.
pub const START_TIMEOUT: Duration = Duration::from_secs(10);

/// A daemon that was started.
#[derive(Debug)]
pub struct Started {
    /// Its process id.
    pub pid: u32,
    /// Its log file.
    pub log: PathBuf,
}

/// Why a daemon could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The `hld` binary could not be run.
    #[error("cannot start {}: {source}", hld.display())]
    Spawn {
        /// The binary.
        hld: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Its directory or log file could not be made, or it did not come up.
    #[error("{message}")]
    Failed {
        /// What went wrong.
        message: String,
        /// The daemon's log file, once it had one.
        log: Option<PathBuf>,
    },
}

/// Whether a daemon answers `health` at `socket` within a short probe timeout.
pub async fn healthy(socket: &Path) -> bool {
    match Client::connect_with_timeout(socket, Duration::from_secs(2)).await {
        Ok(client) => client.health().await.is_ok(),
        Err(_) => false,
    }
}

/// Whether nothing listens at `socket`: no file, or a stale one that refuses. Only then is a
/// daemon started there; a process that takes connections but does not answer is not replaced
/// (a new daemon could not bind its socket), and the caller's own calls say what it does.
pub async fn nothing_listens(socket: &Path) -> bool {
    matches!(
        Client::connect_with_timeout(socket, Duration::from_secs(2)).await,
        Err(crate::Error::DaemonNotRunning { .. })
    )
}

/// The `hld` to start: `explicit` if given, else the one next to the running executable, else
/// `hld` on PATH.
pub fn hld_binary(explicit: Option<&Path>) -> PathBuf {
    if let Some(path) = explicit {
        return path.to_owned();
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("hld")))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("hld"))
}

/// The log file of a started daemon: next to its socket (`daemon.sock` → `daemon.log`).
pub fn log_path(socket: &Path) -> PathBuf {
    socket.with_extension("log")
}

/// Why `hld` would not start, as it said last (`hld: REASON`) in what it wrote to `log`
/// from byte `from`, its start-up's (at most 64 KiB of it are read).
fn failure_in(log: &Path, from: u64) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(log).ok()?;
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut said = Vec::new();
    file.take(64 * 1024).read_to_end(&mut said).ok()?;
    let said = String::from_utf8_lossy(&said);
    let reason = said.lines().rev().find_map(|l| l.strip_prefix("hld: "))?;
    Some(reason.trim().to_owned())
}

/// How a running daemon was started, so that a restart starts it the same way: its
/// arguments, its working directory (for relative paths in them) and the `HUMANLAYER_`
/// variables of its environment.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    /// Its arguments, after the program.
    pub args: Vec<OsString>,
    /// Its working directory.
    pub dir: Option<PathBuf>,
    /// Its `HUMANLAYER_…` variables.
    pub env: Vec<(OsString, OsString)>,
}

impl Invocation {
    /// How process `pid` was started, as Linux's `/proc` tells; `None` where it cannot be read.
    pub fn of(pid: u32) -> Option<Invocation> {
        let read = |what: &str| std::fs::read(format!("/proc/{pid}/{what}")).ok();
        let split = |bytes: Vec<u8>| -> Vec<OsString> {
            bytes
                .split(|&b| b == 0)
                .filter(|part| !part.is_empty())
                .map(|part| OsString::from_vec(part.to_vec()))
                .collect()
        };
        let args = split(read("cmdline")?).into_iter().skip(1).collect();
        let env = split(read("environ")?)
            .into_iter()
            .filter_map(|pair| {
                let pair = pair.into_vec();
                let at = pair.iter().position(|&b| b == b'=')?;
                let (name, value) = (&pair[..at], &pair[at + 1..]);
                name.starts_with(b"HUMANLAYER_").then(|| {
                    let os = |b: &[u8]| OsString::from_vec(b.to_vec());
                    (os(name), os(value))
                })
            })
            .collect();
        let dir = std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
        Some(Invocation { args, dir, env })
    }

    /// Whether it sets what `flag` (`--flag VALUE` or `--flag=VALUE`) or variable `var` sets.
    fn gives(&self, flag: &str, var: &str) -> bool {
        self.env.iter().any(|(name, _)| name == var)
            || self.args.iter().any(|a| {
                let a = a.as_bytes();
                a == flag.as_bytes() || a.starts_with(format!("{flag}=").as_bytes())
            })
    }
}

/// Starts `hld` serving `socket` and waits until it answers `health`.
pub async fn start(hld: &Path, socket: &Path) -> Result<Started, StartError> {
    start_like(hld, socket, None).await
}

/// [`start`], started as `like` was (a restart): with its arguments, working directory and
/// `HUMANLAYER_` variables, where this process's environment sets none of the same name.
pub async fn start_like(
    hld: &Path,
    socket: &Path,
    like: Option<&Invocation>,
) -> Result<Started, StartError> {
    let fail = |message: String, log: Option<&Path>| StartError::Failed {
        message,
        log: log.map(Path::to_owned),
    };
    // A socket that is someone else's is not replaced by starting another daemon: it is
    // refused, with why.
    crate::trust::check_socket(socket).map_err(|e| fail(e.to_string(), None))?;
    let log = log_path(socket);
    if let Some(dir) = socket.parent().filter(|d| !d.as_os_str().is_empty()) {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| fail(format!("cannot create {}: {e}", dir.display()), None))?;
    }
    // Start-up errors printed before the daemon's logging is set up land in the log too.
    let stderr = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .map_err(|e| fail(format!("cannot open {}: {e}", log.display()), None))?;
    let logged_before = stderr.metadata().map_or(0, |m| m.len());
    let mut command = Command::new(hld);
    let like = like.cloned().unwrap_or_default();
    command.args(&like.args);
    if !like.gives("--socket", "HUMANLAYER_DAEMON_SOCKET") {
        command.arg("--socket").arg(socket);
    }
    if !like.gives("--log-file", "HUMANLAYER_LOG_FILE") {
        command.arg("--log-file").arg(&log);
    }
    if let Some(dir) = like.dir.filter(|d| d.is_dir()) {
        command.current_dir(dir);
    }
    for (name, value) in like.env {
        if std::env::var_os(&name).is_none() {
            command.env(name, value);
        }
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        // Its own process group: Ctrl-C in this terminal must not reach the daemon.
        .process_group(0)
        .spawn()
        .map_err(|source| StartError::Spawn {
            hld: hld.to_owned(),
            source,
        })?;
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if healthy(socket).await {
            return Ok(Started {
                pid: child.id(),
                log,
            });
        }
        if let Ok(Some(status)) = child.try_wait() {
            let message = match failure_in(&log, logged_before) {
                Some(reason) => format!("hld exited at start-up: {reason}"),
                None => format!("hld exited at start-up ({status})"),
            };
            return Err(fail(message, Some(&log)));
        }
        if Instant::now() > deadline {
            let message = format!("hld did not answer within {}s", START_TIMEOUT.as_secs());
            return Err(fail(message, Some(&log)));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::net::UnixListener;

    use super::*;

    #[tokio::test]
    async fn only_a_socket_nothing_listens_at_is_free_for_a_daemon() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("hld.sock");
        assert!(nothing_listens(&socket).await, "no file");
        let listener = UnixListener::bind(&socket).unwrap();
        // It takes connections, and answers nothing.
        assert!(!nothing_listens(&socket).await, "a process listens");
        drop(listener);
        assert!(nothing_listens(&socket).await, "a stale file refuses");
    }
}
