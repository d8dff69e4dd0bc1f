//! Group 8, memory: the idle daemon's RSS, its RSS after a soak next to that baseline, and
//! what an oversize request line costs.

use std::os::unix::net::UnixStream;
use std::time::Instant;

use anyhow::ensure;
use serde_json::{json, Value};

use crate::fanout::FanoutResult;
use crate::groups::{ratios, subscription, Group, Plan};
use crate::procs::{self, Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::stats::{mib, ratio, us, Spread};
use crate::{sqlite, streaming};

/// The target: the RSS after the soak at most this many times the idle RSS before it.
const MAX_SOAK_RATIO: f64 = 2.0;

/// Runs the group.
pub fn run(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let (sessions, events, subs) = plan.streaming;
    let mut idle = Vec::new();
    let mut soaked = Vec::new();
    let mut oversize = Vec::new();
    let mut reject_times = Vec::new();
    for _ in 0..plan.slow_rounds {
        let server = Server::daemon(
            bins,
            &DaemonOptions {
                env: streaming::daemon_env(events),
                ..Default::default()
            },
        )?;
        server.request("health", json!({}))?;
        idle.push(procs::memory(server.pid())?.rss_kib);

        // The soak: the streaming group's load, then the settling time.
        let args = streaming::stream_args(&server.sock, server.dir.path(), sessions, events, subs);
        let result: FanoutResult = procs::client(bins, false, &args)?;
        ensure!(result.lost == 0, "the soak lost {} events", result.lost);
        std::thread::sleep(plan.settle);
        soaked.push(procs::memory(server.pid())?.rss_kib);

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
    let loaded = procs::memory(server.pid())?;
    drop(subscribers);
    server.stop()?;

    let soak_ratio = ratios(&soaked, &idle);
    let soaked = Spread::of(&soaked);
    let idle = Spread::of(&idle);
    let oversize_used = Spread::of(&oversize);
    Ok(Section {
        title: Group::Memory.title().into(),
        method: format!(
            "RSS from `/proc/<pid>/status` (`VmRSS`, `VmHWM`). Idle: a fresh daemon after one \
             `health`. Soak: the same daemon then carries the streaming group's load \
             ({sessions} sessions of {events} lines at 20 a second, {subs} subscribers, every \
             event delivered), and its RSS is taken {:.0} s after the load ended; the ratio is \
             of that to its own idle RSS, round by round. Loaded: a daemon on a database of 100 sessions (10 events each) after \
             `listSessions`, with {} `Subscribe` connections open. Oversize: the soaked daemon; \
             its peak RSS is reset (`echo 5 > /proc/<pid>/clear_refs`), then one {} MiB \
             request line is sent on a connection; the figure is the peak RSS afterwards minus \
             the RSS before. The rejection must be `-32600` with `reason: oversize`, and the \
             same connection must then answer `health`.",
            plan.settle.as_secs_f64(),
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
                    "RSS {:.0} s after the soak ({sessions} streaming sessions × {events} lines, \
                     {subs} subscribers)",
                    plan.settle.as_secs_f64()
                ),
                figure: soaked.show(mib),
                baseline: format!("idle RSS of the same daemon before {}", idle.show(mib)),
                ratio: soak_ratio.show(ratio),
                target: format!("ratio ≤ {MAX_SOAK_RATIO}"),
                verdict: Verdict::of(soak_ratio.median <= MAX_SOAK_RATIO),
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
                target: "reported".into(),
                verdict: Verdict::Info,
            },
        ],
        notes: Vec::new(),
    })
}
