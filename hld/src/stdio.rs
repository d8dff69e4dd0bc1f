//! `hld --stdio`: an editor's JSON-RPC connection, relayed byte for byte between stdin/stdout
//! and the daemon's socket, after one header line that tells the daemon the framing. The
//! daemon then serves the Content-Length framing like any connection, so a session launched from the editor is one of
//! the daemon's sessions, seen by every other front end. The relay parses nothing; stdout
//! carries only what the daemon sent, and every diagnostic goes to stderr.

use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::signal::unix::{signal, SignalKind};

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

/// Relays stdin/stdout to the daemon at `socket`, starting `hld` (this binary) there first if
/// none answers.
pub async fn relay(socket: &Path) -> Result<Ended, String> {
    let stream = match UnixStream::connect(socket).await {
        Ok(stream) => stream,
        Err(_) => {
            let hld = std::env::current_exe().map_err(|e| format!("cannot find hld: {e}"))?;
            tracing::info!(socket = %socket.display(), "no daemon answers; starting one");
            hld_client::autostart::start(&hld, socket)
                .await
                .map_err(|e| e.to_string())?;
            UnixStream::connect(socket)
                .await
                .map_err(|e| format!("cannot connect to {}: {e}", socket.display()))?
        }
    };
    tracing::info!(socket = %socket.display(), "relaying stdio to the daemon");
    let (from_daemon, mut to_daemon) = stream.into_split();
    // The daemon serves Content-Length framing to a connection that starts with a content
    // header. This one joins the editor's first header section, which may start with any
    // header of its own.
    to_daemon
        .write_all(PREAMBLE)
        .await
        .map_err(|e| format!("cannot write to {}: {e}", socket.display()))?;
    let mut down = Box::pin(pump(from_daemon, tokio::io::stdout()));
    let (mut int, mut term, mut hup) = (
        signal(SignalKind::interrupt()).map_err(|e| e.to_string())?,
        signal(SignalKind::terminate()).map_err(|e| e.to_string())?,
        signal(SignalKind::hangup()).map_err(|e| e.to_string())?,
    );
    let up = pump(tokio::io::stdin(), &mut to_daemon);
    let name = tokio::select! {
        _ = up => {
            tracing::info!("stdin closed, shutting down gracefully");
            // The daemon answers what it read, then sees the end and closes.
            let _ = to_daemon.shutdown().await;
            let _ = tokio::time::timeout(GRACE, &mut down).await;
            return Ok(Ended::Cleanly);
        }
        _ = &mut down => {
            return Ok(if hld_client::autostart::healthy(socket).await {
                tracing::info!("the daemon closed this connection (shutdown)");
                Ended::Cleanly
            } else {
                Ended::DaemonGone
            });
        }
        _ = int.recv() => "SIGINT",
        _ = term.recv() => "SIGTERM",
        _ = hup.recv() => "SIGHUP",
    };
    tracing::info!(signal = name, "received {name}, shutting down gracefully");
    let _ = to_daemon.shutdown().await;
    let _ = tokio::time::timeout(GRACE, &mut down).await;
    Ok(Ended::Cleanly)
}

/// Copies `from` to `to` until `from` ends, flushing after each read so that a reply is never
/// held back.
async fn pump(mut from: impl AsyncRead + Unpin, mut to: impl AsyncWrite + Unpin) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if to.write_all(&buf[..n]).await.is_err() || to.flush().await.is_err() {
            return;
        }
    }
}
