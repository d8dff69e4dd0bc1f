//! An editor's pipes, handed to the daemon by `hld --stdio` (`SCM_RIGHTS` on the Unix
//! socket) and served with Content-Length framing like any editor connection: a message goes
//! from the editor to the daemon and back with no process copying it in between. A "pipe" is
//! a pipe or FIFO, or a Unix stream socket, which is what Node and libuv give a child's stdio
//! (VS Code, Neovim).
//!
//! The exchange on the socket (the control connection), a CRLF-ended line each:
//! 1. `hld --stdio`: [`ANNOUNCE`], by which the daemon tells this connection from the others.
//! 2. The daemon, once the peer is found to run as the daemon's own user: [`SEND`].
//! 3. `hld --stdio`: one byte carrying its stdin and stdout as `SCM_RIGHTS`.
//! 4. The daemon: [`TAKEN`], then it serves them; or [`REFUSED`] and a reason, with every
//!    descriptor it received closed, and `hld --stdio` relays the bytes itself instead.
//! 5. While they are served, any byte from `hld --stdio`, or the end of its connection (it
//!    got a signal, or died), stops the serving: replies in hand are written first, for
//!    [`GRACE`] at most, then the pipes are closed.
//! 6. The daemon, once the pipes are closed: [`ENDED`] and why ([`Why`]).
//!
//! Only pipes are taken, one to read and one to write: never a terminal, a file or a network
//! socket, which `hld --stdio` relays.

use std::io::{self, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use rustix::fs::{fcntl_getfl, fstat, FileType, OFlags};
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SocketType,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, Interest};
use tokio::net::unix::pipe;
use tokio::net::UnixStream;
use tokio_util::sync::CancellationToken;

use super::content_length::{ContentLengthConn, MAX_PAYLOAD};
use crate::daemon::Daemon;
use crate::rpc::{self, Ended, Settings};

/// `hld --stdio`'s first line: it has pipes to hand over.
pub const ANNOUNCE: &[u8] = b"Hld-Stdio-Fds: 1\r\n";
/// The daemon's answer to [`ANNOUNCE`]: the descriptors may come.
pub const SEND: &str = "Hld-Stdio-Fds: send";
/// The daemon took the pipes and serves them.
pub const TAKEN: &str = "Hld-Stdio-Fds: ok";
/// The daemon took nothing; the reason follows.
pub const REFUSED: &str = "Hld-Stdio-Fds: refused";
/// The serving ended; why follows ([`Why::as_str`]).
pub const ENDED: &str = "Hld-Stdio-Ended:";

/// How long replies in hand may take once the serving is asked to stop (spec/004: the
/// editor's child exits within 2 s of a signal).
pub const GRACE: Duration = Duration::from_millis(1500);
/// How long the daemon waits for the descriptors after [`SEND`].
const HAND_OVER_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the serving of handed pipes ended, as the last line says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The editor closed its end of stdin.
    StdinClosed,
    /// stdout could not be written: the editor is gone.
    StdoutClosed,
    /// The editor asked `shutdown` of its connection.
    Shutdown,
    /// `hld --stdio` asked to stop, or went away.
    Stopped,
    /// The daemon is shutting down.
    DaemonStopping,
}

impl Why {
    const ALL: [Why; 5] = [
        Why::StdinClosed,
        Why::StdoutClosed,
        Why::Shutdown,
        Why::Stopped,
        Why::DaemonStopping,
    ];

    /// The word on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Why::StdinClosed => "stdin-closed",
            Why::StdoutClosed => "stdout-closed",
            Why::Shutdown => "shutdown",
            Why::Stopped => "stopped",
            Why::DaemonStopping => "daemon-stopping",
        }
    }

    /// The reason of this word, if it is one.
    pub fn parse(word: &str) -> Option<Why> {
        Why::ALL.into_iter().find(|why| why.as_str() == word)
    }
}

/// What an end of an editor's connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A pipe or FIFO.
    Pipe,
    /// A Unix stream socket.
    Socket,
}

/// The kind of `fd` if it is one the daemon takes; `None` for anything else (a terminal, a
/// file, a network socket).
pub fn kind(fd: impl AsFd) -> Option<Kind> {
    let fd = fd.as_fd();
    match FileType::from_raw_mode(fstat(fd).ok()?.st_mode) {
        FileType::Fifo => Some(Kind::Pipe),
        FileType::Socket => {
            let unix = rustix::net::sockopt::socket_domain(fd).ok()? == AddressFamily::UNIX;
            let stream = rustix::net::sockopt::socket_type(fd).ok()? == SocketType::STREAM;
            (unix && stream).then_some(Kind::Socket)
        }
        _ => None,
    }
}

/// Whether a connection whose first bytes are `read` announces pipes: `None` while too
/// few have come to tell.
pub fn announced(read: &[u8]) -> Option<bool> {
    let n = read.len().min(ANNOUNCE.len());
    if !read[..n].eq_ignore_ascii_case(&ANNOUNCE[..n]) {
        return Some(false);
    }
    (n == ANNOUNCE.len()).then_some(true)
}

/// Serves the control connection `control`, whose first bytes `read` were [`ANNOUNCE`]:
/// takes the pipes and serves them until the editor, `hld --stdio` or `shutdown` ends it.
pub async fn serve(
    mut control: UnixStream,
    read: BytesMut,
    daemon: Arc<Daemon>,
    shutdown: CancellationToken,
) {
    let (input, output) = match take(&control, &read, &shutdown).await {
        Ok(Some(pipes)) => pipes,
        Ok(None) => return,
        Err(reason) => {
            tracing::warn!(%reason, "refused the pipes hld --stdio offered");
            let _ = write_line(&control, &format!("{REFUSED} {reason}")).await;
            return;
        }
    };
    if write_line(&control, TAKEN).await.is_err() {
        return;
    }
    tracing::info!("serving an editor's pipes, handed over by hld --stdio");
    let io = tokio::io::join(input, output);
    let conn = ContentLengthConn::new(io, MAX_PAYLOAD, daemon.config.frame_timeout, read)
        .budget(daemon.budget.clone());
    let settings = Settings::content_length(&daemon.config);
    let stop = shutdown.child_token();
    // Boxed, so that dropping it closes the pipes.
    let mut serving = Box::pin(rpc::serve(conn, daemon, settings, stop.clone()));
    let mut byte = [0u8; 1];
    let ended = tokio::select! {
        ended = &mut serving => Some(ended),
        _ = control.read(&mut byte) => {
            stop.cancel();
            tokio::time::timeout(GRACE, &mut serving).await.ok()
        }
    };
    // The pipes close here, before the last line: `hld --stdio` exits on reading it, and
    // the editor then sees its stdout end.
    drop(serving);
    let why = match ended {
        Some(Ended::Left) => Why::StdinClosed,
        Some(Ended::Failed) => Why::StdoutClosed,
        Some(Ended::Closed) => Why::Shutdown,
        Some(Ended::Shutdown) if shutdown.is_cancelled() => Why::DaemonStopping,
        Some(Ended::Shutdown | Ended::Unresponsive) | None => Why::Stopped,
    };
    tracing::info!(why = %why.as_str(), "an editor's pipes: ended");
    let _ = write_line(&control, &format!("{ENDED} {}", why.as_str())).await;
}

/// The pipes, once the peer is checked and has sent them; `Ok(None)` if it left first.
async fn take(
    control: &UnixStream,
    read: &[u8],
    shutdown: &CancellationToken,
) -> Result<Option<(Input, Output)>, String> {
    if read.len() != ANNOUNCE.len() {
        return Err("bytes after the announcement".into());
    }
    let peer = control.peer_cred().map_err(|e| e.to_string())?.uid();
    let me = nix::unistd::geteuid().as_raw();
    if peer != me {
        return Err(format!("the peer runs as uid {peer}, not {me}"));
    }
    write_line(control, SEND).await.map_err(|e| e.to_string())?;
    let received = tokio::select! {
        () = shutdown.cancelled() => return Ok(None),
        received = tokio::time::timeout(HAND_OVER_TIMEOUT, receive(control)) => received,
    };
    let fds = match received {
        Err(_) => return Err("no descriptors came".into()),
        Ok(Err(e)) => return Err(e.to_string()),
        Ok(Ok(None)) => return Ok(None),
        Ok(Ok(Some(fds))) => fds,
    };
    let [input, output] = <[OwnedFd; 2]>::try_from(fds)
        .map_err(|fds| format!("expected 2 descriptors, got {}", fds.len()))?;
    let input = match check(&input, Direction::Read)? {
        Kind::Pipe => {
            Box::new(pipe::Receiver::from_owned_fd(input).map_err(|e| e.to_string())?) as Input
        }
        Kind::Socket => Box::new(socket(input).map_err(|e| e.to_string())?),
    };
    let output = match check(&output, Direction::Write)? {
        Kind::Pipe => {
            Box::new(pipe::Sender::from_owned_fd(output).map_err(|e| e.to_string())?) as Output
        }
        Kind::Socket => Box::new(socket(output).map_err(|e| e.to_string())?),
    };
    Ok(Some((input, output)))
}

/// The editor's stdin, as the daemon reads it.
type Input = Box<dyn AsyncRead + Send + Unpin>;
/// The editor's stdout, as the daemon writes it.
type Output = Box<dyn AsyncWrite + Send + Unpin>;

/// A handed Unix socket, registered with the runtime.
fn socket(fd: OwnedFd) -> io::Result<UnixStream> {
    let socket = std::os::unix::net::UnixStream::from(fd);
    socket.set_nonblocking(true)?;
    UnixStream::from_std(socket)
}

/// Writes `line` and its CRLF on `control`, which is writable once the peer reads.
async fn write_line(control: &UnixStream, line: &str) -> io::Result<()> {
    let line = format!("{line}\r\n");
    let mut written = 0;
    while written < line.len() {
        control.writable().await?;
        match control.try_write(&line.as_bytes()[written..]) {
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The descriptors of the next message on `control` (`None` if it ended): every one it
/// carried, or an error if it carried more than two (those the kernel could not pass are
/// closed by it).
async fn receive(control: &UnixStream) -> io::Result<Option<Vec<OwnedFd>>> {
    loop {
        control.readable().await?;
        let received = control.try_io(Interest::READABLE, || {
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
            let mut ancillary = RecvAncillaryBuffer::new(&mut space);
            let mut byte = [0u8; 1];
            let message = rustix::net::recvmsg(
                control,
                &mut [IoSliceMut::new(&mut byte)],
                &mut ancillary,
                RecvFlags::CMSG_CLOEXEC,
            )?;
            let mut fds = Vec::new();
            for message in ancillary.drain() {
                if let RecvAncillaryMessage::ScmRights(rights) = message {
                    fds.extend(rights);
                }
            }
            Ok((message.bytes, message.flags, fds))
        });
        match received {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
            Ok((0, _, _)) => return Ok(None),
            Ok((_, flags, _)) if flags.contains(rustix::net::ReturnFlags::CTRUNC) => {
                return Err(io::Error::other("more than 2 descriptors"));
            }
            Ok((_, _, fds)) => return Ok(Some(fds)),
        }
    }
}

/// Which way a handed pipe must go, as the daemon uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Read,
    Write,
}

/// The kind of `fd` if it is one the daemon takes, and, a pipe, open for `direction`.
fn check(fd: &OwnedFd, direction: Direction) -> Result<Kind, String> {
    let what = match direction {
        Direction::Read => "stdin",
        Direction::Write => "stdout",
    };
    match kind(fd) {
        None => return Err(format!("{what} is neither a pipe nor a Unix stream socket")),
        Some(Kind::Socket) => return Ok(Kind::Socket),
        Some(Kind::Pipe) => {}
    }
    let mode = fcntl_getfl(fd).map_err(|e| format!("{what}: {e}"))? & OFlags::RWMODE;
    let fits = match direction {
        Direction::Read => mode == OFlags::RDONLY || mode == OFlags::RDWR,
        Direction::Write => mode == OFlags::WRONLY || mode == OFlags::RDWR,
    };
    if !fits {
        return Err(format!("{what} is a pipe open the wrong way"));
    }
    Ok(Kind::Pipe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_announcement_is_recognised_in_any_case() {
        assert_eq!(announced(ANNOUNCE), Some(true));
        assert_eq!(announced(b"hld-stdio-fds: 1\r\n"), Some(true));
        assert_eq!(announced(b"Hld-Std"), None);
        assert_eq!(announced(b""), None);
        assert_eq!(announced(b"Hld-Stdio-Fds: 2\r\n"), Some(false));
        assert_eq!(announced(b"{\"jsonrpc\""), Some(false));
    }

    #[test]
    fn only_pipes_open_the_right_way_and_unix_stream_sockets_are_taken() {
        let (read, write) = nix::unistd::pipe().unwrap();
        assert_eq!(check(&read, Direction::Read), Ok(Kind::Pipe));
        assert_eq!(check(&write, Direction::Write), Ok(Kind::Pipe));
        assert_eq!(
            check(&read, Direction::Write),
            Err("stdout is a pipe open the wrong way".into())
        );
        assert_eq!(
            check(&write, Direction::Read),
            Err("stdin is a pipe open the wrong way".into())
        );
        let (socket, _) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(
            check(&OwnedFd::from(socket), Direction::Write),
            Ok(Kind::Socket)
        );
        let file: OwnedFd = tempfile::tempfile().unwrap().into();
        assert_eq!(
            check(&file, Direction::Read),
            Err("stdin is neither a pipe nor a Unix stream socket".into())
        );
        let datagrams: OwnedFd = std::os::unix::net::UnixDatagram::unbound().unwrap().into();
        assert_eq!(kind(&datagrams), None);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let tcp = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        assert_eq!(kind(&tcp), None);
    }

    #[test]
    fn every_reason_reads_back() {
        for why in Why::ALL {
            assert_eq!(Why::parse(why.as_str()), Some(why));
        }
        assert_eq!(Why::parse("other"), None);
    }
}
