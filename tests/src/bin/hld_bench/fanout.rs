//! The fan-out load generator (`hld-bench client fanout …`): S subscriber connections and one
//! publisher, all on one tokio current_thread runtime.
//!
//! Each subscriber sends `Subscribe` (only `new_approval` events) and waits for the
//! confirmation. The publisher then sends `createApproval` requests whose `tool_input` is
//! `{"seq": i}`: the daemon stores each approval and publishes one `new_approval` event
//! carrying it. (The raw fan-out server broadcasts the request's params instead.) A subscriber
//! finds the first `"seq":` of each line with a substring search, not a JSON parse, so that
//! the client's own CPU cost does not hide the server's; the event is complete when all S have
//! read it. Latency is from the publisher's write to the moment the last subscriber has the
//! line.
//!
//! With `rate` unset, one event is in flight at a time; with a rate, events are sent on a fixed
//! schedule (at most `window` incomplete). Every event must reach every subscriber: an event
//! missing after the grace period, or a `lagged` notice, counts as lost.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use memchr::memmem;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::Notify;

use crate::stats::Latency;

/// Events left out of the statistics at the start of a run (connections warming up).
const WARMUP: usize = 10;
/// Events that may be in flight under a paced or saturating load (`perf-limits.md`'s window).
pub const WINDOW: usize = 1024;
/// How long after the last send every event must have arrived.
const GRACE: Duration = Duration::from_secs(10);

/// What to run.
#[derive(Debug, Clone)]
pub struct FanoutSpec {
    /// The server's socket.
    pub sock: PathBuf,
    /// Subscriber connections.
    pub subs: usize,
    /// Events to publish.
    pub events: usize,
    /// Events per second; `None` for one in flight.
    pub rate: Option<f64>,
    /// The session the approvals belong to.
    pub session: String,
    /// Publisher connections, used in turn (as from that many sessions).
    pub publishers: usize,
    /// Events that may be in flight at once (1: each is sent once the previous one is
    /// complete).
    pub window: usize,
    /// Where to write each event's times (see [`write_events`]), if anywhere.
    pub events_out: Option<PathBuf>,
}

/// The outcome of one fan-out run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct FanoutResult {
    /// Publish-to-last-delivery latency (warm-up excluded).
    pub latency: Latency,
    /// Of that, publish to the first delivery (the server's handling before it writes).
    pub first: Latency,
    /// And the first delivery to the last (the server's pass over its subscribers, and the
    /// readers' lag).
    pub spread: Latency,
    /// Events per second achieved.
    pub events_per_sec: f64,
    /// Events that did not reach every subscriber.
    pub lost: u64,
    /// `lagged` notices received.
    pub lagged: u64,
    /// Event lines a subscriber had read before: each must get every event once.
    pub repeated: u64,
    /// The mean length of an event line, in bytes.
    pub line_bytes: f64,
}

struct Shared {
    /// Deliveries per event.
    counts: RefCell<Vec<u32>>,
    /// When each event was sent and when its last delivery arrived.
    sent: RefCell<Vec<Option<Instant>>>,
    done: RefCell<Vec<Option<Instant>>>,
    /// When each event's first delivery arrived.
    first: RefCell<Vec<Option<Instant>>>,
    /// Which subscriber (by the order they subscribed in) read each event last.
    last: RefCell<Vec<u32>>,
    completed: Cell<usize>,
    lagged: Cell<u64>,
    /// Event lines a subscriber had read before.
    repeated: Cell<u64>,
    /// Event lines read, and their bytes.
    lines: Cell<u64>,
    bytes: Cell<u64>,
    progress: Notify,
    subs: u32,
}

impl Shared {
    fn deliver(&self, seq: usize, sub: u32) {
        let mut counts = self.counts.borrow_mut();
        let Some(count) = counts.get_mut(seq) else {
            return;
        };
        *count += 1;
        if *count == 1 {
            self.first.borrow_mut()[seq] = Some(Instant::now());
        }
        if *count == self.subs {
            self.done.borrow_mut()[seq] = Some(Instant::now());
            self.last.borrow_mut()[seq] = sub;
            self.completed.set(self.completed.get() + 1);
            self.progress.notify_waiters();
        }
    }
}

/// The events one subscriber has read, a bit each.
#[derive(Default)]
pub(crate) struct Seen(Vec<u64>);

impl Seen {
    /// Marks `seq` read: `false` if it already was.
    pub(crate) fn first_time(&mut self, seq: usize) -> bool {
        let (word, bit) = (seq / 64, 1u64 << (seq % 64));
        if word >= self.0.len() {
            self.0.resize(word + 1, 0);
        }
        let first = self.0[word] & bit == 0;
        self.0[word] |= bit;
        first
    }
}

/// What subscriber `sub` makes of one event line (or message) of `bytes` bytes: a delivery of
/// the event its `"seq":` names, or a `lagged` notice.
fn read_event(shared: &Shared, seen: &mut Seen, sub: u32, line: &[u8], bytes: usize) {
    if let Some(seq) = seq_of(line) {
        if !seen.first_time(seq) {
            shared.repeated.set(shared.repeated.get() + 1);
        }
        shared.lines.set(shared.lines.get() + 1);
        shared.bytes.set(shared.bytes.get() + bytes as u64);
        shared.deliver(seq, sub);
    } else if memmem::find(line, b"\"lagged\"").is_some() {
        shared.lagged.set(shared.lagged.get() + 1);
    }
}

/// The number after the first `"seq":` in `line`.
fn seq_of(line: &[u8]) -> Option<usize> {
    static KEY: std::sync::LazyLock<memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memmem::Finder::new(b"\"seq\":"));
    let at = KEY.find(line)? + KEY.needle().len();
    let digits = line[at..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .fold(0usize, |n, &b| n * 10 + usize::from(b - b'0'));
    Some(digits)
}

/// A request line.
pub(crate) fn request(method: &str, params: serde_json::Value, id: u64) -> Vec<u8> {
    let mut line = serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0", "method": method, "params": params, "id": id
    }))
    .expect("a request serialises");
    line.push(b'\n');
    line
}

/// Subscribes connection number `sub` and spawns its reader.
async fn subscribe(sock: &Path, sub: u32, shared: Rc<Shared>) -> anyhow::Result<()> {
    let mut seen = Seen::default();
    subscribe_lines(sock, "new_approval", move |line| {
        read_event(&shared, &mut seen, sub, line, line.len() + 1)
    })
    .await
}

/// Opens a subscription to `event_type` on a fresh connection and spawns a reader that hands
/// `on_line` every line that follows the confirmation (without its newline).
pub(crate) async fn subscribe_lines(
    sock: &Path,
    event_type: &str,
    mut on_line: impl FnMut(&[u8]) + 'static,
) -> anyhow::Result<()> {
    let stream = UnixStream::connect(sock).await.context("connect")?;
    let (rd, mut wr) = stream.into_split();
    let mut rd = BufReader::with_capacity(64 * 1024, rd);
    wr.write_all(&request(
        "Subscribe",
        serde_json::json!({"event_types": [event_type]}),
        1,
    ))
    .await?;
    let mut line = Vec::new();
    rd.read_until(b'\n', &mut line).await?;
    if !line.windows(15).any(|w| w == b"subscription_id") {
        bail!(
            "no subscription confirmation: {}",
            String::from_utf8_lossy(&line)
        );
    }
    // What the confirmation's read brought beyond its line.
    let mut buf = rd.buffer().to_vec();
    let mut rd = rd.into_inner();
    tokio::task::spawn_local(async move {
        // Kept open until the runtime ends.
        let _wr = wr;
        loop {
            // Every complete line in the buffer, then read more: no copy per line.
            let mut start = 0;
            while let Some(end) = memchr::memchr(b'\n', &buf[start..]) {
                on_line(&buf[start..start + end]);
                start += end + 1;
            }
            buf.drain(..start);
            // read_buf reads into spare capacity only: keep some.
            buf.reserve(64 * 1024);
            match rd.read_buf(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    });
    Ok(())
}

/// Runs one fan-out measurement.
pub fn run(spec: &FanoutSpec) -> anyhow::Result<FanoutResult> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, run_local(spec))
}

async fn run_local(spec: &FanoutSpec) -> anyhow::Result<FanoutResult> {
    let shared = Rc::new(Shared {
        counts: RefCell::new(vec![0; spec.events]),
        sent: RefCell::new(vec![None; spec.events]),
        done: RefCell::new(vec![None; spec.events]),
        first: RefCell::new(vec![None; spec.events]),
        last: RefCell::new(vec![0; spec.events]),
        completed: Cell::new(0),
        lagged: Cell::new(0),
        lines: Cell::new(0),
        bytes: Cell::new(0),
        repeated: Cell::new(0),
        progress: Notify::new(),
        subs: spec.subs as u32,
    });
    // Subscribe in groups, so that a thousand handshakes do not all wait at once.
    for chunk in (0..spec.subs as u32).collect::<Vec<_>>().chunks(50) {
        let joins = chunk.iter().map(|&sub| {
            let shared = shared.clone();
            async move { subscribe(&spec.sock, sub, shared).await }
        });
        for r in futures::future::join_all(joins).await {
            r?;
        }
    }

    let mut writers = Vec::new();
    let mut replies = Vec::new();
    for _ in 0..spec.publishers.max(1) {
        let stream = UnixStream::connect(&spec.sock).await?;
        let (rd, wr) = stream.into_split();
        writers.push(wr);
        replies.push(tokio::task::spawn_local(async move {
            let mut rd = BufReader::with_capacity(64 * 1024, rd);
            let mut line = Vec::new();
            let mut errors = 0u64;
            loop {
                line.clear();
                match rd.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => return errors,
                    Ok(_) if memmem::find(&line, b"\"error\"").is_some() => {
                        if errors == 0 {
                            eprintln!("publish failed: {}", String::from_utf8_lossy(&line));
                        }
                        errors += 1;
                    }
                    Ok(_) => {}
                }
            }
        }));
    }

    let started = Instant::now();
    for i in 0..spec.events {
        match spec.rate {
            None => {}
            Some(rate) => {
                let at = started + Duration::from_secs_f64(i as f64 / rate);
                tokio::time::sleep_until(at.into()).await;
            }
        }
        wait_until(&shared, Duration::from_secs(10), |s| {
            i - s.completed.get() < spec.window.max(1)
        })
        .await
        .with_context(|| {
            format!(
                "event {} never reached every subscriber",
                i.saturating_sub(1)
            )
        })?;
        let line = request(
            "createApproval",
            serde_json::json!({
                "session_id": spec.session,
                "tool_name": "Bench",
                "tool_input": {"seq": i},
            }),
            i as u64 + 2,
        );
        shared.sent.borrow_mut()[i] = Some(Instant::now());
        let n = writers.len();
        writers[i % n].write_all(&line).await?;
    }
    let all = spec.events;
    let finished = wait_until(&shared, GRACE, |s| s.completed.get() == all).await;
    let elapsed = started.elapsed().as_secs_f64();
    drop(writers);
    let mut errors = 0;
    for reader in replies {
        errors += tokio::time::timeout(Duration::from_secs(5), reader)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or(0);
    }
    if errors > 0 {
        bail!("{errors} publish requests failed");
    }

    let sent = shared.sent.borrow();
    let first = shared.first.borrow();
    let done = shared.done.borrow();
    let skip = WARMUP.min(spec.events / 2);
    let lost = if finished.is_ok() {
        0
    } else {
        (all - shared.completed.get()) as u64
    };
    if let Some(path) = &spec.events_out {
        write_events(path, &sent, &first, &done, &shared.last.borrow())?;
    }
    Ok(FanoutResult {
        latency: between(&sent, &done, skip),
        first: between(&sent, &first, skip),
        spread: between(&first, &done, skip),
        events_per_sec: shared.completed.get() as f64 / elapsed,
        lost,
        lagged: shared.lagged.get(),
        repeated: shared.repeated.get(),
        line_bytes: shared.bytes.get() as f64 / shared.lines.get().max(1) as f64,
    })
}

/// Writes a line per event that reached every subscriber: its index, when it was sent (µs
/// after the first event), its first and last delivery (µs after it was sent), which
/// subscriber (numbered in the order they subscribed) read it last, and when it was sent on
/// the system's monotonic clock (µs; the clock `perf record -k CLOCK_MONOTONIC` stamps its
/// samples with, to set an event beside a trace). Which events were slow, and when, shows
/// what the percentiles hide: whether slow events come together, at which point of a run,
/// and whether one subscriber held them up.
fn write_events(
    path: &Path,
    sent: &[Option<Instant>],
    first: &[Option<Instant>],
    done: &[Option<Instant>],
    last: &[u32],
) -> anyhow::Result<()> {
    let start = sent.iter().flatten().next().copied();
    // `Instant` reads CLOCK_MONOTONIC on Linux but does not show its value: take both now.
    let (now, mono) = (
        Instant::now(),
        Duration::from(nix::time::clock_gettime(
            nix::time::ClockId::CLOCK_MONOTONIC,
        )?),
    );
    let mut out = String::new();
    for (i, (((s, f), d), sub)) in sent.iter().zip(first).zip(done).zip(last).enumerate() {
        if let (Some(start), Some(s), Some(f), Some(d)) = (start, s, f, d) {
            out.push_str(&format!(
                "{i} {} {} {} {sub} {}\n",
                s.duration_since(start).as_micros(),
                f.duration_since(*s).as_micros(),
                d.duration_since(*s).as_micros(),
                (mono - now.duration_since(*s)).as_micros()
            ));
        }
    }
    std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))
}

/// Percentiles of the time from `from[i]` to `to[i]` over the events after the first `skip`
/// that have both.
fn between(from: &[Option<Instant>], to: &[Option<Instant>], skip: usize) -> Latency {
    let mut nanos: Vec<u64> = from
        .iter()
        .zip(to)
        .skip(skip)
        .filter_map(|(f, t)| Some(t.as_ref()?.duration_since(*f.as_ref()?).as_nanos() as u64))
        .collect();
    Latency::of_nanos(&mut nanos)
}

/// Waits until `cond` holds, re-checking at every delivery, for at most `timeout`.
async fn wait_until(
    shared: &Shared,
    timeout: Duration,
    cond: impl Fn(&Shared) -> bool,
) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let notified = shared.progress.notified();
        if cond(shared) {
            return Ok(());
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            bail!("timed out");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{seq_of, Seen};

    #[test]
    fn a_repeated_event_is_noticed_in_any_order() {
        let mut seen = Seen::default();
        for seq in [3, 0, 200, 64, 63] {
            assert!(seen.first_time(seq), "{seq}");
        }
        for seq in [0, 63, 64, 200] {
            assert!(!seen.first_time(seq), "{seq}");
        }
        assert!(seen.first_time(1));
    }

    #[test]
    fn finds_the_first_seq() {
        assert_eq!(seq_of(br#"{"a":{"seq":42},"b":{"seq":7}}"#), Some(42));
        assert_eq!(seq_of(br#"{"a":1}"#), None);
    }
}
