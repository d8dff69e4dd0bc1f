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
//! whose replies the loop matches.

pub mod envelope;
pub mod error;
pub mod router;

use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::{FutureExt, Sink, SinkExt, Stream, StreamExt};
use hld_client::protocol::{
    ErrorObject, Event, EventType, InvalidRequestReason, SubscribeParams, SubscribeResult,
    EVENT_TYPES, SUBSCRIPTION_ESTABLISHED,
};
use serde_json::value::RawValue;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use self::envelope::{method_not_found, null_id, Message};
use self::error::{error_object, invalid_request};
use self::router::{decode_params, Route};
use crate::bus::{Filter, Published, Received, Subscriber};
use crate::daemon::Daemon;
use crate::error::Error;
pub use crate::transport::Frame;
pub use router::Router;

/// A reply to one request.
#[derive(Debug)]
pub struct Response {
    /// The request's id, as it came.
    pub id: Box<RawValue>,
    /// The result as JSON, or the error.
    pub outcome: Result<Bytes, ErrorObject>,
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
    /// Proof of life on an idle subscription ([`Delivery::TakeOver`]).
    Heartbeat,
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
    /// A heartbeat follows this long without anything written to a subscription
    /// ([`Delivery::TakeOver`]).
    pub heartbeat: Duration,
    /// At most this many server-initiated requests wait for a reply; events beyond are
    /// dropped and counted ([`Delivery::Requests`]).
    pub max_pending: usize,
    /// A server-initiated request unanswered this long is forgotten.
    pub stale_after: Duration,
    /// `shutdown` ends this connection, not the daemon: an editor's connection (stdio) must
    /// not stop what other front ends are watching.
    pub shutdown_ends_connection: bool,
}

impl Settings {
    /// NDJSON on the socket: `Subscribe` takes the connection over.
    pub fn ndjson(heartbeat: Duration) -> Settings {
        Settings {
            delivery: Delivery::TakeOver,
            heartbeat,
            max_pending: 0,
            stale_after: Duration::ZERO,
            shutdown_ends_connection: false,
        }
    }

    /// Content-Length framing, an editor's connection: events go out as notifications beside
    /// the replies, and `shutdown` ends this connection only.
    pub fn content_length(heartbeat: Duration) -> Settings {
        Settings {
            delivery: Delivery::Notifications,
            shutdown_ends_connection: true,
            ..Settings::ndjson(heartbeat)
        }
    }
}

/// What the loop does with one incoming frame.
enum Handled {
    Reply(Response),
    Silent,
    /// `shutdown` of a connection that ends with it: its reply, if it was a request.
    Close(Option<Response>),
    Subscribe(Box<RawValue>, SubscribeParams),
    ClientReply(String),
}

/// Serves one connection until the client leaves or `shutdown` is cancelled: requests in
/// order, one reply each (none for a notification).
pub async fn serve<C>(
    mut conn: C,
    daemon: Arc<Daemon>,
    settings: Settings,
    shutdown: CancellationToken,
) where
    C: Stream<Item = io::Result<Frame>> + Sink<Outgoing, Error = io::Error> + Unpin,
{
    let mut events = Events::new(settings);
    // One wait for the token, for the whole connection (a new one per request would take its
    // lock twice per request).
    let cancelled = shutdown.clone().cancelled_owned();
    tokio::pin!(cancelled);
    loop {
        // Requests already read are answered before their replies are flushed together (a
        // shutdown is noticed once they are).
        let frame = match conn.next().now_or_never() {
            Some(frame) => frame,
            None => {
                if conn.flush().await.is_err() {
                    return;
                }
                tokio::select! {
                    biased;
                    () = &mut cancelled => break,
                    frame = conn.next() => frame,
                    received = events.next() => {
                        if events.send(&mut conn, received).await.is_err() {
                            return;
                        }
                        continue;
                    }
                }
            }
        };
        let Some(Ok(frame)) = frame else { break };
        let reply = match handle(&daemon, frame, &settings).await {
            Handled::Reply(response) => response,
            Handled::Silent => continue,
            Handled::Close(reply) => {
                if let Some(reply) = reply {
                    let _ = conn.feed(Outgoing::Response(reply)).await;
                }
                tracing::info!("shutdown of this connection requested; closing it");
                break;
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
                        return;
                    }
                    if settings.delivery == Delivery::TakeOver {
                        forward(conn, subscriber, settings.heartbeat).await;
                        return;
                    }
                    events.subscriber = Some(subscriber);
                    continue;
                }
                Err(error) => Response::error(id, error),
            },
        };
        if conn.feed(Outgoing::Response(reply)).await.is_err() {
            return;
        }
    }
    let _ = conn.flush().await;
}

/// Handles one frame: dispatches a request, or says what else the frame is. A reply from
/// the client is taken only where the server sends requests.
async fn handle(daemon: &Arc<Daemon>, frame: Frame, settings: &Settings) -> Handled {
    let delivery = settings.delivery;
    let bytes = match frame {
        Frame::Message(bytes) => bytes,
        Frame::Rejected(error) => {
            tracing::warn!(code = error.code, error = %error.message, "rejected a message");
            return Handled::Reply(Response::error(null_id(), error));
        }
    };
    let (id, method, params) = match envelope::parse(&bytes) {
        Ok(Message::Request { id, method, params }) => (id, method, params),
        Ok(Message::Reply { id }) if delivery == Delivery::Requests => {
            return Handled::ClientReply(id.get().to_owned())
        }
        Ok(Message::Reply { id }) => {
            let error = invalid_request(
                "Invalid request: method must be a string",
                InvalidRequestReason::InvalidEnvelope,
            );
            return Handled::Reply(Response::error(id.to_owned(), error));
        }
        Err(rejected) => {
            tracing::warn!(code = rejected.error.code, error = %rejected.error.message, "rejected a request");
            return match rejected.id {
                Some(id) => Handled::Reply(Response::error(id, rejected.error)),
                None => Handled::Silent,
            };
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
        tracing::warn!(method = %method.escape_debug(), "unknown method");
        return reply_to(Err(method_not_found(&method)));
    };
    tracing::debug!(method = %method, "request");
    let handler = match route {
        Route::Handler(handler) => handler,
        Route::Connection => {
            let Some(id) = id else {
                tracing::warn!(method = %method, "sent as a notification; ignored");
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
                tracing::warn!(method = %method, error = %message, "invalid params")
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
async fn forward<C>(mut conn: C, mut subscriber: Subscriber, heartbeat: Duration)
where
    C: Stream<Item = io::Result<Frame>> + Sink<Outgoing, Error = io::Error> + Unpin,
{
    // The heartbeat is due `heartbeat` after the last write; the timer is moved when it
    // fires, not at every write (a timer moved per event per subscriber is a cost that grows
    // with both).
    let mut last_write = Instant::now();
    let quiet = tokio::time::sleep(heartbeat);
    tokio::pin!(quiet);
    loop {
        tokio::select! {
            biased;
            received = subscriber.next() => {
                let Some(mut received) = received else { break };
                let mut batch = 0;
                loop {
                    if let Received::Event(event) = &received {
                        batch += event.json.len();
                    }
                    if conn.feed(event_item(received, None)).await.is_err() {
                        return;
                    }
                    // Past the batch's size, what is left waits for the next round.
                    if batch >= COALESCE {
                        break;
                    }
                    match subscriber.try_next() {
                        Some(next) => received = next,
                        None => break,
                    }
                }
                if conn.flush().await.is_err() {
                    return;
                }
                last_write = Instant::now();
            }
            frame = conn.next() => if !matches!(frame, Some(Ok(_))) { break },
            () = &mut quiet => {
                if last_write.elapsed() >= heartbeat {
                    if conn.send(Outgoing::Heartbeat).await.is_err() {
                        return;
                    }
                    last_write = Instant::now();
                }
                quiet.as_mut().reset(last_write + heartbeat);
            }
        }
    }
    let _ = conn.flush().await;
}

/// The events of a connection that keeps serving requests while subscribed
/// ([`Delivery::Notifications`], [`Delivery::Requests`]).
struct Events {
    settings: Settings,
    subscriber: Option<Subscriber>,
    /// Server-initiated requests waiting for a reply, by id, with when they were sent.
    pending: HashMap<String, Instant>,
    /// The number of the last server-initiated request.
    last_request: u64,
    /// Events dropped because too many requests were waiting; told before the next one.
    dropped: u64,
}

impl Events {
    fn new(settings: Settings) -> Events {
        Events {
            settings,
            subscriber: None,
            pending: HashMap::new(),
            last_request: 0,
            dropped: 0,
        }
    }

    /// The next event for the connection; never resolves without a subscription.
    async fn next(&mut self) -> Option<Received> {
        match self.subscriber.as_mut() {
            Some(subscriber) => subscriber.next().await,
            None => std::future::pending().await,
        }
    }

    /// Writes what the bus gave (the subscription ends when the bus is gone).
    async fn send<C>(&mut self, conn: &mut C, received: Option<Received>) -> io::Result<()>
    where
        C: Sink<Outgoing, Error = io::Error> + Unpin,
    {
        let Some(received) = received else {
            self.subscriber = None;
            return Ok(());
        };
        if self.settings.delivery != Delivery::Requests {
            return conn.send(event_item(received, None)).await;
        }
        self.forget_stale();
        if self.pending.len() >= self.settings.max_pending {
            self.dropped += match received {
                Received::Event(_) => 1,
                Received::Lagged(missed) => missed,
            };
            return Ok(());
        }
        if self.dropped > 0 {
            let lagged = Received::Lagged(std::mem::take(&mut self.dropped));
            let request = self.request();
            conn.feed(event_item(lagged, Some(request))).await?;
        }
        let request = self.request();
        conn.send(event_item(received, Some(request))).await
    }

    /// Numbers a new server-initiated request and waits for its reply.
    fn request(&mut self) -> u64 {
        self.last_request += 1;
        let id = format!("\"s{}\"", self.last_request);
        self.pending.insert(id, Instant::now());
        self.last_request
    }

    /// The client replied to the request `id` (raw JSON).
    fn replied(&mut self, id: &str) {
        if self.pending.remove(id).is_none() {
            tracing::warn!(id = %id.escape_debug(), "a reply to no pending request; ignored");
        }
    }

    fn forget_stale(&mut self) {
        let stale_after = self.settings.stale_after;
        let before = self.pending.len();
        self.pending.retain(|_, sent| sent.elapsed() < stale_after);
        if self.pending.len() < before {
            tracing::debug!(
                dropped = before - self.pending.len(),
                "stale requests forgotten"
            );
        }
    }
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
        out.extend_from_slice(format!("\"id\":\"s{n}\",").as_bytes());
    }
    out.extend_from_slice(b"\"method\":\"event\",\"params\":{\"event\":");
    out.extend_from_slice(&event.json);
    out.extend_from_slice(b"}}");
    out
}

#[cfg(test)]
mod tests;
