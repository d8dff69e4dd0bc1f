//! Group 11, the WebSocket transport (`hld --ws`, holon-rpc): its load generators (tokio
//! current_thread clients over tokio-tungstenite, as `hld-bench client ws-pingpong|ws-conc`,
//! and WebSocket subscribers for the fan-out load), its raw reference servers (`hld-bench
//! serve-ws --kind echo|fanout`, tokio-tungstenite on a current_thread runtime), and the
//! group itself.
//!
//! The raw servers do what the transport itself must: the handshake (echoing `holon-rpc`),
//! frames, and for the fan-out, each event as a server request `s<N>` numbered per
//! subscriber, whose replies are read and dropped. They parse and store nothing. Servers and
//! clients all use the daemon's tungstenite settings (`websocket::ws_config`).

use std::io::{BufRead, Write as _};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, ensure, Context};
use bytes::Bytes;
use futures::{FutureExt, SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UnixListener};
use tokio::sync::broadcast;
use tokio_tungstenite::tungstenite::handshake::server::{
    Callback, ErrorResponse, Request, Response,
};
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::fanout::{read_event, FanoutResult, Seen, Shared};
use crate::groups::{finished_session, ratios, Plan};
use crate::load::{gather, LoadResult, Mode};
use crate::procs::{self, Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::stats::{ratio, si, us, Latency, Spread};

/// Where WebSocket clients connect, and the token they present (none for a raw server).
#[derive(Debug, Clone)]
pub struct WsTarget {
    /// The listening address.
    pub addr: SocketAddr,
    /// The token.
    pub token: Option<String>,
}

impl WsTarget {
    /// The target of `--ws ADDR [--token-file PATH]`.
    pub fn of(addr: SocketAddr, token_file: Option<&Path>) -> anyhow::Result<WsTarget> {
        let token = match token_file {
            Some(path) => Some(
                std::fs::read_to_string(path)
                    .with_context(|| format!("read {}", path.display()))?
                    .trim()
                    .to_owned(),
            ),
            None => None,
        };
        Ok(WsTarget { addr, token })
    }

    async fn connect(&self) -> anyhow::Result<WebSocketStream<MaybeTlsStream<TcpStream>>> {
        let url = format!("ws://{}/", self.addr);
        let request = hld_e2e::ws::upgrade(&url, self.token.as_deref(), None, true);
        // The daemon's buffer sizes, on this side too, for hld and the raw servers alike.
        let config = Some(hld::transport::websocket::ws_config());
        let (ws, _) = tokio_tungstenite::connect_async_with_config(request, config, true)
            .await
            .with_context(|| format!("WebSocket handshake with {url}"))?;
        Ok(ws)
    }
}

/// Request `i`'s text: `health` with id `"<i>"`, or a 100-byte message the echo returns.
fn request_text(mode: Mode, i: u64) -> String {
    match mode {
        Mode::Rpc => format!(r#"{{"jsonrpc":"2.0","id":"{i}","method":"health","params":{{}}}}"#),
        Mode::Echo => {
            let mut text = format!(r#"{{"jsonrpc":"2.0","id":"{i}","method":"echo","pad":""#);
            let pad = 100 - text.len() - 2;
            text.extend(std::iter::repeat_n('x', pad));
            text.push_str("\"}");
            text
        }
    }
}

/// Checks the reply to request `i`: the echo whole, or a result with the request's id (by
/// its two ends, as cheaply as the echo's).
fn check_reply(mode: Mode, i: u64, sent: &str, reply: &Message) -> anyhow::Result<()> {
    let Message::Text(text) = reply else {
        bail!("not a text reply: {reply:?}");
    };
    match mode {
        Mode::Echo => ensure!(text.as_str() == sent, "bad echo of request {i}"),
        Mode::Rpc => ensure!(
            text.starts_with(r#"{"jsonrpc":"2.0","result":"#)
                && text.ends_with(&format!(r#","id":"{i}"}}"#)),
            "not a result for request {i}: {text}"
        ),
    }
    Ok(())
}

/// `n` sequential round trips on one connection, after `warmup` untimed ones.
pub fn pingpong(target: &WsTarget, mode: Mode, n: u64, warmup: u64) -> anyhow::Result<LoadResult> {
    current_thread()?.block_on(async {
        let mut ws = target.connect().await?;
        let mut nanos = Vec::with_capacity(n as usize);
        let mut started = Instant::now();
        for i in 0..warmup + n {
            if i == warmup {
                started = Instant::now();
            }
            let t = Instant::now();
            let text = request_text(mode, i);
            ws.send(Message::text(text.clone())).await?;
            let reply = ws.next().await.context("the server closed")??;
            check_reply(mode, i, &text, &reply)?;
            if i >= warmup {
                nanos.push(t.elapsed().as_nanos() as u64);
            }
        }
        Ok(LoadResult {
            ops: n,
            secs: started.elapsed().as_secs_f64(),
            latency: Latency::of_nanos(&mut nanos),
        })
    })
}

/// `conns` connections, each doing `n / conns` sequential round trips, all started together.
pub fn concurrent(target: &WsTarget, mode: Mode, conns: u64, n: u64) -> anyhow::Result<LoadResult> {
    current_thread()?.block_on(async {
        let per = (n / conns).max(1);
        let barrier = Arc::new(tokio::sync::Barrier::new(conns as usize + 1));
        let mut tasks = Vec::new();
        for c in 0..conns {
            let mut ws = target.connect().await?;
            let barrier = barrier.clone();
            tasks.push(tokio::spawn(async move {
                let mut nanos = Vec::with_capacity(per as usize);
                for i in 0..10 {
                    let text = request_text(mode, i);
                    ws.send(Message::text(text.clone())).await?;
                    let reply = ws.next().await.context("the server closed")??;
                    check_reply(mode, i, &text, &reply)?;
                }
                barrier.wait().await;
                for k in 0..per {
                    let i = c * per + k;
                    let t = Instant::now();
                    let text = request_text(mode, i);
                    ws.send(Message::text(text.clone())).await?;
                    let reply = ws.next().await.context("the server closed")??;
                    check_reply(mode, i, &text, &reply)?;
                    nanos.push(t.elapsed().as_nanos() as u64);
                }
                anyhow::Ok(nanos)
            }));
        }
        gather(&barrier, tasks).await
    })
}

fn current_thread() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// The id of a server request, from its start (`{"jsonrpc":"2.0","id":"s12",…`), without
/// parsing the rest.
fn request_id(text: &str) -> Option<&str> {
    let rest = text.strip_prefix(r#"{"jsonrpc":"2.0","id":""#)?;
    rest.split('"').next()
}

/// Subscribes connection number `sub` over WebSocket (`new_approval` events) and spawns its
/// reader, which answers every event as a client must, `{}` to its id; the answers to the
/// messages one read brings go out in one write.
pub async fn subscribe(target: &WsTarget, sub: u32, shared: Rc<Shared>) -> anyhow::Result<()> {
    let mut ws = target.connect().await?;
    let subscribe = json!({"jsonrpc":"2.0","id":"1","method":"Subscribe","params":{"event_types":["new_approval"]}});
    ws.send(Message::text(subscribe.to_string())).await?;
    let confirmation = ws.next().await.context("closed before confirming")??;
    ensure!(
        confirmation.to_text()?.contains("subscription_id"),
        "no subscription confirmation: {confirmation:?}"
    );
    tokio::task::spawn_local(async move {
        let mut seen = Seen::default();
        let mut next = ws.next().await;
        while let Some(Ok(message)) = next {
            if let Message::Text(text) = &message {
                read_event(&shared, &mut seen, sub, text.as_bytes(), text.len());
                if let Some(id) = request_id(text) {
                    let reply = format!(r#"{{"jsonrpc":"2.0","id":"{id}","result":{{}}}}"#);
                    if ws.feed(Message::text(reply)).await.is_err() {
                        return;
                    }
                }
            }
            next = next_flushing(&mut ws).await;
        }
    });
    Ok(())
}

/// The raw reference servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RawWs {
    /// Text messages echoed back; those already read share a write.
    Echo,
    /// Broadcast: subscribers over WebSocket, the publisher on the Unix socket `sock`.
    Fanout,
}

/// Serves `kind` until killed: binds a loopback port (and for the fan-out, the Unix socket
/// `sock`), prints the port's address on stdout, then serves. Fan-out messages are padded
/// to `event_bytes`.
pub fn serve(kind: RawWs, sock: &Path, event_bytes: usize) -> anyhow::Result<()> {
    current_thread()?.block_on(async {
        let tcp = TcpListener::bind("127.0.0.1:0").await?;
        let events = broadcast::channel::<Bytes>(4096).0;
        if kind == RawWs::Fanout {
            let _ = std::fs::remove_file(sock);
            let publishers = UnixListener::bind(sock)?;
            let events = events.clone();
            tokio::spawn(async move {
                while let Ok((stream, _)) = publishers.accept().await {
                    tokio::spawn(publish(stream, events.clone(), event_bytes));
                }
            });
        }
        println!("{}", tcp.local_addr()?);
        std::io::stdout().flush()?;
        loop {
            let (stream, _) = tcp.accept().await?;
            stream.set_nodelay(true)?;
            let events = events.clone();
            tokio::spawn(async move {
                let config = Some(hld::transport::websocket::ws_config());
                let accepting =
                    tokio_tungstenite::accept_hdr_async_with_config(stream, HolonRpc, config);
                let Ok(ws) = accepting.await else {
                    return;
                };
                match kind {
                    RawWs::Echo => echo(ws).await,
                    RawWs::Fanout => subscriber(ws, events.subscribe()).await,
                }
            });
        }
    })
}

/// The handshake's answer: the subprotocol echoed.
struct HolonRpc;

impl Callback for HolonRpc {
    fn on_request(self, _: &Request, mut response: Response) -> Result<Response, ErrorResponse> {
        response.headers_mut().insert(
            "sec-websocket-protocol",
            HeaderValue::from_static(hld_e2e::ws::SUBPROTOCOL),
        );
        Ok(response)
    }
}

/// The next message; when none is ready, what was fed is flushed first, so that the answers
/// to the messages one read brought go out in one write. `None` once flushing fails.
async fn next_flushing<S>(
    ws: &mut WebSocketStream<S>,
) -> Option<Result<Message, tokio_tungstenite::tungstenite::Error>>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    match ws.next().now_or_never() {
        Some(more) => more,
        None => {
            ws.flush().await.ok()?;
            ws.next().await
        }
    }
}

async fn echo(mut ws: WebSocketStream<TcpStream>) {
    let mut next = ws.next().await;
    while let Some(Ok(message)) = next {
        if message.is_text() && ws.feed(message).await.is_err() {
            return;
        }
        next = next_flushing(&mut ws).await;
    }
}

/// One publisher connection: each request's params, padded, broadcast as an event; answered
/// `true`.
async fn publish(stream: tokio::net::UnixStream, events: broadcast::Sender<Bytes>, bytes: usize) {
    let (rd, mut wr) = stream.into_split();
    let mut rd = tokio::io::BufReader::new(rd);
    let mut line = String::new();
    loop {
        line.clear();
        if !matches!(rd.read_line(&mut line).await, Ok(n) if n > 0) {
            return;
        }
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            return;
        };
        let mut event = json!({"type": "raw", "data": request["params"], "pad": ""});
        // The message around the event: `{"jsonrpc":"2.0","id":"sN","method":"event",
        // "params":{"event":…}}`, about 70 bytes.
        let short = bytes.saturating_sub(event.to_string().len() + 70);
        event["pad"] = Value::String("x".repeat(short));
        let _ = events.send(Bytes::from(event.to_string()));
        let reply = json!({"jsonrpc": "2.0", "result": true, "id": request["id"]});
        if wr.write_all(format!("{reply}\n").as_bytes()).await.is_err() {
            return;
        }
    }
}

/// One subscriber: confirms its `Subscribe`, then sends every event as server request
/// `s<N>` (the id spliced in), those queued in one write, and reads and drops the replies.
async fn subscriber(mut ws: WebSocketStream<TcpStream>, mut events: broadcast::Receiver<Bytes>) {
    let Some(Ok(Message::Text(subscribe))) = ws.next().await else {
        return;
    };
    let id = serde_json::from_str::<Value>(&subscribe).map_or(Value::Null, |v| v["id"].clone());
    let confirm =
        json!({"jsonrpc":"2.0","result":{"subscription_id":"sub_raw","message":"ok"},"id":id});
    if ws.send(Message::text(confirm.to_string())).await.is_err() {
        return;
    }
    let mut number = 0u64;
    let mut message = |event: &Bytes| {
        number += 1;
        let mut text =
            format!(r#"{{"jsonrpc":"2.0","id":"s{number}","method":"event","params":{{"event":"#);
        text.push_str(std::str::from_utf8(event).expect("JSON is UTF-8"));
        text.push_str("}}");
        Message::text(text)
    };
    loop {
        tokio::select! {
            read = ws.next() => if !matches!(read, Some(Ok(_))) { return },
            event = events.recv() => {
                let Ok(event) = event else { return };
                if ws.feed(message(&event)).await.is_err() {
                    return;
                }
                while let Ok(event) = events.try_recv() {
                    if ws.feed(message(&event)).await.is_err() {
                        return;
                    }
                }
                if ws.flush().await.is_err() {
                    return;
                }
            }
        }
    }
}

/// A raw WebSocket server process and the address it printed.
struct RawServer {
    child: Child,
    addr: SocketAddr,
    /// Its Unix socket (the fan-out's publishers), and the directory holding it.
    sock: PathBuf,
    _dir: tempfile::TempDir,
}

impl RawServer {
    fn start(bins: &Bins, kind: &str, event_bytes: usize) -> anyhow::Result<RawServer> {
        let dir = tempfile::Builder::new()
            .prefix("hld-bench-")
            .tempdir_in("/tmp")?;
        let sock = dir.path().join("raw.sock");
        let mut child = procs::command(&bins.bench, false)
            .args(["serve-ws", "--kind", kind, "--sock"])
            .arg(&sock)
            .arg("--event-bytes")
            .arg(event_bytes.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("start a raw WebSocket server")?;
        let mut line = String::new();
        let stdout = child.stdout.take().context("stdout")?;
        std::io::BufReader::new(stdout).read_line(&mut line)?;
        let addr = line
            .trim()
            .parse()
            .with_context(|| format!("address {line:?}"))?;
        Ok(RawServer {
            child,
            addr,
            sock,
            _dir: dir,
        })
    }

    fn target(&self) -> WsTarget {
        WsTarget {
            addr: self.addr,
            token: None,
        }
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A daemon serving WebSocket too, and where.
fn daemon(bins: &Bins) -> anyhow::Result<(Server, WsTarget)> {
    let server = Server::daemon(
        bins,
        &DaemonOptions {
            args: vec![
                "--ws".into(),
                "127.0.0.1:0".into(),
                "--ws-max-connections".into(),
                "1000".into(),
            ],
            ..Default::default()
        },
    )?;
    let addr = hld_e2e::ws::address_in_log(&server.dir.path().join("hld.log"))
        .context("the daemon logged no WebSocket address")?;
    let target = WsTarget::of(addr, Some(&server.dir.path().join("daemon.ws-token")))?;
    Ok((server, target))
}

/// The load generator's arguments for `target`.
fn ws_args(
    load: &str,
    target: &WsTarget,
    token_file: Option<&Path>,
    extra: &[String],
) -> Vec<String> {
    let mut args = vec![load.to_owned(), "--ws".into(), target.addr.to_string()];
    if let Some(file) = token_file {
        args.extend(["--token-file".into(), file.display().to_string()]);
    }
    args.extend_from_slice(extra);
    args
}

/// One request/response run against a fresh hld and a fresh raw echo.
fn round_trips(bins: &Bins, load: &str, extra: &[String]) -> anyhow::Result<[LoadResult; 2]> {
    let raw = RawServer::start(bins, "echo", 0)?;
    let mut args = ws_args(load, &raw.target(), None, extra);
    args.extend(["--mode".into(), "echo".into()]);
    let raw_result = procs::client(bins, false, &args)?;
    drop(raw);
    let (server, target) = daemon(bins)?;
    let token = server.dir.path().join("daemon.ws-token");
    let mut args = ws_args(load, &target, Some(&token), extra);
    args.extend(["--mode".into(), "rpc".into()]);
    let hld_result = procs::client(bins, false, &args)?;
    server.stop()?;
    Ok([raw_result, hld_result])
}

/// One fan-out run of `plan`'s size; `ws` subscribes over WebSocket.
fn fanout_run(
    bins: &Bins,
    sock: &Path,
    ws: Option<(&WsTarget, Option<&Path>)>,
    session: &str,
    subs: usize,
    events: usize,
) -> anyhow::Result<FanoutResult> {
    let mut args = vec![
        "fanout".to_owned(),
        "--sock".into(),
        sock.display().to_string(),
        "--subs".into(),
        subs.to_string(),
        "--events".into(),
        events.to_string(),
        "--session".into(),
        session.into(),
    ];
    if let Some((target, token)) = ws {
        args.extend(["--ws".into(), target.addr.to_string()]);
        if let Some(token) = token {
            args.extend(["--token-file".into(), token.display().to_string()]);
        }
    }
    procs::client(bins, false, &args)
}

/// The group: `health` round trips and 64-connection throughput next to a raw echo, and
/// fan-out to WebSocket subscribers next to the Unix socket's and the raw floors.
pub fn run(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let ping = [
        "--n".to_owned(),
        plan.pingpong.to_string(),
        "--warmup".into(),
        plan.warmup.to_string(),
    ];
    let conc = [
        "--conns".to_owned(),
        "64".into(),
        "--n".into(),
        plan.conc.to_string(),
    ];
    let (subs, events) = plan.ws_fanout;
    let mut latency: [Vec<LoadResult>; 2] = Default::default();
    let mut throughput: [Vec<LoadResult>; 2] = Default::default();
    // hld over the Unix socket, hld over WebSocket, the raw Unix and WebSocket servers.
    let mut fanout: [Vec<FanoutResult>; 4] = Default::default();
    for _ in 0..plan.rounds {
        let [raw, hld] = round_trips(bins, "ws-pingpong", &ping)?;
        latency[0].push(raw);
        latency[1].push(hld);
        let [raw, hld] = round_trips(bins, "ws-conc", &conc)?;
        throughput[0].push(raw);
        throughput[1].push(hld);

        let (server, target) = daemon(bins)?;
        let session = finished_session(&server, "hello")?;
        let token = server.dir.path().join("daemon.ws-token");
        let unix = fanout_run(bins, &server.sock, None, &session, subs, events)?;
        let ws = fanout_run(
            bins,
            &server.sock,
            Some((&target, Some(&token))),
            &session,
            subs,
            events,
        )?;
        server.stop()?;
        let pad = |r: &FanoutResult| (r.line_bytes.round() as usize).to_string();
        let raw_unix = Server::raw(bins, "fanout", false, &["--event-bytes".into(), pad(&unix)])?;
        let raw_unix_result = fanout_run(bins, &raw_unix.sock, None, "raw", subs, events)?;
        raw_unix.stop()?;
        let raw_ws = RawServer::start(bins, "fanout", ws.line_bytes.round() as usize)?;
        let raw_ws_result = fanout_run(
            bins,
            &raw_ws.sock,
            Some((&raw_ws.target(), None)),
            "raw",
            subs,
            events,
        )?;
        drop(raw_ws);
        for (i, result) in [unix, ws, raw_unix_result, raw_ws_result]
            .into_iter()
            .enumerate()
        {
            fanout[i].push(result);
        }
    }
    let rate = |results: &[LoadResult]| results.iter().map(LoadResult::per_sec).collect::<Vec<_>>();
    let trip_row = |name: &str, results: &[Vec<LoadResult>; 2], per_request: bool| {
        let show = |rs: &[LoadResult]| {
            let main = if per_request {
                Spread::of(&rs.iter().map(LoadResult::mean_us).collect::<Vec<_>>()).show(us)
            } else {
                format!("{}/s", Spread::of(&rate(rs)).show(si))
            };
            let p99 = Spread::of(&rs.iter().map(|r| r.latency.p99_us).collect::<Vec<_>>());
            format!("{main}; p99 {}", us(p99.median))
        };
        let r = ratios(&rate(&results[1]), &rate(&results[0]));
        Row {
            name: name.to_owned(),
            figure: show(&results[1]),
            baseline: show(&results[0]),
            ratio: r.show(ratio),
            target: "req/s ratio ≥ 0.75".into(),
            verdict: Verdict::of(r.median >= 0.75),
        }
    };
    let p99 = |rs: &[FanoutResult]| rs.iter().map(|r| r.latency.p99_us).collect::<Vec<_>>();
    let lost = |rs: &[FanoutResult]| {
        rs.iter()
            .map(|r| r.lost + r.lagged + r.repeated)
            .sum::<u64>()
    };
    let show = |rs: &[FanoutResult]| {
        let p50 = Spread::of(&rs.iter().map(|r| r.latency.p50_us).collect::<Vec<_>>());
        format!(
            "p99 {}; p50 {}; lost or repeated {}",
            Spread::of(&p99(rs)).show(us),
            us(p50.median),
            lost(rs)
        )
    };
    let [unix, ws, raw_unix, raw_ws] = &fanout;
    let vs_unix = ratios(&p99(ws), &p99(unix));
    let floor = ratios(&p99(raw_ws), &p99(raw_unix));
    let over_floor = ratios(&p99(ws), &p99(raw_ws));
    let rows = vec![
        trip_row("health round trip over WebSocket", &latency, true),
        trip_row(
            "health throughput over WebSocket, 64 connections",
            &throughput,
            false,
        ),
        Row {
            name: format!("fan-out to {subs} WebSocket subscribers, 1 in flight"),
            figure: show(ws),
            baseline: format!("hld's Unix socket: {}", show(unix)),
            ratio: format!("p99 ×{}", vs_unix.show(ratio)),
            target: "p99 ≤ 2× the Unix socket's, no loss".into(),
            verdict: Verdict::of(vs_unix.median <= 2.0 && lost(ws) == 0),
        },
        Row {
            name: format!("the floor: raw WebSocket fan-out to {subs}, next to raw Unix"),
            figure: show(raw_ws),
            baseline: format!("raw Unix: {}", show(raw_unix)),
            ratio: format!("p99 ×{}", floor.show(ratio)),
            target: "reported".into(),
            verdict: Verdict::Info,
        },
        Row {
            name: format!(
                "fan-out to {subs} WebSocket subscribers, next to the raw WebSocket floor"
            ),
            figure: show(ws),
            baseline: format!("raw WebSocket: {}", show(raw_ws)),
            ratio: format!("p99 ×{}", over_floor.show(ratio)),
            target: "reported".into(),
            verdict: Verdict::Info,
        },
    ];
    Ok(Section {
        title: crate::groups::Group::Websocket.title().into(),
        method: format!(
            "hld runs with `--ws 127.0.0.1:0` beside its Unix socket (the connection cap raised \
             for the subscribers); clients are tokio \
             current_thread processes over tokio-tungstenite, unpinned, with the token as \
             `Authorization: Bearer`. Round trips: {} sequential `health` requests on one \
             connection (after {} untimed), then {} over 64 connections, each reply checked \
             by its two ends; baseline, the same client against a raw tokio-tungstenite echo \
             server (current_thread, replies to messages already read in one write) sending \
             100-byte messages. Fan-out: {subs} subscribers of `new_approval`, {events} \
             events one in flight, published with `createApproval` on the Unix socket; each \
             event reaches a WebSocket subscriber as server request `s<N>`, which it answers \
             `{{}}` (the answers to what one read brought in one write), and the latency runs \
             to the last subscriber's read. In the same round: the same load with Unix-socket \
             subscribers (the target's baseline), the raw Unix fan-out server of section 4, \
             and a raw tokio-tungstenite fan-out server (per-subscriber `s<N>` ids spliced \
             into the event's bytes, queued events in one write, replies read and dropped, \
             messages padded to hld's length): the floor of the transport itself.",
            plan.pingpong, plan.warmup, plan.conc
        ),
        commands: vec![
            "hld --socket $DIR/hld.sock --database $DIR/hld.db --log-file $DIR/hld.log \
             --claude-path fake-claude --ws 127.0.0.1:0 --ws-max-connections 1000 &"
                .into(),
            "hld-bench serve-ws --kind echo --sock $DIR/raw.sock &   # prints its address".into(),
            "hld-bench client ws-pingpong --ws $ADDR [--token-file $DIR/daemon.ws-token] \
             --mode rpc|echo --n N --warmup W"
                .into(),
            "hld-bench client ws-conc --ws $ADDR [--token-file …] --mode rpc|echo --conns 64 --n N"
                .into(),
            "hld-bench serve-ws --kind fanout --sock $DIR/raw.sock --event-bytes $BYTES &".into(),
            "hld-bench client fanout --sock $DIR/hld.sock --subs 100 --events 300 --session \
             $SESSION [--ws $ADDR --token-file $DIR/daemon.ws-token]"
                .into(),
        ],
        rows,
        notes: vec![format!(
            "Message lengths: hld's event lines on the Unix socket {:.0} bytes, its WebSocket \
             messages {:.0} bytes; the raw servers' are padded to match.",
            Spread::of(&unix.iter().map(|r| r.line_bytes).collect::<Vec<_>>()).median,
            Spread::of(&ws.iter().map(|r| r.line_bytes).collect::<Vec<_>>()).median,
        )],
    })
}
