//! The Unix-socket transport: binding with the right permissions, refusing to start beside a
//! live daemon, and the NDJSON connection loop.

use std::io::{self, ErrorKind, IoSlice, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener as StdUnixListener, UnixStream as StdUnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::BytesMut;
use futures::StreamExt;
use hld_client::protocol::SubscribeParams;
use nix::sys::socket::{self, MsgFlags};
use tokio::io::unix::AsyncFd;
use tokio::io::AsyncWriteExt;
use tokio::io::Interest;
use tokio::net::UnixStream;
use tokio_util::codec::{Decoder, FramedRead};

use super::ndjson::NdjsonCodec;
use super::Frame;
use crate::bus::Sink;
use crate::daemon::Daemon;
use crate::rpc::{self, Outcome};

/// A bound socket: the listener, and the file that is removed when `file` is dropped.
#[derive(Debug)]
pub struct BoundSocket {
    /// The listener (non-blocking, registered with the runtime).
    pub listener: AsyncFd<StdUnixListener>,
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
    let listener = StdUnixListener::bind(path)?;
    listener.set_nonblocking(true)?;
    let listener = register_owned(listener, Interest::READABLE)?;
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

/// Registers a descriptor with the runtime's poller for `interest`. Used for the listener
/// (tokio's own `UnixListener` registers every socket it accepts, which [`serve_connection`]
/// avoids for a short connection) and for subscribers' sockets (see
/// [`SubscriberSocket`]).
#[allow(unsafe_code)]
fn register_owned<T>(inner: T, interest: Interest) -> io::Result<AsyncFd<T>>
where
    T: AsRawFd + Into<OwnedFd>,
{
    // SAFETY: `T` owns its descriptor (it converts into an `OwnedFd`): it stays open, and
    // `as_raw_fd` returns the same one, until `inner` is dropped, which the `AsyncFd` does
    // after deregistering it.
    unsafe { AsyncFd::register_with_interest(inner, interest) }.map_err(io::Error::from)
}

/// Waits for the next connection. The socket comes back as accepted (blocking mode, not yet
/// registered with the runtime): [`serve_connection`] decides when it needs registering.
pub fn poll_accept(
    listener: &AsyncFd<StdUnixListener>,
    cx: &mut Context<'_>,
) -> Poll<io::Result<StdUnixStream>> {
    loop {
        let mut ready = ready!(listener.poll_read_ready(cx))?;
        if let Ok(accepted) = ready.try_io(|l| l.get_ref().accept()) {
            return Poll::Ready(accepted.map(|(stream, _)| stream));
        }
    }
}

/// Serves one connection: requests in order, exactly one reply line each, until the client
/// closes, the daemon shuts down, or the connection becomes a subscription.
///
/// A client that connects for one request (the CLI) has usually sent it by the time its
/// connection is accepted, and closes as soon as it has the reply. So a connection is first
/// served without registering it with the runtime's poller, by non-blocking `recv`s and
/// `send`s: as long as each read finds whole requests and each reply goes out whole, and
/// when the client closes meanwhile, the connection costs neither a registration nor a
/// deregistration (two `epoll_ctl`s) nor a poller wake-up. The first time there is nothing
/// (or only part of a line) to read, or a reply does not fit in the socket, the connection is
/// registered and served as usual, with what was read and not yet written carried over.
///
/// The stream is not split (splitting shares it through an `Arc`, and the write half shuts
/// the socket down when dropped): a connection is closed by dropping it, one `close`.
pub async fn serve_connection(stream: StdUnixStream, daemon: Arc<Daemon>) {
    let mut codec = NdjsonCodec::new(daemon.config.max_message_size);
    let mut read = BytesMut::new();
    // Replies not yet written: those of requests pipelined in one read share one write.
    let mut out = Vec::new();
    // Once the daemon is closing, the next read ends the loop (a request being handled
    // finishes first).
    let closing = daemon.closing.watch();
    loop {
        let received = closing
            .unless_closed(|_| Poll::Ready(try_recv(&stream, &mut read)))
            .await;
        match received {
            None | Some(Ok(0)) => return,
            Some(Ok(_)) => {}
            Some(Err(e)) if e.kind() == ErrorKind::WouldBlock => break,
            Some(Err(_)) => return,
        }
        let mut answered = false;
        while let Ok(Some(frame)) = codec.decode(&mut read) {
            answered = true;
            if let Some((id, params)) = answer(&daemon, frame, &mut out).await {
                subscribe(stream, &out, daemon, id, params).await;
                return;
            }
        }
        if !out.is_empty() {
            match try_send(&stream, &out) {
                Ok(sent) => drop(out.drain(..sent)),
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(_) => return,
            }
        }
        if !answered || !out.is_empty() {
            break;
        }
        // A client that keeps sending is served here as long as it does: take a unit of the
        // task's budget, as a registered socket's read would, so that other tasks get a turn.
        tokio::task::coop::consume_budget().await;
    }
    let Ok(stream) = register(stream) else {
        return;
    };
    let mut frames = FramedRead::with_capacity(stream, codec, FIRST_READ_CAPACITY);
    *frames.read_buffer_mut() = read;
    if !out.is_empty() {
        if frames.get_mut().write_all(&out).await.is_err() {
            return;
        }
        out.clear();
    }
    loop {
        let frame = closing
            .unless_closed(|cx| frames.poll_next_unpin(cx))
            .await
            .flatten();
        let Some(Ok(frame)) = frame else {
            break;
        };
        if let Some((id, params)) = answer(&daemon, frame, &mut out).await {
            if let Ok(stream) = frames.into_inner().into_std() {
                subscribe(stream, &out, daemon, id, params).await;
            }
            return;
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

/// Handles one frame, appending its reply (if any) to `out`; a `Subscribe` request is
/// returned instead, for the caller to hand the connection over.
async fn answer(
    daemon: &Arc<Daemon>,
    frame: Frame,
    out: &mut Vec<u8>,
) -> Option<(String, SubscribeParams)> {
    match frame {
        Frame::Oversize => out.extend_from_slice(&rpc::oversize_line()),
        Frame::Message(bytes) => {
            // The reply goes into the buffer of those before it once they are written.
            let buf = if out.is_empty() {
                std::mem::take(out)
            } else {
                Vec::new()
            };
            match rpc::handle_message(daemon, &bytes, buf).await {
                Outcome::Reply(line) if out.is_empty() => *out = line,
                Outcome::Reply(line) => out.extend_from_slice(&line),
                Outcome::Silent => {}
                Outcome::Subscribe { id, params } => return Some((id, params)),
            }
        }
    }
    None
}

/// Hands the connection (not registered with the runtime) to the subscription loop, after
/// the replies to requests pipelined before `Subscribe`.
async fn subscribe(
    stream: StdUnixStream,
    out: &[u8],
    daemon: Arc<Daemon>,
    id: String,
    params: SubscribeParams,
) {
    let Ok(connection) = SubscriberSocket::new(stream) else {
        return;
    };
    if connection.write_all(out).await.is_err() {
        return;
    }
    // Boxed: a subscription's state is large, and most connections never subscribe.
    Box::pin(crate::subscription::serve(daemon, connection, id, params)).await;
}

/// A subscriber's socket: non-blocking, registered with the runtime's poller for
/// reading only. Registered for writing as well, a socket is reported writable again after
/// every read its client makes: one poller event per line delivered, a thousand per event
/// published to a thousand subscribers. Here the socket is written without waiting ([`Sink`])
/// and, with its large buffer, is rarely full; when it is, a second descriptor of it is
/// registered for writing until it has room. Dropping it closes the socket.
pub struct SubscriberSocket {
    socket: AsyncFd<StdUnixStream>,
}

impl AsFd for SubscriberSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.socket.get_ref().as_fd()
    }
}

impl SubscriberSocket {
    /// Registers an accepted socket (in either mode) for reading.
    pub fn new(stream: StdUnixStream) -> io::Result<Self> {
        stream.set_nonblocking(true)?;
        Ok(SubscriberSocket {
            socket: register_owned(stream, Interest::READABLE)?,
        })
    }

    /// Reads what the client sent; `Ok(0)` once it has closed.
    pub(crate) async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.socket
            .async_io(Interest::READABLE, |mut s| s.read(buf))
            .await
    }

    /// Writes all of `buf`, waiting whenever the socket is full.
    pub async fn write_all(&self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match try_send(self.socket.get_ref(), buf) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(n) => buf = &buf[n..],
                Err(e) if e.kind() == ErrorKind::WouldBlock => self.writable().await?,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Waits until the socket has room, through a duplicate of its descriptor registered
    /// for writing (and deregistered and closed when the wait ends). Registering reports a
    /// socket that already has room at once, so room made since the failed write is seen.
    async fn writable(&self) -> io::Result<()> {
        let duplicate = self.socket.get_ref().as_fd().try_clone_to_owned()?;
        let watch = register_owned(duplicate, Interest::WRITABLE)?;
        watch.writable().await.map(drop)
    }
}

impl Sink for SubscriberSocket {
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match bufs {
            // One line: `send` is cheaper than `writev`.
            [one] => try_send(self.socket.get_ref(), one),
            _ => self.socket.get_ref().write_vectored(bufs),
        }
    }
}

/// Registers an accepted socket with the runtime.
fn register(stream: StdUnixStream) -> io::Result<UnixStream> {
    stream.set_nonblocking(true)?;
    UnixStream::from_std(stream)
}

/// One non-blocking `recv` appended to `buf`, whatever the socket's mode.
fn try_recv(stream: &StdUnixStream, buf: &mut BytesMut) -> io::Result<usize> {
    let start = buf.len();
    buf.resize(start + FIRST_READ_CAPACITY, 0);
    let received = socket::recv(
        stream.as_raw_fd(),
        &mut buf[start..],
        MsgFlags::MSG_DONTWAIT,
    );
    buf.truncate(start + *received.as_ref().unwrap_or(&0));
    received.map_err(io::Error::from)
}

/// One non-blocking `send`, whatever the socket's mode.
fn try_send(stream: &StdUnixStream, bytes: &[u8]) -> io::Result<usize> {
    socket::send(
        stream.as_raw_fd(),
        bytes,
        MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL,
    )
    .map_err(io::Error::from)
}
