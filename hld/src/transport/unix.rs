//! The Unix-socket transport: binding safely, refusing to start beside a live daemon, and
//! serving each connection with the framing its first bytes show (Content-Length or NDJSON).

use std::io::ErrorKind;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::BytesMut;
use tokio::io::AsyncReadExt;
use tokio::net::{UnixListener, UnixStream};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::content_length::{ContentLengthConn, MAX_PAYLOAD};
use super::ndjson::NdjsonConn;
use super::{accept_until, Service};
use crate::budget::Budget;
use crate::private_dir;
use crate::rpc;
use crate::throttle::Throttle;

/// A bound socket: the listener, and the file that is removed when `file` is dropped.
#[derive(Debug)]
pub struct BoundSocket {
    pub listener: UnixListener,
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

/// Binds `path` 0600 in a checked private directory ([`private_dir::ensure`]), replacing a stale
/// socket of ours; refuses if a live daemon answers or the file is another user's.
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

static UNFRAMED: Throttle = Throttle::new();

/// Accepts connections until `shutdown`, each served as a task of `connections`.
pub async fn run<S>(
    listener: &UnixListener,
    service: &Arc<Service<S>>,
    connections: &TaskTracker,
    shutdown: &CancellationToken,
    closing: &CancellationToken,
) where
    S: AsRef<Budget> + Send + Sync + 'static,
{
    accept_until(
        shutdown,
        connections,
        || listener.accept(),
        |(stream, _)| serve(stream, Arc::clone(service), closing.clone()),
    )
    .await;
}

/// Serves one accepted connection with the framing its first bytes show ([`framing`]).
async fn serve<S>(mut stream: UnixStream, service: Arc<Service<S>>, shutdown: CancellationToken)
where
    S: AsRef<Budget> + Send + Sync + 'static,
{
    let mut read = BytesMut::with_capacity(1024);
    // The bytes that choose the framing start the first message: its timeout runs from them.
    let mut first_byte = None;
    let framing = loop {
        if let Some(framing) = framing(&read) {
            break framing;
        }
        let reading = stream.read_buf(&mut read);
        let read_now = match first_byte {
            Some(at) => match tokio::time::timeout_at(at + service.frame_timeout, reading).await {
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
    };
    let state = Arc::clone(&service.state);
    match framing {
        Framing::Ndjson => {
            let conn = NdjsonConn::new(stream, read, service.max_message, service.heartbeat)
                .budget(service.budget());
            rpc::serve(conn, &service.router, state, shutdown).await;
        }
        Framing::ContentLength => {
            let conn = ContentLengthConn::new(stream, MAX_PAYLOAD, service.frame_timeout, read)
                .first_byte_at(first_byte.unwrap_or_else(Instant::now))
                .budget(service.budget());
            rpc::serve(conn, &service.guest, state, shutdown).await;
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Ndjson,
    ContentLength,
}

/// Content-Length if `read` starts with one of [`HEADERS`], else NDJSON; `None` until it can tell.
fn framing(read: &[u8]) -> Option<Framing> {
    let mut undecided = false;
    for header in HEADERS {
        let n = read.len().min(header.len());
        if read[..n].eq_ignore_ascii_case(&header[..n]) {
            if n == header.len() {
                return Some(Framing::ContentLength);
            }
            undecided = true;
        }
    }
    (!undecided).then_some(Framing::Ndjson)
}

/// The header names a Content-Length-framed connection may start with.
const HEADERS: [&[u8]; 2] = [b"content-length:", b"content-type:"];

#[cfg(test)]
mod tests {
    use super::{framing, Framing};

    #[test]
    fn only_a_content_header_selects_content_length_framing() {
        let cases: [(&[u8], Option<Framing>); 8] = [
            (b"Content-Length: 2\r\n", Some(Framing::ContentLength)),
            (b"content-type: a", Some(Framing::ContentLength)),
            (b"Content-Le", None),
            (b"", None),
            (b"{\"jsonrpc\"", Some(Framing::Ndjson)),
            (b"not json at all\n", Some(Framing::Ndjson)),
            (b"Contents: x", Some(Framing::Ndjson)),
            (b"Hld-Stdio-Fds: 1\r\n", Some(Framing::Ndjson)),
        ];
        for (read, expected) in cases {
            assert_eq!(framing(read), expected, "{}", String::from_utf8_lossy(read));
        }
    }
}
