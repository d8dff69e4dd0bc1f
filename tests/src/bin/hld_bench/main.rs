//! `hld-bench`: measures the daemon next to raw baselines in the same run and writes
//! `BENCHMARKS.md`.
//!
//! ```sh
//! cargo run --release -p hld-e2e --bin hld-bench -- --out BENCHMARKS.md   # a few minutes
//! cargo run -p hld-e2e --bin hld-bench -- --smoke                          # CI: every row, tiny
//! ```
//!
//! It first builds the binaries it runs (`hld`, `fake-claude`, the start-up reference,
//! `hlyr` and `hld-tui`) with the profile it was built with, then
//! runs every group of figures round-robin: each round runs every configuration once, each
//! with a fresh server process, and ratios are taken round by round before their median is
//! reported. Servers and load generators are
//! separate processes (this binary re-executes itself as both), pinned together to CPU 0 with
//! `taskset -c 0` for the pinned rows. `--smoke` runs every row with tiny counts and one
//! round: it fails on functional errors and asserts no timing.

mod fanout;
mod fanout_group;
mod groups;
mod headless;
mod live;
mod load;
mod memory;
mod procs;
mod report;
mod rest_event;
mod rest_messages;
mod search;
mod servers;
mod sqlite;
mod startup;
mod stats;
mod stdio;
mod store;
mod streaming;
mod tui;
mod tui_fleet;
mod tui_frames;
mod tui_idle;
mod websocket;
mod worktrees;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};

use crate::procs::Bins;

/// Benchmarks of the hld daemon against raw baselines measured in the same run.
#[derive(Debug, Parser)]
#[command(name = "hld-bench")]
struct Cli {
    #[command(subcommand)]
    command: Option<Internal>,
    /// Write the report here (the whole file).
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
    /// Tiny counts and one round: checks that every row still runs; asserts no timing.
    #[arg(long)]
    smoke: bool,
    /// Only these groups (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    only: Vec<groups::Group>,
    /// Rounds (default 5; 3 for streaming, ingest, start-up, memory, tui and fleet; 1 with --smoke).
    #[arg(long)]
    rounds: Option<usize>,
    /// Do not build the binaries first (they must be next to this one).
    #[arg(long)]
    no_build: bool,
}

/// The roles this binary plays for itself.
#[derive(Debug, Subcommand)]
enum Internal {
    /// Serve a raw reference server.
    #[command(hide = true)]
    Serve {
        #[arg(long, value_enum)]
        kind: servers::Kind,
        #[arg(long)]
        sock: PathBuf,
        /// Pad fan-out event lines to this many bytes.
        #[arg(long, default_value_t = 0)]
        event_bytes: usize,
        /// The program a fan-out server's `launchSession` starts (as hld starts `claude`).
        #[arg(long)]
        agent: Option<PathBuf>,
        /// The `result` of hld's `health` (a JSON file) that a `health` server answers with.
        #[arg(long)]
        reply: Option<PathBuf>,
    },
    /// Serve a raw Content-Length echo on stdin and stdout.
    #[command(hide = true)]
    PipeEcho,
    /// Serve a raw WebSocket echo server; prints its address.
    #[command(hide = true)]
    ServeWs,
    /// Run a load generator and print its result as one JSON line.
    #[command(hide = true)]
    Client {
        #[command(subcommand)]
        load: Load,
    },
}

#[derive(Debug, Subcommand)]
enum Load {
    /// `health` round trips through a child's stdin and stdout, Content-Length framed.
    StdioPingpong {
        #[arg(long)]
        n: u64,
        #[arg(long)]
        warmup: u64,
        /// The child: a program and its arguments.
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    Pingpong {
        #[arg(long)]
        sock: PathBuf,
        #[arg(long, value_enum)]
        mode: load::Mode,
        #[arg(long)]
        n: u64,
        #[arg(long)]
        warmup: u64,
    },
    Conc {
        #[arg(long)]
        sock: PathBuf,
        #[arg(long, value_enum)]
        mode: load::Mode,
        #[arg(long)]
        conns: u64,
        #[arg(long)]
        n: u64,
    },
    WsPingpong {
        #[arg(long)]
        ws: SocketAddr,
        #[arg(long)]
        token_file: Option<PathBuf>,
        #[arg(long, value_enum)]
        mode: load::Mode,
        #[arg(long)]
        n: u64,
        #[arg(long)]
        warmup: u64,
    },
    WsConc {
        #[arg(long)]
        ws: SocketAddr,
        #[arg(long)]
        token_file: Option<PathBuf>,
        #[arg(long, value_enum)]
        mode: load::Mode,
        #[arg(long)]
        conns: u64,
        #[arg(long)]
        n: u64,
    },
    /// Streaming sessions launched on a daemon, and subscribers of their events.
    Stream {
        #[arg(long)]
        sock: PathBuf,
        /// The sessions' working directory.
        #[arg(long)]
        dir: PathBuf,
        #[arg(long)]
        sessions: u64,
        /// Lines each session writes.
        #[arg(long)]
        events: u64,
        #[arg(long)]
        subs: u32,
    },
    Fanout {
        #[arg(long)]
        sock: PathBuf,
        #[arg(long)]
        subs: usize,
        #[arg(long)]
        events: usize,
        #[arg(long)]
        rate: Option<f64>,
        #[arg(long)]
        session: String,
        #[arg(long, default_value_t = 1)]
        publishers: usize,
        /// Events that may be in flight (sent, not yet read by every subscriber): 1 by
        /// default, 1024 with a rate.
        #[arg(long)]
        window: Option<usize>,
        /// Also write each event's times to this file, a line each: its index, when it was
        /// sent (µs after the first), its first and its last delivery (µs after sending), the
        /// subscriber that read it last, and when it was sent on CLOCK_MONOTONIC (µs).
        #[arg(long)]
        events_out: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Internal::Serve {
            kind,
            sock,
            event_bytes,
            agent,
            reply,
        }) => servers::serve(kind, &sock, event_bytes, agent, reply),
        Some(Internal::PipeEcho) => stdio::pipe_echo(),
        Some(Internal::ServeWs) => websocket::serve_echo(),
        Some(Internal::Client { load }) => run_load(load),
        None => run_all(&cli),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hld-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_load(load: Load) -> anyhow::Result<()> {
    let json = match load {
        Load::StdioPingpong { n, warmup, command } => {
            serde_json::to_string(&stdio::pingpong(&command, n, warmup)?)?
        }
        Load::Pingpong {
            sock,
            mode,
            n,
            warmup,
        } => serde_json::to_string(&load::pingpong(&sock, mode, n, warmup)?)?,
        Load::Conc {
            sock,
            mode,
            conns,
            n,
        } => serde_json::to_string(&load::concurrent(&sock, mode, conns, n)?)?,
        Load::WsPingpong {
            ws,
            token_file,
            mode,
            n,
            warmup,
        } => {
            let target = websocket::WsTarget::of(ws, token_file.as_deref())?;
            serde_json::to_string(&websocket::pingpong(&target, mode, n, warmup)?)?
        }
        Load::WsConc {
            ws,
            token_file,
            mode,
            conns,
            n,
        } => {
            let target = websocket::WsTarget::of(ws, token_file.as_deref())?;
            serde_json::to_string(&websocket::concurrent(&target, mode, conns, n)?)?
        }
        Load::Stream {
            sock,
            dir,
            sessions,
            events,
            subs,
        } => serde_json::to_string(&streaming::run(&streaming::StreamSpec {
            sock,
            dir,
            sessions,
            events,
            subs,
        })?)?,
        Load::Fanout {
            sock,
            subs,
            events,
            rate,
            session,
            publishers,
            window,
            events_out,
        } => serde_json::to_string(&fanout::run(&fanout::FanoutSpec {
            sock,
            subs,
            events,
            rate,
            session,
            publishers,
            window: window.unwrap_or(if rate.is_some() { fanout::WINDOW } else { 1 }),
            events_out,
        })?)?,
    };
    println!("{json}");
    Ok(())
}

fn run_all(cli: &Cli) -> anyhow::Result<()> {
    hld_e2e::raise_fd_limit()?;
    let exe = std::env::current_exe()?;
    let dir = exe.parent().context("no binary directory")?.to_path_buf();
    let release = dir.file_name().is_some_and(|n| n == "release");
    if !cli.no_build {
        build(release)?;
    }
    let bins = Bins {
        hld: dir.join("hld"),
        fake_claude: dir.join("fake-claude"),
        bench: exe.clone(),
        hello: dir.join("bench-hello"),
        hlyr: dir.join("hlyr"),
        tui: dir.join("hld-tui"),
        soak: dir.join("hld-soak"),
    };
    for bin in [
        &bins.hld,
        &bins.fake_claude,
        &bins.hello,
        &bins.hlyr,
        &bins.tui,
        &bins.soak,
    ] {
        if !bin.exists() {
            bail!("{} is not built", bin.display());
        }
    }
    let plan = groups::Plan::new(cli.smoke, cli.rounds);
    let selected: Vec<groups::Group> = if cli.only.is_empty() {
        groups::Group::ALL.to_vec()
    } else {
        cli.only.clone()
    };
    let started = Instant::now();
    let load_before = report::load_average();
    let ticks_before = report::cpu_ticks();
    let mut sections = Vec::new();
    for group in selected {
        eprintln!("hld-bench: {}…", group.title());
        let t = Instant::now();
        let section = groups::run(group, &bins, &plan)
            .with_context(|| format!("{} failed", group.title()))?;
        eprintln!(
            "hld-bench: {} done in {:.1} s",
            group.title(),
            t.elapsed().as_secs_f64()
        );
        sections.push(section);
    }
    let command = invocation(cli, release);
    let text = report::render(
        &report::Header {
            command,
            smoke: cli.smoke,
            release,
            elapsed: started.elapsed(),
            plan: plan.describe(),
            load: (load_before, report::load_average()),
            stolen: report::stolen_share(ticks_before, report::cpu_ticks()),
        },
        &sections,
    )?;
    match &cli.out {
        Some(path) => {
            std::fs::write(path, &text).with_context(|| format!("write {}", path.display()))?;
            eprintln!("hld-bench: wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// The command that reproduces this run.
fn invocation(cli: &Cli, release: bool) -> String {
    let mut cmd = String::from("cargo run ");
    if release {
        cmd.push_str("--release ");
    }
    cmd.push_str("-p hld-e2e --bin hld-bench --");
    if cli.smoke {
        cmd.push_str(" --smoke");
    }
    if let Some(rounds) = cli.rounds {
        cmd.push_str(&format!(" --rounds {rounds}"));
    }
    if !cli.only.is_empty() {
        let names: Vec<&str> = cli.only.iter().map(|g| g.name()).collect();
        cmd.push_str(&format!(" --only {}", names.join(",")));
    }
    if let Some(out) = &cli.out {
        cmd.push_str(&format!(" --out {}", out.display()));
    }
    cmd
}

/// Builds every binary the benchmark runs, with the same profile and target directory.
fn build(release: bool) -> anyhow::Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("no workspace directory")?;
    let mut cmd = Command::new(&cargo);
    cmd.current_dir(root).args([
        "build", "-p", "hld", "-p", "hld-e2e", "-p", "hlyr-cli", "-p", "hld-tui", "--bins",
    ]);
    if release {
        cmd.arg("--release");
    }
    let status = cmd.status().context("run cargo build")?;
    if !status.success() {
        bail!("cargo build failed: {status}");
    }
    Ok(())
}
