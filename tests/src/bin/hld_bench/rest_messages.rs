//! Group 15, the REST transport (`hld --http`): `GET /sessions/{id}/messages` of a long
//! session next to the same `getConversation` on the Unix socket, on one daemon.

use std::io::BufReader;
use std::net::SocketAddr;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use serde_json::{json, Value};

use crate::groups::{alternate, ratios, timed_call, Group, Plan};
use crate::procs::{Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::sqlite;
use crate::stats::{ratio, si, us, Spread};

/// The target: the REST read at most this many times the socket's.
const MAX_REST_RATIO: f64 = 1.5;
/// Sessions in the database; one of them is read.
const SESSIONS: usize = 10;

/// The address `hld --http 127.0.0.1:0` logged that it listens on.
fn http_address(server: &Server) -> anyhow::Result<SocketAddr> {
    let log = server.dir.path().join("hld.log");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(line) = text.lines().find(|l| l.contains("http listening")) {
            let at = line
                .find("address=")
                .context("no address in the log line")?;
            let address = line[at + "address=".len()..].split_whitespace().next();
            return address
                .context("no address in the log line")?
                .parse()
                .context("the logged HTTP address");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    bail!("hld did not log its HTTP address in {}", log.display())
}

/// One `GET url` on `client`'s kept-alive connection, from sending to the last body byte.
fn timed_get(
    runtime: &tokio::runtime::Runtime,
    client: &reqwest::Client,
    url: &str,
    body: &mut bytes::Bytes,
) -> anyhow::Result<Duration> {
    runtime.block_on(async {
        let started = Instant::now();
        let response = client.get(url).send().await?.error_for_status()?;
        *body = response.bytes().await?;
        Ok(started.elapsed())
    })
}

/// Group 15: a conversation over REST.
pub fn rest_messages(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let per = if plan.smoke { 100 } else { 1000 };
    let dir = tempfile::tempdir()?;
    let database = dir.path().join("rest.db");
    sqlite::fill(&database, SESSIONS, per)?;
    let server = Server::daemon(
        bins,
        &DaemonOptions {
            database: Some(database),
            args: vec!["--http".into(), "127.0.0.1:0".into()],
            ..Default::default()
        },
    )?;
    let address = http_address(&server)?;
    let secret = std::fs::read_to_string(server.dir.path().join("daemon.http-token"))?;
    let session = sqlite::session_id(SESSIONS / 2);
    let url = format!(
        "http://{address}/t/{}/api/v1/sessions/{session}/messages",
        secret.trim()
    );
    let request = format!(
        "{}\n",
        json!({"jsonrpc":"2.0","method":"getConversation","params":{"session_id":session},"id":1})
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let client = reqwest::Client::new();
    let mut conn = BufReader::with_capacity(1 << 20, UnixStream::connect(&server.sock)?);
    let (mut body, mut line) = (bytes::Bytes::new(), Vec::new());

    // Both connections open and checked before anything is timed.
    timed_get(&runtime, &client, &url, &mut body)?;
    let reply: Value = serde_json::from_slice(&body)?;
    let got = reply["data"].as_array().map_or(0, Vec::len);
    ensure!(
        got == per,
        "GET …/messages returned {got} events, not {per}"
    );
    let rest_bytes = body.len();
    timed_call(&mut conn, &request, &mut line)?;
    let reply: Value = serde_json::from_slice(&line)?;
    let got = reply["result"]["events"].as_array().map_or(0, Vec::len);
    ensure!(
        got == per,
        "getConversation returned {got} events, not {per}"
    );
    let socket_bytes = line.len();

    let (mut rest, mut socket) = (Vec::new(), Vec::new());
    for _ in 0..plan.rounds {
        let (r, s) = alternate(
            plan.history_reps,
            || timed_get(&runtime, &client, &url, &mut body),
            || timed_call(&mut conn, &request, &mut line),
        )?;
        rest.push(r);
        socket.push(s);
    }
    drop(conn);
    server.stop()?;
    let r = ratios(&rest, &socket);
    Ok(Section {
        title: Group::RestMessages.title().into(),
        method: format!(
            "A database of {SESSIONS} completed sessions × {per} message events (200-byte \
             contents) filled with rusqlite, served by one hld with `--http`. The figure is \
             the time from sending `GET /sessions/{{id}}/messages` for one session to having \
             read the whole body, on a kept-alive connection (reqwest on a current_thread \
             runtime in the benchmark process); the baseline is the same conversation read \
             with `getConversation` on an open Unix socket connection, to the end of its reply \
             line. Median of {} calls of each per round, taken in turns.",
            plan.history_reps
        ),
        commands: vec![
            "hld --socket $DIR/hld.sock --database $DIR/rest.db --log-file $DIR/hld.log \
             --claude-path fake-claude --http 127.0.0.1:0 &"
                .into(),
            "# then GET http://ADDR/t/$(cat $DIR/daemon.http-token)/api/v1/sessions/ID/messages \
             and, on the socket, getConversation {\"session_id\": ID}"
                .into(),
        ],
        rows: vec![Row {
            name: format!("rest_messages: GET …/messages, {} events", si(per as f64)),
            figure: Spread::of(&rest).show(us),
            baseline: Spread::of(&socket).show(us),
            ratio: r.show(ratio),
            target: format!("ratio ≤ {MAX_REST_RATIO}"),
            verdict: Verdict::of(r.median <= MAX_REST_RATIO),
        }],
        notes: vec![format!(
            "Checked: {per} events in both replies; the REST body is {rest_bytes} bytes, the \
             socket's reply line {socket_bytes} bytes."
        )],
    })
}
