//! `Subscribe` as a typed `Stream`: its own connection (a socket or a WebSocket), confirmed
//! within 5 s, heartbeats consumed inside, and optional reconnection with backoff that
//! reports the gap.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::Stream;
use tokio::sync::mpsc;

use crate::address::Address;
use crate::client::{Client, Delivered};
use crate::error::Error;
use crate::protocol::{Subscribe, SubscribeParams, SubscribeResult, TimedEvent};

/// How long the daemon has to confirm a subscription.
pub const CONFIRM_TIMEOUT: Duration = Duration::from_secs(5);

/// Backoff between reconnection attempts: doubles from the first value up to the second.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(5));

/// Events read ahead of the consumer. Past this the socket fills and the daemon drops and
/// counts what follows; over holon-rpc the daemon's own cap on unanswered events (256 by
/// default) is reached first.
const READ_AHEAD: usize = 1024;

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

/// A subscribed connection: the client that holds it, and the events it reads.
type Open = (Client, mpsc::Receiver<Delivered>);

struct State {
    address: Address,
    params: SubscribeParams,
    options: SubscribeOptions,
    open: Option<Open>,
}

/// Opens a subscription on a new connection to `address`.
pub async fn subscribe(
    address: &Address,
    params: SubscribeParams,
    options: SubscribeOptions,
) -> Result<Subscription, Error> {
    let (subscription_id, open) = open(address, &params).await?;
    let state = State {
        address: address.clone(),
        params,
        options,
        open: Some(open),
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

async fn open(address: &Address, params: &SubscribeParams) -> Result<(String, Open), Error> {
    let (events, received) = mpsc::channel(READ_AHEAD);
    let client = Client::open(address.clone(), CONFIRM_TIMEOUT, Some(events)).await?;
    let confirmed: SubscribeResult = client.call::<Subscribe>(params.clone()).await?;
    if confirmed.subscription_id.is_empty() {
        return Err(Error::Disconnected);
    }
    Ok((confirmed.subscription_id, (client, received)))
}

async fn next_item(mut state: State) -> (Option<Result<SubscriptionItem, Error>>, State) {
    let Some((client, events)) = state.open.as_mut() else {
        return (None, state);
    };
    if let Some(Delivered { event, ack }) = events.recv().await {
        if let Some(id) = ack {
            client.acknowledge(&id);
        }
        return (Some(Ok(SubscriptionItem::Event(event))), state);
    }
    state.open = None;
    if !state.options.reconnect {
        return (None, state);
    }
    let down_since = Instant::now();
    let mut delay = BACKOFF.0;
    loop {
        tokio::time::sleep(delay).await;
        if let Ok((_, open)) = open(&state.address, &state.params).await {
            state.open = Some(open);
            let gap = down_since.elapsed();
            return (Some(Ok(SubscriptionItem::Reconnected { gap })), state);
        }
        delay = (delay * 2).min(BACKOFF.1);
    }
}

impl Stream for Subscription {
    type Item = Result<SubscriptionItem, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.items.as_mut().poll_next(cx)
    }
}
