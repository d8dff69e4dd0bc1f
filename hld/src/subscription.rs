//! The `Subscribe` loop: after the confirmation, the connection only carries events and
//! heartbeats. Queued events are coalesced into one write; a closed client is noticed at once.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use hld_client::protocol::{
    SubscribeParams, SubscribeResult, SubscriptionMessage, EVENT_TYPES, HEARTBEAT_MESSAGE,
    SUBSCRIPTION_ESTABLISHED,
};
use nix::sys::socket::{setsockopt, sockopt};
use tokio::time::Instant;

use crate::bus::{Filter, Sink, Subscriber, Taken};
use crate::daemon::Daemon;
use crate::rpc::error::RpcError;
use crate::rpc::{error_line, success_line};
use crate::transport::unix::SubscriberSocket;

/// Counts a live subscription connection for as long as it exists.
struct Counted<'a>(&'a AtomicUsize);

impl<'a> Counted<'a> {
    fn new(counter: &'a AtomicUsize) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        Counted(counter)
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Checks a filter's event types.
pub fn validate(params: &SubscribeParams) -> Result<(), RpcError> {
    for (i, t) in params.event_types.iter().flatten().enumerate() {
        if !EVENT_TYPES.contains(&t.as_str()) {
            return Err(RpcError::not_accepted(
                &format!("event_types[{i}]"),
                t,
                &EVENT_TYPES,
            ));
        }
    }
    Ok(())
}

/// Serves a subscription on a connection until the client leaves or the daemon shuts down.
pub async fn serve(
    daemon: Arc<Daemon>,
    connection: SubscriberSocket,
    id: String,
    params: SubscribeParams,
) {
    if let Err(e) = validate(&params) {
        tracing::warn!(error = ?e.to_object().message, "rejected Subscribe");
        let _ = connection.write_all(&error_line(&e.to_object(), &id)).await;
        return;
    }
    // Room in the kernel for a burst (spec 001: "Socket buffer size: 1MB"; Linux doubles the
    // value asked for), so that a subscriber that reads in spurts does not fill its queue.
    if let Err(e) = setsockopt(&connection, sockopt::SndBuf, &(SOCKET_BUFFER / 2)) {
        tracing::debug!(error = %e, "cannot enlarge a subscriber's socket buffer");
    }
    // Subscribe before confirming, so that nothing published after the confirmation is missed
    // (the confirmation still goes first: the task owns the socket until its first batch).
    let sink = Arc::new(connection);
    let subscriber = daemon
        .bus
        .subscribe_direct(Filter::from(params), Arc::clone(&sink) as Arc<dyn Sink>);
    let _counted = Counted::new(&daemon.subscriptions);
    let confirmation = SubscribeResult {
        subscription_id: format!("sub_{}", uuid::Uuid::new_v4()),
        message: SUBSCRIPTION_ESTABLISHED.to_owned(),
    };
    let result = serde_json::to_vec(&confirmation).expect("confirmation serialises");
    if sink.write_all(&success_line(&result, &id)).await.is_err() {
        return;
    }
    tracing::debug!(subscription = %confirmation.subscription_id, "subscription established");
    pump(&daemon, &subscriber, &sink).await;
    // Dropping the last handle on the connection (the bus may still hold one for a moment)
    // closes it.
    tracing::debug!(subscription = %confirmation.subscription_id, "subscription closed");
}

/// A subscriber's socket send buffer.
const SOCKET_BUFFER: usize = 1 << 20;

/// `{"jsonrpc":"2.0","result":{"type":"heartbeat","message":"Connection alive"},"id":null}`.
fn heartbeat_line() -> Vec<u8> {
    let heartbeat = SubscriptionMessage::Heartbeat {
        kind: "heartbeat".to_owned(),
        message: HEARTBEAT_MESSAGE.to_owned(),
    };
    let result = serde_json::to_vec(&heartbeat).expect("heartbeat serialises");
    success_line(&result, "null")
}

/// A subscriber's write buffer is let go after a batch larger than this, so that a burst does
/// not leave every subscriber holding the capacity of its largest batch.
const KEPT_BUFFER: usize = 64 * 1024;

/// Writes what the flusher could not: queued events (coalesced into one
/// write), `lagged` notices and heartbeats, until the client leaves or the bus closes.
async fn pump(daemon: &Daemon, subscriber: &Subscriber, sink: &SubscriberSocket) {
    let interval = daemon.config.heartbeat_interval;
    let mut scratch = [0u8; 512];
    let heartbeat_line = heartbeat_line();
    let mut events = VecDeque::new();
    let mut out = Vec::new();
    // The heartbeat is due `interval` after the last line written, by this task or by the
    // flusher; the timer is moved only when it fires, not at every batch.
    let mut last_write = Instant::now();
    let heartbeat = tokio::time::sleep(interval);
    tokio::pin!(heartbeat);
    loop {
        tokio::select! {
            biased;
            // Events before the socket: a wake-up for events does not poll the read side too.
            // A client that leaves while events flow is noticed when the write fails. The bus
            // is closed at shutdown, which ends the subscription.
            taken = subscriber.next_batch(&mut events) => {
                let Some(Taken { lost, written }) = taken else { break };
                let result = if lost == 0 && written == 0 && events.len() == 1 {
                    // One shared line, written as it is.
                    sink.write_all(&events[0].line).await
                } else {
                    // The rest of a line the publisher began, the lagged notice, then every
                    // queued line: one write.
                    let mut rest = events.iter();
                    if written > 0 {
                        out.extend_from_slice(&rest.next().expect("a partial line").line[written..]);
                    }
                    if lost > 0 {
                        out.extend_from_slice(&Subscriber::lagged_line(lost));
                    }
                    for event in rest {
                        out.extend_from_slice(&event.line);
                    }
                    let result = sink.write_all(&out).await;
                    if out.capacity() > KEPT_BUFFER {
                        out = Vec::new();
                    }
                    out.clear();
                    result
                };
                events.clear();
                if result.is_err() {
                    break;
                }
                last_write = Instant::now();
            }
            // Anything the client sends is read and dropped; EOF or an error ends it.
            n = sink.read(&mut scratch) => match n {
                Ok(0) | Err(_) => break,
                Ok(_) => continue,
            },
            _ = &mut heartbeat => {
                if let Some(flushed) = subscriber.last_flush() {
                    last_write = last_write.max(flushed.into());
                }
                let due = last_write + interval;
                // Queued events go first (and count as a write); otherwise take the socket.
                if due <= Instant::now() && subscriber.claim() {
                    if sink.write_all(&heartbeat_line).await.is_err() {
                        break;
                    }
                    last_write = Instant::now();
                }
                heartbeat.as_mut().reset(last_write + interval);
            }
        }
    }
}
