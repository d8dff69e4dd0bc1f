//! Group 7, `hlyr` one-shot start-up next to a hello world.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use serde_json::Value;

use crate::groups::{alternate, finished_session, Group, Plan};
use crate::procs::{Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::stats::{ratio, us, Spread};

/// The target: `hlyr`'s one-shot run at most this many times a hello world's.
const MAX_RATIO: f64 = 3.0;

/// Runs the group.
pub fn run(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
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
        target: format!("ratio ≤ {MAX_RATIO}"),
        verdict: Verdict::of(spread.median <= MAX_RATIO),
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
