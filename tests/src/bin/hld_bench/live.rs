//! The live group: a message sent to a warm session, from `sendMessage` to the agent's stdin
//! (fake-claude stamps each stdin line on CLOCK_MONOTONIC as it reads it); and a permission
//! request's way from the agent (stamped by fake-claude as it asks) to a subscriber's
//! `new_approval`, over the control channel and over the approvals MCP server.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use serde_json::{json, Value};

use crate::groups::{ratios, Group, Plan};
use crate::procs::{call, Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::stats::{monotonic_ns, ratio, us, Latency, Spread};

/// The target: a message reaches a warm agent's stdin within this p99, in µs.
const MAX_MESSAGE_P99_US: f64 = 5000.0;

/// How long one turn or approval may take before the run fails.
const WAIT: Duration = Duration::from_secs(30);

fn request(method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params, "id": 1}).to_string()
}

pub(crate) fn result(conn: &mut UnixStream, method: &str, params: Value) -> anyhow::Result<Value> {
    let reply = call(conn, &request(method, params))?;
    match reply.get("result") {
        Some(result) => Ok(result.clone()),
        None => bail!("{method} failed: {reply}"),
    }
}

fn launch(conn: &mut UnixStream, dir: &Path, query: &str) -> anyhow::Result<String> {
    let launched = result(
        conn,
        "launchSession",
        json!({"query": query, "working_dir": dir}),
    )?;
    Ok(launched["session_id"]
        .as_str()
        .context("a session id")?
        .to_owned())
}

/// Polls the session until its `turns`-th turn has ended; its state then.
fn wait_turns(conn: &mut UnixStream, id: &str, turns: i64) -> anyhow::Result<Value> {
    let started = Instant::now();
    loop {
        let state = result(conn, "getSessionState", json!({"session_id": id}))?;
        let session = &state["session"];
        if session["status"] == "completed" && session["num_turns"].as_i64() >= Some(turns) {
            return Ok(session.clone());
        }
        ensure!(
            started.elapsed() < WAIT,
            "turn {turns} never ended: {state}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Each message's way from `sendMessage` to the agent's stdin, in ns, and how many were
/// queued instead (sent while the turn's end was being stored; not timed).
fn messages(bins: &Bins, count: usize) -> anyhow::Result<(Vec<u64>, usize)> {
    let server = Server::daemon(bins, &DaemonOptions::default())?;
    let dir = server.dir.path().to_path_buf();
    let mut conn = UnixStream::connect(&server.sock)?;
    let id = launch(&mut conn, &dir, "scenario:plain hello")?;
    let state = wait_turns(&mut conn, &id, 1)?;
    let claude_id = state["claude_session_id"].as_str().context("a claude id")?;
    let mut sent = Vec::with_capacity(count);
    for i in 0..count {
        let at = monotonic_ns()?;
        let reply = result(
            &mut conn,
            "sendMessage",
            json!({"session_id": id, "text": format!("message {i}")}),
        )?;
        sent.push((at, reply["queued"] == true));
        wait_turns(&mut conn, &id, i as i64 + 2)?;
    }
    let record = dir.join("fake-log").join(format!("{claude_id}.json"));
    let record: Value = serde_json::from_slice(&std::fs::read(&record)?)?;
    let read: Vec<u64> = record["stdin"]
        .as_array()
        .context("stdin lines")?
        .iter()
        .filter(|l| l["line"]["type"] == "user")
        .skip(1)
        .filter_map(|l| l["monotonic_ns"].as_u64())
        .collect();
    ensure!(
        read.len() == count,
        "{} of {count} messages read",
        read.len()
    );
    let timed = read
        .iter()
        .zip(&sent)
        .filter(|(_, (_, queued))| !queued)
        .map(|(read, (sent, _))| read.saturating_sub(*sent))
        .collect::<Vec<u64>>();
    let queued = count - timed.len();
    Ok((timed, queued))
}

/// Each permission request's way from the agent to a subscriber's `new_approval`, in ns.
fn approvals(bins: &Bins, count: usize, over_mcp: bool) -> anyhow::Result<Vec<u64>> {
    let asks = tempfile::NamedTempFile::new()?;
    let mut opts = DaemonOptions {
        env: vec![(
            "FAKE_CLAUDE_ASK_LOG".into(),
            asks.path().display().to_string(),
        )],
        ..DaemonOptions::default()
    };
    if over_mcp {
        // The daemon runs the approvals server only with an API key: one, the cloud unreachable.
        opts.env
            .push(("HUMANLAYER_API_KEY".into(), "hl-bench-key".into()));
        opts.args = vec!["--api-base-url".into(), "http://127.0.0.1:9".into()];
    }
    let server = Server::daemon(bins, &opts)?;
    let dir = server.dir.path().to_path_buf();
    let mut events = BufReader::new(UnixStream::connect(&server.sock)?);
    events
        .get_ref()
        .set_read_timeout(Some(WAIT))
        .context("a read timeout")?;
    let subscribe = request("Subscribe", json!({"event_types": ["new_approval"]}));
    events
        .get_mut()
        .write_all(format!("{subscribe}\n").as_bytes())?;
    let mut line = String::new();
    events.read_line(&mut line)?;
    let mut conn = UnixStream::connect(&server.sock)?;
    let mut seen = Vec::with_capacity(count);
    for i in 0..count {
        let id = launch(&mut conn, &dir, &format!("scenario:tool file {i}"))?;
        let approval = loop {
            line.clear();
            events.read_line(&mut line)?;
            let now = monotonic_ns()?;
            let event: Value = serde_json::from_str(&line)?;
            let data = &event["result"]["event"]["data"];
            if data["session_id"] == id.as_str() {
                seen.push(now);
                break data["approval"]["id"].as_str().context("an id")?.to_owned();
            }
        };
        let params = json!({"call_id": approval, "type": "function_call", "decision": "deny", "comment": "no"});
        result(&mut conn, "sendDecision", params)?;
        wait_turns(&mut conn, &id, 1)?;
    }
    let asked: Vec<u64> = std::fs::read_to_string(asks.path())?
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1)?.parse().ok())
        .collect();
    ensure!(
        asked.len() == count,
        "{} of {count} requests stamped",
        asked.len()
    );
    Ok(seen
        .iter()
        .zip(&asked)
        .map(|(seen, asked)| seen.saturating_sub(*asked))
        .collect())
}

/// Runs the group: every round runs each configuration once, on fresh daemons.
pub fn run(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let (message_count, approval_count) = if plan.smoke { (20, 5) } else { (300, 40) };
    let (mut message, mut control, mut mcp) = (Vec::new(), Vec::new(), Vec::new());
    let mut queued = 0;
    for _ in 0..plan.rounds {
        let (mut timed, late) = messages(bins, message_count)?;
        message.push(Latency::of_nanos(&mut timed));
        queued += late;
        control.push(Latency::of_nanos(&mut approvals(
            bins,
            approval_count,
            false,
        )?));
        mcp.push(Latency::of_nanos(&mut approvals(
            bins,
            approval_count,
            true,
        )?));
    }
    let p99 = |rs: &[Latency]| rs.iter().map(|l| l.p99_us).collect::<Vec<_>>();
    let show = |rs: &[Latency]| {
        let p50 = Spread::of(&rs.iter().map(|l| l.p50_us).collect::<Vec<_>>());
        format!(
            "p99 {}; p50 {}",
            Spread::of(&p99(rs)).show(us),
            us(p50.median)
        )
    };
    let message_p99 = Spread::of(&p99(&message)).median;
    let control_ratio = ratios(&p99(&control), &p99(&mcp));
    let rows = vec![
        Row {
            name: format!("{message_count} messages to a warm session → the agent's stdin"),
            figure: show(&message),
            baseline: "–".into(),
            ratio: "–".into(),
            target: format!("p99 ≤ {}", us(MAX_MESSAGE_P99_US)),
            verdict: Verdict::of(message_p99 <= MAX_MESSAGE_P99_US),
        },
        Row {
            name: format!(
                "{approval_count} permission requests → a subscriber: control channel \
                 (baseline: the approvals MCP server)"
            ),
            figure: show(&control),
            baseline: show(&mcp),
            ratio: format!("p99 ×{}", control_ratio.show(ratio)),
            target: "p99 ≤ the MCP server's".into(),
            verdict: Verdict::of(control_ratio.median <= 1.0),
        },
    ];
    Ok(Section {
        title: Group::Live.title().into(),
        method: "A session of fake-claude (scenario:plain) between turns gets `sendMessage` \
            after the previous turn is seen completed; each message's time runs from just \
            before the request is written to fake-claude's CLOCK_MONOTONIC stamp of the stdin \
            line. A permission request's time runs from fake-claude's stamp as it asks \
            (FAKE_CLAUDE_ASK_LOG, scenario:tool) to a `new_approval` subscriber reading the \
            event; the approval is denied and the next session launched. The MCP baseline \
            is a daemon with a HumanLayer API key (its cloud unreachable), which asks through \
            `hld mcp claude_approvals`. A round's p99 is of its requests; the ratio is taken \
            within each round."
            .into(),
        commands: vec!["hld --claude-path fake-claude".into()],
        rows,
        notes: vec![format!(
            "{queued} of {} messages arrived as their session's previous turn was being \
             stored, were queued and delivered at its end, and are not timed",
            message_count * plan.rounds
        )],
    })
}
