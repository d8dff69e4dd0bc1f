//! The `Subscribe` loop: after the confirmation, the connection only carries events and
//! heartbeats. Queued events are coalesced into one (vectored) write; a closed client is noticed
//! at once.

use std::io::IoSlice;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use hld_client::protocol::{
    SubscribeParams, SubscribeResult, SubscriptionMessage, EVENT_TYPES, HEARTBEAT_MESSAGE,
    SUBSCRIPTION_ESTABLISHED,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;

use crate::bus::{Filter, Subscriber};
use crate::daemon::Daemon;
use crate::rpc::error::RpcError;
use crate::rpc::{error_line, success_line};

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
pub async fn serve<R, W>(
    daemon: Arc<Daemon>,
    mut read: R,
    mut write: W,
    id: String,
    params: SubscribeParams,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    if let Err(e) = validate(&params) {
        tracing::warn!(error = ?e.to_object().message, "rejected Subscribe");
        let _ = write.write_all(&error_line(&e.to_object(), &id)).await;
        return;
    }
    // Subscribe before confirming, so that nothing published after the confirmation is missed.
    let subscriber = daemon.bus.subscribe(Filter::from(params));
    let _counted = Counted::new(&daemon.subscriptions);
    let confirmation = SubscribeResult {
        subscription_id: format!("sub_{}", uuid::Uuid::new_v4()),
        message: SUBSCRIPTION_ESTABLISHED.to_owned(),
    };
    let result = serde_json::to_vec(&confirmation).expect("confirmation serialises");
    if write.write_all(&success_line(&result, &id)).await.is_err() {
        return;
    }
    tracing::debug!(subscription = %confirmation.subscription_id, "subscription established");
    pump(&daemon, &subscriber, &mut read, &mut write).await;
    tracing::debug!(subscription = %confirmation.subscription_id, "subscription closed");
}

/// `{"jsonrpc":"2.0","result":{"type":"heartbeat","message":"Connection alive"},"id":null}`.
fn heartbeat_line() -> Vec<u8> {
    let heartbeat = SubscriptionMessage::Heartbeat {
        kind: "heartbeat".to_owned(),
        message: HEARTBEAT_MESSAGE.to_owned(),
    };
    let result = serde_json::to_vec(&heartbeat).expect("heartbeat serialises");
    success_line(&result, "null")
}

async fn pump<R, W>(daemon: &Daemon, subscriber: &Subscriber, read: &mut R, write: &mut W)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let interval = daemon.config.heartbeat_interval;
    let mut scratch = [0u8; 512];
    let heartbeat_line = heartbeat_line();
    // The heartbeat is due `interval` after the last line written; the timer is moved only
    // when it fires, not at every batch.
    let mut last_write = Instant::now();
    let heartbeat = tokio::time::sleep(interval);
    tokio::pin!(heartbeat);
    let cancelled = daemon.shutdown.cancelled();
    tokio::pin!(cancelled);
    loop {
        tokio::select! {
            biased;
            _ = &mut cancelled => break,
            // Events before the socket: a wake-up for events does not poll the read side too.
            // A client that leaves while events flow is noticed when the write fails.
            batch = subscriber.next_batch() => {
                let lagged = (batch.lost > 0).then(|| Subscriber::lagged_line(batch.lost));
                // The shared lines go out as they are, in one vectored write: nothing is
                // copied, and no per-subscriber buffer grows with the largest batch.
                let mut lines: Vec<IoSlice<'_>> = lagged
                    .iter()
                    .chain(batch.events.iter().map(|e| &e.line))
                    .map(|line| IoSlice::new(line))
                    .collect();
                if write_all_vectored(write, &mut lines).await.is_err() {
                    break;
                }
                last_write = Instant::now();
            }
            // Anything the client sends is read and dropped; EOF or an error ends it.
            n = read.read(&mut scratch) => match n {
                Ok(0) | Err(_) => break,
                Ok(_) => continue,
            },
            _ = &mut heartbeat => {
                let due = last_write + interval;
                if due <= Instant::now() {
                    if write.write_all(&heartbeat_line).await.is_err() {
                        break;
                    }
                    last_write = Instant::now();
                }
                heartbeat.as_mut().reset(last_write + interval);
            }
        }
    }
    let _ = write.shutdown().await;
}

/// The most buffers handed to one `writev` (the system limit is 1024).
const MAX_IOVECS: usize = 256;

/// Writes every buffer of `bufs`, in order, with as few `writev` calls as the socket allows.
async fn write_all_vectored<W: AsyncWrite + Unpin>(
    write: &mut W,
    mut bufs: &mut [IoSlice<'_>],
) -> std::io::Result<()> {
    while !bufs.is_empty() {
        let n = write
            .write_vectored(&bufs[..bufs.len().min(MAX_IOVECS)])
            .await?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        IoSlice::advance_slices(&mut bufs, n);
    }
    Ok(())
}
