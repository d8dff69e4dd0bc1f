//! `hld --stdio`: an editor's JSON-RPC connection, relayed byte for byte between stdin/stdout
//! and the daemon's socket, after one header line that tells the daemon the framing. The
//! daemon then serves the Content-Length framing like any connection, so a session launched from the editor is one of
//! the daemon's sessions, seen by every other front end. The relay parses nothing; stdout
//! carries only what the daemon sent, and every diagnostic goes to stderr.

use std::io::{Read, Write};
use std::net::Shutdown;
use std::path::Path;
use std::time::Duration;

use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

/// How long the daemon gets to answer what it already read once stdin closes or a signal
/// arrives (spec/004: exit within 2 s).
const GRACE: Duration = Duration::from_millis(1500);

/// What the relay sends before the editor's first byte.
const PREAMBLE: &[u8] = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n";

/// How the relay ended.
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

/// Relays stdin/stdout to the daemon at `socket`, starting `hld` (this binary) there first if
/// none answers.
///
/// The bytes go through two plain threads, one each way, blocked in `read`: a message costs
/// one read and one write per hop, with no hand-over to an async runtime's blocking pool
/// (which is how tokio serves stdin and stdout). The runtime only connects, and waits for
/// either way to stop or for a signal.
pub async fn relay(socket: &Path) -> Result<Ended, String> {
    let stream = match tokio::net::UnixStream::connect(socket).await {
        Ok(stream) => stream,
        Err(_) => {
            let hld = std::env::current_exe().map_err(|e| format!("cannot find hld: {e}"))?;
            tracing::info!(socket = %socket.display(), "no daemon answers; starting one");
            hld_client::autostart::start(&hld, socket)
                .await
                .map_err(|e| e.to_string())?;
            tokio::net::UnixStream::connect(socket)
                .await
                .map_err(|e| format!("cannot connect to {}: {e}", socket.display()))?
        }
    };
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
    std::thread::spawn(move || {
        let _ = stopped.send(match pump(from_daemon, std::io::stdout().lock()) {
            Ok(()) => Stopped::Daemon,
            Err(()) => Stopped::Editor,
        });
    });

    let (mut int, mut term, mut hup) = (
        signal(SignalKind::interrupt()).map_err(|e| e.to_string())?,
        signal(SignalKind::terminate()).map_err(|e| e.to_string())?,
        signal(SignalKind::hangup()).map_err(|e| e.to_string())?,
    );
    let why = tokio::select! {
        first = stops.recv() => match first {
            Some(Stopped::Editor) => "stdin closed",
            _ => {
                return Ok(if hld_client::autostart::healthy(socket).await {
                    tracing::info!("the daemon closed this connection (shutdown)");
                    Ended::Cleanly
                } else {
                    Ended::DaemonGone
                });
            }
        },
        _ = int.recv() => "received SIGINT",
        _ = term.recv() => "received SIGTERM",
        _ = hup.recv() => "received SIGHUP",
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

/// Copies `from` to `to`, flushing after each read so that a reply is never held back: `Ok`
/// once `from` ends (or fails), `Err` once `to` fails.
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
