//! One actor per live session: a task that owns the `claude` process and its [`Phase`], stores
//! its stream in batches and takes commands; `model::transition` decides the status.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, BytesMut};
use futures::StreamExt;
use hld_client::protocol::SessionStatus;
use tokio::io::{AsyncRead, AsyncReadExt, BufReader};
use tokio::process::Child;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::codec::{Decoder, FramedRead};

use super::transcript::Transcript;
use super::Sessions;
use crate::claude::process;
use crate::error::{Error, Result};
use crate::model::Happening;
use crate::store::{Ingest, NewEvent, Result as StoreResult, SessionUpdate, StoreError};

/// The most bytes gathered into the next batch while the one before is being stored.
const MAX_BATCH_BYTES: usize = 1 << 20;
/// The tail of stderr kept for the error message.
const STDERR_TAIL: usize = 4096;
/// The first pause before storing a session's outcome again, and the longest.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(5);

/// Where the process is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    /// It was sent SIGINT; its process group is killed at `deadline` unless it has ended.
    Interrupting {
        /// When the grace period ends; `None` once the group was killed.
        deadline: Option<Instant>,
    },
}

#[derive(Debug)]
pub(super) enum Command {
    /// Stop the current turn: SIGINT now, the whole group killed after the grace period.
    Interrupt(oneshot::Sender<Result<()>>),
    /// Kill the process group at once (daemon shutdown, after the grace period).
    Kill,
}

/// The manager's handle on a live session's actor.
#[derive(Debug)]
pub(super) struct Handle {
    pub(super) commands: mpsc::UnboundedSender<Command>,
    /// Becomes true once the outcome is stored.
    pub(super) done: watch::Receiver<bool>,
}

/// A live session's actor, before it runs.
pub(super) struct Supervisor {
    pub(super) sessions: Arc<Sessions>,
    pub(super) session_id: String,
    /// The prompt, stored as the first user message.
    pub(super) query: String,
    /// Whether the launch named a model: then the one Claude resolves does not replace it.
    pub(super) model_requested: bool,
    /// The private MCP config file, deleted when the process has ended.
    pub(super) mcp_file: Option<PathBuf>,
    pub(super) commands: mpsc::UnboundedReceiver<Command>,
    pub(super) done: watch::Sender<bool>,
}

/// Output that could not be stored: the conversation is incomplete.
struct Lost {
    error: String,
    lines: usize,
}

impl Supervisor {
    /// Supervises `child` until it has ended and its outcome is stored.
    pub(super) async fn run(mut self, mut child: Child) {
        let pid = child.id().unwrap_or_default();
        let stderr = child.stderr.take().map(|s| tokio::spawn(stderr_tail(s)));
        let mut phase = Phase::Running;
        let mut lost = None;
        let mut transcript = Transcript::new();
        let mut query = Some(NewEvent::message("", "user", &self.query));
        if let Some(stdout) = child.stdout.take() {
            let codec = LineCodec::new(self.sessions.config.max_agent_line);
            let mut lines = FramedRead::new(stdout, codec);
            // The batch being stored, and the next one, gathered meanwhile: its lines and bytes.
            let mut in_flight = None;
            let mut batch = Ingest::default();
            let (mut count, mut size) = (0, 0);
            let mut ended = false;
            while !(ended && count == 0 && in_flight.is_none()) {
                tokio::select! {
                    line = lines.next(), if !ended && size < MAX_BATCH_BYTES => match line {
                        Some(Ok(line)) => {
                            size += self.apply(&mut transcript, line, &mut batch);
                            count += 1;
                        }
                        _ => ended = true,
                    },
                    stored = stored(&mut in_flight) => self.stored(stored, &mut lost, pid),
                    Some(command) = self.commands.recv() => {
                        phase = self.command(command, phase, pid).await;
                    }
                    () = deadline(phase) => phase = kill_after_grace(pid),
                }
                if in_flight.is_none() && count > 0 {
                    if let Some(claude_id) = transcript.claude_session_id() {
                        if let Some(mut q) = query.take() {
                            q.claude_session_id = claude_id.to_owned();
                            batch.events.insert(0, q);
                        }
                    }
                    let batch = std::mem::take(&mut batch);
                    in_flight = self.store(batch, phase, count, &mut lost);
                    (count, size) = (0, 0);
                }
            }
        }
        if let Some(query) = query {
            // Claude never named its session: the query is still stored.
            let batch = Ingest {
                events: vec![query],
                ..Default::default()
            };
            if let Some((committed, lines)) = self.store(batch, phase, 0, &mut lost) {
                self.stored((committed.await, lines), &mut lost, pid);
            }
        }
        let exit = loop {
            tokio::select! {
                exit = child.wait() => break exit.ok(),
                Some(command) = self.commands.recv() => {
                    phase = self.command(command, phase, pid).await;
                }
                () = deadline(phase) => phase = kill_after_grace(pid),
            }
        };
        let stderr = match stderr {
            Some(task) => task.await.unwrap_or_default(),
            None => String::new(),
        };
        // Whatever the child left in its group (MCP servers, tools) goes with it.
        process::kill_group(pid);

        let interrupted = matches!(phase, Phase::Interrupting { .. });
        let exit_code = exit.and_then(|s| s.code());
        let error = match &lost {
            Some(lost) => Some(format!(
                "the conversation is incomplete: {} lines of claude's output could not be \
                 stored ({}), so the session was stopped",
                lost.lines, lost.error
            )),
            None => outcome(transcript.result(), interrupted, exit_code, &stderr),
        };
        let update = SessionUpdate {
            completed_at: Some(crate::time::now()),
            error_message: error,
            exit_code,
            interrupted: Some(interrupted),
            ..Default::default()
        };
        let status = self.store_outcome(update).await;
        if let Some(file) = &self.mcp_file {
            let _ = std::fs::remove_file(file);
        }
        self.sessions.forget(&self.session_id);
        let _ = self.done.send(true);
        tracing::info!(
            session = %self.session_id,
            status = %status.as_ref().map_or("unchanged", SessionStatus::as_str),
            exit_code,
            interrupted,
            "session ended"
        );
    }

    /// Stores how the session ended, retrying while the store fails (a full disk may be freed);
    /// gives up only when the store closes at shutdown (the next start-up's sweep fails it).
    async fn store_outcome(&mut self, update: SessionUpdate) -> Option<SessionStatus> {
        let happening = Happening::Exited {
            failed: update.error_message.is_some(),
        };
        let mut pause = RETRY_FIRST;
        loop {
            let (id, up) = (self.session_id.clone(), update.clone());
            let stored = self
                .sessions
                .store
                .write(move |w, out| w.advance(&id, happening, &up, out))
                .await;
            let e = match stored {
                Ok(moved) => return moved,
                Err(StoreError::Closed) => return None,
                Err(e) => e,
            };
            if pause == RETRY_FIRST {
                tracing::error!(session = %self.session_id, error = %e, "cannot store how the session ended; retrying until it is stored");
            }
            let wait = tokio::time::sleep(pause);
            tokio::pin!(wait);
            loop {
                tokio::select! {
                    () = &mut wait => break,
                    Some(command) = self.commands.recv() => {
                        if let Command::Interrupt(reply) = command {
                            let _ = reply.send(Ok(()));
                        }
                    }
                }
            }
            pause = (pause * 2).min(RETRY_MAX);
        }
    }

    /// Adds a line of output to `batch` (a cut line raw, with a marker); returns its length.
    fn apply(&self, transcript: &mut Transcript, line: Line, batch: &mut Ingest) -> usize {
        match line {
            Line::Whole(bytes) => {
                transcript.apply_to(text(&bytes), batch);
                bytes.len()
            }
            Line::Cut { start, dropped } => {
                tracing::warn!(session = %self.session_id, kept = start.len(), dropped, "a line of claude's output was too long; stored cut");
                let mut raw = text(&start).to_owned();
                raw.push_str(&format!("[hld: cut here; {dropped} more bytes dropped]"));
                let size = raw.len();
                batch.raw_lines.push(raw);
                size
            }
        }
    }

    /// Carries out a command; returns the phase after it.
    async fn command(&self, command: Command, phase: Phase, pid: u32) -> Phase {
        match (command, phase) {
            (Command::Interrupt(reply), Phase::Running) => {
                process::interrupt(pid);
                let update = SessionUpdate {
                    interrupted: Some(true),
                    ..Default::default()
                };
                let happening = Happening::InterruptRequested;
                self.sessions
                    .advance(&self.session_id, happening, update)
                    .await;
                let _ = reply.send(Ok(()));
                let grace = self.sessions.config.interrupt_grace;
                Phase::Interrupting {
                    deadline: Some(Instant::now() + grace),
                }
            }
            (Command::Interrupt(reply), Phase::Interrupting { .. }) => {
                let _ = reply.send(Err(cannot_interrupt(SessionStatus::Completing)));
                phase
            }
            (Command::Kill, _) => {
                tracing::warn!(session = %self.session_id, "killing session that outlived the grace period");
                process::kill_group(pid);
                phase
            }
        }
    }

    /// Queues a batch to be stored. Once one could not be stored, the conversation has a hole:
    /// what the agent still prints is counted in `lost`, not stored.
    fn store(
        &self,
        mut batch: Ingest,
        phase: Phase,
        lines: usize,
        lost: &mut Option<Lost>,
    ) -> Option<InFlight> {
        if let Some(lost) = lost {
            lost.lines += lines;
            return None;
        }
        if let Some(update) = batch.update.as_mut() {
            if self.model_requested {
                update.model = None;
            }
            // An interrupt is not an error: Claude's diagnostics about it are not stored as one.
            if matches!(phase, Phase::Interrupting { .. }) {
                update.error_message = None;
            }
        }
        let id = self.session_id.clone();
        let committed = (self.sessions.store).write(move |w, out| w.ingest(&id, batch, out));
        Some((Box::pin(committed), lines))
    }

    /// A batch that could not be stored kills the agent's group: the session ends failed.
    fn stored(&self, (stored, lines): Stored, lost: &mut Option<Lost>, pid: u32) {
        if let Err(e) = stored {
            tracing::error!(session = %self.session_id, error = %e, lines, "cannot store claude output; stopping the session");
            process::kill_group(pid);
            *lost = Some(Lost {
                error: e.to_string(),
                lines,
            });
        }
    }
}

/// A batch queued to the store: its outcome once committed, and how many lines it holds.
type InFlight = (Pin<Box<dyn Future<Output = StoreResult<()>> + Send>>, usize);
type Stored = (StoreResult<()>, usize);

/// Resolves once the batch in flight is stored (and takes it); never if there is none.
async fn stored(in_flight: &mut Option<InFlight>) -> Stored {
    let Some((committed, lines)) = in_flight else {
        return std::future::pending().await;
    };
    let stored = (committed.await, *lines);
    *in_flight = None;
    stored
}

/// The error for an interrupt a session in `status` cannot take.
pub(super) fn cannot_interrupt(status: SessionStatus) -> Error {
    Error::invalid_param(
        "session_id",
        "a running session",
        status.as_str(),
        format!("cannot interrupt session with status {status} (must be running)"),
    )
}

/// Resolves when the grace period of an interrupt runs out; never otherwise.
async fn deadline(phase: Phase) {
    match phase {
        Phase::Interrupting { deadline: Some(at) } => tokio::time::sleep_until(at).await,
        _ => std::future::pending().await,
    }
}

/// The grace period of an interrupt ran out: the whole process group is killed.
fn kill_after_grace(pid: u32) -> Phase {
    tracing::warn!(pid, "claude ignored SIGINT; killing its process group");
    process::kill_group(pid);
    Phase::Interrupting { deadline: None }
}

/// The session's error, if it failed: not on interrupt; else by the `result` line (none: failed).
fn outcome(
    result: Option<&crate::claude::RunResult>,
    interrupted: bool,
    exit_code: Option<i32>,
    stderr: &str,
) -> Option<String> {
    if interrupted {
        return None;
    }
    match result {
        Some(result) => result.error_message(),
        None => {
            let code = exit_code.map_or_else(|| "a signal".to_owned(), |c| format!("code {c}"));
            let mut message = format!("claude exited with {code} before reporting a result");
            let detail = stderr.trim();
            if !detail.is_empty() {
                message.push_str(": ");
                message.push_str(detail);
            }
            Some(message)
        }
    }
}

#[derive(Debug, PartialEq)]
enum Line {
    /// The whole line, without its `\n`.
    Whole(BytesMut),
    /// A line longer than the limit: its first bytes, and how many more were dropped.
    Cut { start: BytesMut, dropped: usize },
}

/// Splits bytes into lines; a line over `max` keeps its first `max` bytes, the rest dropped.
struct LineCodec {
    max: usize,
    /// The start of a line being cut, and the bytes dropped of it so far.
    cutting: Option<(BytesMut, usize)>,
}

impl LineCodec {
    fn new(max: usize) -> LineCodec {
        LineCodec { max, cutting: None }
    }
}

impl Decoder for LineCodec {
    type Item = Line;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> std::io::Result<Option<Line>> {
        let newline = memchr::memchr(b'\n', buf);
        if let Some((_, dropped)) = &mut self.cutting {
            let Some(at) = newline else {
                *dropped += buf.len();
                buf.clear();
                return Ok(None);
            };
            *dropped += at;
            buf.advance(at + 1);
            let (start, dropped) = self.cutting.take().expect("cutting");
            return Ok(Some(Line::Cut { start, dropped }));
        }
        match newline {
            Some(at) if at <= self.max => {
                let line = buf.split_to(at);
                buf.advance(1);
                Ok(Some(Line::Whole(line)))
            }
            _ if buf.len() > self.max => {
                let start = buf.split_to(self.max);
                self.cutting = Some((start, 0));
                self.decode(buf)
            }
            _ => Ok(None),
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> std::io::Result<Option<Line>> {
        if let Some(line) = self.decode(buf)? {
            return Ok(Some(line));
        }
        if let Some((start, dropped)) = self.cutting.take() {
            return Ok(Some(Line::Cut { start, dropped }));
        }
        Ok((!buf.is_empty()).then(|| Line::Whole(buf.split())))
    }
}

/// A line without a trailing `\r`, as text (invalid UTF-8 ends it: the valid part is kept).
fn text(line: &[u8]) -> &str {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match std::str::from_utf8(line) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&line[..e.valid_up_to()]).unwrap_or_default(),
    }
}

/// Keeps the last few KiB of stderr, logging each chunk at debug.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `chunks` to a codec cutting at `max`, then ends the stream.
    fn lines(max: usize, chunks: &[&str]) -> Vec<Line> {
        let mut codec = LineCodec::new(max);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for chunk in chunks {
            buf.extend_from_slice(chunk.as_bytes());
            while let Some(line) = codec.decode(&mut buf).unwrap() {
                out.push(line);
            }
            assert!(buf.len() <= max + chunk.len(), "held {} bytes", buf.len());
        }
        while let Some(line) = codec.decode_eof(&mut buf).unwrap() {
            out.push(line);
        }
        out
    }

    fn whole(s: &str) -> Line {
        Line::Whole(BytesMut::from(s))
    }

    fn cut(s: &str, dropped: usize) -> Line {
        Line::Cut {
            start: BytesMut::from(s),
            dropped,
        }
    }

    #[test]
    fn lines_longer_than_the_limit_are_cut_and_the_rest_dropped_as_it_comes() {
        assert_eq!(
            lines(4, &["ab\nabcd\nabc", "def", "ghij\nxy"]),
            [whole("ab"), whole("abcd"), cut("abcd", 6), whole("xy")]
        );
        assert_eq!(lines(4, &["abcdefgh"]), [cut("abcd", 4)]);
        assert_eq!(lines(4, &["abcde\n", "\n"]), [cut("abcd", 1), whole("")]);
    }
}
