//! Group 12, the WebSocket transport (`hld --ws`, holon-rpc): its load generators (tokio
//! current_thread clients over tokio-tungstenite, as `hld-bench client ws-pingpong|ws-conc`),
//! its raw reference server (`hld-bench serve-ws`, a tokio-tungstenite echo on a
//! current_thread runtime), and the group itself.
//!
//! The raw server does what the transport itself must: the handshake (echoing `holon-rpc`)
//! and frames; it parses nothing. Servers and clients all use the daemon's tungstenite
//! settings (`websocket::ws_config`).

use std::io::{BufRead, Write as _};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, ensure, Context};
use futures::{FutureExt, SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::handshake::server::{
    Callback, ErrorResponse, Request, Response,
};
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::groups::{rate_row, Plan, MIN_RATE_RATIO};
use crate::load::{gather, LoadResult, Mode};
use crate::procs::{self, Bins, DaemonOptions, Server};
use crate::report::Section;
use crate::stats::Latency;

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

/// Serves the raw echo until killed: binds a loopback port, prints its address on stdout,
/// then echoes every text message, those already read in one write.
pub fn serve_echo() -> anyhow::Result<()> {
    current_thread()?.block_on(async {
        let tcp = TcpListener::bind("127.0.0.1:0").await?;
        println!("{}", tcp.local_addr()?);
        std::io::stdout().flush()?;
        loop {
            let (stream, _) = tcp.accept().await?;
            stream.set_nodelay(true)?;
            tokio::spawn(async move {
                let config = Some(hld::transport::websocket::ws_config());
                let accepting =
                    tokio_tungstenite::accept_hdr_async_with_config(stream, HolonRpc, config);
                if let Ok(ws) = accepting.await {
                    echo(ws).await;
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

/// A raw WebSocket echo server process and the address it printed.
struct RawServer {
    child: Child,
    addr: SocketAddr,
}

impl RawServer {
    fn start(bins: &Bins) -> anyhow::Result<RawServer> {
        let mut child = procs::command(&bins.bench, false)
            .arg("serve-ws")
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
        Ok(RawServer { child, addr })
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
            // Room for the load generator's 64 connections and a spare.
            args: vec![
                "--ws".into(),
                "127.0.0.1:0".into(),
                "--ws-max-connections".into(),
                "128".into(),
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
    let raw = RawServer::start(bins)?;
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

/// The group: `health` round trips and throughput at 8 and 64 connections next to a raw echo.
pub fn run(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let ping = [
        "--n".to_owned(),
        plan.pingpong.to_string(),
        "--warmup".into(),
        plan.warmup.to_string(),
    ];
    let conc = |conns: u64| {
        [
            "--conns".to_owned(),
            conns.to_string(),
            "--n".into(),
            plan.conc.to_string(),
        ]
    };
    let conns = [8u64, 64];
    let mut latency: [Vec<LoadResult>; 2] = Default::default();
    let mut throughput: [[Vec<LoadResult>; 2]; 2] = Default::default();
    for _ in 0..plan.rounds {
        let [raw, hld] = round_trips(bins, "ws-pingpong", &ping)?;
        latency[0].push(raw);
        latency[1].push(hld);
        for (i, &c) in conns.iter().enumerate() {
            let [raw, hld] = round_trips(bins, "ws-conc", &conc(c))?;
            throughput[i][0].push(raw);
            throughput[i][1].push(hld);
        }
    }
    let mut rows = vec![rate_row(
        "health round trip over WebSocket",
        &latency[1],
        &latency[0],
        true,
        MIN_RATE_RATIO,
    )];
    for (i, &c) in conns.iter().enumerate() {
        rows.push(rate_row(
            &format!("health throughput over WebSocket, {c} connections"),
            &throughput[i][1],
            &throughput[i][0],
            false,
            MIN_RATE_RATIO,
        ));
    }
    Ok(Section {
        title: crate::groups::Group::Websocket.title().into(),
        method: format!(
            "hld runs with `--ws 127.0.0.1:0` beside its Unix socket; clients are tokio \
             current_thread processes over tokio-tungstenite, unpinned, with the token as \
             `Authorization: Bearer`. {} sequential `health` requests on one connection (after \
             {} untimed), then {} over 8 and over 64 connections, each reply checked by its two \
             ends; baseline, the same client against a raw tokio-tungstenite echo server \
             (current_thread, replies to messages already read in one write) sending 100-byte \
             messages.",
            plan.pingpong, plan.warmup, plan.conc
        ),
        commands: vec![
            "hld --socket $DIR/hld.sock --database $DIR/hld.db --log-file $DIR/hld.log \
             --claude-path fake-claude --ws 127.0.0.1:0 --ws-max-connections 128 &"
                .into(),
            "hld-bench serve-ws &   # prints its address".into(),
            "hld-bench client ws-pingpong --ws $ADDR [--token-file $DIR/daemon.ws-token] \
             --mode rpc|echo --n N --warmup W"
                .into(),
            "hld-bench client ws-conc --ws $ADDR [--token-file …] --mode rpc|echo --conns 8|64 \
             --n N"
                .into(),
        ],
        rows,
        notes: Vec::new(),
    })
}
