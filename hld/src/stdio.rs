//! `hld --stdio`: relays an editor's stdin/stdout to the daemon's socket, after one header
//! line that selects Content-Length framing. The relay parses nothing.

use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::fd::AsFd;
use std::path::Path;
use std::time::Duration;

use tokio::net::UnixStream;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::mpsc;

/// How long replies in hand may take after a stop (spec/004: the editor's child exits in 2 s).
const GRACE: Duration = Duration::from_millis(1500);

/// What the relay sends before the editor's first byte.
const PREAMBLE: &[u8] = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n";

#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// stdin closed, a signal came, or the daemon closed the connection after `shutdown`.
    Cleanly,
    DaemonGone,
}

/// Which side of the relay ended (stopped reading, or could not be written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopped {
    Editor,
    Daemon,
}

/// The signals that end `hld` and `hld --stdio`: SIGINT, SIGTERM, SIGHUP.
pub struct Signals {
    int: Signal,
    term: Signal,
    hup: Signal,
}

impl Signals {
    pub fn new() -> Result<Signals, String> {
        let listen = |kind| signal(kind).map_err(|e| format!("cannot listen for signals: {e}"));
        Ok(Signals {
            int: listen(SignalKind::interrupt())?,
            term: listen(SignalKind::terminate())?,
            hup: listen(SignalKind::hangup())?,
        })
    }

    pub async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.int.recv() => "SIGINT",
            _ = self.term.recv() => "SIGTERM",
            _ = self.hup.recv() => "SIGHUP",
        }
    }
}

/// Relays the editor's stdin/stdout to the daemon at `socket`, started first if none answers.
pub async fn run(socket: &Path) -> Result<Ended, String> {
    let mut signals = Signals::new()?;
    let stream = connect(socket).await?;
    relay(stream, socket, &mut signals).await
}

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

/// Relays over `stream` on two plain threads, one each way; the runtime awaits either or a signal.
async fn relay(stream: UnixStream, socket: &Path, signals: &mut Signals) -> Result<Ended, String> {
    let cannot = |e: std::io::Error| format!("cannot use {}: {e}", socket.display());
    let mut to_daemon = stream.into_std().map_err(cannot)?;
    to_daemon.set_nonblocking(false).map_err(cannot)?;
    tracing::info!("relaying stdio to the daemon");
    // The daemon serves Content-Length framing to a connection that starts with a content
    // header; this one joins the editor's first header section.
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
    // stdout unbuffered, so each read from the daemon leaves in one write (no delayed-ACK wait).
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

/// Copies each read of `from` to `to` in one flushed write; `Err` once `to` fails, else `Ok`.
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
