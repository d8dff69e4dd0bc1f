//! Events on a connection: the subscription's events as outgoing items, server-initiated
//! requests numbered and matched (`Delivery::Requests`), the pending cap and stale requests,
//! `rpc.heartbeat` both ways, and a taken-over NDJSON connection that carries only events.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::{Sink, SinkExt, Stream, StreamExt};
use hld_client::protocol::Event;
use tokio::time::{Instant, Sleep};

use super::{Delivery, Ended, Frame, Outgoing, Settings, MISTAKES_A_SECOND};
use crate::bus::{Published, Received, Subscriber};
use crate::throttle::Throttle;

/// The outgoing item of something received from the bus.
pub(super) fn event_item(received: Received, request: Option<u64>) -> Outgoing {
    let event = match received {
        Received::Event(event) => event,
        Received::Lagged(missed) => Arc::new(Published::new(Event::Lagged { missed })),
    };
    Outgoing::Event { event, request }
}

/// Replies to no pending request, logged through a throttle: a peer can send any number.
static UNMATCHED_REPLY: Throttle = Throttle::burst(MISTAKES_A_SECOND);

/// At most this many bytes of events are coalesced into one write.
pub(super) const COALESCE: usize = 64 * 1024;

/// A taken-over connection ([`Delivery::TakeOver`]): events as they come (those already
/// queued share a write), a heartbeat after each quiet `heartbeat`; what the client sends is
/// read and dropped. The subscription ends when the client leaves or the bus closes (at
/// shutdown, after the sessions' last events).
pub(super) async fn forward<C>(mut conn: C, mut events: Events) -> Ended
where
    C: Stream<Item = io::Result<Frame>> + Sink<Outgoing, Error = io::Error> + Unpin,
{
    // The heartbeat is due `heartbeat` after the last write; the timer is moved when it
    // fires, not at every write (a timer moved per event per subscriber is a cost that grows
    // with both).
    let heartbeat = events.settings.heartbeat;
    let mut last_write = Instant::now();
    let quiet = tokio::time::sleep(heartbeat);
    tokio::pin!(quiet);
    let ended = loop {
        tokio::select! {
            biased;
            received = events.next() => {
                let Some(received) = received else { break Ended::Shutdown };
                if events.send(&mut conn, Some(received)).await.is_err() {
                    return Ended::Failed;
                }
                last_write = Instant::now();
            }
            frame = conn.next() => if !matches!(frame, Some(Ok(_))) { break Ended::Left },
            () = &mut quiet => {
                if last_write.elapsed() >= heartbeat {
                    if conn.send(Outgoing::Heartbeat { request: None }).await.is_err() {
                        return Ended::Failed;
                    }
                    last_write = Instant::now();
                }
                quiet.as_mut().reset(last_write + heartbeat);
            }
        }
    };
    let _ = conn.flush().await;
    ended
}

/// A connection's events: its subscription and, with [`Delivery::Requests`], the
/// server-initiated requests waiting for a reply and the heartbeat.
pub(super) struct Events {
    settings: Settings,
    pub(super) subscriber: Option<Subscriber>,
    /// Server-initiated requests waiting for a reply: number → when sent. Numbers grow with
    /// time, so the stalest come first.
    pending: BTreeMap<u64, Instant>,
    /// The last requests forgotten as stale (at most `max_pending`), to tell a late reply
    /// from a duplicate one.
    stale: VecDeque<u64>,
    /// The number of the last server-initiated request.
    last_request: u64,
    /// Events dropped because too many requests were waiting; told as soon as one fewer waits.
    dropped: u64,
}

/// The heartbeat of a connection with [`Delivery::Requests`]: an `rpc.heartbeat` request
/// every `heartbeat`, and a peer that has sent nothing within `heartbeat_timeout` of one is
/// taken for gone. Any message counts as an answer, an error reply included.
pub(super) struct Heartbeat {
    /// When the next heartbeat is due, or the deadline of the one sent; `None` on other
    /// transports.
    timer: Option<Pin<Box<Sleep>>>,
    /// When the heartbeat awaiting an answer was sent.
    sent: Option<Instant>,
    every: Duration,
    timeout: Duration,
}

/// What the heartbeat's timer found.
pub(super) enum Pulse {
    /// Send heartbeat request number N.
    Beat(u64),
    /// The peer answered the last one in time.
    Alive,
    /// It did not.
    Dead,
}

impl Events {
    pub(super) fn new(settings: Settings) -> Events {
        Events {
            settings,
            subscriber: None,
            pending: BTreeMap::new(),
            stale: VecDeque::new(),
            last_request: 0,
            dropped: 0,
        }
    }

    /// The next event for the connection: first the count of those dropped, once there is
    /// room for it (so that a client that catches up after a burst learns what it missed
    /// without waiting for another event); never resolves without a subscription.
    pub(super) async fn next(&mut self) -> Option<Received> {
        if let Some(missed) = self.missed() {
            return Some(Received::Lagged(missed));
        }
        match self.subscriber.as_mut() {
            Some(subscriber) => subscriber.next().await,
            None => std::future::pending().await,
        }
    }

    /// Writes what the bus gave, with the events already queued behind it (up to
    /// [`COALESCE`] bytes), then flushes them together. The subscription ends when the bus
    /// is gone.
    pub(super) async fn send<C>(
        &mut self,
        conn: &mut C,
        received: Option<Received>,
    ) -> io::Result<()>
    where
        C: Sink<Outgoing, Error = io::Error> + Unpin,
    {
        let Some(mut received) = received else {
            self.subscriber = None;
            return Ok(());
        };
        let mut batch = 0;
        loop {
            if let Received::Event(event) = &received {
                batch += event.json().len();
            }
            self.feed(conn, received).await?;
            // Past the batch's size, what is left waits for the next round.
            if batch >= COALESCE {
                break;
            }
            match self.subscriber.as_mut().and_then(Subscriber::try_next) {
                Some(next) => received = next,
                None => break,
            }
        }
        conn.flush().await
    }

    /// Queues one event; with [`Delivery::Requests`], as a numbered request while fewer than
    /// `max_pending` wait for a reply, else dropped and counted, the count told by a `lagged`
    /// event once there is room, before any later event.
    pub(super) async fn feed<C>(&mut self, conn: &mut C, received: Received) -> io::Result<()>
    where
        C: Sink<Outgoing, Error = io::Error> + Unpin,
    {
        if self.settings.delivery != Delivery::Requests {
            return conn.feed(event_item(received, None)).await;
        }
        if let Some(missed) = self.missed() {
            let request = self.request();
            conn.feed(event_item(Received::Lagged(missed), Some(request)))
                .await?;
        }
        if self.pending.len() >= self.settings.max_pending {
            self.dropped += match received {
                Received::Event(_) => 1,
                Received::Lagged(missed) => missed,
            };
            tracing::debug!(dropped = self.dropped, "no room: an event dropped");
            return Ok(());
        }
        let request = self.request();
        conn.feed(event_item(received, Some(request))).await
    }

    /// The count of dropped events, taken, when there are some and room to tell it (stale
    /// requests forgotten first).
    pub(super) fn missed(&mut self) -> Option<u64> {
        self.forget_stale();
        let room = self.pending.len() < self.settings.max_pending;
        (self.dropped > 0 && room).then(|| std::mem::take(&mut self.dropped))
    }

    /// Numbers a new server-initiated request and waits for its reply.
    pub(super) fn request(&mut self) -> u64 {
        self.last_request += 1;
        self.pending.insert(self.last_request, Instant::now());
        self.last_request
    }

    /// The peer replied to the request `id`. A reply to no pending request is ignored and
    /// logged with spec/002's classification: to one forgotten as stale, to one already
    /// settled (a duplicate), or to one never sent (unknown).
    pub(super) fn replied(&mut self, id: &str) {
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

    pub(super) fn forget_stale(&mut self) {
        let stale_after = self.settings.stale_after;
        let mut forgotten = 0;
        while let Some((&n, sent)) = self.pending.first_key_value() {
            if sent.elapsed() < stale_after {
                break;
            }
            self.pending.pop_first();
            if self.stale.len() >= self.settings.max_pending.max(1) {
                self.stale.pop_front();
            }
            self.stale.push_back(n);
            forgotten += 1;
        }
        if forgotten > 0 {
            tracing::debug!(forgotten, "stale requests forgotten");
        }
    }
}

impl Heartbeat {
    pub(super) fn new(settings: &Settings) -> Heartbeat {
        Heartbeat {
            timer: (settings.delivery == Delivery::Requests)
                .then(|| Box::pin(tokio::time::sleep(settings.heartbeat))),
            sent: None,
            every: settings.heartbeat,
            timeout: settings.heartbeat_timeout,
        }
    }

    /// Resolves when the timer fires; never without [`Delivery::Requests`].
    pub(super) async fn due(&mut self) {
        match self.timer.as_mut() {
            Some(timer) => timer.as_mut().await,
            None => std::future::pending().await,
        }
    }

    /// The timer's turn, `heard` being when the peer last sent anything: a new heartbeat
    /// request, numbered among `events`' requests (its deadline set), or the verdict on the
    /// last one (and the next one scheduled).
    pub(super) fn turn(&mut self, heard: Instant, events: &mut Events) -> Pulse {
        let (pulse, next) = match self.sent.take() {
            None => {
                let now = Instant::now();
                self.sent = Some(now);
                (Pulse::Beat(events.request()), now + self.timeout)
            }
            Some(sent) if heard >= sent => (Pulse::Alive, sent + self.every),
            Some(_) => return Pulse::Dead,
        };
        if let Some(timer) = self.timer.as_mut() {
            timer.as_mut().reset(next);
        }
        pulse
    }
}

/// The number N of a server-initiated request id `s<N>` (digits only, no leading zero).
pub(super) fn request_number(id: &str) -> Option<u64> {
    let digits = id.strip_prefix('s')?;
    let canonical = digits.bytes().all(|b| b.is_ascii_digit())
        && !digits.is_empty()
        && (digits == "0" || !digits.starts_with('0'));
    canonical.then(|| digits.parse().ok()).flatten()
}

/// An event as a message of its own: the notification `{"jsonrpc":"2.0","method":"event",
/// "params":{"event":…}}`, or with `request`, the server-initiated request `"id":"s<N>"`. For
/// transports that keep serving requests beside the events.
pub fn event_message(event: &Published, request: Option<u64>) -> Vec<u8> {
    let mut out = Vec::with_capacity(event.json().len() + 64);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",");
    if let Some(n) = request {
        write_request_id(&mut out, n);
    }
    out.extend_from_slice(b"\"method\":\"event\",\"params\":{\"event\":");
    out.extend_from_slice(event.json());
    out.extend_from_slice(b"}}");
    out
}

/// The server-initiated request `rpc.heartbeat` number `request`:
/// `{"jsonrpc":"2.0","id":"s<N>","method":"rpc.heartbeat","params":{}}`.
pub fn heartbeat_request(request: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(80);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",");
    write_request_id(&mut out, request);
    out.extend_from_slice(b"\"method\":\"rpc.heartbeat\",\"params\":{}}");
    out
}

/// `"id":"s<N>",`
pub(super) fn write_request_id(out: &mut Vec<u8>, n: u64) {
    use std::io::Write;
    write!(out, "\"id\":\"s{n}\",").expect("writing to memory does not fail");
}
