//! Streaming sessions: many real sessions (`fake-claude` in its `stream` scenario) each
//! writing timed lines at a steady rate, their events carried claude stdout → hld → store →
//! bus → subscribers (`hld-bench client stream …`), next to the raw broadcast server running
//! the same agents and relaying each line they write, padded to the size of hld's events, to
//! as many subscribers of the same load generator: both sides carry an event through the
//! same processes (agent → server → subscriber) among the same agent processes.
//!
//! Each line of the agent is `stamp <n> <µs on CLOCK_MONOTONIC when written>`; a subscriber
//! finds the stamp in its `conversation_updated` line by substring search. An event's latency
//! runs from the agent's stamp to the moment the last subscriber has read it; every event must
//! reach every subscriber once.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use anyhow::ensure;
use memchr::memmem;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::Notify;

use crate::fanout::{self, FanoutResult, Seen};
use crate::groups::{ratios, Group, Plan};
use crate::procs::{self, Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::stats::{monotonic_ns, ratio, si, us, Latency, Spread};

/// Events a second each session writes.
const PER_SESSION_RATE: u64 = 20;
/// The target: hld's event p99 at most this many times the raw server's.
const MAX_RATIO: f64 = 3.0;

/// What the streaming load generator runs.
#[derive(Debug, Clone)]
pub struct StreamSpec {
    /// The daemon's socket.
    pub sock: PathBuf,
    /// The sessions' working directory.
    pub dir: PathBuf,
    /// Sessions launched.
    pub sessions: u64,
    /// Lines each session writes (the daemon's `FAKE_CLAUDE_COUNT`).
    pub events: u64,
    /// Subscriber connections.
    pub subs: u32,
}

/// Deliveries of every event, by its number.
struct Tally {
    subs: u32,
    counts: RefCell<Vec<u32>>,
    /// Each event's stamp, in ns.
    stamps: RefCell<Vec<u64>>,
    /// Stamp to first and to last delivery, in ns.
    first: RefCell<Vec<Option<u64>>>,
    last: RefCell<Vec<Option<u64>>>,
    completed: Cell<usize>,
    lagged: Cell<u64>,
    repeated: Cell<u64>,
    lines: Cell<u64>,
    bytes: Cell<u64>,
    progress: Notify,
}

impl Tally {
    /// What one subscriber makes of one line.
    fn read(&self, seen: &mut Seen, line: &[u8]) {
        let Some((n, stamp_us)) = stamp_of(line) else {
            if memmem::find(line, b"\"lagged\"").is_some() {
                self.lagged.set(self.lagged.get() + 1);
            }
            return;
        };
        let now = monotonic_ns().unwrap_or(0);
        let took = now.saturating_sub(stamp_us * 1000);
        self.lines.set(self.lines.get() + 1);
        self.bytes.set(self.bytes.get() + line.len() as u64 + 1);
        if !seen.first_time(n) {
            self.repeated.set(self.repeated.get() + 1);
            return;
        }
        let mut counts = self.counts.borrow_mut();
        let Some(count) = counts.get_mut(n) else {
            return;
        };
        *count += 1;
        if *count == 1 {
            self.stamps.borrow_mut()[n] = stamp_us * 1000;
            self.first.borrow_mut()[n] = Some(took);
        }
        if *count == self.subs {
            self.last.borrow_mut()[n] = Some(took);
            self.completed.set(self.completed.get() + 1);
            self.progress.notify_waiters();
        }
    }
}

/// The event number and the stamp (µs) after the first `stamp ` in `line`.
fn stamp_of(line: &[u8]) -> Option<(usize, u64)> {
    const KEY: &[u8] = b"stamp ";
    let at = memmem::find(line, KEY)? + KEY.len();
    let mut fields = line[at..].splitn(3, |&b| b == b' ');
    let n = leading_number(fields.next()?)?;
    let stamp = leading_number(fields.next()?)?;
    Some((usize::try_from(n).ok()?, stamp))
}

/// The number `field` starts with, if it starts with a digit.
fn leading_number(field: &[u8]) -> Option<u64> {
    let digits = field.iter().take_while(|b| b.is_ascii_digit());
    let mut number = None;
    for &d in digits {
        number = Some(number.unwrap_or(0u64) * 10 + u64::from(d - b'0'));
    }
    number
}

/// Runs the load: subscribes, launches the sessions, waits for every event.
pub fn run(spec: &StreamSpec) -> anyhow::Result<FanoutResult> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    tokio::task::LocalSet::new().block_on(&rt, run_local(spec))
}

async fn run_local(spec: &StreamSpec) -> anyhow::Result<FanoutResult> {
    let all = usize::try_from(spec.sessions * spec.events)?;
    let tally = Rc::new(Tally {
        subs: spec.subs,
        counts: RefCell::new(vec![0; all]),
        stamps: RefCell::new(vec![0; all]),
        first: RefCell::new(vec![None; all]),
        last: RefCell::new(vec![None; all]),
        completed: Cell::new(0),
        lagged: Cell::new(0),
        repeated: Cell::new(0),
        lines: Cell::new(0),
        bytes: Cell::new(0),
        progress: Notify::new(),
    });
    for _ in 0..spec.subs {
        let tally = tally.clone();
        let mut seen = Seen::default();
        fanout::subscribe_lines(&spec.sock, "conversation_updated", move |line| {
            tally.read(&mut seen, line)
        })
        .await?;
    }
    let started = Instant::now();
    let (rd, mut wr) = UnixStream::connect(&spec.sock).await?.into_split();
    let mut rd = BufReader::new(rd);
    let mut reply = Vec::new();
    for session in 0..spec.sessions {
        let params = serde_json::json!({
            "query": format!("scenario:stream {}", session * spec.events),
            "working_dir": spec.dir,
        });
        wr.write_all(&fanout::request("launchSession", params, session))
            .await?;
        reply.clear();
        rd.read_until(b'\n', &mut reply).await?;
        ensure!(
            memmem::find(&reply, b"\"session_id\"").is_some(),
            "launchSession failed: {}",
            String::from_utf8_lossy(&reply)
        );
    }
    // Every session runs from here on: the latencies are of the events written after.
    let steady = monotonic_ns()?;
    let span = Duration::from_millis(spec.events * 1000 / PER_SESSION_RATE);
    let deadline = tokio::time::Instant::now() + span + Duration::from_secs(30);
    loop {
        let notified = tally.progress.notified();
        if tally.completed.get() == all
            || tokio::time::timeout_at(deadline, notified).await.is_err()
        {
            break;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let stamps = tally.stamps.borrow();
    let (first, last) = (tally.first.borrow(), tally.last.borrow());
    let steady_times = |times: &[Option<u64>]| -> Vec<u64> {
        times
            .iter()
            .zip(stamps.iter())
            .filter(|(_, &stamp)| stamp >= steady)
            .filter_map(|(t, _)| *t)
            .collect()
    };
    let mut to_last = steady_times(&last);
    let mut to_first = steady_times(&first);
    let mut spread: Vec<u64> = first
        .iter()
        .zip(last.iter())
        .zip(stamps.iter())
        .filter(|(_, &stamp)| stamp >= steady)
        .filter_map(|((f, l), _)| Some(l.as_ref()?.saturating_sub(*f.as_ref()?)))
        .collect();
    Ok(FanoutResult {
        latency: Latency::of_nanos(&mut to_last),
        first: Latency::of_nanos(&mut to_first),
        spread: Latency::of_nanos(&mut spread),
        events_per_sec: tally.completed.get() as f64 / elapsed,
        lost: (all - tally.completed.get()) as u64,
        lagged: tally.lagged.get(),
        repeated: tally.repeated.get(),
        line_bytes: tally.bytes.get() as f64 / tally.lines.get().max(1) as f64,
    })
}

/// The daemon's environment for sessions of `events` lines each.
fn daemon_env(events: u64) -> Vec<(String, String)> {
    vec![
        ("FAKE_CLAUDE_COUNT".into(), events.to_string()),
        (
            "FAKE_CLAUDE_DELAY_MS".into(),
            (1000 / PER_SESSION_RATE).to_string(),
        ),
    ]
}

/// The load generator's arguments.
fn stream_args(sock: &Path, dir: &Path, sessions: u64, events: u64, subs: u32) -> Vec<String> {
    vec![
        "stream".into(),
        "--sock".into(),
        sock.display().to_string(),
        "--dir".into(),
        dir.display().to_string(),
        "--sessions".into(),
        sessions.to_string(),
        "--events".into(),
        events.to_string(),
        "--subs".into(),
        subs.to_string(),
    ]
}

/// The group: `rounds` rounds of hld, then the raw server padded to hld's event lines.
pub fn group(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let (sessions, events, subs) = plan.streaming;
    let (mut hld, mut raw) = (Vec::new(), Vec::new());
    for _ in 0..plan.slow_rounds {
        let server = Server::daemon(
            bins,
            &DaemonOptions {
                env: daemon_env(events),
                ..Default::default()
            },
        )?;
        let args = stream_args(&server.sock, server.dir.path(), sessions, events, subs);
        let result: FanoutResult = procs::client(bins, false, &args)?;
        server.stop()?;
        let pad = (result.line_bytes.round() as usize).to_string();
        hld.push(result);
        let agent = bins.fake_claude.display().to_string();
        let flags = ["--event-bytes".into(), pad, "--agent".into(), agent];
        let server = Server::raw(bins, "fanout", false, &flags, &daemon_env(events))?;
        let args = stream_args(&server.sock, server.dir.path(), sessions, events, subs);
        raw.push(procs::client(bins, false, &args)?);
        server.stop()?;
    }
    let p99 = |rs: &[FanoutResult]| rs.iter().map(|r| r.latency.p99_us).collect::<Vec<_>>();
    let faults = |rs: &[FanoutResult]| rs.iter().map(|r| r.lost + r.lagged + r.repeated).sum();
    let show = |rs: &[FanoutResult]| {
        let p50 = Spread::of(&rs.iter().map(|r| r.latency.p50_us).collect::<Vec<_>>());
        let rate = Spread::of(&rs.iter().map(|r| r.events_per_sec).collect::<Vec<_>>());
        format!(
            "p99 {}; p50 {}; {} events/s; lost, lagged or repeated {} in all rounds",
            Spread::of(&p99(rs)).show(us),
            us(p50.median),
            si(rate.median),
            faults(rs)
        )
    };
    let r = ratios(&p99(&hld), &p99(&raw));
    let hld_faults: u64 = faults(&hld);
    let line_bytes = Spread::of(&hld.iter().map(|r| r.line_bytes).collect::<Vec<_>>()).median;
    if hld_faults > 0 {
        eprintln!("hld-bench: streaming: {hld_faults} events lost, lagged or repeated");
    }
    Ok(Section {
        title: Group::Streaming.title().into(),
        method: format!(
            "hld runs {sessions} sessions of `fake-claude` in its `stream` scenario, each \
             writing {events} text lines `stamp <n> <µs on CLOCK_MONOTONIC>` {PER_SESSION_RATE} \
             a second on a fixed schedule (flushed per line), launched one after the other; \
             {subs} subscribers of `conversation_updated` (one tokio current_thread client \
             process, unpinned) find each stamp by substring search. An event's latency runs \
             from the agent's stamp to the last subscriber's read: claude's stdout, hld's \
             parser, the store (committed), the bus, the socket; the percentiles are of the \
             events written once every session is launched (all are checked for loss). \
             Baseline, same round: the raw broadcast server of section 3 running the same \
             sessions for the same load generator: its `launchSession` starts `fake-claude` as \
             hld does (stdout piped, same scenario and environment), and each line the agent \
             writes goes out as it is to the {subs} subscribers, padded to the length of hld's \
             event lines ({line_bytes:.0} bytes)."
        ),
        commands: vec![
            format!(
                "FAKE_CLAUDE_COUNT={events} FAKE_CLAUDE_DELAY_MS={} hld --socket $DIR/hld.sock \
                 --database $DIR/hld.db --log-file $DIR/hld.log --claude-path fake-claude &",
                1000 / PER_SESSION_RATE
            ),
            format!(
                "hld-bench client stream --sock $DIR/hld.sock --dir $DIR --sessions {sessions} \
                 --events {events} --subs {subs}"
            ),
            format!(
                "FAKE_CLAUDE_COUNT={events} FAKE_CLAUDE_DELAY_MS={} hld-bench serve --kind \
                 fanout --sock $DIR/raw.sock --event-bytes $BYTES --agent fake-claude &",
                1000 / PER_SESSION_RATE
            ),
            format!(
                "hld-bench client stream --sock $DIR/raw.sock --dir $DIR --sessions {sessions} \
                 --events {events} --subs {subs}"
            ),
        ],
        rows: vec![Row {
            name: format!(
                "{sessions} streaming sessions, {PER_SESSION_RATE} events/s each, {subs} \
                 subscribers"
            ),
            figure: show(&hld),
            baseline: show(&raw),
            ratio: format!("p99 ×{}", r.show(ratio)),
            target: format!("event p99 ≤ {MAX_RATIO}× the raw broadcast server's, no loss"),
            verdict: Verdict::of(r.median <= MAX_RATIO && hld_faults == 0),
        }],
        notes: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::stamp_of;

    #[test]
    fn finds_the_number_and_the_stamp() {
        let line = br#"{"content":"stamp 1700 123456789","x":"stamp 1 2"}"#;
        assert_eq!(stamp_of(line), Some((1700, 123_456_789)));
        assert_eq!(stamp_of(br#"{"content":"stamp 12"}"#), None);
        assert_eq!(stamp_of(br#"{"content":"hello"}"#), None);
    }
}
