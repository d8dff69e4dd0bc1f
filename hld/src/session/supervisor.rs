//! One task per live `claude` process: reads its stream, stores every line (batched: the
//! lines already buffered are written in one transaction), publishes what was stored, and
//! decides the final status when the process ends.

use std::path::PathBuf;
use std::sync::Arc;

use hld_client::protocol::SessionStatus;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::process::Child;
use tokio::sync::watch;

use super::{process, Sessions};
use crate::claude::StreamState;
use crate::store::{Ingest, NewEvent, SessionUpdate};

/// At most this many lines are stored (and their events published) at once. It stays below
/// the default subscriber buffer (100), so a subscriber that keeps up never loses events to a
/// burst; the store's group commit still merges the batches of concurrent sessions.
const MAX_BATCH_LINES: usize = 64;
/// The tail of stderr kept for the error message.
const STDERR_TAIL: usize = 4096;

/// What a supervisor needs.
pub struct Context {
    /// The manager.
    pub sessions: Arc<Sessions>,
    /// The session.
    pub session_id: String,
    /// Its run.
    pub run_id: String,
    /// The prompt, stored as the first user message.
    pub query: String,
    /// Whether the launch named a model: then the one Claude resolves does not replace it.
    pub model_requested: bool,
    /// The private MCP config file to delete at the end.
    pub mcp_file: Option<PathBuf>,
    /// Set to true once the final status is stored.
    pub done: watch::Sender<bool>,
}

/// Supervises `child` until it exits and its outcome is stored.
pub async fn run(ctx: Context, mut child: Child) {
    let pgid = child.id().unwrap_or_default();
    let stderr = child.stderr.take().map(|s| tokio::spawn(stderr_tail(s)));
    let mut state = StreamState::new();
    let mut query = Some(NewEvent::message("", "user", &ctx.query));
    if let Some(stdout) = child.stdout.take() {
        pump(&ctx, &mut state, &mut query, stdout).await;
    }
    if let Some(query) = query {
        // Claude never reported a session id: the query is still stored.
        store(
            &ctx,
            Ingest {
                events: vec![query],
                ..Default::default()
            },
            0,
        )
        .await;
    }
    let exit = child.wait().await.ok();
    let stderr = match stderr {
        Some(task) => task.await.unwrap_or_default(),
        None => String::new(),
    };
    // Whatever the child left in its group (e.g. MCP servers) goes with it.
    process::kill_group(pgid);

    let exit_code = exit.and_then(|s| s.code());
    let interrupted = ctx.sessions.was_interrupted(&ctx.session_id);
    let (status, error) = outcome(&state, interrupted, exit_code, &stderr);
    let update = SessionUpdate {
        completed_at: Some(crate::time::now()),
        error_message: error.clone(),
        exit_code,
        interrupted: Some(interrupted),
        ..Default::default()
    };
    ctx.sessions
        .transition(&ctx.session_id, &ctx.run_id, status, update, error)
        .await;
    if let Some(file) = &ctx.mcp_file {
        let _ = std::fs::remove_file(file);
    }
    ctx.sessions.forget(&ctx.session_id);
    let _ = ctx.done.send(true);
    tracing::info!(session = %ctx.session_id, %status, ?exit_code, interrupted, "session ended");
}

/// The final status: an interrupt ends `completed` (marked interrupted); otherwise the
/// `result` line decides, not the exit code; no `result` at all is a failure.
fn outcome(
    state: &StreamState,
    interrupted: bool,
    exit_code: Option<i32>,
    stderr: &str,
) -> (SessionStatus, Option<String>) {
    if interrupted {
        return (SessionStatus::Completed, None);
    }
    match state.result() {
        Some(result) if !result.is_error => (SessionStatus::Completed, None),
        Some(result) => (
            SessionStatus::Failed,
            Some(
                result
                    .error_message()
                    .unwrap_or_else(|| "claude reported an error".into()),
            ),
        ),
        None => {
            let code = exit_code.map_or_else(|| "a signal".to_owned(), |c| format!("code {c}"));
            let mut message = format!("claude exited with {code} before reporting a result");
            let detail = stderr.trim();
            if !detail.is_empty() {
                message.push_str(": ");
                message.push_str(detail);
            }
            (SessionStatus::Failed, Some(message))
        }
    }
}

/// Reads stdout to its end, storing and publishing as it goes. The query becomes the first
/// event as soon as Claude's session id is known (in the same transaction as that line).
async fn pump(
    ctx: &Context,
    state: &mut StreamState,
    query: &mut Option<NewEvent>,
    stdout: impl AsyncRead + Unpin,
) {
    let mut reader = BufReader::with_capacity(256 * 1024, stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(session = %ctx.session_id, error = %e, "cannot read claude's output");
                break;
            }
        }
        let mut batch = state.apply(text(&line));
        let mut lines = 1;
        // Lines already buffered join this batch: one transaction for a burst.
        while lines < MAX_BATCH_LINES && reader.buffer().contains(&b'\n') {
            line.clear();
            if reader.read_until(b'\n', &mut line).await.unwrap_or(0) == 0 {
                break;
            }
            merge(&mut batch, state.apply(text(&line)));
            lines += 1;
        }
        if let Some(claude_id) = state.claude_session_id() {
            if let Some(mut q) = query.take() {
                q.claude_session_id = claude_id.to_owned();
                batch.events.insert(0, q);
            }
        }
        store(ctx, batch, lines).await;
    }
}

/// Stores a batch, then publishes its events: nothing is published before it is durable.
async fn store(ctx: &Context, mut batch: Ingest, lines: usize) {
    if let Some(update) = batch.update.as_mut() {
        if ctx.model_requested {
            update.model = None;
        }
        // An interrupt is not an error: Claude's diagnostics about it are not stored as one.
        if ctx.sessions.was_interrupted(&ctx.session_id) {
            update.error_message = None;
        }
    }
    match ctx.sessions.store.ingest(&ctx.session_id, batch).await {
        Ok(events) => {
            for event in events {
                ctx.sessions
                    .publish_conversation(&ctx.session_id, &ctx.run_id, event);
            }
        }
        Err(e) => {
            tracing::error!(session = %ctx.session_id, error = %e, lines, "cannot store claude output")
        }
    }
}

/// A line without its terminator, as text (invalid UTF-8 is replaced, never fatal).
fn text(line: &[u8]) -> &str {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match std::str::from_utf8(line) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&line[..e.valid_up_to()]).unwrap_or_default(),
    }
}

/// Appends `next` to `batch`; later update fields win.
fn merge(batch: &mut Ingest, next: Ingest) {
    batch.raw_lines.extend(next.raw_lines);
    batch.events.extend(next.events);
    batch.update = match (batch.update.take(), next.update) {
        (Some(a), Some(b)) => Some(a.merged_with(b)),
        (a, b) => a.or(b),
    };
}

/// Keeps the last few KiB of stderr, logging each line at debug.
async fn stderr_tail(stderr: impl AsyncRead + Unpin) -> String {
    let mut reader = BufReader::new(stderr);
    let mut tail = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                tracing::debug!(stderr = %String::from_utf8_lossy(&chunk[..n]), "claude stderr");
                tail.extend_from_slice(&chunk[..n]);
                if tail.len() > STDERR_TAIL {
                    tail.drain(..tail.len() - STDERR_TAIL);
                }
            }
        }
    }
    String::from_utf8_lossy(&tail).into_owned()
}
