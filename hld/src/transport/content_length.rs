//! Content-Length framing (spec/004, LSP's): headers (any case, unknown ones ignored, only
//! `application/vscode-jsonrpc` in UTF-8), a blank line, N bytes of JSON. A refused or
//! timed-out payload is answered with `id: null` and discarded as it arrives, never buffered.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, BufMut, BytesMut};
use futures::{Sink, Stream};
use hld_client::protocol::{ErrorObject, InvalidRequestReason};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::{Instant, Sleep};
use tokio_util::codec::{Decoder, Encoder, Framed};

use crate::budget::{busy, Budget};
use crate::rpc::error::{invalid_request, parse_error};
use crate::rpc::{event_message, oversize, Frame, Outgoing};
use crate::throttle::Throttle;
use crate::transport::{shrink, UNCOUNTED};

/// The largest payload on this transport (spec/004).
pub const MAX_PAYLOAD: usize = 10 * 1024 * 1024;
pub const MAX_HEADER: usize = 8 * 1024;

static TIMED_OUT: Throttle = Throttle::new();

#[derive(Debug)]
enum State {
    /// Reading header lines; the first error is answered once the section ends.
    Headers {
        length: Option<usize>,
        bytes: usize,
        error: Option<ErrorObject>,
        /// A `Content-Type` refused: the body is read still, for its id.
        refused: Option<ErrorObject>,
    },
    /// Reading a body of this many bytes, to be refused with this error if there is one.
    Body {
        length: usize,
        refused: Option<ErrorObject>,
    },
    /// Throwing away this many more bytes of a refused message.
    Discard(usize),
}

impl State {
    fn headers() -> State {
        State::Headers {
            length: None,
            bytes: 0,
            error: None,
            refused: None,
        }
    }
}

#[derive(Debug)]
pub struct ContentLengthCodec {
    max_payload: usize,
    state: State,
    budget: Option<Budget>,
    /// The share of the budget holding the body being read.
    body: Option<OwnedSemaphorePermit>,
}

impl ContentLengthCodec {
    pub fn new(max_payload: usize) -> Self {
        ContentLengthCodec {
            max_payload,
            state: State::headers(),
            budget: None,
            body: None,
        }
    }

    fn mid_message(&self) -> bool {
        !matches!(self.state, State::Headers { bytes: 0, .. })
    }

    /// Forgets the message in progress: the next bytes start a header section.
    fn reset(&mut self) {
        self.state = State::headers();
    }
}

/// The error for a `Content-Type` this transport does not take, if it is one.
fn content_type_error(value: &str) -> Option<ErrorObject> {
    let mut parts = value.split(';').map(str::trim);
    let media = parts.next().unwrap_or("");
    if !media.eq_ignore_ascii_case("application/vscode-jsonrpc") {
        return Some(invalid_request(
            "Unsupported Content-Type: use application/vscode-jsonrpc; charset=utf-8",
            InvalidRequestReason::UnsupportedContentType,
        ));
    }
    for param in parts {
        let (name, charset) = param.split_once('=').unwrap_or((param, ""));
        let charset = charset.trim().trim_matches('"');
        if name.trim().eq_ignore_ascii_case("charset")
            && !(charset.eq_ignore_ascii_case("utf-8") || charset.eq_ignore_ascii_case("utf8"))
        {
            return Some(invalid_request(
                "Unsupported charset: only utf-8",
                InvalidRequestReason::BadCharset,
            ));
        }
    }
    None
}

impl Decoder for ContentLengthCodec {
    type Item = Frame;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Frame>> {
        loop {
            match &mut self.state {
                State::Discard(left) => {
                    let n = (*left).min(buf.len());
                    buf.advance(n);
                    *left -= n;
                    if *left > 0 {
                        return Ok(None);
                    }
                    self.reset();
                }
                State::Body { length, refused } => {
                    if buf.len() < *length {
                        buf.reserve(*length - buf.len());
                        return Ok(None);
                    }
                    let body = buf.split_to(*length).freeze();
                    // The body shares the buffer's allocation: the rest leaves it.
                    shrink(buf, body.len() > UNCOUNTED);
                    let frame = match refused.take() {
                        Some(error) => Frame::Refused(body, error),
                        None => Frame::Message(body),
                    };
                    self.reset();
                    self.body = None;
                    return Ok(Some(frame));
                }
                State::Headers {
                    length,
                    bytes,
                    error,
                    refused,
                } => {
                    let Some(end) = memchr::memchr(b'\n', buf) else {
                        // A line over the section's limit: drop it (but a final `\r`).
                        if *bytes + buf.len() > MAX_HEADER {
                            let keep = usize::from(buf.last() == Some(&b'\r'));
                            *bytes += buf.len() - keep;
                            buf.advance(buf.len() - keep);
                        }
                        return Ok(None);
                    };
                    let line = buf.split_to(end + 1);
                    *bytes += line.len();
                    if *bytes > MAX_HEADER && error.is_none() {
                        *error = Some(invalid_request(
                            "Header section too large",
                            InvalidRequestReason::HeaderTooLarge,
                        ));
                    }
                    // A bare `\n` is refused, but the line is read to keep the framing in step.
                    let line = match line.strip_suffix(b"\r\n") {
                        Some(line) => line,
                        None => {
                            error.get_or_insert_with(|| {
                                parse_error("header lines must end with CRLF")
                            });
                            &line[..line.len() - 1]
                        }
                    };
                    if !line.is_empty() {
                        let line = String::from_utf8_lossy(line);
                        // Bytes left before a header (the end of a body longer than its
                        // Content-Length said, one that came after its read timed out, noise)
                        // are skipped: the frame that follows them is read in step.
                        let line = match find_length_header(&line) {
                            Some(at) if at > 0 => {
                                tracing::debug!(skipped = at, "bytes before a header skipped");
                                &line[at..]
                            }
                            _ => &line[..],
                        };
                        let (name, value) = line.split_once(':').unwrap_or((line, ""));
                        let (name, value) = (name.trim(), value.trim());
                        if name.eq_ignore_ascii_case("content-length") {
                            // Digits only (no sign); a repeated header must say the same, or
                            // where the body ends is in doubt (its first length is skipped).
                            let n = value.bytes().all(|b| b.is_ascii_digit());
                            let n = n.then(|| value.parse::<usize>().ok()).flatten();
                            let problem = match (n, *length) {
                                (None, _) => Some("invalid Content-Length"),
                                (Some(n), Some(first)) if n != first => {
                                    Some("conflicting Content-Length headers")
                                }
                                (Some(n), _) => {
                                    *length = Some(n);
                                    None
                                }
                            };
                            if let Some(problem) = problem {
                                error.get_or_insert_with(|| parse_error(problem));
                            }
                        } else if name.eq_ignore_ascii_case("content-type") {
                            if let Some(e) = content_type_error(value) {
                                refused.get_or_insert(e);
                            }
                        }
                        continue;
                    }
                    let (length, error, refused) = (length.take(), error.take(), refused.take());
                    match (length, error) {
                        (Some(n), _) if n > self.max_payload => {
                            self.state = State::Discard(n);
                            return Ok(Some(Frame::Rejected(oversize())));
                        }
                        (Some(n), Some(e)) => {
                            // Refused by its headers: its body is skipped, not read as JSON.
                            self.state = State::Discard(n);
                            return Ok(Some(Frame::Rejected(e)));
                        }
                        (Some(n), None) => {
                            let share = self.budget.as_ref().map(|b| b.try_take(n));
                            if let Some(None) = share {
                                // Refused rather than buffered: the budget is full.
                                self.state = State::Discard(n);
                                return Ok(Some(Frame::Rejected(busy())));
                            }
                            self.body = share.flatten();
                            self.state = State::Body { length: n, refused };
                        }
                        (None, error) => {
                            self.reset();
                            let e = error
                                .or(refused)
                                .unwrap_or_else(|| parse_error("missing Content-Length header"));
                            return Ok(Some(Frame::Rejected(e)));
                        }
                    }
                }
            }
        }
    }
}

impl Encoder<Outgoing> for ContentLengthCodec {
    type Error = io::Error;

    fn encode(&mut self, item: Outgoing, dst: &mut BytesMut) -> io::Result<()> {
        let body = match item {
            Outgoing::Response(response) | Outgoing::Subscribed(response) => response.to_json(),
            Outgoing::Event(event) => event_message(&event, None),
        };
        dst.reserve(body.len() + 32);
        dst.put_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        dst.put_slice(&body);
        Ok(())
    }
}

/// Splits `out`, bytes this codec wrote, into payloads; a byte outside a frame is an error.
pub fn split_frames(mut out: &[u8]) -> Result<Vec<&[u8]>, String> {
    let mut frames = Vec::new();
    while !out.is_empty() {
        let shown = || {
            format!(
                "not a frame: {:?}",
                String::from_utf8_lossy(&out[..out.len().min(80)])
            )
        };
        let end = memchr::memmem::find(out, b"\r\n\r\n").ok_or_else(shown)?;
        let length: usize = std::str::from_utf8(&out[..end])
            .ok()
            .and_then(|header| header.strip_prefix("Content-Length: "))
            .and_then(|n| n.parse().ok())
            .ok_or_else(shown)?;
        let body = out
            .get(end + 4..end + 4 + length)
            .ok_or_else(|| format!("a frame cut short: {length} bytes announced"))?;
        frames.push(body);
        out = &out[end + 4 + length..];
    }
    Ok(frames)
}

/// Where a `Content-Length:` header starts in `line`, in any case.
fn find_length_header(line: &str) -> Option<usize> {
    const NAME: &[u8] = b"content-length:";
    line.as_bytes()
        .windows(NAME.len())
        .position(|w| w.eq_ignore_ascii_case(NAME))
}

/// A Content-Length-framed connection with the read timeout, as `rpc::serve` takes it.
pub struct ContentLengthConn<T> {
    framed: Framed<T, ContentLengthCodec>,
    timeout: Duration,
    /// Armed at a message's first byte, never moved until it is complete.
    deadline: Pin<Box<Sleep>>,
    armed: bool,
}

impl<T: AsyncRead + AsyncWrite + Unpin> ContentLengthConn<T> {
    /// Frames `io`; `read` came now, unless [`ContentLengthConn::first_byte_at`] says when.
    pub fn new(io: T, max_payload: usize, timeout: Duration, read: BytesMut) -> Self {
        let mut parts = tokio_util::codec::FramedParts::new::<Outgoing>(
            io,
            ContentLengthCodec::new(max_payload),
        );
        let armed = !read.is_empty();
        parts.read_buf = read;
        ContentLengthConn {
            framed: Framed::from_parts(parts),
            timeout,
            deadline: Box::pin(tokio::time::sleep(timeout)),
            armed,
        }
    }

    /// Each body is held in `budget`.
    pub fn budget(mut self, budget: Budget) -> Self {
        self.framed.codec_mut().budget = Some(budget);
        self
    }

    /// The first message's deadline runs from `at`.
    pub fn first_byte_at(mut self, at: Instant) -> Self {
        self.deadline.as_mut().reset(at + self.timeout);
        self
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> Stream for ContentLengthConn<T> {
    type Item = io::Result<Frame>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Poll::Ready(item) = Pin::new(&mut this.framed).poll_next(cx) {
                this.armed = false;
                return Poll::Ready(item);
            }
            if !this.framed.codec().mid_message() && this.framed.read_buffer().is_empty() {
                this.armed = false;
                return Poll::Pending;
            }
            if !this.armed {
                this.armed = true;
                this.deadline.as_mut().reset(Instant::now() + this.timeout);
            }
            if this.deadline.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            if let Some(count) = TIMED_OUT.hit() {
                tracing::warn!(
                    timeout_ms = this.timeout.as_millis() as u64,
                    count,
                    "an incomplete message timed out; discarded, framing reset"
                );
            }
            this.framed.codec_mut().reset();
            this.framed.codec_mut().body = None;
            this.framed.read_buffer_mut().clear();
            this.armed = false;
        }
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> Sink<Outgoing> for ContentLengthConn<T> {
    type Error = io::Error;

    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.framed).poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, item: Outgoing) -> io::Result<()> {
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

    /// Each message's body, or a refusal's reason (else its message), after the body read.
    fn decoded(input: &[u8]) -> Vec<String> {
        let mut codec = ContentLengthCodec::new(64);
        let mut buf = BytesMut::from(input);
        let reason = |e: &ErrorObject| {
            e.data
                .as_ref()
                .and_then(|d| d.get("reason"))
                .and_then(|r| r.as_str())
                .unwrap_or(&e.message)
                .to_owned()
        };
        std::iter::from_fn(|| codec.decode(&mut buf).unwrap())
            .map(|frame| match frame {
                Frame::Message(body) => String::from_utf8_lossy(&body).into_owned(),
                Frame::Request(request) => request.method,
                Frame::Rejected(e) => reason(&e),
                Frame::Refused(body, e) => {
                    format!("{} {}", reason(&e), String::from_utf8_lossy(&body))
                }
            })
            .collect()
    }

    #[test]
    fn each_input_decodes_to_its_messages_and_refusals_and_framing_goes_on() {
        let padding: String = (0..200)
            .map(|i| format!("X-Padding-{i}: {}\r\n", "p".repeat(40)))
            .collect();
        let cases: [(String, &[&str]); 6] = [
            // Back to back, any header case, unknown headers ignored.
            (
                "Content-Length: 2\r\n\r\n{}content-length: 3\r\nX-Other: y\r\n\
                 CONTENT-TYPE: application/vscode-jsonrpc; charset=UTF-8\r\n\r\n[1]"
                    .into(),
                &["{}", "[1]"],
            ),
            // A wrong content type or charset: refused, its body read for its id.
            (
                "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}\
                 Content-Type: application/vscode-jsonrpc; charset=iso-8859-1\r\n\
                 Content-Length: 2\r\n\r\n[]Content-Length: 1\r\n\r\n1"
                    .into(),
                &["unsupported-content-type {}", "bad-charset []", "1"],
            ),
            (
                format!("Content-Length: 2\r\n{padding}\r\n{{}}Content-Length: 2\r\n\r\n[]"),
                &["header-too-large", "[]"],
            ),
            (
                "X: 1\r\n\r\nContent-Length: 2\n\r\n{}Content-Length: 2\r\n\r\n{}".into(),
                &[
                    "Parse error: missing Content-Length header",
                    "Parse error: header lines must end with CRLF",
                    "{}",
                ],
            ),
            // A body longer than its Content-Length said: its end, before the next header, is
            // skipped, and every frame after it is read.
            (
                "Content-Length: 3\r\n\r\n[1]]Content-Length: 2\r\n\r\n{}junkContent-Length: 2\r\n\r\n[]"
                    .into(),
                &["[1]", "{}", "[]"],
            ),
            // A signed length, or two that differ: refused, framing kept.
            (
                "Content-Length: +2\r\n\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}\
                 Content-Length: 2\r\ncontent-length: 2\r\n\r\n[]"
                    .into(),
                &[
                    "Parse error: invalid Content-Length",
                    "Parse error: conflicting Content-Length headers",
                    "[]",
                ],
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(decoded(input.as_bytes()), expected, "{input:?}");
        }
    }

    #[test]
    fn split_frames_refuses_any_byte_outside_a_frame() {
        assert_eq!(split_frames(b"").unwrap(), Vec::<&[u8]>::new());
        assert!(split_frames(b"Content-Length: 2\r\n\r\n{}x").is_err());
        assert!(split_frames(b"content-length: 2\r\n\r\n{}").is_err());
        assert!(split_frames(b"Content-Length: 3\r\n\r\n{}").is_err());
        assert!(split_frames(b"\nContent-Length: 2\r\n\r\n{}").is_err());
    }
}
