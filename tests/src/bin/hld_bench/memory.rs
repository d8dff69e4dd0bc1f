//! Group 8, memory: the idle daemon's RSS, its RSS after a soak next to that baseline, and
//! what an oversize request line costs.

use std::os::unix::net::UnixStream;
use std::time::Instant;

use anyhow::{ensure, Context};
use serde_json::{json, Value};

use crate::groups::{ratios, subscription, Group, Plan};
use crate::procs::{self, Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::sqlite;
use crate::stats::{mib, ratio, us, Spread};

/// The target: the RSS after the soak at most this many times the idle RSS before it.
const MAX_SOAK_RATIO: f64 = 2.0;

/// Runs `hld-soak` (`--small` in a smoke run); returns its daemon's RSS before the load and
/// `plan.settle` after it, in KiB.
fn soak(bins: &Bins, plan: &Plan) -> anyhow::Result<(f64, f64)> {
    let dir = tempfile::tempdir()?;
    let report = dir.path().join("soak.json");
    let mut cmd = std::process::Command::new(&bins.soak);
    if plan.smoke {
        cmd.arg("--small");
    }
    let out = cmd
        .arg("--report")
        .arg(&report)
        .arg("--report-after")
        .arg(plan.settle.as_secs().to_string())
        .stdin(std::process::Stdio::null())
        .output()
        .context("run hld-soak")?;
    ensure!(
        out.status.success(),
        "hld-soak failed: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&report)?)?;
    let kib = |key: &str| {
        report[key]
            .as_f64()
            .with_context(|| format!("no {key}: {report}"))
    };
    Ok((kib("baseline_rss_kib")?, kib("rss_kib")?))
}

/// Runs the group.
pub fn run(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let mut idle = Vec::new();
    let (mut soak_idle, mut soaked) = (Vec::new(), Vec::new());
    let mut oversize = Vec::new();
    let mut reject_times = Vec::new();
    for _ in 0..plan.slow_rounds {
        let (before, after) = soak(bins, plan)?;
        soak_idle.push(before);
        soaked.push(after);

        let server = Server::daemon(bins, &DaemonOptions::default())?;
        server.request("health", json!({}))?;
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
    let loaded = procs::memory(server.pid())?;
    drop(subscribers);
    server.stop()?;

    let soak_ratio = ratios(&soaked, &soak_idle);
    let soaked = Spread::of(&soaked);
    let soak_idle = Spread::of(&soak_idle);
    let idle = Spread::of(&idle);
    let oversize_used = Spread::of(&oversize);
    Ok(Section {
        title: Group::Memory.title().into(),
        method: format!(
            "RSS from `/proc/<pid>/status` (`VmRSS`, `VmHWM`). Idle: a fresh daemon after one \
             `health`. Soak: `hld-soak` (its own daemon, after one `health`, then a \
             long mixed load: connections sending `health`, garbage, oversize and stalled \
             lines, subscribers of every event, streaming agents; every check of it must \
             pass), the daemon's RSS taken {:.0} s after the load ended; the ratio is of that \
             to the same daemon's idle RSS before the load, round by round. Loaded: a daemon on a database of 100 sessions (10 events each) after \
             `listSessions`, with {} `Subscribe` connections open. Oversize: a fresh daemon; \
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
                    "RSS {} s after the soak (`hld-soak{}`)",
                    plan.settle.as_secs(),
                    if plan.smoke { " --small" } else { "" }
                ),
                figure: soaked.show(mib),
                baseline: format!(
                    "idle RSS of the same daemon before {}",
                    soak_idle.show(mib)
                ),
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
