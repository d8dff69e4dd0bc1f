//! The groups of figures of issue 7, each measured round-robin next to its baseline.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use serde_json::{json, Value};

use crate::fanout::FanoutResult;
use crate::load::LoadResult;
use crate::procs::{self, Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::sqlite;
use crate::stats::{mib, ratio, si, us, Spread};

/// A group of figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Group {
    /// `health` round trip on one connection.
    Latency,
    /// `health` at 8 and 64 connections.
    Throughput,
    /// Connect, `health`, close.
    Connect,
    /// One event to many subscribers.
    Fanout,
    /// A fast agent's stream stored.
    Ingest,
    /// `getConversation` of a long session.
    History,
    /// CLI start-up.
    Startup,
    /// RSS.
    Memory,
    /// The hld-tui dashboard: approvals on screen, frame cost, idle CPU.
    Tui,
    /// `searchSessions` over many sessions.
    Search,
    /// `hld --stdio`: relayed round trips, start-up.
    Stdio,
    /// The WebSocket transport: round trips, throughput and fan-out.
    Websocket,
}

impl Group {
    /// Every group, in report order.
    pub const ALL: [Group; 12] = [
        Group::Latency,
        Group::Throughput,
        Group::Connect,
        Group::Fanout,
        Group::Ingest,
        Group::History,
        Group::Startup,
        Group::Memory,
        Group::Tui,
        Group::Search,
        Group::Stdio,
        Group::Websocket,
    ];

    /// The section title.
    pub fn title(self) -> &'static str {
        match self {
            Group::Latency => "1. health round trip on one connection",
            Group::Throughput => "2. health throughput at 8 and 64 connections",
            Group::Connect => "3. connect per request (the CLI pattern)",
            Group::Fanout => "4. fan-out to subscribers",
            Group::Ingest => "5. ingest of a fast agent's stream",
            Group::History => "6. history: getConversation of a long session",
            Group::Startup => "7. CLI start-up",
            Group::Memory => "8. memory",
            Group::Tui => "9. the hld-tui dashboard",
            Group::Search => "10. search: searchSessions over many sessions",
            Group::Stdio => "11. hld --stdio: an editor's connection",
            Group::Websocket => "12. WebSocket (holon-rpc): round trips and fan-out",
        }
    }

    /// The `--only` spelling.
    pub fn name(self) -> &'static str {
        match self {
            Group::Latency => "latency",
            Group::Throughput => "throughput",
            Group::Connect => "connect",
            Group::Fanout => "fanout",
            Group::Ingest => "ingest",
            Group::History => "history",
            Group::Startup => "startup",
            Group::Memory => "memory",
            Group::Tui => "tui",
            Group::Search => "search",
            Group::Stdio => "stdio",
            Group::Websocket => "websocket",
        }
    }
}

/// How a fan-out load sends its events.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Pace {
    /// The next once every subscriber has the previous one.
    OneInFlight,
    /// On a fixed schedule, this many a second.
    Rate(f64),
    /// As fast as the server takes them, up to [`crate::fanout::WINDOW`] in flight: the most
    /// deliveries a second it manages (perf-limits' "max throughput").
    Saturated,
}

/// One fan-out row's load.
#[derive(Debug, Clone, Copy)]
struct FanoutLoad {
    subs: usize,
    events: usize,
    pace: Pace,
    /// Server and client both on CPU 0.
    pinned: bool,
    /// The target: hld's p99 at most this many times the raw server's in the same round
    /// (none for the saturating load, which is reported).
    max_ratio: Option<f64>,
}

impl FanoutLoad {
    /// One event in flight, pinned or not.
    fn one_in_flight(subs: usize, events: usize, pinned: bool, max_ratio: f64) -> Self {
        FanoutLoad {
            subs,
            events,
            pace: Pace::OneInFlight,
            pinned,
            max_ratio: Some(max_ratio),
        }
    }

    /// Events at a fixed rate, unpinned (a sustained load, placed as the daemon will run).
    fn paced(subs: usize, events: usize, rate: f64, max_ratio: f64) -> Self {
        FanoutLoad {
            subs,
            events,
            pace: Pace::Rate(rate),
            pinned: false,
            max_ratio: Some(max_ratio),
        }
    }

    /// As many events as the server takes, unpinned; reported.
    fn saturated(subs: usize, events: usize) -> Self {
        FanoutLoad {
            subs,
            events,
            pace: Pace::Saturated,
            pinned: false,
            max_ratio: None,
        }
    }
}

/// Rounds and counts.
#[derive(Debug, Clone)]
pub struct Plan {
    smoke: bool,
    /// Rounds of the request/response and fan-out groups.
    pub(crate) rounds: usize,
    /// Rounds of the slower groups (ingest, start-up, memory, tui).
    pub(crate) slow_rounds: usize,
    pub(crate) pingpong: u64,
    pub(crate) warmup: u64,
    pub(crate) conc: u64,
    connect: u64,
    fanout: Vec<FanoutLoad>,
    ingest_lines: u64,
    history_sessions: usize,
    history_events: usize,
    history_reps: usize,
    search_sessions: usize,
    search_reps: usize,
    pub(crate) startup_runs: usize,
    memory_subs: usize,
    oversize: usize,
    /// WebSocket fan-out: subscribers and events.
    pub(crate) ws_fanout: (usize, usize),
}

impl Plan {
    /// The full plan, or the smoke plan; `rounds` overrides the round counts.
    pub fn new(smoke: bool, rounds: Option<usize>) -> Plan {
        let mut plan = if smoke {
            Plan {
                smoke,
                rounds: 1,
                slow_rounds: 1,
                pingpong: 300,
                warmup: 20,
                conc: 640,
                connect: 100,
                fanout: vec![
                    FanoutLoad::one_in_flight(5, 30, true, 2.0),
                    FanoutLoad::one_in_flight(5, 30, false, 2.0),
                    FanoutLoad::one_in_flight(20, 30, false, 1.25),
                    FanoutLoad::paced(20, 50, 1000.0, 2.0),
                    FanoutLoad::saturated(20, 50),
                ],
                ingest_lines: 500,
                history_sessions: 4,
                history_events: 200,
                history_reps: 2,
                search_sessions: 2_000,
                search_reps: 2,
                startup_runs: 4,
                memory_subs: 20,
                oversize: 8 << 20,
                ws_fanout: (5, 30),
            }
        } else {
            Plan {
                smoke,
                rounds: 5,
                slow_rounds: 3,
                pingpong: 50_000,
                warmup: 2_000,
                conc: 200_000,
                connect: 20_000,
                fanout: vec![
                    FanoutLoad::one_in_flight(100, 300, true, 2.0),
                    FanoutLoad::one_in_flight(100, 300, false, 2.0),
                    FanoutLoad::one_in_flight(1000, 300, true, 1.25),
                    FanoutLoad::one_in_flight(1000, 300, false, 1.25),
                    FanoutLoad::paced(1000, 3000, 1000.0, 2.0),
                    FanoutLoad::saturated(1000, 3000),
                ],
                ingest_lines: 100_000,
                history_sessions: 100,
                history_events: 10_000,
                history_reps: 10,
                search_sessions: 100_000,
                search_reps: 30,
                startup_runs: 300,
                memory_subs: 1000,
                oversize: 64 << 20,
                ws_fanout: (100, 300),
            }
        };
        if let Some(r) = rounds {
            plan.rounds = r.max(1);
            plan.slow_rounds = r.max(1);
        }
        plan
    }

    /// One line for the report.
    pub fn describe(&self) -> String {
        format!(
            "{} rounds ({} for ingest, start-up, memory and tui){}",
            self.rounds,
            self.slow_rounds,
            if self.smoke { ", smoke counts" } else { "" }
        )
    }
}

/// Runs one group.
pub fn run(group: Group, bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    match group {
        Group::Latency => latency(bins, plan),
        Group::Throughput => throughput(bins, plan),
        Group::Connect => connect(bins, plan),
        Group::Fanout => fanout(bins, plan),
        Group::Ingest => ingest(bins, plan),
        Group::History => history(bins, plan),
        Group::Startup => startup(bins, plan),
        Group::Memory => memory(bins, plan),
        Group::Tui => crate::tui::run(bins, plan.smoke, plan.slow_rounds),
        Group::Search => {
            crate::search::run(bins, plan.rounds, plan.search_sessions, plan.search_reps)
        }
        Group::Stdio => crate::stdio::run(bins, plan),
        Group::Websocket => crate::websocket::run(bins, plan),
    }
}

/// Which server a load run talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Daemon,
    /// The daemon on a multi-thread runtime with this many workers.
    DaemonThreads(usize),
    Raw(&'static str),
}

fn start(bins: &Bins, target: Target, pinned: bool) -> anyhow::Result<Server> {
    match target {
        Target::Daemon => Server::daemon(
            bins,
            &DaemonOptions {
                pinned,
                ..Default::default()
            },
        ),
        Target::DaemonThreads(n) => Server::daemon(
            bins,
            &DaemonOptions {
                pinned,
                args: vec!["--worker-threads".into(), n.to_string()],
                ..Default::default()
            },
        ),
        Target::Raw(kind) => Server::raw(bins, kind, pinned, &[]),
    }
}

/// The load generator's arguments, with `SOCK` standing for the socket.
fn load_args(load: &str, mode: &str, extra: &[(&str, u64)]) -> Vec<String> {
    let mut args = vec![
        load.to_owned(),
        "--sock".into(),
        "SOCK".into(),
        "--mode".into(),
        mode.into(),
    ];
    for (k, v) in extra {
        args.push(format!("--{k}"));
        args.push(v.to_string());
    }
    args
}

/// One load run against a fresh server.
fn measure(
    bins: &Bins,
    target: Target,
    pinned: bool,
    args: &[String],
) -> anyhow::Result<LoadResult> {
    let server = start(bins, target, pinned)?;
    let sock = server.sock.display().to_string();
    let args: Vec<String> = args
        .iter()
        .map(|a| if a == "SOCK" { sock.clone() } else { a.clone() })
        .collect();
    let result = procs::client(bins, pinned, &args)?;
    server.stop()?;
    Ok(result)
}

/// How the processes of a run are started, for the report.
fn shown(target: Target, pinned: bool, client: &[String]) -> Vec<String> {
    let pin = if pinned { "taskset -c 0 " } else { "" };
    let server = match target {
        Target::Daemon => format!(
            "{pin}hld --socket $DIR/hld.sock --database $DIR/hld.db --log-file $DIR/hld.log \
             --claude-path fake-claude &"
        ),
        Target::DaemonThreads(n) => format!(
            "{pin}hld --socket $DIR/hld.sock --database $DIR/hld.db --log-file $DIR/hld.log \
             --claude-path fake-claude --worker-threads {n} &"
        ),
        Target::Raw(kind) => format!("{pin}hld-bench serve --kind {kind} --sock $DIR/raw.sock &"),
    };
    let sock = match target {
        Target::Daemon | Target::DaemonThreads(_) => "$DIR/hld.sock",
        Target::Raw(_) => "$DIR/raw.sock",
    };
    let client: Vec<&str> = client
        .iter()
        .map(|a| if a == "SOCK" { sock } else { a.as_str() })
        .collect();
    vec![
        server,
        format!("{pin}hld-bench client {}", client.join(" ")),
    ]
}

/// Ratios of `a` to `b`, round by round.
pub(crate) fn ratios(a: &[f64], b: &[f64]) -> Spread {
    let r: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    Spread::of(&r)
}

fn rates(results: &[LoadResult]) -> Vec<f64> {
    results.iter().map(LoadResult::per_sec).collect()
}

fn spread_of(results: &[LoadResult], f: impl Fn(&LoadResult) -> f64) -> Spread {
    Spread::of(&results.iter().map(f).collect::<Vec<_>>())
}

/// A row comparing request rates: the figure shows µs per request (or req/s) and p99.
pub(crate) fn rate_row(
    name: &str,
    hld: &[LoadResult],
    raw: &[LoadResult],
    per_request: bool,
    min_ratio: f64,
) -> Row {
    let show = |results: &[LoadResult]| {
        let main = if per_request {
            spread_of(results, LoadResult::mean_us).show(us)
        } else {
            format!("{}/s", spread_of(results, LoadResult::per_sec).show(si))
        };
        let p99 = spread_of(results, |r| r.latency.p99_us).median;
        format!("{main}; p99 {}", us(p99))
    };
    let r = ratios(&rates(hld), &rates(raw));
    Row {
        name: name.to_owned(),
        figure: show(hld),
        baseline: show(raw),
        ratio: r.show(ratio),
        target: format!("req/s ratio ≥ {min_ratio}"),
        verdict: Verdict::of(r.median >= min_ratio),
    }
}

fn latency(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let extra = [("n", plan.pingpong), ("warmup", plan.warmup)];
    let raw_args = load_args("pingpong", "echo", &extra);
    let hld_args = load_args("pingpong", "rpc", &extra);
    let mut results: [[Vec<LoadResult>; 2]; 2] = Default::default();
    for _ in 0..plan.rounds {
        for (p, pinned) in [true, false].into_iter().enumerate() {
            results[p][0].push(measure(bins, Target::Raw("echo"), pinned, &raw_args)?);
            results[p][1].push(measure(bins, Target::Daemon, pinned, &hld_args)?);
        }
    }
    let mut commands = shown(Target::Raw("echo"), true, &raw_args);
    commands.extend(shown(Target::Daemon, true, &hld_args));
    commands.push("# then the same four without taskset (unpinned)".into());
    Ok(Section {
        title: Group::Latency.title().into(),
        method: format!(
            "{} sequential round trips on one connection (after {} untimed), std blocking \
             client. hld answers `health` (the client serialises the request and checks that the \
             reply is a result with the request's id, by its two ends, as the echo's reply is \
             checked by its length); the baseline is a raw tokio current_thread NDJSON echo \
             server answering a 100-byte line. The figure is the mean time per round trip; the \
             ratio is hld's round trips/s ÷ the echo's, in the same round.",
            plan.pingpong, plan.warmup
        ),
        commands,
        rows: vec![
            rate_row(
                "health round trip, pinned",
                &results[0][1],
                &results[0][0],
                true,
                0.75,
            ),
            rate_row(
                "health round trip, unpinned",
                &results[1][1],
                &results[1][0],
                true,
                0.75,
            ),
        ],
        notes: Vec::new(),
    })
}

fn throughput(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let mut rows = Vec::new();
    let mut commands = Vec::new();
    let conns = [8u64, 64];
    let targets = [
        Target::Raw("echo"),
        Target::Daemon,
        Target::DaemonThreads(MT_WORKERS),
    ];
    let mut results: [[Vec<LoadResult>; 3]; 2] = Default::default();
    let args = |c: u64, target: Target| {
        let mode = if target == Target::Raw("echo") {
            "echo"
        } else {
            "rpc"
        };
        load_args("conc", mode, &[("conns", c), ("n", plan.conc)])
    };
    for _ in 0..plan.rounds {
        for (i, &c) in conns.iter().enumerate() {
            for (k, &target) in targets.iter().enumerate() {
                results[i][k].push(measure(bins, target, false, &args(c, target))?);
            }
        }
    }
    for (i, &c) in conns.iter().enumerate() {
        rows.push(rate_row(
            &format!("health throughput, {c} connections"),
            &results[i][1],
            &results[i][0],
            false,
            0.75,
        ));
        let mut mt = rate_row(
            &format!(
                "health throughput, {c} connections, multi-thread runtime ({MT_WORKERS} workers)"
            ),
            &results[i][2],
            &results[i][0],
            false,
            0.75,
        );
        mt.target = "reported (runtime choice)".into();
        mt.verdict = Verdict::Info;
        rows.push(mt);
        for &target in &targets {
            commands.extend(shown(target, false, &args(c, target)));
        }
    }
    Ok(Section {
        title: Group::Throughput.title().into(),
        method: format!(
            "A tokio current_thread client drives C connections, each doing sequential \
             request/response (replies checked as in section 1), {} requests in all, unpinned. \
             Baseline: the raw tokio current_thread echo server. The p99 is of the per-request \
             latency. hld runs on its default single-thread runtime; the same daemon on a \
             multi-thread runtime (`--worker-threads {MT_WORKERS}`) is measured alongside, which \
             is how the default was chosen.",
            plan.conc
        ),
        commands,
        rows,
        notes: Vec::new(),
    })
}

/// Workers of the multi-thread runtime the default is compared with: one per vCPU here.
const MT_WORKERS: usize = 2;

fn connect(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let args = load_args(
        "connect",
        "rpc",
        &[("n", plan.connect), ("warmup", plan.connect / 20)],
    );
    let mut results: [[Vec<LoadResult>; 2]; 2] = Default::default();
    for _ in 0..plan.rounds {
        for (p, pinned) in [true, false].into_iter().enumerate() {
            results[p][0].push(measure(bins, Target::Raw("inline"), pinned, &args)?);
            results[p][1].push(measure(bins, Target::Daemon, pinned, &args)?);
        }
    }
    let mut commands = shown(Target::Raw("inline"), true, &args);
    commands.extend(shown(Target::Daemon, true, &args));
    commands.push("# then the same four without taskset (unpinned)".into());
    Ok(Section {
        title: Group::Connect.title().into(),
        method: format!(
            "{} requests, each on a fresh connection: connect, send `health`, read the reply, \
             close (std client). Baseline: a std single-thread server that serves each accepted \
             connection inline (read the line, parse it, serialise a `health` reply with serde, \
             close).",
            plan.connect
        ),
        commands,
        rows: vec![
            rate_row(
                "connect + health + close, pinned",
                &results[0][1],
                &results[0][0],
                true,
                0.75,
            ),
            rate_row(
                "connect + health + close, unpinned",
                &results[1][1],
                &results[1][0],
                true,
                0.75,
            ),
        ],
        notes: Vec::new(),
    })
}

/// Launches a `plain` fake session and waits until it has ended; returns its id.
pub fn finished_session(server: &Server, query: &str) -> anyhow::Result<String> {
    let launched = server.request(
        "launchSession",
        json!({"query": query, "working_dir": server.dir.path()}),
    )?;
    let id = launched["session_id"]
        .as_str()
        .context("no session_id")?
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let state = server.request("getSessionState", json!({"session_id": id}))?;
        match state["session"]["status"].as_str() {
            Some("completed") => return Ok(id),
            Some("failed") => bail!("session failed: {state}"),
            _ if Instant::now() > deadline => bail!("session never ended: {state}"),
            _ => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Connections a paced fan-out publishes from, in turn: as from that many sessions' approval
/// servers (one connection's requests are answered in order, one at a time).
const PACED_PUBLISHERS: usize = 8;

fn fanout(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let loads = &plan.fanout;
    let mut results: Vec<[Vec<FanoutResult>; 2]> = vec![Default::default(); loads.len()];
    let args = |load: &FanoutLoad, sock: &str, session: &str| {
        let mut a = vec![
            "fanout".to_owned(),
            "--sock".into(),
            sock.into(),
            "--subs".into(),
            load.subs.to_string(),
            "--events".into(),
            load.events.to_string(),
            "--session".into(),
            session.into(),
        ];
        match load.pace {
            Pace::OneInFlight => {}
            Pace::Rate(rate) => a.extend(["--rate".into(), rate.to_string()]),
            Pace::Saturated => a.extend(["--window".into(), crate::fanout::WINDOW.to_string()]),
        }
        if load.pace != Pace::OneInFlight {
            a.extend(["--publishers".into(), PACED_PUBLISHERS.to_string()]);
        }
        a
    };
    for _ in 0..plan.rounds {
        for (i, load) in loads.iter().enumerate() {
            let pinned = load.pinned;
            // hld first: the raw server then pads its event lines to the length of hld's.
            let server = start(bins, Target::Daemon, pinned)?;
            let session = finished_session(&server, "hello")?;
            let sock = server.sock.display().to_string();
            let hld: FanoutResult = procs::client(bins, pinned, &args(load, &sock, &session))?;
            server.stop()?;
            let pad = (hld.line_bytes.round() as usize).to_string();
            let server = Server::raw(bins, "fanout", pinned, &["--event-bytes".into(), pad])?;
            let sock = server.sock.display().to_string();
            let raw: FanoutResult = procs::client(bins, pinned, &args(load, &sock, "raw"))?;
            server.stop()?;
            results[i][0].push(raw);
            results[i][1].push(hld);
        }
    }
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut commands = Vec::new();
    for (i, load) in loads.iter().enumerate() {
        let FanoutLoad {
            subs,
            events,
            pace,
            pinned,
            max_ratio,
        } = *load;
        let [raw, hld] = &results[i];
        let p99 = |rs: &[FanoutResult]| {
            Spread::of(&rs.iter().map(|r| r.latency.p99_us).collect::<Vec<_>>())
        };
        let p50 = |rs: &[FanoutResult]| {
            Spread::of(&rs.iter().map(|r| r.latency.p50_us).collect::<Vec<_>>())
        };
        let rates = |rs: &[FanoutResult]| rs.iter().map(|r| r.events_per_sec).collect::<Vec<_>>();
        let lost = |rs: &[FanoutResult]| rs.iter().map(|r| r.lost + r.lagged).sum::<u64>();
        let repeated = |rs: &[FanoutResult]| rs.iter().map(|r| r.repeated).sum::<u64>();
        let show = |rs: &[FanoutResult]| {
            let latency = format!("p99 {}; p50 {}", p99(rs).show(us), us(p50(rs).median));
            let eps = Spread::of(&rates(rs));
            let mut s = match pace {
                Pace::OneInFlight => latency,
                Pace::Rate(_) => format!("{latency}; {} events/s", si(eps.median)),
                Pace::Saturated => format!(
                    "{} deliveries/s ({} events/s); {latency}",
                    eps.show(|e| si(e * subs as f64)),
                    si(eps.median)
                ),
            };
            s.push_str(&format!(
                "; lost {}, repeated {} in all rounds",
                lost(rs),
                repeated(rs)
            ));
            s
        };
        let hld_p99: Vec<f64> = hld.iter().map(|r| r.latency.p99_us).collect();
        let raw_p99: Vec<f64> = raw.iter().map(|r| r.latency.p99_us).collect();
        let how = match (pace, pinned) {
            (Pace::OneInFlight, true) => "1 in flight, pinned".to_owned(),
            (Pace::OneInFlight, false) => "1 in flight, unpinned".to_owned(),
            (Pace::Rate(r), _) => format!("paced {} events/s", si(r)),
            (Pace::Saturated, _) => format!("saturated ({} in flight)", crate::fanout::WINDOW),
        };
        let (ratio_shown, target, verdict) = match max_ratio {
            Some(max_ratio) => {
                let r = ratios(&hld_p99, &raw_p99);
                (
                    format!("p99 ×{}", r.show(ratio)),
                    format!("p99 ≤ {max_ratio}× the raw server's, no loss or repeat"),
                    Verdict::of(r.median <= max_ratio && lost(hld) == 0 && repeated(hld) == 0),
                )
            }
            None => (
                format!(
                    "deliveries/s {}",
                    ratios(&rates(hld), &rates(raw)).show(ratio)
                ),
                "reported (perf-limits: ≥ 0.5 of the raw server's deliveries/s)".to_owned(),
                Verdict::Info,
            ),
        };
        rows.push(Row {
            name: format!("fan-out to {subs} subscribers, {how}"),
            figure: show(hld),
            baseline: show(raw),
            ratio: ratio_shown,
            target,
            verdict,
        });
        let mut note = format!(
            "{subs} subscribers, {how}: {events} events per run; event lines of {:.0} bytes \
             (hld's `new_approval`; the baseline's are padded to match)",
            Spread::of(&hld.iter().map(|r| r.line_bytes).collect::<Vec<_>>()).median
        );
        if pace == Pace::Saturated {
            note.push_str(
                "; its latency is mostly queueing; both servers write each subscriber's \
                 queued events in one write, without which `perf-limits.md` found 5–6× \
                 fewer deliveries/s",
            );
        }
        notes.push(note);
    }
    commands.push(
        "hld-bench serve --kind fanout --sock $DIR/raw.sock --event-bytes $BYTES &  # under \
         taskset -c 0 for the pinned rows"
            .to_owned(),
    );
    for load in loads {
        let line = format!(
            "{}hld-bench client {}",
            if load.pinned { "taskset -c 0 " } else { "" },
            args(load, "$DIR/raw.sock", "raw").join(" ")
        );
        if !commands.contains(&line) {
            commands.push(line);
        }
    }
    commands.push(
        "hld --socket $DIR/hld.sock --database $DIR/hld.db --log-file $DIR/hld.log \
         --claude-path fake-claude &  # then launchSession, wait for it to complete"
            .to_owned(),
    );
    commands.push(
        "# the same clients with --sock $DIR/hld.sock --session $SESSION (a fresh server for \
         each row)"
            .to_owned(),
    );
    Ok(Section {
        title: Group::Fanout.title().into(),
        method: "All subscriber connections and the publisher live in one tokio current_thread \
                 client process; in *pinned* rows it and the server both run under `taskset \
                 -c 0`, in the others (the paced row among them, a sustained load) the \
                 scheduler places them. Each subscriber sends `Subscribe` for \
                 `new_approval` events; the publisher sends `createApproval` with \
                 `tool_input: {\"seq\": i}`, which hld stores (insert, commit) \
                 and then publishes as one `new_approval` event. Latency runs from the \
                 publisher's write to the moment the *last* subscriber has read the line \
                 (subscribers find `\"seq\":` by substring search). \"1 in flight\" sends the \
                 next event once every subscriber has the previous one; \"paced\" sends on a \
                 fixed schedule, from 8 publisher connections in turn (as from 8 sessions; \
                 a connection's requests are answered in order); \"saturated\" sends as fast \
                 as the server takes them from the same 8 connections, with up to 1024 events \
                 in flight, and counts deliveries a second (events × subscribers). Lost counts events that never reached every subscriber within \
                 10 s plus `lagged` notices; repeated counts lines a subscriber had already \
                 read. The baseline is a raw tokio current_thread server \
                 that parses each request, serialises its params once into an event line, \
                 broadcasts it (tokio broadcast, capacity 4096) and writes what each \
                 subscriber has queued in one write (coalescing); it stores nothing, and its \
                 event lines are padded to the length of hld's. The first \
                 10 events of a run are not counted."
            .into(),
        commands,
        rows,
        notes,
    })
}

/// Opens a subscription for `event_types` on a fresh connection.
fn subscription(sock: &Path, event_types: &[&str]) -> anyhow::Result<BufReader<UnixStream>> {
    let mut conn = UnixStream::connect(sock)?;
    conn.set_read_timeout(Some(Duration::from_secs(120)))?;
    let line =
        json!({"jsonrpc":"2.0","method":"Subscribe","params":{"event_types":event_types},"id":1});
    conn.write_all(format!("{line}\n").as_bytes())?;
    let mut reader = BufReader::new(conn);
    let mut reply = String::new();
    reader.read_line(&mut reply)?;
    ensure!(
        reply.contains("subscription_id"),
        "Subscribe failed: {reply}"
    );
    Ok(reader)
}

fn ingest(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let lines = plan.ingest_lines;
    let batch = 4096;
    let mut hld = Vec::new();
    let mut raw = Vec::new();
    let mut notes = Vec::new();
    for round in 0..plan.slow_rounds {
        let server = Server::daemon(
            bins,
            &DaemonOptions {
                env: vec![("FAKE_CLAUDE_COUNT".into(), lines.to_string())],
                ..Default::default()
            },
        )?;
        let mut statuses = subscription(&server.sock, &["session_status_changed"])?;
        let started = Instant::now();
        let launched = server.request(
            "launchSession",
            json!({"query": "scenario:many", "working_dir": server.dir.path()}),
        )?;
        let id = launched["session_id"]
            .as_str()
            .context("no session_id")?
            .to_owned();
        let mut line = String::new();
        let ended = loop {
            line.clear();
            ensure!(
                statuses.read_line(&mut line)? > 0,
                "the subscription closed"
            );
            let event: Value = serde_json::from_str(&line)?;
            let data = &event["result"]["event"]["data"];
            if data["session_id"] == id.as_str() {
                match data["new_status"].as_str() {
                    Some("completed") => break started.elapsed(),
                    Some("failed") => bail!("the ingest session failed: {data}"),
                    _ => {}
                }
            }
        };
        let database = server.dir.path().join("hld.db");
        let (events, raw_lines) = sqlite::stored_counts(&database, &id)?;
        ensure!(
            events > lines && raw_lines >= lines,
            "stored {events} events and {raw_lines} raw lines for {lines} lines"
        );
        server.stop()?;
        hld.push(events as f64 / ended.as_secs_f64());
        if round == 0 {
            notes.push(format!(
                "Checked: {events} conversation events (the query, {lines} texts and the \
                 turn's others) and {raw_lines} raw lines stored per run."
            ));
        }
        let dir = tempfile::tempdir()?;
        raw.push(sqlite::raw_ingest(
            &dir.path().join("raw.db"),
            lines,
            batch,
        )?);
    }
    let figure = Spread::of(&hld);
    let r = ratios(&hld, &raw);
    notes.push(
        "Durable before published: the supervisor stores each batch (one transaction, \
         committed) and only then publishes its events; the e2e tests check the order."
            .into(),
    );
    Ok(Section {
        title: Group::Ingest.title().into(),
        method: format!(
            "hld runs `fake-claude` in its `many` scenario: {lines} assistant text lines of \
             stream-json written as fast as it can (buffered stdout). The figure is the \
             conversation events stored ÷ the time from sending `launchSession` to the \
             `completed` status event (process start-up included). Baseline: rusqlite alone \
             inserting the same rows into the daemon's schema with the daemon's pragmas and \
             statements (a raw line, its conversation event, the session's activity time), \
             {batch} lines per transaction, with no parsing and no process."
        ),
        commands: vec![
            "FAKE_CLAUDE_COUNT=N hld --socket $DIR/hld.sock --database $DIR/hld.db \
             --log-file $DIR/hld.log --claude-path fake-claude &"
                .into(),
            "# Subscribe to session_status_changed, launchSession {\"query\": \"scenario:many\"}, \
             wait for completed, count the rows"
                .into(),
        ],
        rows: vec![Row {
            name: format!("ingest, {} stream lines", si(lines as f64)),
            figure: format!("{} events/s", figure.show(si)),
            baseline: format!("{} rows/s", Spread::of(&raw).show(si)),
            ratio: r.show(ratio),
            target: "≥ 50k events/s".into(),
            verdict: Verdict::of(figure.median >= 50_000.0),
        }],
        notes,
    })
}

/// Sends one request on `conn` and returns the time until the whole reply line was read, and
/// the line.
pub(crate) fn timed_call(
    conn: &mut BufReader<UnixStream>,
    request: &str,
    line: &mut Vec<u8>,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    conn.get_mut().write_all(request.as_bytes())?;
    line.clear();
    ensure!(
        conn.read_until(b'\n', line)? > 0,
        "the daemon closed the connection"
    );
    Ok(started.elapsed())
}

/// The medians (µs) of `per_round` runs each of `a` and `b`, taken in turns, which of them
/// goes first alternating, so that neither always follows the other.
pub(crate) fn alternate(
    per_round: usize,
    mut a: impl FnMut() -> anyhow::Result<Duration>,
    mut b: impl FnMut() -> anyhow::Result<Duration>,
) -> anyhow::Result<(f64, f64)> {
    let (mut at, mut bt) = (Vec::new(), Vec::new());
    for i in 0..per_round {
        if i % 2 == 0 {
            at.push(a()?);
            bt.push(b()?);
        } else {
            bt.push(b()?);
            at.push(a()?);
        }
    }
    Ok((median_duration(at), median_duration(bt)))
}

fn median_duration(mut d: Vec<Duration>) -> f64 {
    d.sort();
    d[d.len() / 2].as_secs_f64() * 1e6
}

fn history(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let dir = tempfile::tempdir()?;
    let database = dir.path().join("history.db");
    let (sessions, per) = (plan.history_sessions, plan.history_events);
    let fill_started = Instant::now();
    sqlite::fill(&database, sessions, per)?;
    let fill_secs = fill_started.elapsed().as_secs_f64();
    let server = Server::daemon(
        bins,
        &DaemonOptions {
            database: Some(database.clone()),
            ..Default::default()
        },
    )?;
    let session = sqlite::session_id(sessions / 2);
    let whole = format!(
        "{}\n",
        json!({"jsonrpc":"2.0","method":"getConversation","params":{"session_id":session},"id":1})
    );
    let page = format!(
        "{}\n",
        json!({"jsonrpc":"2.0","method":"getConversation","params":{"session_id":session,"after_sequence":per/2,"limit":1000},"id":2})
    );
    let mut conn = BufReader::with_capacity(1 << 20, UnixStream::connect(&server.sock)?);
    let mut line = Vec::new();
    timed_call(&mut conn, &whole, &mut line)?;
    let reply: Value = serde_json::from_slice(&line)?;
    let got = reply["result"]["events"].as_array().map_or(0, Vec::len);
    ensure!(
        got == per,
        "getConversation returned {got} events, not {per}"
    );
    let reply_bytes = line.len();
    timed_call(&mut conn, &page, &mut line)?;
    let reply: Value = serde_json::from_slice(&line)?;
    let paged = reply["result"]["events"].as_array().map_or(0, Vec::len);
    ensure!(
        paged == 1000.min(per - per / 2),
        "a page returned {paged} events"
    );

    let reader = sqlite::reader(&database)?;
    let (_, baseline_bytes) = sqlite::raw_history(&reader, &session)?;
    let (mut hld, mut raw, mut pages) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..plan.rounds {
        let mut times = Vec::new();
        for _ in 0..plan.history_reps {
            times.push(timed_call(&mut conn, &whole, &mut line)?);
        }
        hld.push(median_duration(times));
        let mut times = Vec::new();
        for _ in 0..plan.history_reps {
            times.push(sqlite::raw_history(&reader, &session)?.0);
        }
        raw.push(median_duration(times));
        let mut times = Vec::new();
        for _ in 0..plan.history_reps {
            times.push(timed_call(&mut conn, &page, &mut line)?);
        }
        pages.push(median_duration(times));
    }
    drop(conn);
    server.stop()?;
    let r = ratios(&hld, &raw);
    Ok(Section {
        title: Group::History.title().into(),
        method: format!(
            "A database of {sessions} completed sessions × {per} message events (200-byte \
             contents, written interleaved, {} rows) in the daemon's schema, filled with \
             rusqlite, then served by hld. The figure is the time from sending \
             `getConversation` for one session (no pagination: the whole history) to having \
             read the whole reply line, on an open connection; median of {} calls per round. \
             Baseline, same rounds, in the benchmark process: the raw SQL query \
             (`WHERE session_id = ? ORDER BY sequence`, rows mapped to the wire struct) plus \
             `serde_json::to_vec` of the result.",
            sessions * per,
            plan.history_reps
        ),
        commands: vec![
            "hld --socket $DIR/hld.sock --database $DIR/history.db --log-file $DIR/hld.log \
             --claude-path fake-claude &"
                .into(),
            format!("# then on one connection: {}", whole.trim()),
        ],
        rows: vec![
            Row {
                name: format!(
                    "getConversation, {} events among {}",
                    si(per as f64),
                    si((sessions * per) as f64)
                ),
                figure: Spread::of(&hld).show(us),
                baseline: Spread::of(&raw).show(us),
                ratio: r.show(ratio),
                target: "ratio ≤ 2".into(),
                verdict: Verdict::of(r.median <= 2.0),
            },
            Row {
                name: "getConversation, one page (`after_sequence`, `limit` 1000)".into(),
                figure: Spread::of(&pages).show(us),
                baseline: "–".into(),
                ratio: "–".into(),
                target: "–".into(),
                verdict: Verdict::Info,
            },
        ],
        notes: vec![
            format!("Filled in {fill_secs:.1} s."),
            format!(
                "Checked: {per} events returned; the reply line is {} bytes, the baseline's \
                 JSON {} bytes.",
                reply_bytes, baseline_bytes
            ),
        ],
    })
}

fn startup(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let server = Server::daemon(bins, &DaemonOptions::default())?;
    finished_session(&server, "hello")?;
    let env_sock = server.sock.clone();
    let run = |program: &Path, args: &[&str]| -> anyhow::Result<Duration> {
        let started = Instant::now();
        let out = std::process::Command::new(program)
            .args(args)
            .env("HUMANLAYER_DAEMON_SOCKET", &env_sock)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()?;
        let elapsed = started.elapsed();
        ensure!(
            out.status.success(),
            "{} failed: {}",
            program.display(),
            out.status
        );
        if program != bins.hello {
            let sessions: Vec<Value> = serde_json::from_slice(&out.stdout)
                .with_context(|| format!("{} printed no JSON list", program.display()))?;
            ensure!(
                sessions.len() == 1,
                "expected the one session: {sessions:?}"
            );
        }
        Ok(elapsed)
    };
    let per_round = (plan.startup_runs / plan.slow_rounds).max(2);
    let mut hello = Vec::new();
    let mut times = Vec::new();
    let mut ratios = Vec::new();
    for _ in 0..plan.slow_rounds {
        let (mc, mh) = alternate(
            per_round,
            || run(&bins.hlyr, &["sessions", "--json"]),
            || run(&bins.hello, &[]),
        )?;
        hello.push(mh);
        times.push(mc);
        ratios.push(mc / mh);
    }
    server.stop()?;
    let spread = Spread::of(&ratios);
    let rows = vec![Row {
        name: "CLI start-up: hlyr sessions --json".into(),
        figure: Spread::of(&times).show(us),
        baseline: Spread::of(&hello).show(us),
        ratio: spread.show(ratio),
        target: "ratio ≤ 1.5".into(),
        verdict: Verdict::of(spread.median <= 1.5),
    }];
    Ok(Section {
        title: Group::Startup.title().into(),
        method: format!(
            "Whole-process runs (spawn to exit, wall clock, stdout captured and checked to be \
             the JSON list of the one session), {per_round} of each per round, alternating, \
             against a running daemon holding one session. Baseline: `bench-hello`, a Rust \
             hello world built with the same profile; both are linked as a plain `cargo \
             build` links them. The ratio is of the medians, round by round."
        ),
        commands: vec![
            "hld --socket $DIR/hld.sock --database $DIR/hld.db --log-file $DIR/hld.log \
             --claude-path fake-claude &"
                .into(),
            "bench-hello".into(),
            "HUMANLAYER_DAEMON_SOCKET=$DIR/hld.sock target/release/hlyr sessions --json".into(),
        ],
        rows,
        notes: Vec::new(),
    })
}

fn memory(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let mut idle = Vec::new();
    let mut oversize = Vec::new();
    let mut reject_times = Vec::new();
    for _ in 0..plan.slow_rounds {
        let server = Server::daemon(bins, &DaemonOptions::default())?;
        server.request("health", json!({}))?;
        std::thread::sleep(Duration::from_millis(100));
        idle.push(procs::memory(server.pid())?.rss_kib);

        let mut conn = UnixStream::connect(&server.sock)?;
        procs::call(&mut conn, r#"{"jsonrpc":"2.0","method":"health","id":0}"#)?;
        procs::reset_peak(server.pid())?;
        let before = procs::memory(server.pid())?;
        let started = Instant::now();
        let reply = procs::send_huge_line(&mut conn, plan.oversize)?;
        reject_times.push(started.elapsed().as_secs_f64() * 1e6);
        let reply: Value = serde_json::from_str(&reply)?;
        ensure!(
            reply["error"]["data"]["reason"] == "oversize",
            "oversize line not rejected: {reply}"
        );
        let after = procs::call(&mut conn, r#"{"jsonrpc":"2.0","method":"health","id":2}"#)?;
        ensure!(
            after.get("result").is_some(),
            "the connection did not survive: {after}"
        );
        let peak = procs::memory(server.pid())?;
        oversize.push((peak.hwm_kib - before.rss_kib).max(0.0));
        server.stop()?;
    }

    // 100 stored sessions and many subscribers.
    let dir = tempfile::tempdir()?;
    let database = dir.path().join("sessions.db");
    sqlite::fill(&database, 100, 10)?;
    let server = Server::daemon(
        bins,
        &DaemonOptions {
            database: Some(database),
            ..Default::default()
        },
    )?;
    let listed = server.request("listSessions", json!({}))?;
    ensure!(
        listed["sessions"].as_array().map_or(0, Vec::len) == 100,
        "listSessions did not return the 100 sessions"
    );
    let subscribers = (0..plan.memory_subs)
        .map(|_| subscription(&server.sock, &[]))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let health = server.request("health", json!({}))?;
    ensure!(
        health["subscribers"] == plan.memory_subs as u64,
        "health counts {} subscribers",
        health["subscribers"]
    );
    std::thread::sleep(Duration::from_millis(100));
    let loaded = procs::memory(server.pid())?;
    drop(subscribers);
    server.stop()?;

    let idle = Spread::of(&idle);
    let oversize_used = Spread::of(&oversize);
    Ok(Section {
        title: Group::Memory.title().into(),
        method: format!(
            "RSS from `/proc/<pid>/status` (`VmRSS`, `VmHWM`). Idle: a fresh daemon after one \
             `health`. Loaded: a daemon on a database of 100 sessions (10 events each) after \
             `listSessions`, with {} `Subscribe` connections open. Oversize: a fresh daemon; \
             its peak RSS is reset (`echo 5 > /proc/<pid>/clear_refs`), then one {} MiB \
             request line is sent on a connection; the figure is the peak RSS afterwards minus \
             the RSS before. The rejection must be `-32600` with `reason: oversize`, and the \
             same connection must then answer `health`.",
            plan.memory_subs,
            plan.oversize >> 20
        ),
        commands: vec![
            "hld --socket $DIR/hld.sock --database $DIR/hld.db --log-file $DIR/hld.log \
             --claude-path fake-claude &"
                .into(),
            "grep -E 'VmRSS|VmHWM' /proc/$PID/status".into(),
        ],
        rows: vec![
            Row {
                name: "idle daemon RSS".into(),
                figure: idle.show(mib),
                baseline: "–".into(),
                ratio: "–".into(),
                target: "≤ 20 MiB".into(),
                verdict: Verdict::of(idle.median <= 20.0 * 1024.0),
            },
            Row {
                name: format!(
                    "RSS with 100 stored sessions and {} subscribers",
                    plan.memory_subs
                ),
                figure: format!("{} (peak {})", mib(loaded.rss_kib), mib(loaded.hwm_kib)),
                baseline: "–".into(),
                ratio: "–".into(),
                target: "reported".into(),
                verdict: Verdict::Info,
            },
            Row {
                name: format!("{} MiB request line rejected", plan.oversize >> 20),
                figure: format!(
                    "{} used; sent and rejected in {}",
                    oversize_used.show(mib),
                    us(Spread::of(&reject_times).median)
                ),
                baseline: "–".into(),
                ratio: "–".into(),
                target: "≤ 4 MiB".into(),
                verdict: Verdict::of(oversize_used.median <= 4.0 * 1024.0),
            },
        ],
        notes: Vec::new(),
    })
}
