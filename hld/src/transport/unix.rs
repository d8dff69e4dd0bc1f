//! The Unix-socket transport: binding with the right permissions, refusing to start beside a
//! live daemon, and the NDJSON connection loop.

use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio::net::{UnixListener, UnixStream};
use tokio_util::codec::FramedRead;

use super::ndjson::NdjsonCodec;
use super::Frame;
use crate::daemon::Daemon;
use crate::rpc::{self, Outcome};

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

/// Binds `path`: creates missing parent directories 0700, replaces a stale socket file,
/// refuses if a live daemon answers, and makes the socket 0600.
pub fn bind(path: &Path) -> std::io::Result<BoundSocket> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
    }
    if std::fs::symlink_metadata(path).is_ok() {
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

/// The read buffer a connection starts with: a request line is usually far shorter, and a
/// buffer this small comes from the allocator's per-thread cache (the codec grows it for a
/// longer line).
const FIRST_READ_CAPACITY: usize = 1024;

/// Serves one connection: requests in order, exactly one reply line each, until the client
/// closes, the daemon shuts down, or the connection becomes a subscription.
///
/// The stream is not split (splitting shares it through an `Arc`, and the write half shuts
/// the socket down when dropped): a connection is closed by dropping it, one `close`.
pub async fn serve_connection(stream: UnixStream, daemon: Arc<Daemon>) {
    let mut frames = FramedRead::with_capacity(
        stream,
        NdjsonCodec::new(daemon.config.max_message_size),
        FIRST_READ_CAPACITY,
    );
    // Replies not yet written: those of requests pipelined in one read share one write.
    let mut out = Vec::new();
    // Once the daemon is closing, the next read ends the loop (a request being handled
    // finishes first).
    let closing = daemon.closing.watch();
    loop {
        let frame = closing
            .unless_closed(|cx| frames.poll_next_unpin(cx))
            .await
            .flatten();
        match frame {
            None | Some(Err(_)) => break,
            Some(Ok(Frame::Oversize)) => out.extend_from_slice(&rpc::oversize_line()),
            Some(Ok(Frame::Message(bytes))) => match rpc::handle_message(&daemon, &bytes).await {
                Outcome::Reply(line) if out.is_empty() => out = line,
                Outcome::Reply(line) => out.extend_from_slice(&line),
                Outcome::Silent => {}
                Outcome::Subscribe { id, params } => {
                    // Replies to requests pipelined before `Subscribe` go out first.
                    if frames.get_mut().write_all(&out).await.is_err() {
                        break;
                    }
                    let (read, write) = frames.into_inner().into_split();
                    // Boxed: a subscription's state is large, and most connections never
                    // subscribe.
                    Box::pin(crate::subscription::serve(daemon, read, write, id, params)).await;
                    return;
                }
            },
        }
        if !out.is_empty() && !frames.read_buffer().contains(&b'\n') {
            if frames.get_mut().write_all(&out).await.is_err() {
                break;
            }
            out.clear();
        }
    }
    if !out.is_empty() {
        let _ = frames.get_mut().write_all(&out).await;
    }
}
