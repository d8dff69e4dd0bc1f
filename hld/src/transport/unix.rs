//! The Unix-socket transport: binding with the right permissions, refusing to start beside a
//! live daemon, and serving each accepted connection with the framing its first bytes show:
//! Content-Length headers (`Content-Length:` or `Content-Type:`, in any case) for editors
//! relayed by `hld --stdio`, the announcement of `hld --stdio` handing over an editor's pipes
//! (`pipes.rs`), NDJSON for everything else.

use std::io::ErrorKind;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::{UnixListener, UnixStream};
use tokio::time::Instant;
use tokio_util::codec::{Framed, FramedParts};
use tokio_util::sync::CancellationToken;

use super::content_length::{ContentLengthConn, MAX_PAYLOAD};
use super::ndjson::NdjsonCodec;
use super::pipes;
use crate::daemon::Daemon;
use crate::private_dir;
use crate::rpc::{self, Settings};
use crate::throttle::Throttle;

/// A bound socket: the listener, and the file that is removed when `file` is dropped.
#[derive(Debug)]
pub struct BoundSocket {
    /// The listener.
    pub listener: UnixListener,
    /// The socket file.
    pub file: SocketFile,
}

/// The socket file. Dropping it removes the file, if it is still ours.
#[derive(Debug)]
pub struct SocketFile {
    path: PathBuf,
    inode: (u64, u64),
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        // Only remove the file we created: a later daemon may have replaced it.
        if let Ok(meta) = std::fs::symlink_metadata(&self.path) {
            if (meta.dev(), meta.ino()) == self.inode {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

/// Binds `path`: checks its directory ([`private_dir::ensure`]: created 0700 if missing),
/// replaces a stale socket file of our own, refuses if a live daemon answers or the file is
/// another user's, and makes the socket 0600. Inside a directory only we can change, the
/// path still names our socket when its mode is set.
pub fn bind(path: &Path) -> std::io::Result<BoundSocket> {
    private_dir::ensure(
        path.parent().unwrap_or(Path::new(".")),
        "the socket directory",
    )?;
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        let me = nix::unistd::geteuid().as_raw();
        if meta.uid() != me {
            return Err(std::io::Error::new(
                ErrorKind::PermissionDenied,
                format!(
                    "{} belongs to another user (uid {}, you are uid {me}); remove it or \
                     choose another --socket",
                    path.display(),
                    meta.uid()
                ),
            ));
        }
        match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => {
                return Err(std::io::Error::new(
                    ErrorKind::AddrInUse,
                    format!("daemon already running at {}", path.display()),
                ))
            }
            Err(_) => {
                tracing::info!(socket = %path.display(), "removing stale socket file");
                std::fs::remove_file(path)?;
            }
        }
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    let meta = std::fs::symlink_metadata(path)?;
    Ok(BoundSocket {
        listener,
        file: SocketFile {
            path: path.to_path_buf(),
            inode: (meta.dev(), meta.ino()),
        },
    })
}

/// The room a connection's read and write buffers start with.
const BUFFER: usize = 1024;

/// The log of connections closed before their framing was known.
static UNFRAMED: Throttle = Throttle::new();

/// Serves one accepted connection with the framing its first bytes show ([`framing`]); on
/// NDJSON, `Subscribe` takes the connection over.
pub async fn serve(stream: UnixStream, daemon: Arc<Daemon>, shutdown: CancellationToken) {
    // Buffers sized for a usual request and reply; they grow for larger ones.
    let mut read = BytesMut::with_capacity(BUFFER);
    let mut stream = Socket(stream);
    // The bytes that choose the framing are part of the first message: with Content-Length
    // framing, its read timeout runs from the first of them.
    let mut first_byte = None;
    let framing = loop {
        match framing(&read) {
            Some(framing) => break framing,
            None => {
                let deadline = first_byte.map(|at: Instant| at + daemon.config.frame_timeout);
                let reading = stream.read_buf(&mut read);
                let read_now = match deadline {
                    Some(deadline) => match tokio::time::timeout_at(deadline, reading).await {
                        Ok(read) => read,
                        Err(_) => {
                            if let Some(count) = UNFRAMED.hit() {
                                tracing::warn!(
                                    count,
                                    "a connection did not show its framing in time; closed"
                                );
                            }
                            return;
                        }
                    },
                    None => reading.await,
                };
                match read_now {
                    Ok(0) | Err(_) if read.is_empty() => return,
                    // What came is all there is: NDJSON answers it, whatever it is.
                    Ok(0) | Err(_) => break Framing::Ndjson,
                    Ok(_) => {
                        first_byte.get_or_insert_with(Instant::now);
                    }
                }
            }
        }
    };
    let first_byte = first_byte.unwrap_or_else(Instant::now);
    match framing {
        Framing::Ndjson => {
            let codec =
                NdjsonCodec::new(daemon.config.max_message_size).budget(daemon.budget.clone());
            let settings = Settings::ndjson(&daemon.config);
            let mut parts = FramedParts::new::<rpc::Outgoing>(stream, codec);
            parts.read_buf = read;
            parts.write_buf = BytesMut::with_capacity(BUFFER);
            rpc::serve(Framed::from_parts(parts), daemon, settings, shutdown).await;
        }
        Framing::ContentLength => {
            let settings = Settings::content_length(&daemon.config);
            let conn =
                ContentLengthConn::new(stream, MAX_PAYLOAD, daemon.config.frame_timeout, read)
                    .first_byte_at(first_byte)
                    .budget(daemon.budget.clone());
            rpc::serve(conn, daemon, settings, shutdown).await;
        }
        Framing::Pipes => pipes::serve(stream.0, read, daemon, shutdown).await,
    }
}

/// What a connection speaks, as its first bytes show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Ndjson,
    ContentLength,
    /// `hld --stdio` hands over an editor's pipes.
    Pipes,
}

/// The framing of a connection whose first bytes are `read`: `None` while too few have come
/// to tell.
fn framing(read: &[u8]) -> Option<Framing> {
    match (content_length_framing(read), pipes::announced(read)) {
        (Some(true), _) => Some(Framing::ContentLength),
        (_, Some(true)) => Some(Framing::Pipes),
        (Some(false), Some(false)) => Some(Framing::Ndjson),
        _ => None,
    }
}

/// The header names a Content-Length-framed connection may start with.
const HEADERS: [&[u8]; 2] = [b"content-length:", b"content-type:"];

/// Whether a connection whose first bytes are `read` speaks Content-Length framing: it starts
/// with one of [`HEADERS`] (in any case). `None` while `read` is too short to tell. Anything
/// else, garbage included, is NDJSON, which answers every line.
fn content_length_framing(read: &[u8]) -> Option<bool> {
    let mut undecided = false;
    for header in HEADERS {
        let n = read.len().min(header.len());
        if read[..n].eq_ignore_ascii_case(&header[..n]) {
            if n == header.len() {
                return Some(true);
            }
            undecided = true;
        }
    }
    (!undecided).then_some(false)
}

/// An accepted socket, written with `send` rather than `writev`. The framed writer hands over
/// its one contiguous buffer, and the kernel's `writev` path (the iovec copied in and checked,
/// the file position locked) costs more per call than `send` does: on a busy subscriber
/// socket that is paid once per event.
struct Socket(UnixStream);

impl AsyncRead for Socket {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::{content_length_framing, framing, Framing};

    #[test]
    fn the_first_bytes_choose_the_framing() {
        assert_eq!(
            framing(b"Content-Length: 2\r\n"),
            Some(Framing::ContentLength)
        );
        assert_eq!(framing(b"Hld-Stdio-Fds: 1\r\n"), Some(Framing::Pipes));
        assert_eq!(framing(b"Hld-Stdio"), None);
        assert_eq!(framing(b"{\"jsonrpc\""), Some(Framing::Ndjson));
        assert_eq!(framing(b"Hld-Stdio-Fds: 9\r\n"), Some(Framing::Ndjson));
    }

    #[test]
    fn only_a_content_header_selects_content_length_framing() {
        assert_eq!(content_length_framing(b"Content-Length: 2\r\n"), Some(true));
        assert_eq!(content_length_framing(b"content-type: a"), Some(true));
        assert_eq!(content_length_framing(b"Content-Le"), None);
        assert_eq!(content_length_framing(b""), None);
        assert_eq!(content_length_framing(b"{\"jsonrpc\""), Some(false));
        assert_eq!(content_length_framing(b"not json at all\n"), Some(false));
        assert_eq!(content_length_framing(b"Contents: x"), Some(false));
    }
}
