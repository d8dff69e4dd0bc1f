//! The groups of figures (the targets of issue 36), each measured round-robin next to its
//! baseline; the request/response groups (round trip and throughput on the Unix socket) here,
//! the others in a module each.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use serde_json::json;

use crate::fanout_group::FanoutLoad;
use crate::load::LoadResult;
use crate::procs::{self, Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::stats::{ratio, si, us, Spread};

/// A group of figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Group {
    /// `health` round trip on one connection.
    Latency,
    /// `health` at 8 and 64 connections.
    Throughput,
    /// One event to many subscribers.
    Fanout,
    /// Many sessions streaming to a few subscribers.
    Streaming,
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
    /// The WebSocket transport: round trips and throughput.
    Websocket,
    /// Live sessions: a message to a warm agent, an approval over the control channel.
    Live,
    /// Isolated sessions: their diff, the making of their worktree.
    Worktrees,
    /// The REST transport: a long conversation over HTTP.
    #[value(name = "rest_messages")]
    RestMessages,
    /// CodeLayer's REST API: an event on its stream.
    #[value(name = "rest_event")]
    RestEvent,
    /// The hld-tui fleet view: an approval over `wss://` against one on the socket.
    Fleet,
}

impl Group {
    /// Every group, in report order.
    pub const ALL: [Group; 17] = [
        Group::Latency,
        Group::Throughput,
        Group::Fanout,
        Group::Streaming,
        Group::Ingest,
        Group::History,
        Group::Startup,
        Group::Memory,
        Group::Tui,
        Group::Search,
        Group::Stdio,
        Group::Websocket,
        Group::Live,
        Group::Worktrees,
        Group::RestMessages,
        Group::RestEvent,
        Group::Fleet,
    ];

    /// The section title.
    pub fn title(self) -> &'static str {
        match self {
            Group::Latency => "1. health round trip on one connection",
            Group::Throughput => "2. health throughput at 8 and 64 connections",
            Group::Fanout => "3. fan-out to subscribers",
            Group::Streaming => "4. streaming sessions",
            Group::Ingest => "5. ingest of a fast agent's stream",
            Group::History => "6. history: getConversation of a long session",
            Group::Startup => "7. CLI start-up",
            Group::Memory => "8. memory",
            Group::Tui => "9. the hld-tui dashboard",
            Group::Search => "10. search: searchSessions over many sessions",
            Group::Stdio => "11. hld --stdio: an editor's connection",
            Group::Websocket => "12. WebSocket (holon-rpc): round trips and throughput",
            Group::Live => "13. live sessions: messages and approvals",
            Group::Worktrees => "14. isolated sessions: diff and worktree",
            Group::RestMessages => "15. REST: a conversation over HTTP",
            Group::RestEvent => "16. REST: an event on CodeLayer's event stream",
            Group::Fleet => "17. the hld-tui fleet view: an approval over wss:// and the socket",
        }
    }

    /// The `--only` spelling.
    pub fn name(self) -> &'static str {
        match self {
            Group::Latency => "latency",
            Group::Throughput => "throughput",
            Group::Fanout => "fanout",
            Group::Streaming => "streaming",
            Group::Ingest => "ingest",
            Group::History => "history",
            Group::Startup => "startup",
            Group::Memory => "memory",
            Group::Tui => "tui",
            Group::Search => "search",
            Group::Stdio => "stdio",
            Group::Websocket => "websocket",
            Group::Live => "live",
            Group::Worktrees => "worktrees",
            Group::RestMessages => "rest_messages",
            Group::RestEvent => "rest_event",
            Group::Fleet => "fleet",
        }
    }
}

/// The target of the fan-out rows: hld's p99 at most this many times the raw server's.
pub(crate) const MAX_FANOUT_RATIO: f64 = 3.0;

/// Rounds and counts.
#[derive(Debug, Clone)]
pub struct Plan {
    pub(crate) smoke: bool,
    /// Rounds of the request/response and fan-out groups.
    pub(crate) rounds: usize,
    /// Rounds of the slower groups (streaming, ingest, start-up, memory, tui, fleet).
    pub(crate) slow_rounds: usize,
    pub(crate) pingpong: u64,
    pub(crate) warmup: u64,
    pub(crate) conc: u64,
    pub(crate) fanout: Vec<FanoutLoad>,
    pub(crate) ingest_lines: u64,
    pub(crate) history_sessions: usize,
    pub(crate) history_events: usize,
    pub(crate) history_reps: usize,
    pub(crate) search_sessions: usize,
    pub(crate) search_reps: usize,
    pub(crate) startup_runs: usize,
    pub(crate) memory_subs: usize,
    pub(crate) oversize: usize,
    /// Streaming: sessions, lines each, subscribers.
    pub(crate) streaming: (u64, u64, u32),
    /// How long after the soak its RSS is taken.
    pub(crate) settle: Duration,
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
                fanout: vec![
                    FanoutLoad::one_in_flight(5, 30, true, Some(MAX_FANOUT_RATIO)),
                    FanoutLoad::one_in_flight(5, 30, false, Some(MAX_FANOUT_RATIO)),
                    FanoutLoad::one_in_flight(20, 30, false, None),
                    FanoutLoad::paced(20, 50, 1000.0),
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
                streaming: (4, 10, 2),
                settle: Duration::from_secs(1),
            }
        } else {
            Plan {
                smoke,
                rounds: 5,
                slow_rounds: 3,
                pingpong: 50_000,
                warmup: 2_000,
                conc: 200_000,
                fanout: vec![
                    FanoutLoad::one_in_flight(100, 300, true, Some(MAX_FANOUT_RATIO)),
                    FanoutLoad::one_in_flight(100, 300, false, Some(MAX_FANOUT_RATIO)),
                    FanoutLoad::one_in_flight(1000, 300, true, None),
                    FanoutLoad::one_in_flight(1000, 300, false, None),
                    FanoutLoad::paced(1000, 3000, 1000.0),
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
                streaming: (100, 200, 10),
                settle: Duration::from_secs(10),
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
            "{} rounds ({} for streaming, ingest, start-up, memory, tui and fleet){}",
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
        Group::Fanout => crate::fanout_group::run(bins, plan),
        Group::Streaming => crate::streaming::group(bins, plan),
        Group::Ingest => crate::store::ingest(bins, plan),
        Group::History => crate::store::history(bins, plan),
        Group::Startup => crate::startup::run(bins, plan),
        Group::Memory => crate::memory::run(bins, plan),
        Group::Tui => crate::tui::run(bins, plan.smoke, plan.slow_rounds),
        Group::Search => {
            crate::search::run(bins, plan.rounds, plan.search_sessions, plan.search_reps)
        }
        Group::Stdio => crate::stdio::run(bins, plan),
        Group::Websocket => crate::websocket::run(bins, plan),
        Group::Live => crate::live::run(bins, plan),
        Group::Worktrees => crate::worktrees::run(bins, plan),
        Group::RestMessages => crate::rest_messages::rest_messages(bins, plan),
        Group::RestEvent => crate::rest_event::run(bins, plan),
        Group::Fleet => crate::tui_fleet::run(bins, plan.smoke, plan.slow_rounds),
    }
}

/// Which server a load run talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target<'a> {
    Daemon,
    Raw(&'static str),
    /// The raw `health` server, answering with the result in this file.
    Health(&'a Path),
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
        Target::Raw(kind) => Server::raw(bins, kind, pinned, &[], &[]),
        Target::Health(reply) => {
            let extra = ["--reply".to_owned(), reply.display().to_string()];
            Server::raw(bins, "health", pinned, &extra, &[])
        }
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
        Target::Raw(kind) => format!("{pin}hld-bench serve --kind {kind} --sock $DIR/raw.sock &"),
        Target::Health(_) => format!(
            "{pin}hld-bench serve --kind health --reply $DIR/health.json --sock $DIR/raw.sock &"
        ),
    };
    let sock = match target {
        Target::Daemon => "$DIR/hld.sock",
        Target::Raw(_) | Target::Health(_) => "$DIR/raw.sock",
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

/// The target of the request/response rows: hld's requests a second at least this share of
/// the raw echo's.
pub(crate) const MIN_RATE_RATIO: f64 = 0.6;

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
                MIN_RATE_RATIO,
            ),
            rate_row(
                "health round trip, unpinned",
                &results[1][1],
                &results[1][0],
                true,
                MIN_RATE_RATIO,
            ),
        ],
        notes: Vec::new(),
    })
}

fn throughput(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let mut rows = Vec::new();
    let mut commands = Vec::new();
    let conns = [8u64, 64];
    let dir = procs::private_dir()?;
    let reply = dir.path().join("health.json");
    std::fs::write(&reply, health_result(bins)?)?;
    let targets = [Target::Raw("echo"), Target::Daemon, Target::Health(&reply)];
    let mut results: [[Vec<LoadResult>; 3]; 2] = Default::default();
    let args = |c: u64, target: Target| {
        let mode = match target {
            Target::Raw(_) => "echo",
            Target::Daemon | Target::Health(_) => "rpc",
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
            MIN_RATE_RATIO,
        ));
        rows.push(
            rate_row(
                &format!("… a raw server answering health's reply, {c} connections"),
                &results[i][2],
                &results[i][0],
                false,
                0.0,
            )
            .reported(),
        );
        for &target in &targets {
            commands.extend(shown(target, false, &args(c, target)));
        }
    }
    commands.push("# health.json: the result of health from a daemon started as above".into());
    Ok(Section {
        title: Group::Throughput.title().into(),
        method: format!(
            "A tokio current_thread client drives C connections, each doing sequential \
             request/response (replies checked as in section 1), {} requests in all, unpinned. \
             Baseline: the raw tokio current_thread echo server. The p99 is of the per-request \
             latency. Reported beside each row: a raw server like the echo that parses each \
             request and answers it with the result of hld's own `health` (taken from a daemon \
             before the rounds), cloned and serialised per request: the JSON work of the reply \
             without the daemon, as a share of the echo's rate.",
            plan.conc
        ),
        commands,
        rows,
        notes: Vec::new(),
    })
}

/// The result of `health` from a fresh daemon, as JSON.
fn health_result(bins: &Bins) -> anyhow::Result<String> {
    let server = Server::daemon(bins, &DaemonOptions::default())?;
    let result = server.request("health", json!({}))?;
    server.stop()?;
    Ok(result.to_string())
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

/// Opens a subscription for `event_types` on a fresh connection.
pub(crate) fn subscription(
    sock: &Path,
    event_types: &[&str],
) -> anyhow::Result<BufReader<UnixStream>> {
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

pub(crate) fn median_duration(mut d: Vec<Duration>) -> f64 {
    d.sort();
    d[d.len() / 2].as_secs_f64() * 1e6
}
