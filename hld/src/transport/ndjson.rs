//! NDJSON framing for the Unix socket: one message a line; a line too long (or over budget) is
//! refused as it arrives; a subscribed connection only gets events and heartbeats.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use futures::{Sink, Stream};
use hld_client::protocol::{SubscriptionMessage, HEARTBEAT_MESSAGE};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::{Instant, Sleep};
use tokio_util::codec::{Decoder, Encoder, Framed, FramedParts};

use crate::budget::{busy, Budget};
use crate::rpc::{oversize, Frame, Outgoing};
use crate::transport::{shrink, UNCOUNTED};

/// Lets go of a long line's room in `buf` once the line is taken or refused.
fn let_go(buf: &mut BytesMut) {
    shrink(buf, buf.capacity() > UNCOUNTED);
}

/// Lines of at most `max` bytes (without the `\n` or a trailing `\r`); see the module docs.
#[derive(Debug)]
pub struct NdjsonCodec {
    max: usize,
    /// Bytes of the buffer already searched for a newline.
    scanned: usize,
    /// Inside a refused line: drop bytes until the next newline.
    discarding: bool,
    budget: Option<Budget>,
    /// What the long line being read holds of the budget: the bytes of it received.
    line: Option<OwnedSemaphorePermit>,
}

impl NdjsonCodec {
    pub fn new(max: usize) -> Self {
        NdjsonCodec {
            max,
            scanned: 0,
            discarding: false,
            budget: None,
            line: None,
        }
    }

    /// Long lines are held in `budget`.
    pub fn budget(mut self, budget: Budget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Holds `n` bytes of the budget for the line being read, adding to what it holds;
    /// `false` when the budget has not that much free.
    fn hold(&mut self, n: usize) -> bool {
        let Some(budget) = &self.budget else {
            return true;
        };
        let held = self
            .line
            .as_ref()
            .map_or(0, OwnedSemaphorePermit::num_permits);
        if n <= held {
            return true;
        }
        match (budget.try_take(n - held), &mut self.line) {
            (None, _) => false,
            (Some(more), Some(line)) => {
                line.merge(more);
                true
            }
            (Some(more), line) => {
                *line = Some(more);
                true
            }
        }
    }
}

impl Decoder for NdjsonCodec {
    type Item = Frame;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, std::io::Error> {
        loop {
            let newline = memchr::memchr(b'\n', &buf[self.scanned..]);
            match (self.discarding, newline) {
                (true, Some(pos)) => {
                    buf.advance(self.scanned + pos + 1);
                    self.scanned = 0;
                    self.discarding = false;
                }
                (true, None) => {
                    buf.clear();
                    let_go(buf);
                    self.scanned = 0;
                    return Ok(None);
                }
                (false, Some(pos)) => {
                    let end = self.scanned + pos;
                    self.scanned = 0;
                    self.line = None;
                    let line = buf[..end].strip_suffix(b"\r").unwrap_or(&buf[..end]);
                    // Copied out, so the read buffer stays one allocation, reused.
                    let frame = if line.len() > self.max {
                        Some(Frame::Rejected(oversize()))
                    } else if line.iter().all(u8::is_ascii_whitespace) {
                        None
                    } else {
                        Some(Frame::Message(Bytes::copy_from_slice(line)))
                    };
                    buf.advance(end + 1);
                    let_go(buf);
                    if frame.is_some() {
                        return Ok(frame);
                    }
                }
                (false, None) => {
                    // One byte of slack for a trailing '\r'.
                    let refused = if buf.len() > self.max + 1 {
                        Some(oversize())
                    } else if buf.len() > UNCOUNTED && !self.hold(buf.len()) {
                        Some(busy())
                    } else {
                        None
                    };
                    if let Some(error) = refused {
                        buf.clear();
                        let_go(buf);
                        self.scanned = 0;
                        self.discarding = true;
                        self.line = None;
                        return Ok(Some(Frame::Rejected(error)));
                    }
                    self.scanned = buf.len();
                    return Ok(None);
                }
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, std::io::Error> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        // A final line without a newline still counts as a message.
        if self.discarding || buf.iter().all(u8::is_ascii_whitespace) {
            buf.clear();
            return Ok(None);
        }
        let line = buf.split().freeze();
        self.scanned = 0;
        // Read whole, the line gives its share back, as one that ends in a newline does.
        self.line = None;
        Ok(Some(Frame::Message(line)))
    }
}

impl Encoder<Outgoing> for NdjsonCodec {
    type Error = std::io::Error;

    fn encode(&mut self, item: Outgoing, dst: &mut BytesMut) -> Result<(), std::io::Error> {
        match item {
            Outgoing::Response(response) | Outgoing::Subscribed(response) => {
                response.write_json(dst.writer())?
            }
            Outgoing::Event(event) => {
                dst.put_slice(b"{\"jsonrpc\":\"2.0\",\"result\":{\"event\":");
                dst.put_slice(event.json());
                dst.put_slice(b"},\"id\":null}");
            }
        }
        dst.put_u8(b'\n');
        Ok(())
    }
}

fn heartbeat(dst: &mut BytesMut) -> io::Result<()> {
    let heartbeat = SubscriptionMessage::Heartbeat {
        kind: "heartbeat".to_owned(),
        message: HEARTBEAT_MESSAGE.to_owned(),
    };
    dst.put_slice(b"{\"jsonrpc\":\"2.0\",\"result\":");
    serde_json::to_writer(dst.writer(), &heartbeat)?;
    dst.put_slice(b",\"id\":null}\n");
    Ok(())
}

/// An NDJSON connection, as `rpc::serve` takes it.
pub struct NdjsonConn<T> {
    framed: Framed<T, NdjsonCodec>,
    heartbeat: Duration,
    /// Once subscribed: when the next heartbeat may be due (moved when it fires).
    quiet: Option<Pin<Box<Sleep>>>,
    last_write: Instant,
}

impl<T: AsyncRead + AsyncWrite + Unpin> NdjsonConn<T> {
    /// Frames `io`, `read` already read of it; subscribed, heartbeats follow `heartbeat` of quiet.
    pub fn new(io: T, read: BytesMut, max: usize, heartbeat: Duration) -> Self {
        let mut parts = FramedParts::new::<Outgoing>(io, NdjsonCodec::new(max));
        parts.read_buf = read;
        NdjsonConn {
            framed: Framed::from_parts(parts),
            heartbeat,
            quiet: None,
            last_write: Instant::now(),
        }
    }

    /// Long lines are held in `budget`.
    pub fn budget(mut self, budget: Budget) -> Self {
        self.framed.codec_mut().budget = Some(budget);
        self
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> Stream for NdjsonConn<T> {
    type Item = io::Result<Frame>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let Some(quiet) = this.quiet.as_mut() else {
            return Pin::new(&mut this.framed).poll_next(cx);
        };
        loop {
            match Pin::new(&mut this.framed).poll_next(cx) {
                Poll::Ready(Some(Ok(_))) => continue,
                Poll::Ready(_) => return Poll::Ready(None),
                Poll::Pending => {}
            }
            if quiet.as_mut().poll(cx).is_pending() {
                break;
            }
            if this.last_write.elapsed() >= this.heartbeat {
                heartbeat(this.framed.write_buffer_mut())?;
                this.last_write = Instant::now();
            }
            quiet.as_mut().reset(this.last_write + this.heartbeat);
        }
        if !this.framed.write_buffer().is_empty() {
            if let Poll::Ready(Err(e)) = Pin::new(&mut this.framed).poll_flush(cx) {
                return Poll::Ready(Some(Err(e)));
            }
        }
        Poll::Pending
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> Sink<Outgoing> for NdjsonConn<T> {
    type Error = io::Error;

    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.framed).poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, item: Outgoing) -> io::Result<()> {
        if matches!(item, Outgoing::Subscribed(_)) {
            self.quiet = Some(Box::pin(tokio::time::sleep(self.heartbeat)));
        }
        // Heartbeats count quiet time only once subscribed.
        if self.quiet.is_some() {
            self.last_write = Instant::now();
        }
        Pin::new(&mut self.framed).start_send(item)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.framed).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.framed).poll_close(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(s: &str) -> Frame {
        Frame::Message(bytes::Bytes::copy_from_slice(s.as_bytes()))
    }

    #[test]
    fn lines_split_across_chunks_and_an_oversize_one_is_dropped_as_it_streams() {
        let mut codec = NdjsonCodec::new(4);
        let (mut buf, mut got) = (BytesMut::new(), Vec::new());
        for chunk in [&b"ab"[..], b"cd\r\n\n  \nab", b"cde", b"fgh", b"ij\nab\nxy"] {
            buf.extend_from_slice(chunk);
            while let Some(frame) = codec.decode(&mut buf).unwrap() {
                got.push(frame);
            }
            assert!(buf.len() <= 5, "buffered {} bytes", buf.len());
        }
        // A final line without a newline still counts.
        got.extend(codec.decode_eof(&mut buf).unwrap());
        let expected = [
            msg("abcd"),
            Frame::Rejected(oversize()),
            msg("ab"),
            msg("xy"),
        ];
        assert_eq!(format!("{got:?}"), format!("{expected:?}"));
    }

    /// A long line holds the bytes of it received, not the most a line may be, and gives them
    /// back once read, whether it ends in a newline or with the connection.
    #[test]
    fn a_long_line_holds_what_it_received_until_it_is_read() {
        let budget = Budget::new(1 << 20);
        let mut codec = NdjsonCodec::new(1 << 20).budget(budget.clone());
        let mut buf = BytesMut::from(&vec![b'a'; UNCOUNTED + 10][..]);
        assert!(codec.decode(&mut buf).unwrap().is_none());
        assert_eq!(budget.free(), (1 << 20) - UNCOUNTED - 10);
        buf.extend_from_slice(&[b'a'; 1000]);
        assert!(codec.decode(&mut buf).unwrap().is_none());
        assert_eq!(budget.free(), (1 << 20) - UNCOUNTED - 1010);
        assert!(matches!(
            codec.decode_eof(&mut buf).unwrap(),
            Some(Frame::Message(_))
        ));
        assert_eq!(budget.free(), 1 << 20);
        // More than the budget has free: refused (code 8), and nothing is held after.
        let held = budget.try_take((1 << 20) - UNCOUNTED).unwrap();
        let mut buf = BytesMut::from(&vec![b'a'; UNCOUNTED + 10][..]);
        let refused = codec.decode(&mut buf).unwrap();
        assert!(matches!(refused, Some(Frame::Rejected(e)) if e.code == busy().code));
        drop(held);
        assert_eq!(budget.free(), 1 << 20);
    }
}
