//! The stdio group: `hld --stdio` as an editor runs it, with piped stdin and stdout, the
//! daemon behind it; reported. A `health` round trip next to a raw Content-Length echo over the same
//! kind of pipes, and its start-up to the first answered `initialize` next to
//! `hlyr sessions --json`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use hld_e2e::frames::{frame, read_frame};
use serde_json::json;

use crate::groups::{alternate, rate_row, ratios, Group, Plan};
use crate::load::{self, LoadResult, Mode};
use crate::procs::{self, Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::stats::{ratio, us, Latency, Spread};

/// The raw baseline, `hld-bench pipe-echo`: reads Content-Length frames on stdin and writes
/// each body back, framed, on stdout, until stdin ends. No JSON is parsed.
pub fn pipe_echo() -> anyhow::Result<()> {
    let mut input = BufReader::new(std::io::stdin().lock());
    let mut output = std::io::stdout().lock();
    let mut header = Vec::new();
    let mut body = Vec::new();
    loop {
        let mut length = None;
        loop {
            header.clear();
            if input.read_until(b'\n', &mut header)? == 0 {
                return Ok(());
            }
            if header == b"\r\n" {
                break;
            }
            if let Some(n) = header.strip_prefix(b"Content-Length: ") {
                length = Some(std::str::from_utf8(n)?.trim_end().parse::<usize>()?);
            }
        }
        let length = length.context("a frame without Content-Length")?;
        body.resize(length, 0);
        input.read_exact(&mut body)?;
        write!(output, "Content-Length: {length}\r\n\r\n")?;
        output.write_all(&body)?;
        output.flush()?;
    }
}

/// A child spoken to as an editor speaks to `hld --stdio`: frames on its stdin and stdout.
struct Editor {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Editor {
    fn start(command: &[String]) -> anyhow::Result<Editor> {
        let (program, args) = command.split_first().context("no command")?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("start {command:?}"))?;
        Ok(Editor {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().context("no stdout")?),
            child,
        })
    }

    /// Sends a request with id `i`; reads its reply and checks that it answers `i`.
    fn call(&mut self, request: &[u8], i: u64) -> anyhow::Result<()> {
        let stdin = self.stdin.as_mut().context("stdin closed")?;
        stdin.write_all(request)?;
        stdin.flush()?;
        let reply = read_frame(&mut self.stdout)
            .map_err(anyhow::Error::msg)?
            .context("stdout ended")?;
        ensure!(
            reply["id"] == i && reply.get("error").is_none(),
            "reply {reply} to request {i}"
        );
        Ok(())
    }

    /// Closes stdin and waits for the child to exit.
    fn finish(mut self) -> anyhow::Result<()> {
        drop(self.stdin.take());
        let status = self.child.wait()?;
        ensure!(status.success(), "{status}");
        Ok(())
    }
}

/// `health` framed with id `i`.
fn health(i: u64) -> Vec<u8> {
    frame(&json!({"jsonrpc": "2.0", "method": "health", "id": i}))
}

/// The load (`hld-bench client stdio-pingpong -- COMMAND…`): `n` sequential `health` round
/// trips through a child started from `command`, after `warmup` untimed ones.
pub fn pingpong(command: &[String], n: u64, warmup: u64) -> anyhow::Result<LoadResult> {
    let mut editor = Editor::start(command)?;
    let requests: Vec<Vec<u8>> = (0..warmup + n).map(health).collect();
    for (i, request) in requests.iter().enumerate().take(warmup as usize) {
        editor.call(request, i as u64)?;
    }
    let mut nanos = Vec::with_capacity(n as usize);
    let started = Instant::now();
    for (i, request) in requests.iter().enumerate().skip(warmup as usize) {
        let t = Instant::now();
        editor.call(request, i as u64)?;
        nanos.push(t.elapsed().as_nanos() as u64);
    }
    let secs = started.elapsed().as_secs_f64();
    editor.finish()?;
    Ok(LoadResult {
        ops: n,
        secs,
        latency: Latency::of_nanos(&mut nanos),
    })
}

/// The client arguments of a `stdio-pingpong` run through `command`.
fn pingpong_args(plan: &Plan, command: &[String]) -> Vec<String> {
    let mut args = vec![
        "stdio-pingpong".into(),
        "--n".into(),
        plan.pingpong.to_string(),
        "--warmup".into(),
        plan.warmup.to_string(),
        "--".into(),
    ];
    args.extend_from_slice(command);
    args
}

/// `hld --stdio` started, until its first `initialize` is answered.
fn stdio_startup(hld: &Path, sock: &Path) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let mut editor = Editor::start(&[
        hld.display().to_string(),
        "--stdio".into(),
        "--socket".into(),
        sock.display().to_string(),
    ])?;
    let initialize =
        frame(&json!({"jsonrpc": "2.0", "method": "initialize", "params": {}, "id": 0}));
    editor.call(&initialize, 0)?;
    let elapsed = started.elapsed();
    editor.finish()?;
    Ok(elapsed)
}

/// `hlyr sessions --json` run to its end.
fn hlyr_sessions(hlyr: &Path, sock: &Path) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let out = Command::new(hlyr)
        .args(["sessions", "--json"])
        .env("HUMANLAYER_DAEMON_SOCKET", sock)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()?;
    let elapsed = started.elapsed();
    ensure!(out.status.success(), "hlyr sessions failed: {}", out.status);
    serde_json::from_slice::<serde_json::Value>(&out.stdout).context("hlyr printed no JSON")?;
    Ok(elapsed)
}

pub fn run(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let echo = vec![bins.bench.display().to_string(), "pipe-echo".into()];
    // hld: [pinned hld --stdio, unpinned hld --stdio], unpinned socket; echo: [pinned, unpinned].
    let mut through_stdio: [Vec<LoadResult>; 2] = Default::default();
    let mut echoed: [Vec<LoadResult>; 2] = Default::default();
    let mut socket = Vec::new();
    for _ in 0..plan.rounds {
        for (p, pinned) in [true, false].into_iter().enumerate() {
            echoed[p].push(procs::client(bins, pinned, &pingpong_args(plan, &echo))?);
            let server = Server::daemon(
                bins,
                &DaemonOptions {
                    pinned,
                    ..Default::default()
                },
            )?;
            let stdio = vec![
                bins.hld.display().to_string(),
                "--stdio".into(),
                "--socket".into(),
                server.sock.display().to_string(),
            ];
            through_stdio[p].push(procs::client(bins, pinned, &pingpong_args(plan, &stdio))?);
            if !pinned {
                socket.push(load::pingpong(
                    &server.sock,
                    Mode::Rpc,
                    plan.pingpong,
                    plan.warmup,
                )?);
            }
            server.stop()?;
        }
    }

    let server = Server::daemon(bins, &DaemonOptions::default())?;
    let per_round = (plan.startup_runs / plan.slow_rounds).max(2);
    let (mut stdio_times, mut hlyr_times, mut startup_ratios) =
        (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..plan.slow_rounds {
        let (s, h) = alternate(
            per_round,
            || stdio_startup(&bins.hld, &server.sock),
            || hlyr_sessions(&bins.hlyr, &server.sock),
        )?;
        stdio_times.push(s);
        hlyr_times.push(h);
        startup_ratios.push(s / h);
    }
    server.stop()?;

    let startup = Spread::of(&startup_ratios);
    let stdio_vs_socket = ratios(
        &through_stdio[1]
            .iter()
            .map(LoadResult::per_sec)
            .collect::<Vec<_>>(),
        &socket.iter().map(LoadResult::per_sec).collect::<Vec<_>>(),
    );
    let mean = |r: &[LoadResult]| {
        Spread::of(&r.iter().map(LoadResult::mean_us).collect::<Vec<_>>()).show(us)
    };
    let rows = vec![
        rate_row(
            "health through hld --stdio, pinned",
            &through_stdio[0],
            &echoed[0],
            true,
            0.0,
        )
        .reported(),
        rate_row(
            "health through hld --stdio, unpinned",
            &through_stdio[1],
            &echoed[1],
            true,
            0.0,
        )
        .reported(),
        Row {
            name: "… unpinned, next to health on the daemon's socket (NDJSON)".into(),
            figure: mean(&through_stdio[1]),
            baseline: mean(&socket),
            ratio: stdio_vs_socket.show(ratio),
            target: "reported".into(),
            verdict: Verdict::Info,
        },
        Row {
            name: "hld --stdio start-up to its first initialize reply".into(),
            figure: Spread::of(&stdio_times).show(us),
            baseline: format!("hlyr sessions --json {}", Spread::of(&hlyr_times).show(us)),
            ratio: startup.show(ratio),
            target: "reported".into(),
            verdict: Verdict::Info,
        },
    ];
    Ok(Section {
        title: Group::Stdio.title().into(),
        method: format!(
            "Round trips: the load generator starts the program under test with piped stdin \
             and stdout, as an editor starts `hld --stdio`, and makes {} sequential `health` \
             requests (after {} untimed), each framed with Content-Length, reading each reply \
             frame strictly and checking its id. The program is `hld --stdio` with a running \
             daemon, or, as the baseline, \
             `hld-bench pipe-echo`, a plain Content-Length echo over the same pipes. Pinned: \
             every process on CPU 0 (`taskset -c 0`). The ratio is `hld --stdio`'s round \
             trips/s ÷ the echo's, round by round. The reported row sets it next to `health` \
             sent straight to the daemon's socket (NDJSON, the latency group's client) in the \
             same round. Start-up: against a running daemon, \
             {per_round} runs of each per round, alternating: `hld --stdio` from spawn to its \
             first `initialize` reply, and `hlyr sessions --json` from spawn to exit; the ratio \
             is of the medians.",
            plan.pingpong, plan.warmup
        ),
        commands: vec![
            "hld --socket $DIR/hld.sock --database $DIR/hld.db --log-file $DIR/hld.log \
             --claude-path fake-claude &"
                .into(),
            "hld-bench client stdio-pingpong --n N --warmup W -- hld --stdio --socket \
             $DIR/hld.sock"
                .into(),
            "hld-bench client stdio-pingpong --n N --warmup W -- hld-bench pipe-echo".into(),
        ],
        rows,
        notes: Vec::new(),
    })
}
