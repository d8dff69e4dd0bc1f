//! The event bus: typed events, serialised at most once and shared, over a `broadcast` ring:
//! publishing never blocks; a subscriber that falls behind loses the oldest and learns how many.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use hld_client::protocol::{Event, EventType, SubscribeParams, TimedEvent};
use tokio::sync::broadcast::{self, error::RecvError, error::TryRecvError};

/// A published event: the typed value and its JSON (`{"type", "timestamp", "data"}`).
#[derive(Debug)]
pub struct Published {
    pub event: TimedEvent,
    /// `event` serialised, once a subscriber asked for it.
    json: OnceLock<Bytes>,
}

impl Published {
    pub fn new(event: Event) -> Published {
        let event = TimedEvent {
            event,
            timestamp: crate::time::now(),
        };
        Published {
            event,
            json: OnceLock::new(),
        }
    }

    /// `event`, sent as `json` (a shortened form of it).
    pub fn with_json(event: TimedEvent, json: Bytes) -> Published {
        Published {
            event,
            json: OnceLock::from(json),
        }
    }

    /// The event's JSON, serialised by the first caller.
    pub fn json(&self) -> &Bytes {
        self.json
            .get_or_init(|| Bytes::from(serde_json::to_vec(&self.event).expect("events serialise")))
    }
}

#[derive(Debug, Clone)]
pub struct Bus {
    /// Events, and `None` once the bus is closed.
    sender: broadcast::Sender<Option<Arc<Published>>>,
    /// Subscribers inside the daemon (the notifier), which are no clients'.
    internal: Arc<AtomicUsize>,
}

impl Bus {
    /// A bus whose subscribers may each fall `capacity` events behind before losing some.
    pub fn new(capacity: usize) -> Bus {
        Bus {
            sender: broadcast::channel(capacity.max(1)).0,
            internal: Arc::default(),
        }
    }

    pub fn publish(&self, event: Event) {
        if self.sender.receiver_count() > 0 {
            let _ = self.sender.send(Some(Arc::new(Published::new(event))));
        }
    }

    /// Ends every subscription once its subscriber received what was published before.
    pub fn close(&self) {
        let _ = self.sender.send(None);
    }

    /// A new subscriber: it receives what is published from now on that `filter` lets through.
    pub fn subscribe(&self, filter: Filter) -> Subscriber {
        Subscriber {
            receiver: self.sender.subscribe(),
            filter,
            ended: false,
            internal: None,
        }
    }

    /// A subscriber inside the daemon: not counted by [`subscriber_count`](Self::subscriber_count).
    pub fn subscribe_internal(&self, filter: Filter) -> Subscriber {
        self.internal.fetch_add(1, Ordering::Relaxed);
        let mut subscriber = self.subscribe(filter);
        subscriber.internal = Some(Arc::clone(&self.internal));
        subscriber
    }

    /// How many clients subscribe (the daemon's own subscribers are not counted).
    pub fn subscriber_count(&self) -> usize {
        let internal = self.internal.load(Ordering::Relaxed);
        self.sender.receiver_count().saturating_sub(internal)
    }
}

/// Which events a subscriber wants; the conditions are ANDed.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only these types (none: every type).
    pub types: Vec<EventType>,
    pub session_id: Option<String>,
    pub run_id: Option<String>,
}

impl Filter {
    fn matches(&self, event: &Event) -> bool {
        (self.types.is_empty() || self.types.iter().any(|t| t.as_str() == event.type_name()))
            && self
                .session_id
                .as_deref()
                .is_none_or(|s| event.session_id() == Some(s))
            && self
                .run_id
                .as_deref()
                .is_none_or(|r| event.run_id() == Some(r))
    }
}

impl From<SubscribeParams> for Filter {
    fn from(p: SubscribeParams) -> Self {
        Filter {
            types: p.event_types.unwrap_or_default(),
            session_id: p.session_id.filter(|s| !s.is_empty()),
            run_id: p.run_id.filter(|s| !s.is_empty()),
        }
    }
}

#[derive(Debug, Clone)]
pub enum Received {
    Event(Arc<Published>),
    /// It fell behind and this many events were dropped for it (filtered or not).
    Lagged(u64),
}

/// One subscriber. Dropping it unsubscribes.
#[derive(Debug)]
pub struct Subscriber {
    receiver: broadcast::Receiver<Option<Arc<Published>>>,
    filter: Filter,
    /// The bus has closed (or is gone).
    ended: bool,
    /// The count of internal subscribers this one is in, if it is one.
    internal: Option<Arc<AtomicUsize>>,
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        if let Some(internal) = &self.internal {
            internal.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Subscriber {
    /// The next event the filter lets through; `None` once the bus is closed or gone.
    pub async fn next(&mut self) -> Option<Received> {
        while !self.ended {
            let received = match self.receiver.recv().await {
                Ok(item) => Ok(item),
                Err(RecvError::Lagged(missed)) => Err(missed),
                Err(RecvError::Closed) => Ok(None),
            };
            if let Some(wanted) = self.take(received) {
                return Some(wanted);
            }
        }
        None
    }

    /// The next event already queued, without waiting; `None` if none (or the bus closed).
    pub fn try_next(&mut self) -> Option<Received> {
        while !self.ended {
            let received = match self.receiver.try_recv() {
                Ok(item) => Ok(item),
                Err(TryRecvError::Lagged(missed)) => Err(missed),
                Err(TryRecvError::Closed) => Ok(None),
                Err(TryRecvError::Empty) => return None,
            };
            if let Some(wanted) = self.take(received) {
                return Some(wanted);
            }
        }
        None
    }

    /// What the subscriber makes of one item of the channel (or of the count it missed).
    fn take(&mut self, received: Result<Option<Arc<Published>>, u64>) -> Option<Received> {
        match received {
            Ok(Some(published)) => self
                .filter
                .matches(&published.event.event)
                .then_some(Received::Event(published)),
            Ok(None) => {
                self.ended = true;
                None
            }
            Err(missed) => Some(Received::Lagged(missed)),
        }
    }
}
