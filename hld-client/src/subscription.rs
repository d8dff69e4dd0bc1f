//! `Subscribe` as a typed `Stream`: its own connection, confirmed within 5 s, heartbeats
//! consumed inside, and optional reconnection with backoff that reports the gap.

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::Stream;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::codec;
use crate::error::Error;
use crate::protocol::Method;
use crate::protocol::{
    Response, Subscribe, SubscribeParams, SubscribeResult, SubscriptionMessage, TimedEvent,
};

/// How long the daemon has to confirm a subscription.
pub const CONFIRM_TIMEOUT: Duration = Duration::from_secs(5);

/// Backoff between reconnection attempts: doubles from the first value up to the second.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(5));

/// What a subscription stream yields.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SubscriptionItem {
    /// An event.
    Event(Box<TimedEvent>),
    /// The connection was lost and re-established; events published during `gap` were missed.
    Reconnected {
        /// How long the subscription was down.
        gap: Duration,
    },
}

/// Options for [`subscribe`].
#[derive(Debug, Clone, Default)]
pub struct SubscribeOptions {
    /// Reconnect with backoff when the connection drops, instead of ending the stream.
    pub reconnect: bool,
}

type Lines = tokio::io::Lines<BufReader<UnixStream>>;
type Items = Pin<Box<dyn Stream<Item = Result<SubscriptionItem, Error>> + Send>>;

/// A live subscription.
pub struct Subscription {
    /// The id the daemon gave the first connection's subscription.
    pub subscription_id: String,
    items: Items,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("subscription_id", &self.subscription_id)
            .finish_non_exhaustive()
    }
}

struct State {
    path: PathBuf,
    params: SubscribeParams,
    options: SubscribeOptions,
    lines: Option<Lines>,
}

/// Opens a subscription on a new connection to `path`.
pub async fn subscribe(
    path: &Path,
    params: SubscribeParams,
    options: SubscribeOptions,
) -> Result<Subscription, Error> {
    let (subscription_id, lines) = open(path, &params).await?;
    let state = State {
        path: path.to_path_buf(),
        params,
        options,
        lines: Some(lines),
    };
    let items = futures::stream::unfold(state, |state| async move {
        let (item, state) = next_item(state).await;
        item.map(|item| (item, state))
    });
    Ok(Subscription {
        subscription_id,
        items: Box::pin(items),
    })
}

async fn open(path: &Path, params: &SubscribeParams) -> Result<(String, Lines), Error> {
    crate::trust::check_socket(path)?;
    let mut stream = UnixStream::connect(path)
        .await
        .map_err(|e| Error::connecting(path, e))?;
    let line = codec::request_line(Subscribe::NAME, params, 1)?;
    stream.write_all(&line).await?;
    let mut lines = BufReader::new(stream).lines();
    let first = tokio::time::timeout(CONFIRM_TIMEOUT, lines.next_line())
        .await
        .map_err(|_| Error::Timeout)??
        .ok_or(Error::Disconnected)?;
    let response: Response = serde_json::from_str(&first)?;
    let confirmed: SubscribeResult = serde_json::from_value(codec::outcome(response)?)?;
    if confirmed.subscription_id.is_empty() {
        return Err(Error::Disconnected);
    }
    Ok((confirmed.subscription_id, lines))
}

async fn next_item(mut state: State) -> (Option<Result<SubscriptionItem, Error>>, State) {
    loop {
        let Some(lines) = state.lines.as_mut() else {
            return (None, state);
        };
        match lines.next_line().await {
            Ok(Some(line)) => {
                let Ok(response) = serde_json::from_str::<Response>(&line) else {
                    continue;
                };
                let Some(result) = response.result else {
                    continue;
                };
                match serde_json::from_value::<SubscriptionMessage>(result) {
                    Ok(SubscriptionMessage::Event { event }) => {
                        return (Some(Ok(SubscriptionItem::Event(event))), state)
                    }
                    Ok(SubscriptionMessage::Heartbeat { .. }) | Err(_) => continue,
                }
            }
            Ok(None) | Err(_) if state.options.reconnect => {
                let down_since = Instant::now();
                let mut delay = BACKOFF.0;
                state.lines = None;
                loop {
                    tokio::time::sleep(delay).await;
                    if let Ok((_, lines)) = open(&state.path, &state.params).await {
                        state.lines = Some(lines);
                        let gap = down_since.elapsed();
                        return (Some(Ok(SubscriptionItem::Reconnected { gap })), state);
                    }
                    delay = (delay * 2).min(BACKOFF.1);
                }
            }
            Ok(None) => {
                state.lines = None;
                return (None, state);
            }
            Err(e) => {
                state.lines = None;
                return (Some(Err(Error::Io(e))), state);
            }
        }
    }
}

impl Stream for Subscription {
    type Item = Result<SubscriptionItem, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.items.as_mut().poll_next(cx)
    }
}
