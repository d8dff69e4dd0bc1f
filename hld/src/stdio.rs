//! `hld --stdio`: an editor's JSON-RPC connection to the daemon, one of the daemon's
//! connections, so a session launched from the editor is seen by every other front end.
//!
//! When stdin and stdout are pipes or Unix stream sockets, as an editor starts its child, they
//! are handed to the daemon (`transport::pipes`), which serves them itself: this process only
//! holds the control connection and exits when the serving ends. Otherwise (a terminal, a
//! file, a network socket, or a daemon that does not take them) it relays bytes between
//! stdin/stdout and the daemon's socket, after one header line that tells the daemon the
//! framing; the relay parses nothing. Either way stdout carries only what the daemon sent,
//! and every diagnostic goes to stderr. One daemon serves every front end: serving stdio in
//! a process of its own would need a second store and bus.

use std::io::{IoSlice, Read, Write};
use std::mem::MaybeUninit;
use std::net::Shutdown;
use std::os::fd::AsFd;
use std::path::Path;
use std::time::Duration;

use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Interest};
use tokio::net::UnixStream;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::mpsc;

use crate::transport::pipes::{self, Why, GRACE};

/// How long the daemon has to answer the offer of the pipes.
const OFFER_TIMEOUT: Duration = Duration::from_secs(5);

/// What the relay sends before the editor's first byte.
const PREAMBLE: &[u8] = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n";

/// How the connection ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// stdin closed, a signal came, or the daemon closed the connection after `shutdown`.
    Cleanly,
    /// The daemon went away.
    DaemonGone,
}

/// Which side of the relay ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopped {
    /// The editor's: stdin ended, or stdout could not be written.
    Editor,
    /// The daemon's: its connection ended, or could not be written.
    Daemon,
}

/// The signals that end `hld --stdio`.
struct Signals {
    int: Signal,
    term: Signal,
    hup: Signal,
}

impl Signals {
    fn new() -> Result<Signals, String> {
        let listen = |kind| signal(kind).map_err(|e| format!("cannot listen for signals: {e}"));
        Ok(Signals {
            int: listen(SignalKind::interrupt())?,
            term: listen(SignalKind::terminate())?,
            hup: listen(SignalKind::hangup())?,
        })
    }

    /// The name of the next signal.
    async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.int.recv() => "SIGINT",
            _ = self.term.recv() => "SIGTERM",
            _ = self.hup.recv() => "SIGHUP",
        }
    }
}

/// Connects the editor's stdin/stdout to the daemon at `socket`, starting `hld` (this binary)
/// there first if none answers: hands them over when they are pipes, else relays them.
pub async fn run(socket: &Path) -> Result<Ended, String> {
    let mut signals = Signals::new()?;
    let mut stream = connect(socket).await?;
    if stdio_are_pipes() {
        if let Some(ended) = hand_over(stream, &mut signals).await? {
            return Ok(ended);
        }
        stream = connect(socket).await?;
    }
    relay(stream, socket, &mut signals).await
}

/// A connection to the daemon at `socket`, started if none answers.
async fn connect(socket: &Path) -> Result<UnixStream, String> {
    hld_client::trust::check_socket(socket).map_err(|e| e.to_string())?;
    if let Ok(stream) = UnixStream::connect(socket).await {
        return Ok(stream);
    }
    let hld = std::env::current_exe().map_err(|e| format!("cannot find hld: {e}"))?;
    tracing::info!(socket = %socket.display(), "no daemon answers; starting one");
    hld_client::autostart::start(&hld, socket)
        .await
        .map_err(|e| e.to_string())?;
    UnixStream::connect(socket)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", socket.display()))
}

/// Whether stdin and stdout are both of a kind the daemon takes ([`pipes::kind`]).
fn stdio_are_pipes() -> bool {
    pipes::kind(std::io::stdin()).is_some() && pipes::kind(std::io::stdout()).is_some()
}

/// Hands stdin and stdout to the daemon on `stream` and waits until it has served them, or a
/// signal comes. `None` if the daemon did not take them: the caller relays instead.
async fn hand_over(stream: UnixStream, signals: &mut Signals) -> Result<Option<Ended>, String> {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let cannot = |e: std::io::Error| format!("cannot offer stdio to the daemon: {e}");
    write.write_all(pipes::ANNOUNCE).await.map_err(cannot)?;
    let answer = tokio::time::timeout(OFFER_TIMEOUT, lines.next_line()).await;
    if !matches!(&answer, Ok(Ok(Some(line))) if line == pipes::SEND) {
        tracing::info!("the daemon does not take pipes; relaying");
        return Ok(None);
    }
    send_stdio(write.as_ref()).await.map_err(cannot)?;
    match lines.next_line().await {
        Ok(Some(line)) if line == pipes::TAKEN => {}
        Ok(Some(line)) => {
            let reason = line.strip_prefix(pipes::REFUSED).unwrap_or(&line).trim();
            tracing::info!(%reason, "the daemon refused stdio; relaying");
            return Ok(None);
        }
        Ok(None) | Err(_) => return Ok(Some(Ended::DaemonGone)),
    }
    tracing::info!("the daemon serves stdin and stdout");
    tokio::select! {
        line = lines.next_line() => {
            let why = match line {
                Ok(Some(line)) => line
                    .strip_prefix(pipes::ENDED)
                    .and_then(|why| Why::parse(why.trim())),
                Ok(None) | Err(_) => None,
            };
            Ok(Some(match why {
                Some(Why::StdinClosed) => {
                    tracing::info!("stdin closed, shutting down gracefully");
                    Ended::Cleanly
                }
                Some(Why::StdoutClosed) => {
                    tracing::info!("stdout closed, shutting down");
                    Ended::Cleanly
                }
                Some(Why::Shutdown) => {
                    tracing::info!("the daemon closed this connection (shutdown)");
                    Ended::Cleanly
                }
                Some(Why::Stopped) => Ended::Cleanly,
                Some(Why::DaemonStopping) | None => Ended::DaemonGone,
            }))
        }
        name = signals.recv() => {
            tracing::info!("received {name}, shutting down gracefully");
            // The end of this connection asks the daemon to stop; it answers what it read,
            // closes the pipes, then says so.
            let _ = write.shutdown().await;
            let _ = tokio::time::timeout(GRACE, lines.next_line()).await;
            Ok(Some(Ended::Cleanly))
        }
    }
}

/// Sends this process's stdin and stdout on `control`, as `SCM_RIGHTS` with one byte.
async fn send_stdio(control: &UnixStream) -> std::io::Result<()> {
    let (stdin, stdout) = (std::io::stdin(), std::io::stdout());
    let fds = [stdin.as_fd(), stdout.as_fd()];
    loop {
        control.writable().await?;
        let sent = control.try_io(Interest::WRITABLE, || {
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
            let mut ancillary = SendAncillaryBuffer::new(&mut space);
            ancillary.push(SendAncillaryMessage::ScmRights(&fds));
            Ok(rustix::net::sendmsg(
                control,
                &[IoSlice::new(&[0])],
                &mut ancillary,
                SendFlags::empty(),
            )?)
        });
        match sent {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
            Ok(_) => return Ok(()),
        }
    }
}

/// Relays stdin/stdout to the daemon on `stream`.
///
/// The bytes go through two plain threads, one each way, blocked in `read`: a message costs
/// one read and one write per hop, with no hand-over to an async runtime's blocking pool
/// (which is how tokio serves stdin and stdout). The runtime only waits for either way to
/// stop or for a signal.
async fn relay(stream: UnixStream, socket: &Path, signals: &mut Signals) -> Result<Ended, String> {
    let cannot = |e: std::io::Error| format!("cannot use {}: {e}", socket.display());
    let mut to_daemon = stream.into_std().map_err(cannot)?;
    to_daemon.set_nonblocking(false).map_err(cannot)?;
    tracing::info!(socket = %socket.display(), "relaying stdio to the daemon");
    // The daemon serves Content-Length framing to a connection that starts with a content
    // header. This one joins the editor's first header section, which may start with any
    // header of its own.
    to_daemon.write_all(PREAMBLE).map_err(cannot)?;
    let from_daemon = to_daemon.try_clone().map_err(cannot)?;
    let writer = to_daemon.try_clone().map_err(cannot)?;

    let (stopped, mut stops) = mpsc::unbounded_channel();
    let up = stopped.clone();
    std::thread::spawn(move || {
        let _ = up.send(match pump(std::io::stdin().lock(), writer) {
            Ok(()) => Stopped::Editor,
            Err(()) => Stopped::Daemon,
        });
    });
    // stdout unbuffered (its own descriptor, not the line-buffered `Stdout`), so that each
    // read from the daemon, whole frames, leaves in one write: on a TCP socket the second
    // half of a frame cut in two waits for the peer's delayed ACK (Nagle), some 40 ms.
    let stdout = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| format!("cannot use stdout: {e}"))?;
    std::thread::spawn(move || {
        let _ = stopped.send(match pump(from_daemon, std::fs::File::from(stdout)) {
            Ok(()) => Stopped::Daemon,
            Err(()) => Stopped::Editor,
        });
    });

    let why = tokio::select! {
        first = stops.recv() => match first {
            Some(Stopped::Editor) => "stdin closed".to_owned(),
            _ => {
                return Ok(if hld_client::autostart::healthy(socket).await {
                    tracing::info!("the daemon closed this connection (shutdown)");
                    Ended::Cleanly
                } else {
                    Ended::DaemonGone
                });
            }
        },
        name = signals.recv() => format!("received {name}"),
    };
    tracing::info!("{why}, shutting down gracefully");
    // The daemon answers what it read, then sees the end and closes its side.
    let _ = to_daemon.shutdown(Shutdown::Write);
    let _ = tokio::time::timeout(GRACE, async {
        while let Some(way) = stops.recv().await {
            if way == Stopped::Daemon {
                return;
            }
        }
    })
    .await;
    Ok(Ended::Cleanly)
}

/// Copies `from` to `to`, each read in one write, flushed, so that a reply is never held
/// back: `Ok` once `from` ends (or fails), `Err` once `to` fails.
fn pump(mut from: impl Read, mut to: impl Write) -> Result<(), ()> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Ok(()),
        };
        if to.write_all(&buf[..n]).is_err() || to.flush().is_err() {
            return Err(());
        }
    }
}
