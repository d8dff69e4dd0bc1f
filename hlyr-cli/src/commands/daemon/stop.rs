//! `hlyr daemon stop [--force]`: names the sessions that stopping would interrupt (and asks
//! first, on a terminal), calls `shutdown`, then waits until the daemon's process has exited
//! and its socket is gone. With no daemon running there is nothing to do: exit 0, with a note.
//! A daemon that takes connections but does not answer is ended by signals, with `--force`.

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hld_client::autostart::Invocation;
use hld_client::protocol::SessionInfo;
use hld_client::view::count;
use nix::errno::Errno;
use nix::sys::signal::{kill, Signal};
use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
use nix::unistd::{geteuid, Pid};

use crate::connect::{is_not_running, not_running};
use crate::error::{CliError, Exit, Kind};
use crate::hint::hlyr_daemon;
use crate::output::{paint, short_id, Render, DIM, YELLOW};
use crate::session::shown_title;
use crate::Context;

/// How long the daemon has to exit after `shutdown` (or SIGTERM): it gives requests 2 s, then
/// its sessions 1.5 s before killing them, then closes its store.
const STOP_TIMEOUT: Duration = Duration::from_secs(15);

/// How long the daemon has to answer a call before it is taken for hung.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Stop without asking, even when sessions are running.
    #[arg(short, long)]
    pub force: bool,
}

/// What `daemon stop` (and the first half of `daemon restart`) prints.
#[derive(Debug, serde::Serialize)]
pub struct Stopped {
    socket: PathBuf,
    /// Whether a daemon was running (and is now stopped).
    stopped: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pid: Option<u32>,
    /// The sessions that were running, interrupted by the stop.
    interrupted: Vec<String>,
    /// The signal that ended a daemon that did not answer (`SIGTERM`, else `SIGKILL`).
    #[serde(skip_serializing_if = "Option::is_none")]
    signal: Option<&'static str>,
    /// How the stopped daemon was started, when it could be read.
    #[serde(skip)]
    pub invocation: Option<Invocation>,
}

impl Render for Stopped {
    fn human(&self) -> String {
        if !self.stopped {
            let note = format!(
                "no daemon is running on {}; nothing to stop",
                self.socket.display()
            );
            return paint(DIM, note);
        }
        let pid = self.pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
        let mut text = format!("stopped hld{pid} on {}", self.socket.display());
        if let Some(signal) = self.signal {
            let note = format!("it did not answer: ended with {signal}");
            text.push_str(&format!("\n{}", paint(YELLOW, note)));
        }
        if !self.interrupted.is_empty() {
            let n = self.interrupted.len();
            text.push_str(&format!(
                "\n{}",
                paint(
                    YELLOW,
                    format!("interrupted {}", count(n as u64, "session"))
                )
            ));
        }
        text
    }
}

/// Stops the daemon at `ctx`'s socket, if one runs; asks first when sessions run, unless
/// `force`. Returns once its process has exited and its socket is gone.
pub async fn stop(ctx: &Context, force: bool) -> Result<Stopped, CliError> {
    let socket = ctx.socket()?;
    let client = match hld_client::Client::connect_with_timeout(&socket, ANSWER_TIMEOUT).await {
        Ok(client) => client,
        Err(e) if is_not_running(&e) => {
            return Ok(Stopped {
                socket,
                stopped: false,
                pid: None,
                interrupted: Vec::new(),
                signal: None,
                invocation: None,
            })
        }
        Err(e) => return Err(not_running(&hld_client::Address::Socket(socket.clone()), e)),
    };
    let pid = match client.health().await {
        Ok(health) => health.pid,
        Err(e @ (hld_client::Error::Timeout | hld_client::Error::Disconnected)) => {
            return unanswering(socket, force, e).await
        }
        Err(e) => return Err(e.into()),
    };
    let running: Vec<SessionInfo> = client
        .list_sessions()
        .await?
        .into_iter()
        .filter(|s| s.status.is_active())
        .collect();
    if !running.is_empty() && !force {
        name(&running);
        let question = if running.len() == 1 {
            "Stop the daemon and interrupt it?"
        } else {
            "Stop the daemon and interrupt them?"
        };
        if crate::ask::confirm(question) == Some(false) {
            return Err(CliError::failure("the daemon keeps running")
                .kind(Kind::Cancelled)
                .hint(format!(
                    "{} stops it without asking",
                    hlyr_daemon(None, "stop --force")
                )));
        }
    }
    let invocation = pid.and_then(Invocation::of);
    client.shutdown().await?;
    drop(client);
    wait_gone(&socket, pid).await?;
    Ok(Stopped {
        socket,
        stopped: true,
        pid,
        interrupted: running.into_iter().map(|s| s.id).collect(),
        signal: None,
        invocation,
    })
}

/// Stops a daemon that takes connections at `socket` but does not answer (`why`), with
/// `force`: its process, found by the socket's peer credentials and only if it is the user's,
/// gets SIGTERM (and SIGCONT, should it be stopped), then SIGKILL if it has not exited in
/// time. Without `force` nothing is sent: the error names the process and how to end it.
async fn unanswering(
    socket: PathBuf,
    force: bool,
    why: hld_client::Error,
) -> Result<Stopped, CliError> {
    let pid = listener(&socket)?;
    if !force {
        return Err(CliError::from(why).hint(format!(
            "it does not answer; {} ends its process (pid {pid})",
            hlyr_daemon(None, "stop --force")
        )));
    }
    let invocation = Invocation::of(pid);
    let send = |signal| {
        if let Ok(raw) = i32::try_from(pid) {
            let _ = kill(Pid::from_raw(raw), signal);
        }
    };
    send(Signal::SIGTERM);
    send(Signal::SIGCONT);
    let exited = || !process_alive(pid);
    let signal = if within(STOP_TIMEOUT, exited).await {
        Signal::SIGTERM
    } else {
        // Only a process still there: its pid cannot have gone to another.
        send(Signal::SIGKILL);
        if !within(STOP_TIMEOUT, exited).await {
            return Err(CliError::failure(format!(
                "the daemon (pid {pid}) has not exited {}s after SIGKILL",
                STOP_TIMEOUT.as_secs()
            )));
        }
        Signal::SIGKILL
    };
    Ok(Stopped {
        socket,
        stopped: true,
        pid: Some(pid),
        interrupted: Vec::new(),
        signal: Some(signal.as_str()),
        invocation,
    })
}

/// The process listening at `socket`, by the peer credentials of a connection to it; refused
/// unless it is the user's own.
fn listener(socket: &Path) -> Result<u32, CliError> {
    let unknown = |e: &dyn std::fmt::Display| {
        CliError::failure(format!(
            "cannot tell which process listens at {}: {e}",
            socket.display()
        ))
    };
    let conn = UnixStream::connect(socket).map_err(|e| unknown(&e))?;
    let peer = getsockopt(&conn, PeerCredentials).map_err(|e| unknown(&e))?;
    if peer.uid() != geteuid().as_raw() {
        return Err(CliError::failure(format!(
            "the process at {} (pid {}) is another user's (uid {})",
            socket.display(),
            peer.pid(),
            peer.uid()
        )));
    }
    u32::try_from(peer.pid()).map_err(|e| unknown(&e))
}

/// Names, on stderr, the sessions a stop would interrupt.
fn name(running: &[SessionInfo]) {
    let n = running.len();
    let head = format!(
        "{n} session{} running; stopping the daemon interrupts {}:",
        if n == 1 { " is" } else { "s are" },
        if n == 1 { "it" } else { "them" }
    );
    anstream::eprintln!("{}", paint(YELLOW, head));
    for s in running {
        let shown = shown_title(&s.control.title, &s.summary, &s.query);
        anstream::eprintln!("  {}  {shown}", short_id(&s.id));
    }
}

/// Waits until the daemon's process (when its pid is known) has exited and its socket is
/// gone: removing the socket is its last act but one.
async fn wait_gone(socket: &Path, pid: Option<u32>) -> Result<(), CliError> {
    let alive = || pid.is_some_and(process_alive);
    if within(STOP_TIMEOUT, || !alive() && !socket.exists()).await {
        return Ok(());
    }
    let what = match pid {
        Some(pid) if alive() => format!("the daemon (pid {pid}) has not exited"),
        _ => format!("the daemon has not removed {}", socket.display()),
    };
    Err(CliError::failure(format!(
        "{what} {}s after `shutdown`",
        STOP_TIMEOUT.as_secs()
    ))
    .hint(format!(
        "look at its log ({}), or stop its process",
        hlyr_daemon(None, "logs")
    )))
}

/// Whether `done` holds within `timeout`, checked every 20 ms.
async fn within(timeout: Duration, done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while !done() {
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// Whether process `pid` still runs: it exists and cannot yet be reaped by its parent.
fn process_alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    match kill(Pid::from_raw(raw), None) {
        Err(Errno::ESRCH) => false,
        _ => !reapable(pid),
    }
}

/// Whether `/proc` says `pid` has exited and waits only for its parent (false where there is no
/// `/proc`): a zombie whose threads are all gone. The leader of a thread group turns zombie as
/// soon as it exits itself, while its other threads may still be exiting; until they are gone
/// its parent cannot reap it.
fn reapable(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    };
    field("State").is_some_and(|state| state.starts_with('Z')) && field("Threads") == Some("1")
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let stopped = stop(ctx, args.force).await?;
    ctx.out.print(&stopped)?;
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use std::process::{Child, Command, Stdio};

    use super::*;

    /// Kills and reaps its child when dropped, so that a failed assertion leaves none behind.
    struct Reaped(Child);

    impl Drop for Reaped {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    /// Waits until `/proc` shows `pid` as a zombie, whichever of its threads remain.
    fn wait_zombie(pid: u32) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !std::fs::read_to_string(format!("/proc/{pid}/status"))
            .is_ok_and(|status| status.contains("State:\tZ"))
        {
            assert!(Instant::now() < deadline, "{pid} never turned zombie");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn a_leader_that_exited_before_its_threads_is_still_alive() {
        // The main thread exits alone (`pthread_exit`); another sleeps on: the leader is a
        // zombie that its parent cannot reap yet.
        let script = "import ctypes, threading, time\n\
                      threading.Thread(target=time.sleep, args=(3600,)).start()\n\
                      ctypes.CDLL(None).pthread_exit(None)";
        let child = Command::new("python3")
            .args(["-c", script])
            .stdin(Stdio::null())
            .spawn()
            .expect("python3 runs");
        let mut child = Reaped(child);
        let pid = child.0.id();
        wait_zombie(pid);
        assert!(process_alive(pid));
        assert_eq!(child.0.try_wait().unwrap(), None, "not reapable yet");
        drop(child);
        assert!(!process_alive(pid));
    }

    #[test]
    fn a_zombie_with_no_thread_left_is_gone() {
        let mut child = Command::new("true").spawn().expect("true runs");
        let pid = child.id();
        wait_zombie(pid);
        assert!(!process_alive(pid));
        assert!(child.wait().unwrap().success());
    }
}
