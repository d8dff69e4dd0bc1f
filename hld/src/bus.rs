//! The event bus: one closed enum of events, published without ever blocking.
//!
//! Each event is serialised once into its subscription line and shared by every subscriber.
//! Each subscriber has a bounded queue; when it is full the oldest event is dropped and
//! counted, and the subscriber is told how many it lost with a `lagged` event before the
//! next events it receives. A slow subscriber never delays the publisher or anyone else.
//!
//! Publishing appends the event to one shared log and wakes the flusher: its cost does not
//! grow with the subscribers. The flusher task then goes round the subscribers, giving each
//! the logged events it has not had yet; it takes what was logged meanwhile whenever it
//! pauses, so an event published during a round reaches the rest of that round's
//! subscribers at once and the others early in the next. A connection's subscriber also
//! gives the bus its socket: while its task is idle, the flusher writes the events it wants
//! straight from the log in one non-blocking write, so that an event costs one task wake-up
//! in all, not one per subscriber, and events published in between share a write. Only what
//! a socket does not take is queued, for that subscriber's own task, which waits until the
//! socket has room.

use std::collections::{HashMap, VecDeque};
use std::io::IoSlice;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hld_client::protocol::{Event, SubscribeParams, TimedEvent, EVENT_TYPES};
use tokio::sync::Notify;

/// A published event: the typed value and its serialised subscription line.
#[derive(Debug)]
pub struct Published {
    /// The event with its timestamp.
    pub event: TimedEvent,
    /// `{"jsonrpc":"2.0","result":{"event":…},"id":null}\n`.
    pub line: Bytes,
    /// The bit of the event's type (see [`Filter`]).
    bit: u8,
    /// Its place in the log: subscribers get only events published after they subscribed.
    seq: u64,
}

/// Which events a subscriber wants; conditions are ANDed.
#[derive(Debug, Clone)]
pub struct Filter {
    /// One bit per entry of [`EVENT_TYPES`] wanted.
    types: u8,
    /// Only this session.
    session_id: Option<String>,
    /// Only this run.
    run_id: Option<String>,
}

/// Every event type's bit.
const ALL_TYPES: u8 = (1 << EVENT_TYPES.len()) - 1;

/// The bit of the event type named `name`, or 0 if there is no such type.
fn type_bit(name: &str) -> u8 {
    EVENT_TYPES
        .iter()
        .position(|t| *t == name)
        .map_or(0, |i| 1 << i)
}

impl Default for Filter {
    fn default() -> Self {
        Filter {
            types: ALL_TYPES,
            session_id: None,
            run_id: None,
        }
    }
}

impl Filter {
    /// Events of these types only (none: every type); unknown names match nothing.
    pub fn of_types<S: AsRef<str>>(names: &[S]) -> Self {
        Filter {
            types: if names.is_empty() {
                ALL_TYPES
            } else {
                names.iter().fold(0, |bits, n| bits | type_bit(n.as_ref()))
            },
            ..Filter::default()
        }
    }

    /// Of those, only the events of `session_id` and `run_id` (when given and not empty).
    pub fn of(mut self, session_id: Option<String>, run_id: Option<String>) -> Self {
        self.session_id = session_id.filter(|s| !s.is_empty());
        self.run_id = run_id.filter(|s| !s.is_empty());
        self
    }

    fn matches(&self, published: &Published) -> bool {
        let event = &published.event.event;
        self.types & published.bit != 0
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
        Filter::of_types(p.event_types.as_deref().unwrap_or_default()).of(p.session_id, p.run_id)
    }
}

struct Queue {
    /// Events for the subscriber's task (its sink, if any, is busy or absent).
    events: VecDeque<Arc<Published>>,
    lost: u64,
    /// Bytes of the first queued event already written by the flusher.
    written: usize,
    /// When the flusher last wrote to the sink.
    last_flushed: Option<Instant>,
    /// The subscriber's task owns the sink (it is writing, or about to): lines queue behind
    /// it and the flusher does not write.
    busy: bool,
}

impl Queue {
    /// Queues `event`; when full, the oldest event goes (unless it is partly on the wire
    /// already: then the next one) and is counted as lost.
    fn push(&mut self, event: Arc<Published>, capacity: usize) {
        if self.events.len() >= capacity {
            let partial = usize::from(self.written > 0);
            self.events.remove(partial);
            self.lost += 1;
        }
        self.events.push_back(event);
    }
}

/// A subscriber's connection, written to without waiting (a non-blocking socket).
pub trait Sink: Send + Sync {
    /// Writes what the connection takes now: `Ok(n)` bytes, or an error such as `WouldBlock`.
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> std::io::Result<usize>;
}

struct Slot {
    filter: Filter,
    /// The log sequence number of the next event this subscriber is to be given: at first the
    /// first one published after it subscribed. Only the flusher moves it.
    next_seq: AtomicU64,
    // A std Mutex: held only to push or drain (or for one non-blocking write), never across
    // an await.
    queue: Mutex<Queue>,
    notify: Notify,
    capacity: usize,
    /// Where the flusher writes events while the task is idle.
    sink: Option<Arc<dyn Sink>>,
}

/// The events published and not yet taken by the flusher.
#[derive(Default)]
struct Log {
    events: Vec<Arc<Published>>,
    /// The sequence number of the next event published.
    next_seq: u64,
}

/// The flusher's way round the subscribers.
#[derive(Default)]
struct Round {
    /// The subscribers of this round: those present when it began.
    slots: Vec<Arc<Slot>>,
    /// How many of them have been served.
    served: usize,
    /// The events some subscriber may not have had yet, in log order.
    events: Vec<Arc<Published>>,
    /// `events[..settled]` were there when this round began: by its end every subscriber has
    /// them. The rest came during the round, after some subscribers had been served.
    settled: usize,
}

/// The bus. Cheap to clone.
#[derive(Clone)]
pub struct Bus {
    inner: Arc<BusInner>,
}

struct BusInner {
    // A std RwLock: the flusher reads it once per round; (un)subscribing writes it briefly.
    slots: RwLock<HashMap<u64, Arc<Slot>>>,
    next_id: AtomicU64,
    capacity: usize,
    published: AtomicU64,
    /// Set once by [`Bus::close`]: every subscription ends.
    closed: AtomicBool,
    /// The types some subscriber wants: events of other types are not even serialised.
    wanted: AtomicU8,
    /// Locked before `slots` when both are.
    log: Mutex<Log>,
    /// Wakes the flusher.
    flush: Notify,
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
                closed: AtomicBool::new(false),
                wanted: AtomicU8::new(0),
                log: Mutex::default(),
                flush: Notify::new(),
            }),
        }
    }

    /// Publishes an event to every matching subscriber. Never blocks, and costs the same
    /// whatever the number of subscribers: the event is serialised once (and only if some
    /// subscriber wants its type) and logged for the [`flusher`](Self::flusher).
    pub fn publish(&self, event: Event) {
        self.inner.published.fetch_add(1, Ordering::Relaxed);
        let bit = type_bit(event.type_name());
        if self.inner.wanted.load(Ordering::Acquire) & bit == 0 {
            return;
        }
        let mut published = Self::encode(event);
        published.bit = bit;
        {
            let mut log = self.inner.log.lock().unwrap();
            published.seq = log.next_seq;
            log.next_seq += 1;
            log.events.push(Arc::new(published));
        }
        self.inner.flush.notify_one();
    }

    /// Hands the logged events to the subscribers, until the bus is closed. Spawned once per
    /// daemon.
    ///
    /// The flusher goes round the subscribers, giving each the events it wants that it has
    /// not had yet: written straight to its socket in one write while its task is idle,
    /// queued for the task otherwise. It yields every [`FLUSH_CHUNK`] subscribers, so that
    /// requests keep flowing, and takes what was logged meanwhile: an event published during
    /// a round goes to that round's remaining subscribers and, early in the next round, to
    /// those served before it came. So an event waits at most about one round, and the busier
    /// the daemon the more events share a write (coalescing). Rounds follow each other while
    /// any subscriber lacks an event.
    pub async fn flusher(self) {
        let mut round = Round::default();
        loop {
            self.inner.flush.notified().await;
            while !self.inner.closed.load(Ordering::Acquire) && self.begin_round(&mut round) {
                let started = Instant::now();
                while self.serve_chunk(&mut round) {
                    tokio::task::yield_now().await;
                }
                // A long round (many subscribers) during which more events came: a stream.
                // Rest as long before the next round, so that the flusher takes at most half
                // the thread and the events that arrive meanwhile share each subscriber's
                // next write. Decided before the round's last yield: an event that comes in
                // answer to the round's last delivery (a client that sends the next once
                // every subscriber has this one) is not a stream, and a lone event costs no
                // rest.
                let streaming = round.events.len() > round.settled
                    || !self.inner.log.lock().unwrap().events.is_empty();
                let took = started.elapsed();
                if streaming && took >= LONG_ROUND {
                    tokio::time::sleep(took.min(MAX_REST)).await;
                } else {
                    tokio::task::yield_now().await;
                }
            }
            if self.inner.closed.load(Ordering::Acquire) {
                return;
            }
        }
    }

    /// Appends the events logged since the last take to the round's.
    fn take_logged(&self, round: &mut Round) {
        round
            .events
            .append(&mut self.inner.log.lock().unwrap().events);
    }

    /// Starts a round: drops the events every subscriber has had, takes those logged since,
    /// and the subscribers now. `false` (and the round left empty) when no subscriber lacks
    /// an event.
    fn begin_round(&self, round: &mut Round) -> bool {
        round.events.drain(..round.settled);
        self.take_logged(round);
        round.settled = round.events.len();
        round.served = 0;
        round.slots.clear();
        if !round.events.is_empty() {
            round
                .slots
                .extend(self.inner.slots.read().unwrap().values().cloned());
        }
        if round.slots.is_empty() {
            round.events.clear();
            round.settled = 0;
            return false;
        }
        true
    }

    /// Serves the round's next [`FLUSH_CHUNK`] subscribers, with the events logged since the
    /// previous chunk. `false`: the round is over.
    fn serve_chunk(&self, round: &mut Round) -> bool {
        if round.served > 0 {
            self.take_logged(round);
        }
        let end = (round.served + FLUSH_CHUNK).min(round.slots.len());
        let now = Instant::now();
        for slot in &round.slots[round.served..end] {
            slot.deliver(&round.events, now);
        }
        round.served = end;
        end < round.slots.len()
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
            bit: 0,
            seq: 0,
        }
    }

    /// Adds a subscriber that takes its events from its queue.
    pub fn subscribe(&self, filter: Filter) -> Subscriber {
        self.add(filter, None)
    }

    /// Adds a subscriber whose events the [`flusher`](Self::flusher) writes to `sink` while
    /// its task is idle, without waking the task; what the socket does not take is left
    /// for the task as [`subscribe`](Self::subscribe)'s events are. The task owns the sink
    /// until its first [`Subscriber::next_batch`], so it can write its own first line.
    pub fn subscribe_direct(&self, filter: Filter, sink: Arc<dyn Sink>) -> Subscriber {
        self.add(filter, Some(sink))
    }

    fn add(&self, filter: Filter, sink: Option<Arc<dyn Sink>>) -> Subscriber {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let types = filter.types;
        // Under the log's lock, so that every event from `from_seq` on finds the slot in
        // place when the flusher takes it.
        let log = self.inner.log.lock().unwrap();
        let slot = Arc::new(Slot {
            filter,
            next_seq: AtomicU64::new(log.next_seq),
            queue: Mutex::new(Queue {
                events: VecDeque::new(),
                lost: 0,
                written: 0,
                last_flushed: None,
                busy: true,
            }),
            notify: Notify::new(),
            capacity: self.inner.capacity,
            sink,
        });
        self.inner.slots.write().unwrap().insert(id, slot.clone());
        self.inner.wanted.fetch_or(types, Ordering::Release);
        drop(log);
        Subscriber {
            id,
            slot,
            bus: self.clone(),
        }
    }

    /// Ends every subscription, present and future: their [`Subscriber::next_batch`] returns
    /// `None` from now on (shutdown).
    pub fn close(&self) {
        self.inner.closed.store(true, Ordering::Release);
        self.inner.flush.notify_one();
        for slot in self.inner.slots.read().unwrap().values() {
            slot.notify.notify_one();
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
    /// The flusher's turn: the events of `events` (in log order) this subscriber wants and
    /// has not been given are written to its sink in one non-blocking write if its task is
    /// idle; whatever the socket does not take, and every event while the task is busy (or
    /// for a subscriber without a sink), is queued for the task, which is woken for it.
    fn deliver(&self, events: &[Arc<Published>], now: Instant) {
        let from = self.next_seq.load(Ordering::Relaxed);
        match events.last() {
            Some(last) if last.seq >= from => self.next_seq.store(last.seq + 1, Ordering::Relaxed),
            _ => return,
        }
        let mut wanted = events
            .iter()
            .filter(|p| p.seq >= from && self.filter.matches(p))
            .peekable();
        if wanted.peek().is_none() {
            return;
        }
        let mut q = self.queue.lock().unwrap();
        if let (Some(sink), false) = (&self.sink, q.busy) {
            // An idle task leaves nothing queued.
            let mut batch: [Option<&Arc<Published>>; MAX_IOVECS] = [None; MAX_IOVECS];
            let mut slices = [IoSlice::new(&[]); MAX_IOVECS];
            loop {
                let mut n = 0;
                for p in wanted.by_ref().take(MAX_IOVECS) {
                    batch[n] = Some(p);
                    slices[n] = IoSlice::new(&p.line);
                    n += 1;
                }
                if n == 0 {
                    break;
                }
                let mut written = sink.try_write_vectored(&slices[..n]).unwrap_or(0);
                if written > 0 {
                    q.last_flushed = Some(now);
                }
                // Whole lines written are done; a partial one is queued with its offset, and
                // so is everything after it.
                let mut whole = 0;
                while whole < n && written >= slices[whole].len() {
                    written -= slices[whole].len();
                    whole += 1;
                }
                if whole < n {
                    q.written = written;
                    for p in batch[whole..n].iter().flatten().copied().chain(wanted) {
                        q.push(Arc::clone(p), self.capacity);
                    }
                    break;
                }
            }
            if q.events.is_empty() {
                return;
            }
            q.busy = true;
        } else {
            for p in wanted {
                q.push(Arc::clone(p), self.capacity);
            }
        }
        drop(q);
        self.notify.notify_one();
    }
}

/// A flusher round at least this long, during which events came, is followed by a rest as
/// long (at most [`MAX_REST`]).
const LONG_ROUND: Duration = Duration::from_micros(500);
/// The longest rest after a round.
const MAX_REST: Duration = Duration::from_millis(5);

/// Subscribers the flusher serves between two yields.
const FLUSH_CHUNK: usize = 256;

/// The most lines the flusher hands to one `writev`.
const MAX_IOVECS: usize = 64;

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

/// What a subscriber takes from its queue at once, besides the events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Taken {
    /// Events dropped because the queue was full (the oldest, after the first event when that
    /// one is partly written).
    pub lost: u64,
    /// Bytes of the first event's line already written to the sink.
    pub written: usize,
}

impl Subscriber {
    /// Waits until at least one event (or a loss) is queued, then moves everything queued
    /// into `events` (which must be empty; its allocation is reused). From then until the next
    /// call the task owns the sink: the flusher leaves it alone. `None`: the bus is
    /// closed.
    pub async fn next_batch(&self, events: &mut VecDeque<Arc<Published>>) -> Option<Taken> {
        loop {
            let notified = self.slot.notify.notified();
            if let Some(taken) = self.try_batch(events) {
                return taken;
            }
            notified.await;
        }
    }

    /// Like [`next_batch`](Self::next_batch) without waiting: `None` if nothing is queued (and
    /// the sink is handed back to direct writes).
    pub fn try_batch(&self, events: &mut VecDeque<Arc<Published>>) -> Option<Option<Taken>> {
        debug_assert!(events.is_empty());
        if self.bus.inner.closed.load(Ordering::Acquire) {
            return Some(None);
        }
        let mut q = self.slot.queue.lock().unwrap();
        if q.events.is_empty() && q.lost == 0 {
            q.busy = false;
            return None;
        }
        q.busy = true;
        std::mem::swap(&mut q.events, events);
        Some(Some(Taken {
            lost: std::mem::take(&mut q.lost),
            written: std::mem::take(&mut q.written),
        }))
    }

    /// Takes the sink for a line of the task's own (a heartbeat) if nothing is queued: the
    /// next [`next_batch`](Self::next_batch) hands it back. `false`: events are queued, and
    /// they come first.
    pub fn claim(&self) -> bool {
        let mut q = self.slot.queue.lock().unwrap();
        if q.events.is_empty() && q.lost == 0 {
            q.busy = true;
            true
        } else {
            false
        }
    }

    /// When the flusher last wrote to the sink.
    pub fn last_flush(&self) -> Option<Instant> {
        self.slot.queue.lock().unwrap().last_flushed
    }

    /// The `lagged` line telling this subscriber it lost `missed` events.
    pub fn lagged_line(missed: u64) -> Bytes {
        Bus::encode(Event::Lagged { missed }).line
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        let mut slots = self.bus.inner.slots.write().unwrap();
        slots.remove(&self.id);
        let wanted = slots.values().fold(0, |bits, s| bits | s.filter.types);
        self.bus.inner.wanted.store(wanted, Ordering::Release);
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

    /// The flusher's rounds until no subscriber lacks an event, without the flusher task.
    fn flush(bus: &Bus) {
        let mut round = Round::default();
        while bus.begin_round(&mut round) {
            while bus.serve_chunk(&mut round) {}
        }
    }

    /// The session ids of the lines in `bytes`.
    fn line_sessions(bytes: &[u8]) -> Vec<String> {
        serde_json::Deserializer::from_slice(bytes)
            .into_iter::<serde_json::Value>()
            .map(|l| l.unwrap()["result"]["event"]["data"]["session_id"].to_string())
            .collect()
    }

    /// Takes the log: how many events were logged since the last take.
    fn logged(bus: &Bus) -> usize {
        std::mem::take(&mut bus.inner.log.lock().unwrap().events).len()
    }

    /// What `sub` has queued: (lost, events), or `None` if nothing.
    fn take(sub: &Subscriber) -> Option<(u64, Vec<Arc<Published>>)> {
        let mut events = VecDeque::new();
        let taken = sub.try_batch(&mut events)?.expect("the bus is open");
        Some((taken.lost, events.into()))
    }

    #[test]
    fn filters_are_anded() {
        let bus = Bus::new(10);
        let all = bus.subscribe(Filter::default());
        let by_session = bus.subscribe(Filter::default().of(Some("s1".into()), None));
        let both = bus.subscribe(Filter::default().of(Some("s1".into()), Some("r2".into())));
        let by_type = bus.subscribe(Filter::of_types(&["new_approval"]));
        let type_and_session = bus.subscribe(
            Filter::of_types(&["approval_resolved", "session_status_changed"])
                .of(Some("s2".into()), Some(String::new())),
        );
        let unknown = bus.subscribe(Filter::of_types(&["no_such_type"]));
        bus.publish(status("s1", "r1"));
        bus.publish(status("s2", "r2"));
        flush(&bus);
        assert_eq!(take(&all).unwrap().1.len(), 2);
        assert_eq!(take(&by_session).unwrap().1.len(), 1);
        assert!(take(&both).is_none());
        assert!(take(&by_type).is_none());
        let (_, events) = take(&type_and_session).unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].event.event.session_id(), Some("s2"));
        assert!(take(&unknown).is_none());
    }

    #[test]
    fn a_full_queue_drops_the_oldest_and_counts_them() {
        let bus = Bus::new(3);
        let sub = bus.subscribe(Filter::default());
        for i in 0..5 {
            bus.publish(status(&format!("s{i}"), "r"));
        }
        flush(&bus);
        let (lost, events) = take(&sub).unwrap();
        assert_eq!(lost, 2);
        let ids: Vec<_> = events
            .iter()
            .map(|p| p.event.event.session_id().unwrap().to_owned())
            .collect();
        assert_eq!(ids, ["s2", "s3", "s4"]);
        assert!(take(&sub).is_none());
    }

    #[test]
    fn a_subscriber_gets_only_what_is_published_after_it_subscribed() {
        let bus = Bus::new(10);
        let early = bus.subscribe(Filter::default());
        bus.publish(status("s1", "r"));
        let late = bus.subscribe(Filter::default());
        bus.publish(status("s2", "r"));
        flush(&bus);
        let ids = |sub| -> Vec<String> {
            let (_, events) = take(sub).unwrap();
            session_ids(&events.into())
        };
        assert_eq!(ids(&early), ["s1", "s2"]);
        assert_eq!(ids(&late), ["s2"]);
    }

    #[test]
    fn events_of_types_nobody_wants_are_not_logged() {
        let bus = Bus::new(10);
        let approvals = bus.subscribe(Filter::of_types(&["new_approval"]));
        bus.publish(status("s1", "r"));
        assert_eq!(logged(&bus), 0);
        let all = bus.subscribe(Filter::default());
        bus.publish(status("s2", "r"));
        assert_eq!(logged(&bus), 1);
        drop(all);
        bus.publish(status("s3", "r"));
        assert_eq!(logged(&bus), 0);
        assert!(take(&approvals).is_none());
        assert_eq!(bus.published_count(), 3);
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
        flush(&bus);
        let (_, events) = take(&sub).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&events[0].line).unwrap();
        assert_eq!(v["id"], serde_json::Value::Null);
        assert_eq!(v["result"]["event"]["type"], "session_status_changed");
        assert_eq!(v["result"]["event"]["data"]["session_id"], "s1");
        assert!(v["result"]["event"]["timestamp"].is_string());
    }

    #[tokio::test]
    async fn closing_ends_every_subscription_present_and_future() {
        let bus = Bus::new(3);
        let before = bus.subscribe(Filter::default());
        let waiting = {
            let bus = bus.clone();
            tokio::spawn(async move {
                let sub = bus.subscribe(Filter::default());
                sub.next_batch(&mut VecDeque::new()).await
            })
        };
        tokio::task::yield_now().await;
        bus.close();
        assert_eq!(waiting.await.unwrap(), None);
        assert_eq!(before.next_batch(&mut VecDeque::new()).await, None);
        let after = bus.subscribe(Filter::default());
        bus.publish(status("s1", "r1"));
        assert_eq!(after.try_batch(&mut VecDeque::new()), Some(None));
    }

    /// A socket that takes `room` more bytes, then would block.
    struct Pipe {
        room: Mutex<usize>,
        got: Mutex<Vec<u8>>,
        writes: AtomicU64,
    }

    impl Sink for Pipe {
        fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> std::io::Result<usize> {
            let mut room = self.room.lock().unwrap();
            if *room == 0 {
                return Err(std::io::ErrorKind::WouldBlock.into());
            }
            self.writes.fetch_add(1, Ordering::Relaxed);
            let mut got = self.got.lock().unwrap();
            let before = got.len();
            for buf in bufs {
                let n = buf.len().min(*room);
                got.extend_from_slice(&buf[..n]);
                *room -= n;
            }
            Ok(got.len() - before)
        }
    }

    /// Lets the flusher run.
    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    fn session_ids(events: &VecDeque<Arc<Published>>) -> Vec<String> {
        events
            .iter()
            .map(|p| p.event.event.session_id().unwrap().to_owned())
            .collect()
    }

    #[tokio::test]
    async fn the_flusher_writes_a_long_backlog_in_order_a_writev_at_a_time() {
        let bus = Bus::new(200);
        let pipe = Arc::new(Pipe {
            room: Mutex::new(usize::MAX),
            got: Mutex::default(),
            writes: AtomicU64::new(0),
        });
        let sub = bus.subscribe_direct(Filter::default(), pipe.clone());
        assert!(take(&sub).is_none()); // the task hands the sink to the flusher
        for i in 0..100 {
            bus.publish(status(&format!("s{i}"), "r"));
        }
        flush(&bus);
        assert_eq!(pipe.writes.load(Ordering::Relaxed), 2);
        let ids = line_sessions(&pipe.got.lock().unwrap());
        let expected: Vec<String> = (0..100).map(|i| format!("\"s{i}\"")).collect();
        assert_eq!(ids, expected);
        assert!(take(&sub).is_none());
    }

    #[tokio::test]
    async fn the_flusher_writes_idle_subscribers_and_leaves_the_rest_to_their_task() {
        let bus = Bus::new(2);
        tokio::spawn(bus.clone().flusher());
        let pipe = Arc::new(Pipe {
            room: Mutex::new(usize::MAX),
            got: Mutex::default(),
            writes: AtomicU64::new(0),
        });
        let sub = bus.subscribe_direct(Filter::default(), pipe.clone());
        // The task owns the sink until its first batch: the event waits for it.
        bus.publish(status("s0", "r"));
        settle().await;
        let (lost, queued) = take(&sub).unwrap();
        assert_eq!((lost, queued.len()), (0, 1));
        assert!(pipe.got.lock().unwrap().is_empty());
        assert!(take(&sub).is_none());

        // Idle: two events published before the flusher runs go out in one write.
        bus.publish(status("s1", "r"));
        bus.publish(status("s2", "r"));
        settle().await;
        assert_eq!(pipe.writes.load(Ordering::Relaxed), 1);
        let got = std::mem::take(&mut *pipe.got.lock().unwrap());
        let lines: Vec<serde_json::Value> = serde_json::Deserializer::from_slice(&got)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let ids: Vec<_> = lines
            .iter()
            .map(|l| l["result"]["event"]["data"]["session_id"].clone())
            .collect();
        assert_eq!(ids, ["s1", "s2"]);
        assert!(take(&sub).is_none());

        // The socket takes 10 bytes: the rest of the line is left to the task.
        *pipe.room.lock().unwrap() = 10;
        bus.publish(status("s3", "r"));
        settle().await;
        assert_eq!(pipe.got.lock().unwrap().len(), 10);
        let mut queued = VecDeque::new();
        let taken = sub.try_batch(&mut queued).unwrap().unwrap();
        assert_eq!(
            taken,
            Taken {
                lost: 0,
                written: 10
            }
        );
        assert_eq!(session_ids(&queued), ["s3"]);

        // While the task writes, events queue for it; when full the oldest goes.
        *pipe.room.lock().unwrap() = usize::MAX;
        for s in ["s4", "s5", "s6"] {
            bus.publish(status(s, "r"));
        }
        settle().await;
        assert_eq!(pipe.got.lock().unwrap().len(), 10);
        queued.clear();
        let taken = sub.try_batch(&mut queued).unwrap().unwrap();
        assert_eq!(
            taken,
            Taken {
                lost: 1,
                written: 0
            }
        );
        assert_eq!(session_ids(&queued), ["s5", "s6"]);

        // A heartbeat may take the socket only when nothing is queued.
        queued.clear();
        assert!(sub.try_batch(&mut queued).is_none());
        assert!(sub.claim());
        bus.publish(status("s7", "r"));
        settle().await;
        assert!(!sub.claim());
    }

    /// A socket that records the lines of each write; the first write to any socket sharing
    /// its `fired` flag publishes another event, as if it came while the flusher was on its way
    /// round.
    struct Midway {
        bus: Bus,
        fired: Arc<AtomicBool>,
        writes: Mutex<Vec<Vec<String>>>,
    }

    impl Sink for Midway {
        fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> std::io::Result<usize> {
            let bytes: Vec<u8> = bufs.iter().flat_map(|b| b.iter().copied()).collect();
            self.writes.lock().unwrap().push(line_sessions(&bytes));
            if !self.fired.swap(true, Ordering::Relaxed) {
                self.bus.publish(status("late", "r"));
            }
            Ok(bytes.len())
        }
    }

    #[test]
    fn an_event_published_during_a_round_reaches_its_remaining_subscribers_in_it() {
        let bus = Bus::new(8);
        let fired = Arc::new(AtomicBool::new(false));
        let subs: Vec<_> = (0..FLUSH_CHUNK * 2 + 88)
            .map(|_| {
                let sink = Arc::new(Midway {
                    bus: bus.clone(),
                    fired: fired.clone(),
                    writes: Mutex::default(),
                });
                let sub = bus.subscribe_direct(Filter::default(), sink.clone());
                assert!(take(&sub).is_none()); // the task hands the sink to the flusher
                (sub, sink)
            })
            .collect();
        bus.publish(status("early", "r"));
        flush(&bus);
        // "late" came while the first chunk was served: the chunks after it carry both
        // events in one write; the first chunk's subscribers get it in the next round.
        let (mut one, mut two) = (0, 0);
        for (sub, sink) in &subs {
            let writes = sink.writes.lock().unwrap();
            let all: Vec<&String> = writes.iter().flatten().collect();
            assert_eq!(all, ["\"early\"", "\"late\""]);
            match writes.len() {
                1 => one += 1,
                2 => two += 1,
                n => panic!("{n} writes"),
            }
            assert!(take(sub).is_none());
        }
        assert_eq!((two, one), (FLUSH_CHUNK, FLUSH_CHUNK + 88));
    }

    /// A socket that makes a flusher round long: each write blocks for [`LONG_ROUND`] and
    /// records the runtime's (paused) clock; with `echo`, the write publishes the next event
    /// itself, while the round is still going.
    struct Slow {
        bus: Bus,
        echo: bool,
        writes: Mutex<Vec<tokio::time::Instant>>,
        wrote: Notify,
    }

    impl Sink for Slow {
        fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> std::io::Result<usize> {
            std::thread::sleep(LONG_ROUND);
            let mut writes = self.writes.lock().unwrap();
            writes.push(tokio::time::Instant::now());
            if self.echo && writes.len() < 3 {
                self.bus.publish(status("next", "r"));
            }
            self.wrote.notify_one();
            Ok(bufs.iter().map(|b| b.len()).sum())
        }
    }

    /// How far the paused clock moved between the writes of three events to a subscriber
    /// whose socket makes every round long: events published during the round (`echo`), or
    /// each in answer to the previous write, as a client with one event in flight sends them.
    /// The test waits without timers, so only the flusher's rests move the clock.
    async fn rests_between_writes(echo: bool) -> Vec<Duration> {
        let bus = Bus::new(8);
        tokio::spawn(bus.clone().flusher());
        let slow = Arc::new(Slow {
            bus: bus.clone(),
            echo,
            writes: Mutex::default(),
            wrote: Notify::new(),
        });
        let sub = bus.subscribe_direct(Filter::default(), slow.clone());
        // The task hands the sink to the flusher.
        assert!(take(&sub).is_none());
        bus.publish(status("first", "r"));
        for _ in 0..2 {
            slow.wrote.notified().await;
            if !echo {
                bus.publish(status("next", "r"));
            }
        }
        slow.wrote.notified().await;
        let writes = slow.writes.lock().unwrap();
        writes.windows(2).map(|w| w[1] - w[0]).collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_long_round_during_which_events_came_is_followed_by_a_rest() {
        let rests = rests_between_writes(true).await;
        assert_eq!(rests.len(), 2);
        for rest in rests {
            assert!(rest >= LONG_ROUND, "{rest:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_event_sent_in_answer_to_a_long_round_gets_no_rest() {
        let rests = rests_between_writes(false).await;
        assert_eq!(rests, [Duration::ZERO; 2]);
    }
}
