//! JSON-RPC over any transport: the one connection loop.
//!
//! A transport supplies a framed, bidirectional stream: a [`Stream`] of [`Frame`]s (one per
//! message) and a [`Sink`] of [`Outgoing`] items, whose encoder decides how each is framed
//! (NDJSON lines today). [`serve`] reads a message, dispatches it through the [`Router`] and
//! writes the reply, one message at a time, so replies come in request order. Replies to
//! requests that were read together are written together; while the client does not read, the
//! transport's write buffer fills, the loop stops reading, and the kernel's flow control
//! reaches the client, so a connection's unsent replies stay bounded.
//!
//! `Subscribe` is served here, not by a handler, because it changes the connection: on a
//! transport with [`Delivery::TakeOver`] (NDJSON, as the anchor's clients expect) the
//! connection carries only events and heartbeats from then on; on the others requests keep
//! working beside the events, which go out as notifications or as server-initiated requests
//! whose replies the loop matches. On the latter ([`Delivery::Requests`]) the loop also sends
//! its own `rpc.heartbeat` requests and ends a connection whose peer stops answering.

pub mod envelope;
pub mod error;
pub mod router;

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::{FutureExt, Sink, SinkExt, Stream, StreamExt};
use hld_client::protocol::{
    ErrorObject, Event, EventType, InvalidRequestReason, SubscribeParams, SubscribeResult,
    EVENT_TYPES, SUBSCRIPTION_ESTABLISHED,
};
use serde_json::value::RawValue;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::CancellationToken;

use self::envelope::{method_not_found, null_id, Message};
use self::error::{error_object, invalid_request};
use self::router::{decode_params, Route};
use crate::bus::{Filter, Published, Received, Subscriber};
use crate::config::Config;
use crate::daemon::Daemon;
use crate::error::Error;
use crate::throttle::Throttle;
pub use crate::transport::Frame;
pub use router::Router;

/// A reply to one request.
#[derive(Debug, Clone)]
pub struct Response {
    /// The request's id, as it came.
    pub id: Box<RawValue>,
    /// The result as JSON, or the error.
    pub outcome: Result<Bytes, ErrorObject>,
}

impl PartialEq for Response {
    fn eq(&self, other: &Response) -> bool {
        self.id.get() == other.id.get() && self.outcome == other.outcome
    }
}

impl Response {
    /// An error reply.
    pub fn error(id: Box<RawValue>, error: ErrorObject) -> Response {
        Response {
            id,
            outcome: Err(error),
        }
    }

    /// The reply as one JSON object: `{"jsonrpc":"2.0","result"|"error":…,"id":…}`.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_json(&mut out)
            .expect("writing to memory does not fail");
        out
    }

    /// [`Response::to_json`] written to `out`. Every reply is written here.
    pub fn write_json(&self, mut out: impl std::io::Write) -> io::Result<()> {
        out.write_all(b"{\"jsonrpc\":\"2.0\",")?;
        match &self.outcome {
            Ok(result) => {
                out.write_all(b"\"result\":")?;
                out.write_all(result)?;
            }
            Err(error) => {
                out.write_all(b"\"error\":")?;
                serde_json::to_writer(&mut out, error)?;
            }
        }
        out.write_all(b",\"id\":")?;
        out.write_all(self.id.get().as_bytes())?;
        out.write_all(b"}")
    }
}

/// What a connection writes; the transport's encoder frames it.
#[derive(Debug)]
pub enum Outgoing {
    /// A reply.
    Response(Response),
    /// An event for the connection's subscription. `request` is the id number of the
    /// server-initiated request that carries it, on transports that send events as requests
    /// (`s1`, `s2`, …).
    Event {
        /// The event.
        event: Arc<Published>,
        /// The request's number, for [`Delivery::Requests`].
        request: Option<u64>,
    },
    /// Proof of life: on an idle subscription ([`Delivery::TakeOver`]), or with `request`, the
    /// server-initiated `rpc.heartbeat` request `"id":"s<N>"` the peer must answer
    /// ([`Delivery::Requests`]).
    Heartbeat {
        /// The request's number, for [`Delivery::Requests`].
        request: Option<u64>,
    },
}

/// How a transport carries a subscriber's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// `Subscribe` takes the connection over: it carries only events and heartbeats from then
    /// on, and what the client sends is read and dropped (NDJSON).
    TakeOver,
    /// Requests keep working beside the events, which go out as notifications (stdio).
    Notifications,
    /// Requests keep working beside the events, which go out as server-initiated requests;
    /// the client's replies are matched to them (WebSocket).
    Requests,
}

/// How a connection is served.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// How events travel.
    pub delivery: Delivery,
    /// [`Delivery::TakeOver`]: a heartbeat follows this long without anything written to a
    /// subscription. [`Delivery::Requests`]: an `rpc.heartbeat` request goes out this often.
    pub heartbeat: Duration,
    /// [`Delivery::Requests`]: a peer that has sent nothing this long after a heartbeat
    /// request was sent is taken for gone ([`Ended::Unresponsive`]).
    pub heartbeat_timeout: Duration,
    /// At most this many server-initiated requests wait for a reply; events beyond are
    /// dropped and counted ([`Delivery::Requests`]).
    pub max_pending: usize,
    /// A server-initiated request unanswered this long is forgotten.
    pub stale_after: Duration,
    /// `shutdown` ends this connection, not the daemon: an editor's (stdio) or a browser's
    /// (WebSocket) connection must not stop what other front ends are watching.
    pub shutdown_ends_connection: bool,
    /// The error for a method the table does not have (each transport's peers expect their
    /// own wording).
    pub method_not_found: fn(&str) -> ErrorObject,
}

impl Settings {
    /// The Unix socket's NDJSON connections: `Subscribe` takes them over.
    pub fn ndjson(config: &Config) -> Settings {
        Settings {
            delivery: Delivery::TakeOver,
            heartbeat: config.heartbeat_interval,
            heartbeat_timeout: Duration::ZERO,
            max_pending: 0,
            stale_after: Duration::ZERO,
            shutdown_ends_connection: false,
            method_not_found,
        }
    }

    /// Content-Length-framed connections (`hld --stdio`): events as notifications, and
    /// `shutdown` ends only the connection.
    pub fn content_length(config: &Config) -> Settings {
        Settings {
            delivery: Delivery::Notifications,
            shutdown_ends_connection: true,
            ..Settings::ndjson(config)
        }
    }
}

/// Why [`serve`] returned, for a transport that tells its peer (WebSocket's close codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The peer left, or its stream ended (a transport that ends it for a violation knows
    /// which).
    Left,
    /// The daemon is shutting down.
    Shutdown,
    /// `shutdown` was asked of a connection that ends with it.
    Closed,
    /// The peer sent nothing within the heartbeat timeout.
    Unresponsive,
    /// Writing to the peer failed.
    Failed,
}

/// What the loop does with one incoming frame.
enum Handled {
    Reply(Response),
    Silent,
    /// `shutdown` of a connection that ends with it: its reply, if it was a request.
    Close(Option<Response>),
    Subscribe(Box<RawValue>, SubscribeParams),
    /// The peer's reply to the server-initiated request of this id (its text).
    ClientReply(String),
}

/// Serves one connection until the client leaves or `shutdown` is cancelled: requests in
/// order, one reply each (none for a notification). Returns why it ended.
pub async fn serve<C>(
    mut conn: C,
    daemon: Arc<Daemon>,
    settings: Settings,
    shutdown: CancellationToken,
) -> Ended
where
    C: Stream<Item = io::Result<Frame>> + Sink<Outgoing, Error = io::Error> + Unpin,
{
    let mut events = Events::new(settings);
    let mut heartbeat = Heartbeat::new(&settings);
    // One wait for the token, for the whole connection (a new one per request would take its
    // lock twice per request).
    let cancelled = shutdown.clone().cancelled_owned();
    tokio::pin!(cancelled);
    // When the peer last sent anything: any message proves it alive.
    let mut heard = Instant::now();
    // What its replies hold of the daemon's budget, given back once they are written.
    let mut account = daemon.budget.account();
    let ended = loop {
        // Requests already read are answered before their replies are flushed together (a
        // shutdown is noticed once they are).
        let frame = match conn.next().now_or_never() {
            Some(frame) => frame,
            None => {
                if conn.flush().await.is_err() {
                    return Ended::Failed;
                }
                account.release();
                tokio::select! {
                    biased;
                    () = &mut cancelled => break Ended::Shutdown,
                    frame = conn.next() => frame,
                    received = events.next() => {
                        if events.send(&mut conn, received).await.is_err() {
                            return Ended::Failed;
                        }
                        continue;
                    }
                    () = heartbeat.due() => {
                        match heartbeat.turn(heard, &mut events) {
                            Pulse::Beat(request) => {
                                let beat = Outgoing::Heartbeat { request: Some(request) };
                                if conn.send(beat).await.is_err() {
                                    return Ended::Failed;
                                }
                            }
                            Pulse::Alive => {}
                            Pulse::Dead => {
                                tracing::warn!(
                                    timeout_ms = settings.heartbeat_timeout.as_millis() as u64,
                                    "no answer to rpc.heartbeat; closing the connection"
                                );
                                break Ended::Unresponsive;
                            }
                        }
                        continue;
                    }
                }
            }
        };
        let Some(Ok(frame)) = frame else {
            break Ended::Left;
        };
        heard = Instant::now();
        if matches!(frame, Frame::Message(_)) && account.reserve(&mut conn).await.is_err() {
            return Ended::Failed;
        }
        let reply = match handle(&daemon, frame, &settings).await {
            Handled::Reply(response) => response,
            Handled::Silent => continue,
            Handled::Close(reply) => {
                if let Some(reply) = reply {
                    let _ = conn.feed(Outgoing::Response(reply)).await;
                }
                tracing::info!("shutdown of this connection requested; closing it");
                break Ended::Closed;
            }
            Handled::ClientReply(id) => {
                events.replied(&id);
                continue;
            }
            Handled::Subscribe(id, params) => match subscribe(&daemon, params) {
                Ok((subscriber, confirmation)) => {
                    let confirmed = Response {
                        id,
                        outcome: Ok(confirmation),
                    };
                    if conn.send(Outgoing::Response(confirmed)).await.is_err() {
                        return Ended::Failed;
                    }
                    events.subscriber = Some(subscriber);
                    account.release();
                    if settings.delivery == Delivery::TakeOver {
                        return forward(conn, events).await;
                    }
                    continue;
                }
                Err(error) => Response::error(id, error),
            },
        };
        // Settled once queued: until then the reservation also covers the reply's copy.
        let size = reply.outcome.as_ref().map_or(0, Bytes::len);
        if conn.feed(Outgoing::Response(reply)).await.is_err()
            || account.built(&mut conn, size).await.is_err()
        {
            return Ended::Failed;
        }
    };
    let _ = conn.flush().await;
    ended
}

// What a peer sends wrong is logged through a throttle per kind, each mistake on its own line
// up to a few a second: a client that sends nothing but mistakes cannot fill the log.
const MISTAKES_A_SECOND: u32 = 10;
static REJECTED: Throttle = Throttle::burst(MISTAKES_A_SECOND);
static UNKNOWN_METHOD: Throttle = Throttle::burst(MISTAKES_A_SECOND);
static INVALID_PARAMS: Throttle = Throttle::burst(MISTAKES_A_SECOND);
static UNMATCHED_REPLY: Throttle = Throttle::burst(MISTAKES_A_SECOND);

/// Handles one frame: dispatches a request, or says what else the frame is. A reply from
/// the client is taken only where the server sends requests.
async fn handle(daemon: &Arc<Daemon>, frame: Frame, settings: &Settings) -> Handled {
    let delivery = settings.delivery;
    let bytes = match frame {
        Frame::Message(bytes) => bytes,
        Frame::Rejected(error) => {
            if let Some(count) = REJECTED.hit() {
                tracing::warn!(code = error.code, error = %error.message, count, "rejected a message");
            }
            return Handled::Reply(Response::error(null_id(), error));
        }
        Frame::Answered(response) => return Handled::Reply(response),
        Frame::Replied(id) => return Handled::ClientReply(id),
    };
    let (id, method, params) = match envelope::parse(&bytes) {
        Ok(Message::Request { id, method, params }) => (id, method, params),
        Ok(Message::Reply { id }) if delivery == Delivery::Requests => {
            // A string id's text; any other id is kept as written and matches no request.
            let text = serde_json::from_str(id.get()).unwrap_or_else(|_| id.get().to_owned());
            return Handled::ClientReply(text);
        }
        Ok(Message::Reply { id }) => {
            let error = invalid_request(
                "Invalid request: method must be a string",
                InvalidRequestReason::InvalidEnvelope,
            );
            return Handled::Reply(Response::error(id.to_owned(), error));
        }
        Err(rejected) => {
            if let Some(count) = REJECTED.hit() {
                let error = &rejected.error;
                tracing::warn!(code = error.code, error = %error.message, count, "rejected a request");
            }
            return Handled::Reply(Response::error(rejected.id, rejected.error));
        }
    };
    let reply_to = |outcome| match id {
        Some(id) => Handled::Reply(Response {
            id: id.to_owned(),
            outcome,
        }),
        None => Handled::Silent,
    };
    if settings.shutdown_ends_connection
        && method == <hld_client::protocol::Shutdown as hld_client::protocol::Method>::NAME
    {
        let reply = id.map(|id| {
            let result = hld_client::protocol::ShutdownResult {
                message: "Shutting down gracefully".into(),
            };
            Response {
                id: id.to_owned(),
                outcome: Ok(Bytes::from(
                    serde_json::to_vec(&result).expect("a shutdown result serialises"),
                )),
            }
        });
        return Handled::Close(reply);
    }
    let Some(route) = daemon.router.get(&method) else {
        if let Some(count) = UNKNOWN_METHOD.hit() {
            tracing::warn!(method = %method.escape_debug(), count, "unknown method");
        }
        return reply_to(Err((settings.method_not_found)(&method)));
    };
    tracing::debug!(method = %method, "request");
    let handler = match route {
        Route::Handler(handler) => handler,
        Route::Connection => {
            let Some(id) = id else {
                if let Some(count) = REJECTED.hit() {
                    tracing::warn!(method = %method, count, "sent as a notification; ignored");
                }
                return Handled::Silent;
            };
            return match decode_params::<hld_client::protocol::Subscribe>(params) {
                Ok(params) => Handled::Subscribe(id.to_owned(), params),
                Err(e) => reply_to(Err(error_object(&e))),
            };
        }
    };
    let outcome = handler(Arc::clone(daemon), params).await.map_err(|e| {
        match &e {
            Error::Internal { public, source } => {
                tracing::error!(method = %method, error = %public, detail = %source, "request failed")
            }
            Error::InvalidParams { message, .. } => {
                if let Some(count) = INVALID_PARAMS.hit() {
                    tracing::warn!(method = %method, error = %message, count, "invalid params")
                }
            }
        }
        error_object(&e)
    });
    reply_to(outcome)
}

/// A new subscription, and its confirmation; unknown event types are -32602.
fn subscribe(daemon: &Daemon, params: SubscribeParams) -> Result<(Subscriber, Bytes), ErrorObject> {
    for (i, t) in params.event_types.iter().flatten().enumerate() {
        if EventType::parse(t.as_str()).is_none() {
            let e = Error::not_accepted(&format!("event_types[{i}]"), t.as_str(), &EVENT_TYPES);
            return Err(error_object(&e));
        }
    }
    let subscriber = daemon.bus.subscribe(Filter::from(params));
    let confirmation = SubscribeResult {
        subscription_id: format!("sub_{}", uuid::Uuid::new_v4()),
        message: SUBSCRIPTION_ESTABLISHED.to_owned(),
    };
    let confirmation = serde_json::to_vec(&confirmation).expect("a confirmation serialises");
    let confirmation = Bytes::from(confirmation);
    Ok((subscriber, confirmation))
}

/// The outgoing item of something received from the bus.
fn event_item(received: Received, request: Option<u64>) -> Outgoing {
    let event = match received {
        Received::Event(event) => event,
        Received::Lagged(missed) => Arc::new(Published::new(Event::Lagged { missed })),
    };
    Outgoing::Event { event, request }
}

/// At most this many bytes of events are coalesced into one write.
const COALESCE: usize = 64 * 1024;

/// A taken-over connection ([`Delivery::TakeOver`]): events as they come (those already
/// queued share a write), a heartbeat after each quiet `heartbeat`; what the client sends is
/// read and dropped. The subscription ends when the client leaves or the bus closes (at
/// shutdown, after the sessions' last events).
async fn forward<C>(mut conn: C, mut events: Events) -> Ended
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
struct Events {
    settings: Settings,
    subscriber: Option<Subscriber>,
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
struct Heartbeat {
    /// When the next heartbeat is due, or the deadline of the one sent; `None` on other
    /// transports.
    timer: Option<Pin<Box<Sleep>>>,
    /// When the heartbeat awaiting an answer was sent.
    sent: Option<Instant>,
    every: Duration,
    timeout: Duration,
}

/// What the heartbeat's timer found.
enum Pulse {
    /// Send heartbeat request number N.
    Beat(u64),
    /// The peer answered the last one in time.
    Alive,
    /// It did not.
    Dead,
}

impl Events {
    fn new(settings: Settings) -> Events {
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
    async fn next(&mut self) -> Option<Received> {
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
    async fn send<C>(&mut self, conn: &mut C, received: Option<Received>) -> io::Result<()>
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
                batch += event.json.len();
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
    async fn feed<C>(&mut self, conn: &mut C, received: Received) -> io::Result<()>
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
    fn missed(&mut self) -> Option<u64> {
        self.forget_stale();
        let room = self.pending.len() < self.settings.max_pending;
        (self.dropped > 0 && room).then(|| std::mem::take(&mut self.dropped))
    }

    /// Numbers a new server-initiated request and waits for its reply.
    fn request(&mut self) -> u64 {
        self.last_request += 1;
        self.pending.insert(self.last_request, Instant::now());
        self.last_request
    }

    /// The peer replied to the request `id`. A reply to no pending request is ignored and
    /// logged with spec/002's classification: to one forgotten as stale, to one already
    /// settled (a duplicate), or to one never sent (unknown).
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

    fn forget_stale(&mut self) {
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
    fn new(settings: &Settings) -> Heartbeat {
        Heartbeat {
            timer: (settings.delivery == Delivery::Requests)
                .then(|| Box::pin(tokio::time::sleep(settings.heartbeat))),
            sent: None,
            every: settings.heartbeat,
            timeout: settings.heartbeat_timeout,
        }
    }

    /// Resolves when the timer fires; never without [`Delivery::Requests`].
    async fn due(&mut self) {
        match self.timer.as_mut() {
            Some(timer) => timer.as_mut().await,
            None => std::future::pending().await,
        }
    }

    /// The timer's turn, `heard` being when the peer last sent anything: a new heartbeat
    /// request, numbered among `events`' requests (its deadline set), or the verdict on the
    /// last one (and the next one scheduled).
    fn turn(&mut self, heard: Instant, events: &mut Events) -> Pulse {
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
fn request_number(id: &str) -> Option<u64> {
    let digits = id.strip_prefix('s')?;
    let canonical = digits.bytes().all(|b| b.is_ascii_digit())
        && !digits.is_empty()
        && (digits == "0" || !digits.starts_with('0'));
    canonical.then(|| digits.parse().ok()).flatten()
}

/// The error for a message over a transport's size limit.
pub fn oversize() -> ErrorObject {
    invalid_request("Message too large", InvalidRequestReason::Oversize)
}

/// An event as a message of its own: the notification `{"jsonrpc":"2.0","method":"event",
/// "params":{"event":…}}`, or with `request`, the server-initiated request `"id":"s<N>"`. For
/// transports that keep serving requests beside the events.
pub fn event_message(event: &Published, request: Option<u64>) -> Vec<u8> {
    let mut out = Vec::with_capacity(event.json.len() + 64);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",");
    if let Some(n) = request {
        write_request_id(&mut out, n);
    }
    out.extend_from_slice(b"\"method\":\"event\",\"params\":{\"event\":");
    out.extend_from_slice(&event.json);
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
fn write_request_id(out: &mut Vec<u8>, n: u64) {
    use std::io::Write;
    write!(out, "\"id\":\"s{n}\",").expect("writing to memory does not fail");
}

#[cfg(test)]
mod tests;
