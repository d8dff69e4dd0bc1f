//! The request/response load generators, run as their own process (`hld-bench client …`) so
//! that they can be pinned apart from the server:
//!
//! - `pingpong`: std, one connection, sequential round trips;
//! - `conc`: tokio current_thread, C connections each doing sequential round trips.
//!
//! In `rpc` mode the client serialises a `health` request with serde and checks that the reply
//! is a result with the request's id (warm-up replies parsed in full, timed ones by their two
//! ends: `check_reply`); in `echo` mode it sends a 100-byte line and reads it back, as in
//! `perf-limits.md`.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, ensure, Context};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use crate::stats::Latency;

/// What the client sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// A 100-byte raw line, echoed back.
    Echo,
    /// JSON-RPC `health`.
    Rpc,
}

/// The outcome of one load run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct LoadResult {
    /// Requests answered (warm-up excluded).
    pub ops: u64,
    /// Wall-clock seconds for them.
    pub secs: f64,
    /// Per-request latency.
    pub latency: Latency,
}

impl LoadResult {
    /// Requests per second.
    pub fn per_sec(&self) -> f64 {
        self.ops as f64 / self.secs
    }

    /// Mean microseconds per request.
    pub fn mean_us(&self) -> f64 {
        self.secs * 1e6 / self.ops as f64
    }
}

#[derive(Serialize)]
struct Request {
    jsonrpc: &'static str,
    method: &'static str,
    id: u64,
}

#[derive(Deserialize)]
struct Reply {
    id: u64,
    result: Option<serde::de::IgnoredAny>,
}

/// Writes request `i` (with its `\n`) into `out`.
fn make_request(mode: Mode, i: u64, out: &mut Vec<u8>) {
    out.clear();
    match mode {
        Mode::Echo => {
            let head = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"id\":{i},\"pad\":\"");
            out.extend_from_slice(head.as_bytes());
            out.resize(97, b'x');
            out.extend_from_slice(b"\"}\n");
        }
        Mode::Rpc => {
            serde_json::to_writer(
                &mut *out,
                &Request {
                    jsonrpc: "2.0",
                    method: "health",
                    id: i,
                },
            )
            .expect("a request serialises");
            out.push(b'\n');
        }
    }
}

/// Checks the reply to request `i`. Unless `full`, as cheaply as the echo's is checked (by its
/// length), so that the load generator's own work per reply is the same for both servers: a
/// reply of the shape hld writes, `{"jsonrpc":"2.0","result":…,"id":i}`, is recognised by its
/// two ends, and any other shape is parsed in full. Warm-up replies are always parsed in full.
fn check_reply(mode: Mode, i: u64, line: &[u8], full: bool) -> anyhow::Result<()> {
    match mode {
        Mode::Echo => ensure!(
            line.len() == 100 && line.ends_with(b"\n"),
            "bad echo of request {i}"
        ),
        Mode::Rpc if !full && is_result_for(line, i) => {}
        Mode::Rpc => {
            let reply: Reply = serde_json::from_slice(line)
                .with_context(|| format!("reply {:?}", String::from_utf8_lossy(line)))?;
            ensure!(reply.id == i, "reply id {} for request {i}", reply.id);
            ensure!(
                reply.result.is_some(),
                "error reply: {}",
                String::from_utf8_lossy(line)
            );
        }
    }
    Ok(())
}

/// Whether `line` is `{"jsonrpc":"2.0","result":…,"id":i}` and its newline.
fn is_result_for(line: &[u8], i: u64) -> bool {
    let Some(body) = line
        .strip_prefix(br#"{"jsonrpc":"2.0","result":"#)
        .and_then(|rest| rest.strip_suffix(b"}\n"))
    else {
        return false;
    };
    let digits = body.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let (head, id) = body.split_at(body.len() - digits);
    head.ends_with(br#","id":"#)
        && std::str::from_utf8(id).is_ok_and(|id| id.parse::<u64>().is_ok_and(|id| id == i))
}

/// Lets connections' tasks, each warm and waiting on `barrier`, start together, and gathers
/// their round-trip times (ns) into one result, timed from the start.
pub async fn gather(
    barrier: &tokio::sync::Barrier,
    tasks: Vec<tokio::task::JoinHandle<anyhow::Result<Vec<u64>>>>,
) -> anyhow::Result<LoadResult> {
    barrier.wait().await;
    let started = Instant::now();
    let mut nanos = Vec::new();
    for task in tasks {
        nanos.extend(task.await??);
    }
    let secs = started.elapsed().as_secs_f64();
    Ok(LoadResult {
        ops: nanos.len() as u64,
        secs,
        latency: Latency::of_nanos(&mut nanos),
    })
}

fn connect(sock: &Path) -> anyhow::Result<UnixStream> {
    UnixStream::connect(sock).with_context(|| format!("connect to {}", sock.display()))
}

/// `n` sequential round trips on one connection, after `warmup` untimed ones.
pub fn pingpong(sock: &Path, mode: Mode, n: u64, warmup: u64) -> anyhow::Result<LoadResult> {
    let stream = connect(sock)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::with_capacity(64 * 1024, stream);
    let mut req = Vec::new();
    let mut line = Vec::new();
    let mut nanos = Vec::with_capacity(n as usize);
    let mut started = Instant::now();
    for i in 0..warmup + n {
        if i == warmup {
            started = Instant::now();
        }
        let t = Instant::now();
        make_request(mode, i, &mut req);
        writer.write_all(&req)?;
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            bail!("the server closed the connection");
        }
        check_reply(mode, i, &line, i < warmup)?;
        if i >= warmup {
            nanos.push(t.elapsed().as_nanos() as u64);
        }
    }
    Ok(LoadResult {
        ops: n,
        secs: started.elapsed().as_secs_f64(),
        latency: Latency::of_nanos(&mut nanos),
    })
}

/// `conns` connections, each doing `n / conns` sequential round trips, all started together.
pub fn concurrent(sock: &Path, mode: Mode, conns: u64, n: u64) -> anyhow::Result<LoadResult> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let per = (n / conns).max(1);
        let barrier = Arc::new(tokio::sync::Barrier::new(conns as usize + 1));
        let mut tasks = Vec::new();
        for c in 0..conns {
            let stream = tokio::net::UnixStream::connect(sock).await?;
            let barrier = barrier.clone();
            tasks.push(tokio::spawn(async move {
                let (rd, mut wr) = stream.into_split();
                let mut rd = tokio::io::BufReader::with_capacity(64 * 1024, rd);
                let mut req = Vec::new();
                let mut line = Vec::new();
                let mut nanos = Vec::with_capacity(per as usize);
                // Warm the connection up before the clock starts.
                for i in 0..10 {
                    make_request(mode, i, &mut req);
                    wr.write_all(&req).await?;
                    line.clear();
                    rd.read_until(b'\n', &mut line).await?;
                    check_reply(mode, i, &line, true)?;
                }
                barrier.wait().await;
                for k in 0..per {
                    let i = c * per + k;
                    let t = Instant::now();
                    make_request(mode, i, &mut req);
                    wr.write_all(&req).await?;
                    line.clear();
                    if rd.read_until(b'\n', &mut line).await? == 0 {
                        bail!("the server closed the connection");
                    }
                    check_reply(mode, i, &line, false)?;
                    nanos.push(t.elapsed().as_nanos() as u64);
                }
                anyhow::Ok(nanos)
            }));
        }
        gather(&barrier, tasks).await
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_is_accepted_only_as_a_result_for_its_own_request() {
        let ok = br#"{"jsonrpc":"2.0","result":{"status":"ok","id":3},"id":42}"#;
        let line = |body: &[u8]| [body, b"\n"].concat();
        assert!(is_result_for(&line(ok), 42));
        assert!(!is_result_for(&line(ok), 4));
        assert!(!is_result_for(&line(ok), 420));
        assert!(!is_result_for(ok, 42), "no newline");
        let error = br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"x"},"id":42}"#;
        assert!(!is_result_for(&line(error), 42));
        assert!(check_reply(Mode::Rpc, 42, &line(error), false).is_err());
        // Another field order is parsed in full, and judged the same way.
        let reordered = br#"{"id":42,"jsonrpc":"2.0","result":{}}"#;
        assert!(!is_result_for(&line(reordered), 42));
        assert!(check_reply(Mode::Rpc, 42, &line(reordered), false).is_ok());
        assert!(check_reply(Mode::Rpc, 41, &line(reordered), false).is_err());
        assert!(check_reply(Mode::Rpc, 42, &line(ok), true).is_ok());
        assert!(check_reply(Mode::Rpc, 41, &line(ok), true).is_err());
    }
}
