//! The rest_event group: an event's latency on CodeLayer's event stream (`GET
//! /stream/events` of `hld --http`) next to the same event on a `Subscribe` connection of the
//! socket. Each event is a `session_settings_changed` published by an `updateSessionSettings`
//! the load generator sends; its time runs from just before the request is written to the
//! reader's receipt of the event, one event in flight.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use serde_json::{json, Value};

use crate::groups::{ratios, Group, Plan};
use crate::live::result;
use crate::procs::{Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::stats::{ratio, us, Latency};

/// The target: the stream's median latency at most this many times the socket's.
const MAX_RATIO: f64 = 2.0;

/// How long a reply or an event may take before the run fails.
const WAIT: Duration = Duration::from_secs(30);

/// Where the events are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// `GET /stream/events?eventTypes=session_settings_changed`, over plain HTTP/1.1.
    Stream,
    /// `Subscribe` with `event_types: ["session_settings_changed"]` on the socket.
    Socket,
}

/// A reader of one transport's events.
enum Reader {
    Stream(BufReader<TcpStream>),
    Socket(BufReader<UnixStream>),
}

impl Reader {
    /// Subscribes on `server` (serving `--http`) over `transport`.
    fn open(server: &Server, transport: Transport) -> anyhow::Result<Reader> {
        match transport {
            Transport::Stream => {
                let health = server.request("health", json!({}))?;
                let address = health["http_address"].as_str().context("an HTTP address")?;
                let secret = std::fs::read_to_string(server.dir.path().join("daemon.http-token"))?;
                let tcp = TcpStream::connect(address)?;
                tcp.set_read_timeout(Some(WAIT))?;
                tcp.set_nodelay(true)?;
                let mut reader = BufReader::new(tcp);
                let request = format!(
                    "GET /t/{}/api/v1/stream/events?eventTypes=session_settings_changed \
                     HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
                    secret.trim()
                );
                reader.get_mut().write_all(request.as_bytes())?;
                let mut head = String::new();
                reader.read_line(&mut head)?;
                ensure!(
                    head.starts_with("HTTP/1.1 200"),
                    "the stream answered {head}"
                );
                while head.trim_end() != "" {
                    head.clear();
                    reader.read_line(&mut head)?;
                }
                Ok(Reader::Stream(reader))
            }
            Transport::Socket => {
                let conn = UnixStream::connect(&server.sock)?;
                conn.set_read_timeout(Some(WAIT))?;
                let mut reader = BufReader::new(conn);
                let subscribe = json!({"jsonrpc": "2.0", "method": "Subscribe", "id": 1,
                    "params": {"event_types": ["session_settings_changed"]}});
                reader
                    .get_mut()
                    .write_all(format!("{subscribe}\n").as_bytes())?;
                let mut confirmation = String::new();
                reader.read_line(&mut confirmation)?;
                ensure!(
                    confirmation.contains("subscription_id"),
                    "Subscribe answered {confirmation}"
                );
                Ok(Reader::Socket(reader))
            }
        }
    }

    /// The data of the next event (the stream's chunk sizes and keepalives, the socket's
    /// heartbeats skipped).
    fn next(&mut self) -> anyhow::Result<Value> {
        let mut line = String::new();
        loop {
            line.clear();
            let read = match self {
                Reader::Stream(r) => r.read_line(&mut line)?,
                Reader::Socket(r) => r.read_line(&mut line)?,
            };
            ensure!(read > 0, "the events ended");
            match self {
                Reader::Stream(_) => {
                    if let Some(json) = line.strip_prefix("data: ") {
                        let event: Value = serde_json::from_str(json)?;
                        return Ok(event["data"].clone());
                    }
                }
                Reader::Socket(_) => {
                    let message: Value = serde_json::from_str(&line)?;
                    let event = &message["result"]["event"];
                    if !event.is_null() {
                        return Ok(event["data"].clone());
                    }
                }
            }
        }
    }
}

/// Each of `count` events' latencies on `transport`, in ns, against a fresh daemon.
fn latencies(bins: &Bins, transport: Transport, count: usize) -> anyhow::Result<Vec<u64>> {
    let server = Server::daemon(
        bins,
        &DaemonOptions {
            args: vec!["--http".into(), "127.0.0.1:0".into()],
            ..DaemonOptions::default()
        },
    )?;
    let mut conn = BufReader::new(UnixStream::connect(&server.sock)?);
    conn.get_ref().set_read_timeout(Some(WAIT))?;
    let dir = server.dir.path().display().to_string();
    let launched = result(
        conn.get_mut(),
        "launchSession",
        json!({"query": "hello", "working_dir": dir}),
    )?;
    let id = launched["session_id"].as_str().context("a session id")?;
    let mut events = Reader::open(&server, transport)?;
    let mut times = Vec::with_capacity(count);
    let mut reply = String::new();
    for i in 0..count {
        let on = i % 2 == 0;
        let request = json!({"jsonrpc": "2.0", "method": "updateSessionSettings", "id": i,
            "params": {"session_id": id, "auto_accept_edits": on}});
        let sent = Instant::now();
        conn.get_mut()
            .write_all(format!("{request}\n").as_bytes())?;
        let data = events.next()?;
        times.push(u64::try_from(sent.elapsed().as_nanos())?);
        ensure!(
            data["session_id"] == id && data["auto_accept_edits"] == on,
            "event {i} is not the one asked for: {data}"
        );
        reply.clear();
        conn.read_line(&mut reply)?;
        if !reply.contains("\"result\"") {
            bail!("updateSessionSettings failed: {reply}");
        }
    }
    server.stop()?;
    Ok(times)
}

/// Runs the group: per round, the stream and the socket, each against a fresh daemon.
pub fn run(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let count = if plan.smoke { 20 } else { 1000 };
    let (mut stream, mut socket) = (Vec::new(), Vec::new());
    for _ in 0..plan.rounds {
        stream.push(Latency::of_nanos(&mut latencies(
            bins,
            Transport::Stream,
            count,
        )?));
        socket.push(Latency::of_nanos(&mut latencies(
            bins,
            Transport::Socket,
            count,
        )?));
    }
    let p50 = |l: &[Latency]| l.iter().map(|l| l.p50_us).collect::<Vec<f64>>();
    let p99 = |l: &[Latency]| l.iter().map(|l| l.p99_us).collect::<Vec<f64>>();
    let show = |l: &[Latency]| {
        format!(
            "p50 {}; p99 {}",
            crate::stats::Spread::of(&p50(l)).show(us),
            crate::stats::Spread::of(&p99(l)).show(us)
        )
    };
    let by_p50 = ratios(&p50(&stream), &p50(&socket));
    let by_p99 = ratios(&p99(&stream), &p99(&socket));
    let rows = vec![Row {
        name: format!(
            "an event on the REST stream (baseline: on `Subscribe`), {count} events, \
             1 in flight"
        ),
        figure: show(&stream),
        baseline: show(&socket),
        ratio: format!("p50 ×{}; p99 ×{}", by_p50.show(ratio), by_p99.show(ratio)),
        target: format!("p50 ratio ≤ {MAX_RATIO}"),
        verdict: Verdict::of(by_p50.median <= MAX_RATIO),
    }];
    Ok(Section {
        title: Group::RestEvent.title().into(),
        method: "A daemon on fake-claude serving `--http` on loopback, with one \
            session; a reader subscribes to `session_settings_changed` (REST: a plain HTTP/1.1 \
            `GET /stream/events`; baseline: `Subscribe` on the socket), then the load generator \
            sends `updateSessionSettings` toggling `auto_accept_edits` on another socket \
            connection, one at a time: each event's time runs from just before the request is \
            written to the reader's receipt of the event, before the reply is read. Each round \
            runs each transport against a fresh daemon, unpinned."
            .into(),
        commands: vec!["hld --http 127.0.0.1:0 --claude-path fake-claude".into()],
        rows,
        notes: Vec::new(),
    })
}
