//! The event bus: one closed enum of events, published without ever blocking.
//!
//! Each event is serialised once into its subscription line and shared by every subscriber.
//! Each subscriber has a bounded queue; when it is full the oldest event is dropped and
//! counted, and the subscriber is told how many it lost with a `lagged` event before the
//! next events it receives. A slow subscriber never delays the publisher or anyone else.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use bytes::Bytes;
use hld_client::protocol::{Event, SubscribeParams, TimedEvent};
use tokio::sync::Notify;

/// A published event: the typed value and its serialised subscription line.
#[derive(Debug)]
pub struct Published {
    /// The event with its timestamp.
    pub event: TimedEvent,
    /// `{"jsonrpc":"2.0","result":{"event":…},"id":null}\n`.
    pub line: Bytes,
}

/// Which events a subscriber wants; conditions are ANDed.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only these types (empty: all).
    pub event_types: Vec<String>,
    /// Only this session.
    pub session_id: Option<String>,
    /// Only this run.
    pub run_id: Option<String>,
}

impl Filter {
    fn matches(&self, event: &Event) -> bool {
        if matches!(event, Event::Lagged { .. }) {
            return true;
        }
        (self.event_types.is_empty() || self.event_types.iter().any(|t| t == event.type_name()))
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
            event_types: p.event_types.unwrap_or_default(),
            session_id: p.session_id.filter(|s| !s.is_empty()),
            run_id: p.run_id.filter(|s| !s.is_empty()),
        }
    }
}

struct Queue {
    events: VecDeque<Arc<Published>>,
    lost: u64,
}

struct Slot {
    filter: Filter,
    // A std Mutex: held only to push or drain, never across an await.
    queue: Mutex<Queue>,
    notify: Notify,
    capacity: usize,
}

/// The bus. Cheap to clone.
#[derive(Clone)]
pub struct Bus {
    inner: Arc<BusInner>,
}

struct BusInner {
    // A std RwLock: publishers read it briefly; (un)subscribing writes it briefly.
    slots: RwLock<HashMap<u64, Arc<Slot>>>,
    next_id: AtomicU64,
    capacity: usize,
    published: AtomicU64,
}

impl std::fmt::Debug for Bus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bus")
            .field("subscribers", &self.subscriber_count())
            .finish()
    }
}

impl Bus {
    /// A bus whose subscribers each buffer `capacity` events.
    pub fn new(capacity: usize) -> Self {
        Bus {
            inner: Arc::new(BusInner {
                slots: RwLock::new(HashMap::new()),
                next_id: AtomicU64::new(1),
                capacity: capacity.max(1),
                published: AtomicU64::new(0),
            }),
        }
    }

    /// Publishes an event to every matching subscriber. Never blocks. The line is serialised
    /// once, and only if some subscriber wants the event.
    pub fn publish(&self, event: Event) {
        self.inner.published.fetch_add(1, Ordering::Relaxed);
        let slots = self.inner.slots.read().unwrap();
        let wanted: Vec<&Arc<Slot>> = slots
            .values()
            .filter(|slot| slot.filter.matches(&event))
            .collect();
        if wanted.is_empty() {
            return;
        }
        let published = Arc::new(Self::encode(event));
        for slot in wanted {
            slot.push(published.clone());
        }
    }

    fn encode(event: Event) -> Published {
        let event = TimedEvent {
            event,
            timestamp: crate::time::now(),
        };
        let mut line = b"{\"jsonrpc\":\"2.0\",\"result\":{\"event\":".to_vec();
        serde_json::to_writer(&mut line, &event).expect("events serialise");
        line.extend_from_slice(b"},\"id\":null}\n");
        Published {
            event,
            line: Bytes::from(line),
        }
    }

    /// Adds a subscriber.
    pub fn subscribe(&self, filter: Filter) -> Subscriber {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let slot = Arc::new(Slot {
            filter,
            queue: Mutex::new(Queue {
                events: VecDeque::new(),
                lost: 0,
            }),
            notify: Notify::new(),
            capacity: self.inner.capacity,
        });
        self.inner.slots.write().unwrap().insert(id, slot.clone());
        Subscriber {
            id,
            slot,
            bus: self.clone(),
        }
    }

    /// Live subscribers.
    pub fn subscriber_count(&self) -> usize {
        self.inner.slots.read().unwrap().len()
    }

    /// Events published since start.
    pub fn published_count(&self) -> u64 {
        self.inner.published.load(Ordering::Relaxed)
    }
}

impl Slot {
    fn push(&self, event: Arc<Published>) {
        {
            let mut q = self.queue.lock().unwrap();
            if q.events.len() >= self.capacity {
                q.events.pop_front();
                q.lost += 1;
            }
            q.events.push_back(event);
        }
        self.notify.notify_one();
    }
}

/// One subscription. Dropping it unsubscribes.
pub struct Subscriber {
    id: u64,
    slot: Arc<Slot>,
    bus: Bus,
}

impl std::fmt::Debug for Subscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriber").field("id", &self.id).finish()
    }
}

/// What a subscriber takes from its queue at once.
#[derive(Debug, Default)]
pub struct Batch {
    /// Events dropped since the last batch because the queue was full.
    pub lost: u64,
    /// The queued events, oldest first.
    pub events: Vec<Arc<Published>>,
}

impl Subscriber {
    /// Waits until at least one event (or a loss) is queued, then takes everything queued.
    pub async fn next_batch(&self) -> Batch {
        loop {
            let notified = self.slot.notify.notified();
            if let Some(batch) = self.try_batch() {
                return batch;
            }
            notified.await;
        }
    }

    /// Takes everything queued, if anything is.
    pub fn try_batch(&self) -> Option<Batch> {
        let mut q = self.slot.queue.lock().unwrap();
        if q.events.is_empty() && q.lost == 0 {
            return None;
        }
        Some(Batch {
            lost: std::mem::take(&mut q.lost),
            events: q.events.drain(..).collect(),
        })
    }

    /// The `lagged` line telling this subscriber it lost `missed` events.
    pub fn lagged_line(missed: u64) -> Bytes {
        Bus::encode(Event::Lagged { missed }).line
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.bus.inner.slots.write().unwrap().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hld_client::protocol::SessionStatus;

    fn status(session: &str, run: &str) -> Event {
        Event::SessionStatusChanged {
            session_id: session.into(),
            run_id: run.into(),
            old_status: SessionStatus::Starting,
            new_status: SessionStatus::Running,
            parent_session_id: None,
            error: None,
        }
    }

    #[test]
    fn filters_are_anded() {
        let bus = Bus::new(10);
        let all = bus.subscribe(Filter::default());
        let by_session = bus.subscribe(Filter {
            session_id: Some("s1".into()),
            ..Filter::default()
        });
        let both = bus.subscribe(Filter {
            session_id: Some("s1".into()),
            run_id: Some("r2".into()),
            ..Filter::default()
        });
        let by_type = bus.subscribe(Filter {
            event_types: vec!["new_approval".into()],
            ..Filter::default()
        });
        bus.publish(status("s1", "r1"));
        bus.publish(status("s2", "r2"));
        assert_eq!(all.try_batch().unwrap().events.len(), 2);
        assert_eq!(by_session.try_batch().unwrap().events.len(), 1);
        assert!(both.try_batch().is_none());
        assert!(by_type.try_batch().is_none());
    }

    #[test]
    fn a_full_queue_drops_the_oldest_and_counts_them() {
        let bus = Bus::new(3);
        let sub = bus.subscribe(Filter::default());
        for i in 0..5 {
            bus.publish(status(&format!("s{i}"), "r"));
        }
        let batch = sub.try_batch().unwrap();
        assert_eq!(batch.lost, 2);
        let ids: Vec<_> = batch
            .events
            .iter()
            .map(|p| p.event.event.session_id().unwrap().to_owned())
            .collect();
        assert_eq!(ids, ["s2", "s3", "s4"]);
        assert!(sub.try_batch().is_none());
    }

    #[test]
    fn dropping_a_subscriber_unsubscribes() {
        let bus = Bus::new(3);
        let sub = bus.subscribe(Filter::default());
        assert_eq!(bus.subscriber_count(), 1);
        drop(sub);
        assert_eq!(bus.subscriber_count(), 0);
    }

    #[test]
    fn the_line_is_a_null_id_response_carrying_the_event() {
        let bus = Bus::new(3);
        let sub = bus.subscribe(Filter::default());
        bus.publish(status("s1", "r1"));
        let batch = sub.try_batch().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&batch.events[0].line).unwrap();
        assert_eq!(v["id"], serde_json::Value::Null);
        assert_eq!(v["result"]["event"]["type"], "session_status_changed");
        assert_eq!(v["result"]["event"]["data"]["session_id"], "s1");
        assert!(v["result"]["event"]["timestamp"].is_string());
    }
}
