//! `hld-soak`: the daemon under a long mixed load, then checked for what it must not have
//! lost or kept.
//!
//! ```sh
//! cargo run --release -p hld-e2e --bin hld-soak            # the full soak, a few minutes
//! cargo run -p hld-e2e --bin hld-soak -- --small           # CI's short version
//! ```
//!
//! The load, all at once: C connections sending R requests in all, a mix of `health`, lines
//! that are not JSON, lines over the size limit and, last on every tenth connection, a
//! half-line that stalls until the connection closes; S subscribers to every conversation
//! event; A fake agents streaming. Afterwards: every request was answered once and correctly,
//! in order; every line an agent printed is stored; every stored event reached each
//! subscriber or was counted in a `lagged` notice it got (a subscriber that falls behind
//! loses the oldest, by design, but never silently); the daemon's descriptors and threads are
//! back to their baseline and its RSS is at most twice its baseline within
//! 10 s. The agents' processes stay warm after their turn for a short idle window only
//! (`--live-idle-ms`), so that what is left after it is what the daemon must not keep.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use clap::Parser;
use hld_client::protocol::{Health, NoParams, SessionStatus};
use hld_e2e::{launch_params, proc_status, wait_for, DaemonOptions, TestDaemon};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::watch;

#[derive(Parser)]
struct Cli {
    /// The short version (CI): 50 connections, 5,000 requests, 50 subscribers, 3 agents.
    #[arg(long)]
    small: bool,
    /// Also write `{"baseline_rss_kib": …, "rss_kib": …}` here: the daemon's RSS after one
    /// `health`, and `--report-after` seconds after the load ended (`hld-bench`'s memory
    /// group reads it).
    #[arg(long, value_name = "PATH")]
    report: Option<PathBuf>,
    /// When the reported RSS is taken, in seconds after the load ended.
    #[arg(long, default_value_t = 10)]
    report_after: u64,
}

/// How long after the load the daemon may take to be back to its baseline.
const SETTLE: Duration = Duration::from_secs(10);

/// The size of the load.
struct Load {
    connections: usize,
    requests: usize,
    subscribers: usize,
    agents: usize,
    /// Lines each agent prints, and the pause between two.
    lines: usize,
    delay_ms: u64,
}

/// The daemon's limit on a message, and the length of the oversize lines sent.
const MAX_MESSAGE: usize = 64 * 1024;
/// How long an agent's process stays warm after its turn, in milliseconds.
const IDLE_MS: u64 = 200;

/// What a request line is, and so what its reply must be.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Health,
    Garbage,
    Oversize,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let load = if cli.small {
        Load {
            connections: 50,
            requests: 5_000,
            subscribers: 50,
            agents: 3,
            lines: 200,
            delay_ms: 2,
        }
    } else {
        Load {
            connections: 1_000,
            requests: 100_000,
            subscribers: 1_000,
            agents: 20,
            // 1000 lines/s in all, a million deliveries a second to the subscribers.
            lines: 1_000,
            delay_ms: 20,
        }
    };
    hld_e2e::raise_fd_limit()?;
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .arg("--max-message-size")
            .arg(&MAX_MESSAGE.to_string())
            .arg("--live-idle-ms")
            .arg(&IDLE_MS.to_string())
            .env("FAKE_CLAUDE_COUNT", &load.lines.to_string())
            .env("FAKE_CLAUDE_DELAY_MS", &load.delay_ms.to_string()),
    );
    d.request::<Health>(NoParams {});
    let pid = d.pid();
    let baseline = Usage::of(pid)?;
    println!("baseline: {baseline:?}");

    let started = Instant::now();
    // Two workers: the subscribers keep reading while the request connections are busy.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (sessions, subscribers) = runtime.block_on(run(&d, &load))?;
    println!(
        "requests done in {:.1} s: {} on {} connections, each answered once and correctly",
        started.elapsed().as_secs_f64(),
        load.requests,
        load.connections,
    );

    let mut stored = HashSet::new();
    for id in &sessions {
        let s = d.wait_ended(id);
        ensure!(
            s.status == SessionStatus::Completed,
            "agent {id} ended {s:?}"
        );
        let events = d.conversation(id);
        ensure!(
            events.len() > load.lines,
            "agent {id}: {} events stored for {} lines printed",
            events.len(),
            load.lines
        );
        stored.extend(events.iter().map(|e| e.id));
    }
    subscribers.expected.send(Some(stored.len()))?;
    let (mut delivered, mut missed) = (0, 0);
    for task in subscribers.tasks {
        let got = runtime.block_on(task)??;
        ensure!(
            got.ids.is_subset(&stored),
            "a subscriber got an event never stored"
        );
        delivered += got.ids.len();
        missed += got.missed;
    }
    println!(
        "{} agents' {} events stored; {} subscribers got {delivered} deliveries and were told \
         of {missed} missed (none lost silently)",
        load.agents,
        stored.len(),
        load.subscribers
    );

    let ended = Instant::now();
    let settled = wait_for(SETTLE, || {
        let now = Usage::of(pid).ok()?;
        (now.fds <= baseline.fds
            && now.threads <= baseline.threads
            && now.rss_kib <= baseline.rss_kib * 2)
            .then_some(now)
    });
    let now = Usage::of(pid)?;
    match settled {
        Some(now) => println!("after: {now:?}"),
        None => bail!("not back to baseline within 10 s: {now:?} against {baseline:?}"),
    }
    if let Some(path) = &cli.report {
        let at = ended + Duration::from_secs(cli.report_after);
        std::thread::sleep(at.saturating_duration_since(Instant::now()));
        let report = serde_json::json!({
            "baseline_rss_kib": baseline.rss_kib,
            "rss_kib": Usage::of(pid)?.rss_kib,
        });
        std::fs::write(path, report.to_string())
            .with_context(|| format!("write {}", path.display()))?;
    }
    println!("soak passed");
    Ok(())
}

/// The subscribers' tasks, and the count of events they must account for.
struct Subscribers {
    tasks: Vec<tokio::task::JoinHandle<anyhow::Result<Received>>>,
    expected: watch::Sender<Option<usize>>,
}

/// Runs the whole load: subscribers (left reading), agents, then the requests, until every
/// one is answered. Returns the agents' sessions and the subscribers.
async fn run(d: &TestDaemon, load: &Load) -> anyhow::Result<(Vec<String>, Subscribers)> {
    let (expected, told) = watch::channel(None);
    let mut tasks = Vec::new();
    for _ in 0..load.subscribers {
        let conn = subscriber(&d.socket).await?;
        tasks.push(tokio::spawn(receive(conn, told.clone())));
    }
    let mut sessions = Vec::new();
    for i in 0..load.agents {
        sessions.push(launch(&d.socket, i).await?);
    }
    let per_connection = load.requests / load.connections;
    let clients: Vec<_> = (0..load.connections)
        .map(|c| {
            let socket = d.socket.clone();
            tokio::spawn(async move { requests(&socket, c, per_connection, c % 10 == 0).await })
        })
        .collect();
    for client in clients {
        client.await.context("client task")??;
    }
    Ok((sessions, Subscribers { tasks, expected }))
}

/// A connection subscribed to every conversation event.
async fn subscriber(socket: &Path) -> anyhow::Result<BufReader<UnixStream>> {
    let mut conn = BufReader::new(UnixStream::connect(socket).await?);
    conn.get_mut()
        .write_all(
            b"{\"jsonrpc\":\"2.0\",\"method\":\"Subscribe\",\"params\":{\"event_types\":[\"conversation_updated\"]},\"id\":1}\n",
        )
        .await?;
    let mut line = String::new();
    conn.read_line(&mut line).await?;
    ensure!(line.contains("subscription_id"), "not subscribed: {line}");
    Ok(conn)
}

/// What a subscriber got: the conversation events' ids, and how many events it was told it
/// missed (`lagged`: it fell more than the daemon's buffer behind).
struct Received {
    ids: HashSet<i64>,
    missed: u64,
}

/// Reads conversation events until every one of the `expected` (sent once the agents have
/// ended) is accounted for, as received or as missed.
async fn receive(
    mut conn: BufReader<UnixStream>,
    mut expected: watch::Receiver<Option<usize>>,
) -> anyhow::Result<Received> {
    let mut got = Received {
        ids: HashSet::new(),
        missed: 0,
    };
    // A line read in part when `expected` changes stays in `line` for the next read.
    let mut line = String::new();
    loop {
        let accounted = got.ids.len() + usize::try_from(got.missed)?;
        if expected.borrow().is_some_and(|n| accounted >= n) {
            return Ok(got);
        }
        tokio::select! {
            read = conn.read_line(&mut line) => {
                if read? == 0 {
                    bail!("the subscription ended early");
                }
                let message: Value = serde_json::from_str(&line)?;
                let event = &message["result"]["event"];
                match event["type"].as_str() {
                    Some("conversation_updated") => {
                        let id = event["data"]["event"]["id"].as_i64().context("an event id")?;
                        ensure!(got.ids.insert(id), "event {id} came twice");
                    }
                    Some("lagged") => got.missed += event["data"]["missed"].as_u64().context("missed")?,
                    _ => {}
                }
                line.clear();
            }
            changed = expected.changed() => changed?,
        }
    }
}

async fn launch(socket: &Path, i: usize) -> anyhow::Result<String> {
    let params = launch_params(&format!("scenario:slow agent {i}"), "/tmp");
    let line = serde_json::json!({"jsonrpc":"2.0","method":"launchSession","params":params,"id":1});
    let mut conn = BufReader::new(UnixStream::connect(socket).await?);
    conn.get_mut()
        .write_all(format!("{line}\n").as_bytes())
        .await?;
    let mut reply = String::new();
    conn.read_line(&mut reply).await?;
    let reply: Value = serde_json::from_str(&reply)?;
    Ok(reply["result"]["session_id"]
        .as_str()
        .with_context(|| format!("launch failed: {reply}"))?
        .to_owned())
}

/// One connection's share of the requests: sent in one go, then every reply checked in
/// order. With `stall`, a half-line follows and stays unfinished until the connection closes.
async fn requests(socket: &Path, c: usize, count: usize, stall: bool) -> anyhow::Result<()> {
    let conn = UnixStream::connect(socket).await?;
    let (read, mut write) = conn.into_split();
    let kinds: Vec<Kind> = (0..count)
        .map(|i| match (c + i) % 20 {
            0 => Kind::Garbage,
            10 if i % 40 == 10 => Kind::Oversize,
            _ => Kind::Health,
        })
        .collect();
    let mut out = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        match kind {
            Kind::Health => out.extend_from_slice(
                format!("{{\"jsonrpc\":\"2.0\",\"method\":\"health\",\"id\":{i}}}\n").as_bytes(),
            ),
            Kind::Garbage => out.extend_from_slice(format!("not json {i} {{\n").as_bytes()),
            Kind::Oversize => {
                out.extend(std::iter::repeat_n(b'x', MAX_MESSAGE + 1));
                out.push(b'\n');
            }
        }
    }
    if stall {
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"hea");
    }
    let sending = tokio::spawn(async move {
        write.write_all(&out).await?;
        anyhow::Ok(write)
    });
    let mut replies = BufReader::new(read);
    let mut line = String::new();
    for (i, kind) in kinds.iter().enumerate() {
        line.clear();
        if replies.read_line(&mut line).await? == 0 {
            bail!("connection {c}: closed before reply {i}");
        }
        let reply: Value = serde_json::from_str(&line)
            .with_context(|| format!("connection {c}, reply {i}: {line}"))?;
        let ok = match kind {
            Kind::Health => reply["id"] == i && reply["result"]["status"] == "ok",
            Kind::Garbage => reply["id"].is_null() && reply["error"]["code"] == -32700,
            Kind::Oversize => reply["id"].is_null() && reply["error"]["code"] == -32600,
        };
        ensure!(ok, "connection {c}, request {i} ({kind:?}): {line}");
    }
    // Every request above was answered while the half-line stalled. Closing the connection
    // ends it: it is answered as the message it is (not JSON), and nothing else comes, so
    // no request was answered twice.
    drop(sending.await??);
    if stall {
        line.clear();
        replies.read_line(&mut line).await?;
        let reply: Value = serde_json::from_str(&line)?;
        ensure!(
            reply["error"]["code"] == -32700,
            "connection {c}: the half-line's reply: {line}"
        );
    }
    line.clear();
    let rest = replies.read_line(&mut line).await?;
    ensure!(rest == 0, "connection {c}: an extra reply: {line}");
    Ok(())
}

/// What the daemon holds.
#[derive(Debug, Clone, Copy)]
struct Usage {
    fds: usize,
    threads: u64,
    rss_kib: u64,
}

impl Usage {
    fn of(pid: u32) -> anyhow::Result<Usage> {
        let field = |name| proc_status(pid, name).with_context(|| format!("no {name}"));
        Ok(Usage {
            fds: std::fs::read_dir(format!("/proc/{pid}/fd"))?.count(),
            threads: field("Threads")?,
            rss_kib: field("VmRSS")?,
        })
    }
}
