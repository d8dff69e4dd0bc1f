//! holon-rpc (spec/002) around a connection of text messages, so that `rpc::serve` sees only
//! requests: strict envelope checks (a violation without a string id ends the connection),
//! heartbeats both ways (an unanswered one ends it), and events as requests `"id":"s<N>"`,
//! at most `max_pending` waiting (the rest dropped and told by `lagged`).

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use futures::{Sink, Stream};
use hld_client::protocol::Event;
use tokio::time::{Instant, Sleep};

use super::outgoing;
use crate::bus::Published;
use crate::config::WsConfig;
use crate::rpc::envelope::{self, Message, Rejected, Request, Strictness};
use crate::rpc::{Frame, Outgoing, Response, MISTAKES_A_SECOND};
use crate::throttle::Throttle;

/// The reserved method every peer answers with `{}`.
pub const HEARTBEAT: &str = "rpc.heartbeat";

/// Replies to no pending request, logged through a throttle: a peer can send any number.
static UNMATCHED_REPLY: Throttle = Throttle::burst(MISTAKES_A_SECOND);
/// Violations of the envelope, likewise.
static INVALID: Throttle = Throttle::burst(MISTAKES_A_SECOND);

/// Why holon-rpc ended a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// A message with no id to answer to; the reason starts with its JSON-RPC code.
    Unanswerable(String),
    /// No answer to a heartbeat in time.
    Unresponsive,
}

/// holon-rpc over `T`, a stream of text messages and a sink of them.
pub struct Holon<T> {
    inner: T,
    config: WsConfig,
    /// Replies, events and this layer's own messages, in order.
    queue: VecDeque<String>,
    unflushed: bool,
    /// Server requests waiting for a reply: number → when sent (so the stalest come first).
    pending: BTreeMap<u64, Instant>,
    /// The last requests forgotten as stale, to tell a late reply from a duplicate one.
    stale: VecDeque<u64>,
    last_request: u64,
    /// Events dropped while too many requests waited.
    dropped: u64,
    /// When the next heartbeat is due, or the deadline of the one sent.
    timer: Pin<Box<Sleep>>,
    beat_sent: Option<Instant>,
    heard: Instant,
    violation: Option<Violation>,
}

impl<T> Holon<T>
where
    T: Stream<Item = io::Result<Bytes>> + Sink<String, Error = io::Error> + Unpin,
{
    pub fn new(inner: T, config: &WsConfig) -> Self {
        Holon {
            inner,
            config: config.clone(),
            queue: VecDeque::new(),
            unflushed: false,
            pending: BTreeMap::new(),
            stale: VecDeque::new(),
            last_request: 0,
            dropped: 0,
            timer: Box::pin(tokio::time::sleep(config.heartbeat)),
            beat_sent: None,
            heard: Instant::now(),
            violation: None,
        }
    }

    /// The connection, and the violation that ended it, if one did.
    pub fn into_parts(self) -> (T, Option<Violation>) {
        (self.inner, self.violation)
    }

    /// Numbers a new server-initiated request and waits for its reply.
    fn request(&mut self) -> u64 {
        self.last_request += 1;
        self.pending.insert(self.last_request, Instant::now());
        self.last_request
    }

    /// The peer replied to request `id`; a reply to none is logged as stale, duplicate or unknown.
    fn replied(&mut self, id: &str) {
        let kind = match request_number(id) {
            Some(n) if self.pending.remove(&n).is_some() => return,
            Some(n) if self.stale.contains(&n) => "stale_response_id",
            Some(n) if n <= self.last_request => "duplicate_response_id",
            _ => "unknown_response_id",
        };
        if let Some(count) = UNMATCHED_REPLY.hit() {
            tracing::warn!(id = %id.escape_debug(), %kind, count, "a reply to no pending request; ignored");
        }
    }

    /// Queues a `lagged` event with the dropped count, if any and a request may wait.
    fn tell_dropped(&mut self) {
        let stale_after = self.config.stale_after;
        while let Some((&n, sent)) = self.pending.first_key_value() {
            if sent.elapsed() < stale_after {
                break;
            }
            self.pending.pop_first();
            if self.stale.len() >= self.config.max_pending {
                self.stale.pop_front();
            }
            self.stale.push_back(n);
        }
        if self.dropped > 0 && self.pending.len() < self.config.max_pending {
            let missed = std::mem::take(&mut self.dropped);
            let request = self.request();
            let lagged = Published::new(Event::Lagged { missed });
            self.queue.push_back(outgoing::event(&lagged, request));
        }
    }

    /// Queues an event as a numbered request, or drops and counts it.
    fn queue_event(&mut self, event: &Published) {
        self.tell_dropped();
        if self.pending.len() >= self.config.max_pending {
            self.dropped += match event.event.event {
                Event::Lagged { missed } => missed,
                _ => 1,
            };
            tracing::debug!(dropped = self.dropped, "no room: an event dropped");
            return;
        }
        let request = self.request();
        self.queue.push_back(outgoing::event(event, request));
    }

    fn poll_write(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.queue.is_empty() {
            ready!(Pin::new(&mut self.inner).poll_ready(cx))?;
            let message = self.queue.pop_front().expect("not empty");
            Pin::new(&mut self.inner).start_send(message)?;
            self.unflushed = true;
        }
        Poll::Ready(Ok(()))
    }

    /// The heartbeat's turn, when its timer fires: a new request, or the verdict on the last.
    fn beat(&mut self) -> Result<(), Violation> {
        let now = Instant::now();
        let next = match self.beat_sent.take() {
            None => {
                let request = self.request();
                self.queue.push_back(outgoing::heartbeat_request(request));
                self.beat_sent = Some(now);
                now + self.config.heartbeat_timeout
            }
            Some(sent) if self.heard >= sent => sent + self.config.heartbeat,
            Some(_) => {
                tracing::warn!(
                    timeout_ms = self.config.heartbeat_timeout.as_millis() as u64,
                    "no answer to rpc.heartbeat; closing the connection"
                );
                return Err(Violation::Unresponsive);
            }
        };
        self.timer.as_mut().reset(next);
        Ok(())
    }

    /// What one message from the peer calls for: a request to pass on, if it is one.
    fn read(&mut self, text: &Bytes) -> Result<Option<Request>, Violation> {
        self.heard = Instant::now();
        match envelope::parse(text, Strictness::Strict) {
            Ok(Message::Request { id, method, .. }) if method == HEARTBEAT => {
                let reply = Response {
                    id: id.expect("a strict request has an id").to_owned(),
                    outcome: Ok(b"{}".to_vec()),
                };
                self.queue.push_back(outgoing::reply(reply));
            }
            Ok(Message::Request { id, method, params }) => {
                return Ok(Some(Request {
                    id: id.expect("a strict request has an id").to_owned(),
                    method: method.into_owned(),
                    params: params.map(ToOwned::to_owned),
                }))
            }
            Ok(Message::Reply { id }) => {
                let id: String = serde_json::from_str(id.get()).expect("a checked id is a string");
                self.replied(&id);
                self.tell_dropped();
            }
            Err(Rejected {
                id: Some(id),
                error,
            }) => {
                if let Some(count) = INVALID.hit() {
                    tracing::warn!(error = %error.message, count, "an invalid holon-rpc envelope");
                }
                self.queue
                    .push_back(outgoing::reply(Response::error(id, error)));
            }
            Err(Rejected { id: None, error }) => {
                let reason = format!("{} {}", error.code, error.message);
                tracing::warn!(%reason, "an unanswerable holon-rpc message; closing");
                return Err(Violation::Unanswerable(reason));
            }
        }
        Ok(None)
    }
}

impl<T> Stream for Holon<T>
where
    T: Stream<Item = io::Result<Bytes>> + Sink<String, Error = io::Error> + Unpin,
{
    type Item = io::Result<Frame>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if this.violation.is_some() {
                return Poll::Ready(None);
            }
            if let Poll::Ready(Err(e)) = this.poll_write(cx) {
                return Poll::Ready(Some(Err(e)));
            }
            if this.unflushed {
                match Pin::new(&mut this.inner).poll_flush(cx) {
                    Poll::Ready(Ok(())) => this.unflushed = false,
                    Poll::Ready(Err(e)) => return Poll::Ready(Some(Err(e))),
                    Poll::Pending => {}
                }
            }
            if this.timer.as_mut().poll(cx).is_ready() {
                if let Err(violation) = this.beat() {
                    this.violation = Some(violation);
                }
                continue;
            }
            let text = match ready!(Pin::new(&mut this.inner).poll_next(cx)) {
                Some(Ok(text)) => text,
                other => return Poll::Ready(other.map(|r| r.map(Frame::Message))),
            };
            match this.read(&text) {
                Ok(Some(request)) => return Poll::Ready(Some(Ok(Frame::Request(request)))),
                Ok(None) => {}
                Err(violation) => this.violation = Some(violation),
            }
        }
    }
}

impl<T> Sink<Outgoing> for Holon<T>
where
    T: Stream<Item = io::Result<Bytes>> + Sink<String, Error = io::Error> + Unpin,
{
    type Error = io::Error;

    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_write(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, item: Outgoing) -> io::Result<()> {
        match item {
            Outgoing::Response(reply) | Outgoing::Subscribed(reply) => {
                self.queue.push_back(outgoing::reply(reply))
            }
            Outgoing::Event(event) => self.queue_event(&event),
        }
        Ok(())
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_write(cx))?;
        ready!(Pin::new(&mut self.inner).poll_flush(cx))?;
        self.unflushed = false;
        Poll::Ready(Ok(()))
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_write(cx))?;
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

/// The number N of a server-initiated request id `s<N>` (digits only, no leading zero).
fn request_number(id: &str) -> Option<u64> {
    let digits = id.strip_prefix('s')?;
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    canonical.then(|| digits.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_canonical_request_ids_have_a_number() {
        let cases = [
            ("s1", Some(1)),
            ("s42", Some(42)),
            ("s0", Some(0)),
            ("s01", None),
            ("s", None),
            ("1", None),
            ("s1a", None),
            ("s99999999999999999999999", None),
        ];
        for (id, number) in cases {
            assert_eq!(request_number(id), number, "{id}");
        }
    }
}
