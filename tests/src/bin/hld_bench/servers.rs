//! The raw reference servers the daemon is measured against, each run as its own process
//! (`hld-bench serve --kind …`), as in `perf-limits.md`:
//!
//! - `echo`: tokio current_thread, one task per connection, NDJSON lines echoed back; replies
//!   to requests already buffered share one write.
//! - `fanout`: tokio current_thread; `Subscribe` turns a connection into a subscriber fed by a
//!   broadcast channel with per-subscriber coalescing; any other request is parsed, its
//!   `params` serialised once into an event line (padded to a given length), broadcast, and
//!   answered. With an agent program, `launchSession` starts it as hld starts `claude` (its
//!   stdout piped, `--output-format stream-json --verbose --print -- <query>`, in
//!   `working_dir`), and each line it writes but the final `result` (which hld keeps as the
//!   session's outcome) is broadcast as it is, padded likewise.
//! - `health`: as `echo`, but each request is parsed and answered with hld's own `health`
//!   result (`--reply`, taken from a daemon), cloned and serialised per request: the JSON work
//!   of a `health` reply with none of the daemon around it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use bytes::Bytes;
use hld_client::protocol::HealthResult;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::process::Command;
use tokio::sync::broadcast;

/// Which reference server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// Raw tokio NDJSON echo.
    Echo,
    /// Raw broadcast fan-out.
    Fanout,
    /// Raw tokio NDJSON server answering hld's `health` result.
    Health,
}

/// A JSON-RPC request as the reference servers read it.
#[derive(Debug, Deserialize)]
struct Request {
    method: String,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    id: Option<Value>,
}

#[derive(Serialize)]
struct Response<'a, T> {
    jsonrpc: &'static str,
    result: T,
    id: &'a Value,
}

/// Serves `kind` on `sock` until killed. The fan-out server pads its event lines to
/// `event_bytes`, to carry as many bytes per event as the daemon's, and runs `agent` for each
/// `launchSession`; the `health` server answers with the result in the file `reply`.
pub fn serve(
    kind: Kind,
    sock: &Path,
    event_bytes: usize,
    agent: Option<PathBuf>,
    reply: Option<PathBuf>,
) -> anyhow::Result<()> {
    let reply: Option<Arc<HealthResult>> = match (kind, reply) {
        (Kind::Health, Some(file)) => {
            Some(Arc::new(serde_json::from_slice(&std::fs::read(file)?)?))
        }
        (Kind::Health, None) => anyhow::bail!("a health server needs --reply"),
        _ => None,
    };
    let _ = std::fs::remove_file(sock);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let listener = UnixListener::bind(sock)?;
        let events = broadcast::channel(4096).0;
        loop {
            let (stream, _) = listener.accept().await?;
            match kind {
                Kind::Echo => tokio::spawn(echo(stream)),
                Kind::Health => tokio::spawn(health(stream, reply.clone().expect("read above"))),
                Kind::Fanout => {
                    let fanout = Fanout {
                        tx: events.clone(),
                        event_bytes,
                        agent: agent.clone(),
                    };
                    tokio::spawn(fanout.serve(stream))
                }
            };
        }
    })
}

/// Serves NDJSON lines: `reply` appends its answer to a line to the output, or refuses the line
/// (the connection is dropped); answers to lines already buffered go out in one write.
async fn answer_lines(stream: UnixStream, mut reply: impl FnMut(&[u8], &mut Vec<u8>) -> bool) {
    let (rd, mut wr) = stream.into_split();
    let mut rd = tokio::io::BufReader::with_capacity(64 * 1024, rd);
    let mut line = Vec::new();
    let mut out = Vec::new();
    loop {
        line.clear();
        match rd.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) if reply(&line, &mut out) => {}
            Ok(_) => return,
        }
        if !rd.buffer().contains(&b'\n') {
            if wr.write_all(&out).await.is_err() {
                return;
            }
            out.clear();
        }
    }
}

async fn echo(stream: UnixStream) {
    answer_lines(stream, |line, out| {
        out.extend_from_slice(line);
        true
    })
    .await
}

/// Answers each request with `health`'s result, cloned and serialised.
async fn health(stream: UnixStream, result: Arc<HealthResult>) {
    answer_lines(stream, move |line, out| {
        let Ok(req) = serde_json::from_slice::<Request>(line) else {
            return false;
        };
        let reply = Response {
            jsonrpc: "2.0",
            result: HealthResult::clone(&result),
            id: &req.id.unwrap_or(Value::Null),
        };
        let written = serde_json::to_writer(&mut *out, &reply).is_ok();
        out.push(b'\n');
        written
    })
    .await
}

/// What every fan-out connection shares.
struct Fanout {
    tx: broadcast::Sender<Bytes>,
    event_bytes: usize,
    agent: Option<PathBuf>,
}

impl Fanout {
    async fn serve(self, stream: UnixStream) {
        let (rd, mut wr) = stream.into_split();
        let mut rd = tokio::io::BufReader::with_capacity(64 * 1024, rd);
        let mut line = Vec::new();
        let mut out = Vec::new();
        loop {
            line.clear();
            match rd.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let Ok(req) = serde_json::from_slice::<Request>(&line) else {
                return;
            };
            let id = req.id.unwrap_or(Value::Null);
            let params = req.params.unwrap_or(Value::Null);
            let result = match req.method.as_str() {
                "Subscribe" => {
                    let rx = self.tx.subscribe();
                    let confirm = serde_json::json!({"jsonrpc": "2.0", "result": {"subscription_id": "sub_raw", "message": "ok"}, "id": id});
                    let mut confirm = confirm.to_string().into_bytes();
                    confirm.push(b'\n');
                    if wr.write_all(&confirm).await.is_ok() {
                        subscriber(rd, wr, rx).await;
                    }
                    return;
                }
                "launchSession" if self.agent.is_some() => match self.launch(&params) {
                    Ok(()) => serde_json::json!({"session_id": "raw"}),
                    Err(_) => return,
                },
                _ => {
                    let data = |out: &mut Vec<u8>| serde_json::to_writer(out, &params);
                    let Ok(event) = event(self.event_bytes, data) else {
                        return;
                    };
                    let _ = self.tx.send(event);
                    Value::Bool(true)
                }
            };
            out.clear();
            let reply = Response {
                jsonrpc: "2.0",
                result,
                id: &id,
            };
            if serde_json::to_writer(&mut out, &reply).is_err() {
                return;
            }
            out.push(b'\n');
            if wr.write_all(&out).await.is_err() {
                return;
            }
        }
    }

    /// Starts the agent on `params.query` and broadcasts each line it writes.
    fn launch(&self, params: &Value) -> std::io::Result<()> {
        let program = self.agent.as_deref().expect("launched with an agent");
        let mut child = Command::new(program)
            .args([
                "--output-format",
                "stream-json",
                "--verbose",
                "--print",
                "--",
            ])
            .arg(params["query"].as_str().unwrap_or_default())
            .current_dir(params["working_dir"].as_str().unwrap_or("."))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, event_bytes) = (self.tx.clone(), self.event_bytes);
        tokio::spawn(async move {
            let mut rd = tokio::io::BufReader::with_capacity(64 * 1024, stdout);
            let mut line = Vec::new();
            loop {
                line.clear();
                match rd.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                // The final result, which hld keeps as the session's outcome, repeats the text.
                if line.starts_with(br#"{"type":"result""#) {
                    continue;
                }
                let data = |out: &mut Vec<u8>| {
                    out.extend_from_slice(line.trim_ascii_end());
                    Ok(())
                };
                let _ = event(event_bytes, data).map(|event| tx.send(event));
            }
            let _ = child.wait().await;
        });
        Ok(())
    }
}

/// An event line carrying the JSON that `data` writes, padded to `event_bytes`.
fn event(
    event_bytes: usize,
    data: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
) -> serde_json::Result<Bytes> {
    const TAIL: &[u8] = b"}},\"id\":null}\n";
    const PAD: &[u8] = b",\"pad\":\"\"";
    let mut event = br#"{"jsonrpc":"2.0","result":{"event":{"type":"raw","data":"#.to_vec();
    data(&mut event)?;
    let short = event_bytes.saturating_sub(event.len() + TAIL.len() + PAD.len());
    if short > 0 {
        event.extend_from_slice(&PAD[..PAD.len() - 1]);
        event.resize(event.len() + short, b'x');
        event.push(b'"');
    }
    event.extend_from_slice(TAIL);
    Ok(Bytes::from(event))
}

/// Feeds one subscriber: everything already queued goes out in one write (up to 64 KiB).
async fn subscriber<R: tokio::io::AsyncRead + Unpin>(
    mut rd: R,
    mut wr: tokio::net::unix::OwnedWriteHalf,
    mut rx: broadcast::Receiver<Bytes>,
) {
    let mut out = Vec::new();
    let mut scratch = [0u8; 512];
    loop {
        out.clear();
        tokio::select! {
            n = rd.read(&mut scratch) => match n {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            },
            got = rx.recv() => match got {
                Ok(b) => out.extend_from_slice(&b),
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            },
        }
        while out.len() < 64 * 1024 {
            match rx.try_recv() {
                Ok(b) => out.extend_from_slice(&b),
                Err(_) => break,
            }
        }
        if wr.write_all(&out).await.is_err() {
            return;
        }
    }
}
