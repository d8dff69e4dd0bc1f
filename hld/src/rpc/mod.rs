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
mod events;
pub mod router;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::{FutureExt, Sink, SinkExt, Stream, StreamExt};
use hld_client::protocol::{
    ErrorObject, EventType, InvalidRequestReason, SubscribeParams, SubscribeResult, EVENT_TYPES,
    SUBSCRIPTION_ESTABLISHED,
};
use serde_json::value::RawValue;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use self::envelope::{method_not_found, null_id, Message};
use self::error::{error_object, invalid_request};
use self::router::{decode_params, Route};
use crate::bus::{Filter, Published, Subscriber};
use crate::config::Config;
use crate::daemon::Daemon;
use crate::error::Error;
use crate::throttle::Throttle;
pub use crate::transport::Frame;
pub use events::{event_message, heartbeat_request};
use events::{forward, Events, Heartbeat, Pulse};
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
pub(crate) const MISTAKES_A_SECOND: u32 = 10;
static REJECTED: Throttle = Throttle::burst(MISTAKES_A_SECOND);
static UNKNOWN_METHOD: Throttle = Throttle::burst(MISTAKES_A_SECOND);
static INVALID_PARAMS: Throttle = Throttle::burst(MISTAKES_A_SECOND);

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

/// The error for a message over a transport's size limit.
pub fn oversize() -> ErrorObject {
    invalid_request("Message too large", InvalidRequestReason::Oversize)
}

#[cfg(test)]
mod tests;
