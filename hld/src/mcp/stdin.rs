//! Standard input that reports its end: the MCP client closing stdin means it is gone.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

/// `tokio::io::Stdin` that cancels `closed` when it reaches end of file.
pub struct WatchedStdin {
    inner: tokio::io::Stdin,
    closed: CancellationToken,
}

impl WatchedStdin {
    /// Wraps the process's stdin.
    pub fn new(closed: CancellationToken) -> Self {
        WatchedStdin {
            inner: tokio::io::stdin(),
            closed,
        }
    }
}

impl AsyncRead for WatchedStdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let asked = buf.remaining() > 0;
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(poll, Poll::Ready(Ok(()))) && asked && buf.filled().len() == before {
            self.closed.cancel();
        }
        poll
    }
}
