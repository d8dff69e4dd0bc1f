//! JSON-RPC over any transport: the one connection loop. A transport gives a [`Stream`] of
//! [`Frame`]s and frames a [`Sink`] of [`Outgoing`]. Requests are served one at a time, in
//! order; a client that does not read stops being read; events go out beside the replies.

pub mod envelope;
pub mod error;
pub mod router;

use std::borrow::Cow;
use std::io;
use std::sync::Arc;

use bytes::Bytes;
use futures::{FutureExt, Sink, SinkExt, Stream, StreamExt};
use hld_client::protocol::{
    ErrorCode, ErrorObject, Event, InvalidRequestReason, SubscribeResult, SUBSCRIPTION_ESTABLISHED,
};
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use self::envelope::{null_id, Message, Strictness};
use self::error::{error_object, invalid_request};
use self::router::Served;
use crate::budget::Budget;
use crate::bus::{Published, Received, Subscriber};
use crate::error::Error;
use crate::throttle::Throttle;
pub use router::Router;

/// One unit read from a transport.
#[derive(Debug, Clone)]
pub enum Frame {
    /// A message, its envelope read here leniently.
    Message(Bytes),
    /// A request whose envelope the transport read itself, strictly (holon-rpc).
    Request(envelope::Request),
    /// A message the framing refused and discarded: answered with this error and `id: null`.
    Rejected(ErrorObject),
    /// A message the framing refused but read (stdio's wrong `Content-Type`): answered with
    /// this error and its id, when it has one.
    Refused(Bytes, ErrorObject),
}

#[derive(Debug, Clone)]
pub struct Response {
    pub id: Box<RawValue>,
    pub outcome: Result<Vec<u8>, ErrorObject>,
}

impl Response {
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

/// What a connection writes; the transport frames it.
#[derive(Debug)]
pub enum Outgoing {
    Response(Response),
    /// The reply that opened a subscription: its events follow.
    Subscribed(Response),
    Event(Arc<Published>),
}

/// Why [`serve`] returned, for a transport that tells its peer (WebSocket's close codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The peer left, or the transport ended the stream (it knows why).
    Left,
    Shutdown,
    /// A method registered with [`Router::close`] ended this connection.
    Closed,
    Failed,
}

/// What the loop does with one incoming frame.
enum Handled {
    Reply(Response),
    Silent,
    /// A method that ends the connection: its reply, if it was a request.
    Close(Option<Response>),
    Subscribed(Response, Subscriber),
}

/// At most this many bytes of events are coalesced into one write.
const COALESCE: usize = 64 * 1024;

/// Serves one connection until the client leaves or `shutdown` (subscribed: the bus closes).
pub async fn serve<S, C>(
    mut conn: C,
    router: &Router<S>,
    state: Arc<S>,
    shutdown: CancellationToken,
) -> Ended
where
    S: AsRef<Budget> + Send + Sync + 'static,
    C: Stream<Item = io::Result<Frame>> + Sink<Outgoing, Error = io::Error> + Unpin,
{
    let cancelled = shutdown.cancelled_owned();
    tokio::pin!(cancelled);
    let mut events: Option<Subscriber> = None;
    // What its replies hold of the budget, given back once they are written.
    let mut account = (*state).as_ref().account();
    let ended = loop {
        // Requests already read are answered before their replies are flushed together.
        let frame = match conn.next().now_or_never() {
            Some(frame) => frame,
            None => {
                if conn.flush().await.is_err() {
                    return Ended::Failed;
                }
                account.release();
                tokio::select! {
                    biased;
                    () = &mut cancelled, if events.is_none() => break Ended::Shutdown,
                    frame = conn.next() => frame,
                    received = next_event(&mut events) => {
                        let Some(received) = received else { break Ended::Shutdown };
                        if send_events(&mut conn, &mut events, received).await.is_err() {
                            return Ended::Failed;
                        }
                        continue;
                    }
                }
            }
        };
        let Some(Ok(frame)) = frame else {
            break Ended::Left;
        };
        if matches!(frame, Frame::Message(_)) && account.reserve(&mut conn).await.is_err() {
            return Ended::Failed;
        }
        let reply = match handle(router, &state, frame).await {
            Handled::Reply(response) => response,
            Handled::Silent => continue,
            Handled::Close(reply) => {
                if let Some(reply) = reply {
                    let _ = conn.feed(Outgoing::Response(reply)).await;
                }
                tracing::info!("shutdown of this connection requested; closing it");
                break Ended::Closed;
            }
            Handled::Subscribed(confirmed, subscriber) => {
                if conn.send(Outgoing::Subscribed(confirmed)).await.is_err() {
                    return Ended::Failed;
                }
                events = Some(subscriber);
                account.release();
                continue;
            }
        };
        // Settled once queued: until then the reservation also covers the reply's copy.
        let size = reply.outcome.as_ref().map_or(0, Vec::len);
        if conn.feed(Outgoing::Response(reply)).await.is_err()
            || account.built(&mut conn, size).await.is_err()
        {
            return Ended::Failed;
        }
    };
    let _ = conn.flush().await;
    ended
}

/// The subscription's next event; never resolves without one.
async fn next_event(events: &mut Option<Subscriber>) -> Option<Received> {
    match events {
        Some(subscriber) => subscriber.next().await,
        None => std::future::pending().await,
    }
}

fn event_item(received: Received) -> Outgoing {
    Outgoing::Event(match received {
        Received::Event(event) => event,
        Received::Lagged(missed) => Arc::new(Published::new(Event::Lagged { missed })),
    })
}

/// Writes `received` and the events queued behind it (up to [`COALESCE`] bytes), one flush.
async fn send_events<C>(
    conn: &mut C,
    events: &mut Option<Subscriber>,
    mut received: Received,
) -> io::Result<()>
where
    C: Sink<Outgoing, Error = io::Error> + Unpin,
{
    let mut batch = 0;
    loop {
        if let Received::Event(event) = &received {
            batch += event.json().len();
        }
        conn.feed(event_item(received)).await?;
        if batch >= COALESCE {
            break;
        }
        match events.as_mut().and_then(Subscriber::try_next) {
            Some(next) => received = next,
            None => break,
        }
    }
    conn.flush().await
}

// A peer's mistakes are logged a few a second per kind: they cannot fill the log.
pub(crate) const MISTAKES_A_SECOND: u32 = 10;
static REJECTED: Throttle = Throttle::burst(MISTAKES_A_SECOND);
static UNKNOWN_METHOD: Throttle = Throttle::burst(MISTAKES_A_SECOND);
static INVALID_PARAMS: Throttle = Throttle::burst(MISTAKES_A_SECOND);

/// Handles one frame: dispatches a request, or answers what cannot be served.
async fn handle<S: Send + Sync + 'static>(
    router: &Router<S>,
    state: &Arc<S>,
    frame: Frame,
) -> Handled {
    // What the framing refused is a message; what the envelope refused, a request.
    let rejected = |id: Option<Box<RawValue>>, error: ErrorObject, what: &str| {
        if let Some(count) = REJECTED.hit() {
            tracing::warn!(code = error.code, error = %error.message, count, "rejected a {what}");
        }
        Handled::Reply(Response::error(id.unwrap_or_else(null_id), error))
    };
    let (id, method, params) = match &frame {
        Frame::Message(bytes) => match envelope::parse(bytes, Strictness::Lenient) {
            Ok(Message::Request { id, method, params }) => (id, method, params),
            Ok(Message::Reply { .. }) => unreachable!("a lenient parse sees no replies"),
            Err(e) => return rejected(e.id, e.error, "request"),
        },
        Frame::Request(r) => (Some(&*r.id), Cow::from(&r.method), r.params.as_deref()),
        Frame::Rejected(error) => return rejected(None, error.clone(), "message"),
        Frame::Refused(bytes, error) => {
            let id = match envelope::parse(bytes, Strictness::Lenient) {
                Ok(Message::Request { id, .. }) => id.map(ToOwned::to_owned),
                Ok(Message::Reply { .. }) => None,
                Err(refused) => refused.id,
            };
            return rejected(id, error.clone(), "message");
        }
    };
    let reply_to = |outcome| match id {
        Some(id) => Handled::Reply(Response {
            id: id.to_owned(),
            outcome,
        }),
        None => Handled::Silent,
    };
    let Some(route) = router.get(&method) else {
        if let Some(count) = UNKNOWN_METHOD.hit() {
            tracing::warn!(method = %method.escape_debug(), count, "unknown method");
        }
        let strict = matches!(frame, Frame::Request(_));
        return reply_to(Err(method_not_found(&method, strict)));
    };
    tracing::debug!(method = %method, "request");
    let outcome = match route {
        Served::Handler(handler) => handler(Arc::clone(state), params).await,
        Served::Table(answer) => answer(router),
        Served::Close(reply) => {
            let reply = id.map(|id| Response {
                id: id.to_owned(),
                outcome: Ok(reply.clone()),
            });
            return Handled::Close(reply);
        }
        Served::Subscribe(open) => {
            let Some(id) = id else {
                if let Some(count) = REJECTED.hit() {
                    tracing::warn!(method = %method, count, "sent as a notification; ignored");
                }
                return Handled::Silent;
            };
            match open(state, params) {
                Ok(subscriber) => {
                    let confirmation = SubscribeResult {
                        subscription_id: format!("sub_{}", uuid::Uuid::new_v4()),
                        message: SUBSCRIPTION_ESTABLISHED.to_owned(),
                    };
                    let json =
                        serde_json::to_vec(&confirmation).expect("a confirmation serialises");
                    let confirmed = Response {
                        id: id.to_owned(),
                        outcome: Ok(json),
                    };
                    return Handled::Subscribed(confirmed, subscriber);
                }
                Err(e) => Err(e),
            }
        }
    };
    reply_to(outcome.map_err(|e| {
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
    }))
}

/// The error for a method the table does not have; holon-rpc's in WebBridge's words.
pub fn method_not_found(method: &str, strict: bool) -> ErrorObject {
    let message = match strict {
        true => format!("method \"{method}\" not registered"),
        false => format!("Method not found: {method}"),
    };
    ErrorObject {
        code: ErrorCode::MethodNotFound.code(),
        message,
        data: None,
    }
}

/// The error for a message over a transport's size limit.
pub fn oversize() -> ErrorObject {
    invalid_request("Message too large", InvalidRequestReason::Oversize)
}

/// An event as a message of its own: the notification `{"jsonrpc":"2.0","method":"event",
/// "params":{"event":…}}`, or with `request`, the server-initiated request `"id":"s<N>"`.
pub fn event_message(event: &Published, request: Option<u64>) -> Vec<u8> {
    let mut out = Vec::with_capacity(event.json().len() + 64);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",");
    if let Some(n) = request {
        out.extend_from_slice(format!("\"id\":\"s{n}\",").as_bytes());
    }
    out.extend_from_slice(b"\"method\":\"event\",\"params\":{\"event\":");
    out.extend_from_slice(event.json());
    out.extend_from_slice(b"}}");
    out
}
