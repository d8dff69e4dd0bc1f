//! One task per live `claude` process: reads its stream, stores every line (batched: the
//! lines already buffered are stored together, and a burst's batches are queued while earlier
//! ones commit), publishes what was stored, and decides the final status when the process
//! ends.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use futures::stream::FuturesOrdered;
use futures::{FutureExt, StreamExt};
use hld_client::protocol::ConversationEvent;
use hld_client::protocol::SessionStatus;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::process::Child;
use tokio::sync::watch;

use super::{process, Sessions};
use crate::claude::StreamState;
use crate::store::{Ingest, NewEvent, SessionUpdate};

/// Batches queued to the store and not yet published, at most.
const MAX_IN_FLIGHT: usize = 16;
/// At most this many lines are stored (and their events published) at once. It stays below
/// the default subscriber buffer (100), so a subscriber that keeps up never loses events to a
/// burst; the store's group commit still merges queued batches into one transaction.
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
///
/// In a burst, up to [`MAX_IN_FLIGHT`] batches are queued to the store while the next lines are
/// parsed, so that the store commits them together; each batch is published, in order, once it
/// is committed. Before waiting for more output, everything stored is published.
async fn pump(
    ctx: &Context,
    state: &mut StreamState,
    query: &mut Option<NewEvent>,
    stdout: impl AsyncRead + Unpin,
) {
    let mut reader = BufReader::with_capacity(256 * 1024, stdout);
    let mut line = Vec::new();
    let mut stored = FuturesOrdered::new();
    loop {
        // Publish the batches already committed.
        while let Some(Some(done)) = stored.next().now_or_never() {
            publish(ctx, done).await;
        }
        if stored.len() >= MAX_IN_FLIGHT {
            if let Some(done) = stored.next().await {
                publish(ctx, done).await;
            }
            continue;
        }
        let more = matches!(reader.fill_buf().now_or_never(), Some(Ok(buf)) if !buf.is_empty());
        if !more {
            while let Some(done) = stored.next().await {
                publish(ctx, done).await;
            }
        }
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(session = %ctx.session_id, error = %e, "cannot read claude's output");
                break;
            }
        }
        let mut batch = Ingest {
            raw_lines: Vec::with_capacity(MAX_BATCH_LINES),
            events: Vec::with_capacity(MAX_BATCH_LINES),
            update: None,
        };
        state.apply_to(text(&line), &mut batch);
        let mut lines = 1;
        // Lines already buffered join this batch.
        while lines < MAX_BATCH_LINES && reader.buffer().contains(&b'\n') {
            line.clear();
            if reader.read_until(b'\n', &mut line).await.unwrap_or(0) == 0 {
                break;
            }
            state.apply_to(text(&line), &mut batch);
            lines += 1;
        }
        if let Some(claude_id) = state.claude_session_id() {
            if let Some(mut q) = query.take() {
                q.claude_session_id = claude_id.to_owned();
                batch.events.insert(0, q);
            }
        }
        stored.push_back(queue(ctx, batch, lines));
    }
    while let Some(done) = stored.next().await {
        publish(ctx, done).await;
    }
}

/// A batch queued to the store: its outcome once committed, and how many lines it holds.
type Stored = (crate::store::Result<Vec<ConversationEvent>>, usize);

/// Queues a batch to the store (at once) and returns the future of its outcome.
fn queue(ctx: &Context, mut batch: Ingest, lines: usize) -> impl Future<Output = Stored> {
    if let Some(update) = batch.update.as_mut() {
        if ctx.model_requested {
            update.model = None;
        }
        // An interrupt is not an error: Claude's diagnostics about it are not stored as one.
        if ctx.sessions.was_interrupted(&ctx.session_id) {
            update.error_message = None;
        }
    }
    let committed = ctx.sessions.store.ingest(&ctx.session_id, batch);
    async move { (committed.await, lines) }
}

/// Publishes a committed batch's events: nothing is published before it is durable. Then
/// lets the subscribers run, so that a subscriber that keeps up drains its queue before the
/// next batch is published.
async fn publish(ctx: &Context, (outcome, lines): Stored) {
    match outcome {
        Ok(events) => {
            for event in events {
                super::publish_conversation(&ctx.sessions.bus, &ctx.session_id, &ctx.run_id, event);
            }
            tokio::task::yield_now().await;
        }
        Err(e) => {
            tracing::error!(session = %ctx.session_id, error = %e, lines, "cannot store claude output")
        }
    }
}

/// Stores a batch and publishes its events (the last one, after the stream ended).
async fn store(ctx: &Context, batch: Ingest, lines: usize) {
    let done = queue(ctx, batch, lines).await;
    publish(ctx, done).await;
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
