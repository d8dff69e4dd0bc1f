//! One actor per session process: a task that owns the `claude` process and its stdin, stores
//! its stream in batches and takes commands (`turn.rs`: turns, messages, the control channel);
//! `model::transition` decides the status.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use hld_client::protocol::{ApprovalStatus, MessageMode, SessionStatus};
use serde_json::Value;
use tokio::process::{Child, ChildStdin};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::codec::FramedRead;

use super::lines::{stderr_tail, text, Line, LineCodec};
use super::live::Workdir;
use super::requests::Reply;
use super::transcript::Transcript;
use super::Sessions;
use crate::claude::process;
use crate::claude::prompt::Prompt;
use crate::error::{Error, Result};
use crate::model::Happening;
use crate::store::{Ingest, NewEvent, Result as StoreResult, SessionUpdate, StoreError};

/// The most bytes gathered into the next batch while the one before is being stored.
const MAX_BATCH_BYTES: usize = 1 << 20;
/// The first pause before storing a session's outcome again, and the longest.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(5);

/// Where the current turn is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Running,
    /// An interrupt was asked for: the `interrupt` request written (or SIGINT sent, when
    /// `signalled`); at `deadline` the next fallback follows.
    Interrupting {
        signalled: bool,
        /// `None` once the group was killed.
        deadline: Option<Instant>,
    },
}

#[derive(Debug)]
pub(super) enum Command {
    /// Stop the current turn: the `interrupt` control request, then SIGINT, then the group.
    Interrupt(oneshot::Sender<Result<()>>),
    /// A message from `sendMessage`.
    Send {
        prompt: Prompt,
        mode: MessageMode,
        reply: oneshot::Sender<Result<Sent>>,
    },
    /// A control request for `claude`, answered on `reply`.
    Control { request: Value, reply: Reply },
    /// An approval, perhaps one asked over the control channel, was decided.
    Decided {
        approval_id: String,
        status: ApprovalStatus,
        comment: Option<String>,
    },
    /// Close the process if it is between turns (too many warm ones, or its session was
    /// deleted), saying why.
    Close(&'static str),
    /// The daemon shuts down: the turn is interrupted and the process closed.
    Shutdown,
    /// Kill the process group at once (daemon shutdown, after the grace period).
    Kill,
}

/// What became of a message sent to a session's process.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Sent {
    /// Stored; delivered when the turn ends.
    Queued(String),
    /// Written to the process: a turn runs with it.
    Delivered(String),
    /// The process is closing: the session is to be resumed instead.
    Closing,
}

/// The manager's handle on a session's actor.
#[derive(Debug)]
pub(super) struct Handle {
    pub(super) commands: mpsc::UnboundedSender<Command>,
    /// Becomes true once the outcome is stored.
    pub(super) done: watch::Receiver<bool>,
    /// Since when the process is warm between turns; `None` during a turn.
    pub(super) warm_since: Option<Instant>,
    /// Whether it is warm, for those waiting for a turn's end.
    pub(super) warm: watch::Sender<bool>,
}

/// A permission request waiting for a human's decision.
#[derive(Debug)]
pub(super) struct Asked {
    pub(super) approval_id: String,
    pub(super) input: Value,
    /// An `AskUserQuestion`: the answer goes into its input.
    pub(super) question: bool,
}

/// The process's turns, as the actor sees them.
#[derive(Debug)]
pub(super) struct Turns {
    pub(super) stdin: Option<ChildStdin>,
    pub(super) pid: u32,
    /// Messages written whose turn has not reported its `result` yet.
    pub(super) owed: usize,
    /// A turn's end is being stored: messages sent meanwhile are queued.
    pub(super) ending: bool,
    pub(super) phase: Phase,
    /// Until when the process stays warm between turns.
    pub(super) idle_until: Option<Instant>,
    /// A steering message, until its turn has ended: resumed with if the process exits.
    pub(super) steered: Option<Prompt>,
    /// The daemon shuts down: nothing more is delivered; the process closes after the turn.
    pub(super) closing: bool,
    /// Permission requests waiting for a decision, by control request id.
    pub(super) asked: HashMap<String, Asked>,
    /// The daemon's control requests waiting for `claude`'s answer, by request id.
    pub(super) requests: HashMap<String, Reply>,
}

impl Turns {
    /// A process about to read its first message.
    pub(super) fn new() -> Turns {
        Turns {
            stdin: None,
            pid: 0,
            owed: 1,
            ending: false,
            phase: Phase::Running,
            idle_until: None,
            steered: None,
            closing: false,
            asked: HashMap::new(),
            requests: HashMap::new(),
        }
    }
}

/// A session's actor, before it runs.
pub(super) struct Supervisor {
    pub(super) sessions: Arc<Sessions>,
    pub(super) session_id: String,
    /// A launch's prompt, stored as the first user message once Claude names its session
    /// (`None` when resuming: the message is stored already).
    pub(super) query: Option<String>,
    /// Whether the launch named a model: then the one Claude resolves does not replace it.
    pub(super) model_requested: bool,
    /// The private MCP config file, deleted when the process has ended.
    pub(super) mcp_file: Option<PathBuf>,
    /// Where the process runs: no message is delivered once it is gone.
    pub(super) working_dir: Workdir,
    pub(super) commands: mpsc::UnboundedReceiver<Command>,
    pub(super) done: watch::Sender<bool>,
    pub(super) turns: Turns,
    pub(super) transcript: Transcript,
}

/// Output that could not be stored: the conversation is incomplete.
struct Lost {
    error: String,
    lines: usize,
}

impl Supervisor {
    /// Supervises `child`, whose first message is `first`, until it has ended and its outcome
    /// is stored.
    pub(super) async fn run(mut self, mut child: Child, first: Prompt) {
        let pid = child.id().unwrap_or_default();
        self.turns.pid = pid;
        self.turns.stdin = child.stdin.take();
        self.write(&crate::claude::control::user_message(&first))
            .await;
        let stderr = child.stderr.take().map(|s| tokio::spawn(stderr_tail(s)));
        let mut lost = None;
        let mut query = self.query.take().map(|q| NewEvent::message("", "user", q));
        if let Some(stdout) = child.stdout.take() {
            let codec = LineCodec::new(self.sessions.config.max_agent_line);
            let mut lines = FramedRead::new(stdout, codec);
            // The batch being stored, and the next one, gathered meanwhile: its lines and bytes.
            // A batch ends with a turn's `result`, so that the turn ends once it is stored.
            let mut in_flight = None;
            let mut batch = Ingest::default();
            let (mut count, mut size) = (0, 0);
            let mut ended = false;
            let mut controls = Vec::new();
            while !(ended && count == 0 && in_flight.is_none()) {
                let open = !ended && size < MAX_BATCH_BYTES && batch.turn_end.is_none();
                // A stored batch first: a turn's end is then settled before a message sent
                // as it ended is taken (which finds the process warm, not ending).
                tokio::select! {
                    biased;
                    stored = stored(&mut in_flight) => self.stored(stored, &mut lost).await,
                    Some(command) = self.commands.recv() => self.command(command).await,
                    line = lines.next(), if open => match line {
                        Some(Ok(line)) => {
                            if let Some(bytes) = self.apply(line, &mut batch) {
                                size += bytes;
                                count += 1;
                            }
                            for response in self.transcript.take_responses() {
                                self.responded(response);
                            }
                            controls.extend(self.transcript.take_controls());
                            if let Some(result) = self.transcript.take_result() {
                                self.turn_ended(&result, &mut batch);
                            }
                        }
                        _ => ended = true,
                    },
                    () = deadline(self.turns.phase) => self.escalate(),
                    () = idle(self.turns.idle_until) => self.close("its idle window ended"),
                }
                // A control request is served once the lines before it are queued to the
                // store (which commits in order): an approval then finds its tool call.
                let flushed = if !controls.is_empty() && count > 0 {
                    let next = self.next_batch(&mut batch, &mut query);
                    let lines = std::mem::take(&mut count);
                    size = 0;
                    self.store(next, lines, &mut lost)
                } else {
                    None
                };
                for control in std::mem::take(&mut controls) {
                    self.control(control).await;
                }
                if let Some((committed, lines, turn_end)) = flushed {
                    let stored = (committed.await, lines, turn_end);
                    self.stored(stored, &mut lost).await;
                }
                if in_flight.is_none() && count > 0 {
                    let next = self.next_batch(&mut batch, &mut query);
                    in_flight = self.store(next, count, &mut lost);
                    (count, size) = (0, 0);
                }
            }
        }
        self.turns.stdin = None;
        // No answer comes once stdout has ended: the callers learn the process is gone.
        self.turns.requests.clear();
        if let Some(query) = query {
            // Claude never named its session: the query is still stored.
            let batch = Ingest {
                events: vec![query],
                ..Default::default()
            };
            if let Some(in_flight) = self.store(batch, 0, &mut lost) {
                let (committed, lines, _) = in_flight;
                self.stored((committed.await, lines, false), &mut lost)
                    .await;
            }
        }
        let exit = loop {
            tokio::select! {
                exit = child.wait() => break exit.ok(),
                Some(command) = self.commands.recv() => self.command(command).await,
                () = deadline(self.turns.phase) => self.escalate(),
            }
        };
        let stderr = match stderr {
            Some(task) => task.await.unwrap_or_default(),
            None => String::new(),
        };
        // Whatever the child left in its group (MCP servers, tools) goes with it.
        process::kill_group(pid);

        let interrupted = matches!(self.turns.phase, Phase::Interrupting { .. });
        let in_turn = self.turns.owed > 0;
        let exit_code = exit.and_then(|s| s.code());
        let error = match &lost {
            Some(lost) => Some(format!(
                "the conversation is incomplete: {} of claude's output could not be stored \
                 ({}), so the session was stopped",
                hld_client::view::count(lost.lines as u64, "line"),
                lost.error
            )),
            None => outcome(in_turn && !interrupted, exit_code, &stderr),
        };
        let update = SessionUpdate {
            completed_at: in_turn.then(crate::time::now),
            error_message: error,
            exit_code,
            interrupted: (in_turn && interrupted).then_some(true),
            ..Default::default()
        };
        // Gone before the session reads as ended: nothing uses it once the process has.
        if let Some(file) = &self.mcp_file {
            let _ = std::fs::remove_file(file);
        }
        let status = self.store_outcome(update).await;
        self.sessions.forget(&self.session_id);
        let _ = self.done.send(true);
        tracing::info!(
            session = %self.session_id,
            status = %status.as_ref().map_or("unchanged", SessionStatus::as_str),
            exit_code,
            interrupted,
            "session ended"
        );
        if !self.turns.closing && lost.is_none() {
            let steered = self.turns.steered.take().filter(|_| in_turn);
            let sessions = Arc::clone(&self.sessions);
            sessions.after_exit(self.session_id.clone(), steered).await;
        }
    }

    /// Stores how the process ended, retrying while the store fails (a full disk may be freed);
    /// gives up only when the store closes at shutdown (the next start-up's sweep fails it)
    /// or the session is gone.
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
                .write(move |w, out| w.process_ended(&id, happening, &up, out))
                .await;
            let e = match stored {
                Ok(moved) => return moved,
                // Closed at shutdown, or the session was deleted while its process was warm.
                Err(StoreError::Closed | StoreError::SessionNotFound(_)) => return None,
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
                    Some(command) = self.commands.recv() => match command {
                        Command::Interrupt(reply) => { let _ = reply.send(Ok(())); }
                        Command::Send { reply, .. } => { let _ = reply.send(Ok(Sent::Closing)); }
                        _ => {}
                    },
                }
            }
            pause = (pause * 2).min(RETRY_MAX);
        }
    }

    /// The batch gathered so far, taken; the query goes first once Claude named its session.
    fn next_batch(&self, batch: &mut Ingest, query: &mut Option<NewEvent>) -> Ingest {
        if let Some(claude_id) = self.transcript.claude_session_id() {
            if let Some(mut q) = query.take() {
                q.claude_session_id = claude_id.to_owned();
                batch.events.insert(0, q);
            }
        }
        std::mem::take(batch)
    }

    /// Adds a line of output to `batch` (a cut line raw, with a marker); returns its length,
    /// `None` for a line not stored.
    fn apply(&mut self, line: Line, batch: &mut Ingest) -> Option<usize> {
        match line {
            Line::Whole(bytes) => {
                let stored = self.transcript.apply_to(text(&bytes), batch);
                stored.then_some(bytes.len())
            }
            Line::Cut { start, dropped } => {
                tracing::warn!(session = %self.session_id, kept = start.len(), dropped, "a line of claude's output was too long; stored cut");
                let mut raw = text(&start).to_owned();
                raw.push_str(&format!("[hld: cut here; {dropped} more bytes dropped]"));
                let size = raw.len();
                batch.raw_lines.push(raw);
                Some(size)
            }
        }
    }

    /// Queues a batch to be stored. Once one could not be stored, the conversation has a hole:
    /// what the agent still prints is counted in `lost`, not stored.
    fn store(&self, mut batch: Ingest, lines: usize, lost: &mut Option<Lost>) -> Option<InFlight> {
        if let Some(lost) = lost {
            lost.lines += lines;
            return None;
        }
        if let Some(update) = batch.update.as_mut() {
            if self.model_requested {
                update.model = None;
            }
        }
        let turn_end = batch.turn_end.is_some();
        let id = self.session_id.clone();
        let committed = (self.sessions.store).write(move |w, out| w.ingest(&id, batch, out));
        Some((Box::pin(committed), lines, turn_end))
    }

    /// A batch stored ends its turn; one that could not be stored kills the agent's group:
    /// the session ends failed.
    async fn stored(&mut self, (stored, lines, turn_end): Stored, lost: &mut Option<Lost>) {
        match stored {
            Ok(()) if turn_end => self.after_turn().await,
            Ok(()) => {}
            Err(e) => {
                tracing::error!(session = %self.session_id, error = %e, lines, "cannot store claude output; stopping the session");
                process::kill_group(self.turns.pid);
                *lost = Some(Lost {
                    error: e.cause().map_or_else(|| e.to_string(), str::to_owned),
                    lines,
                });
            }
        }
    }
}

/// A batch queued to the store: its outcome once committed, how many lines it holds, and
/// whether it ends a turn.
type InFlight = (
    Pin<Box<dyn Future<Output = StoreResult<()>> + Send>>,
    usize,
    bool,
);
type Stored = (StoreResult<()>, usize, bool);

/// Resolves once the batch in flight is stored (and takes it); never if there is none.
async fn stored(in_flight: &mut Option<InFlight>) -> Stored {
    let Some((committed, lines, turn_end)) = in_flight else {
        return std::future::pending().await;
    };
    let stored = (committed.await, *lines, *turn_end);
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

/// Resolves when an interrupt's current fallback runs out of time; never otherwise.
async fn deadline(phase: Phase) {
    match phase {
        Phase::Interrupting {
            deadline: Some(at), ..
        } => tokio::time::sleep_until(at).await,
        _ => std::future::pending().await,
    }
}

/// Resolves when the idle window between turns ends; never during a turn.
async fn idle(until: Option<Instant>) {
    match until {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The error of a process that ended during a turn that was not interrupted: it never
/// reported the turn's `result`. A process closed between turns, or interrupted, did not fail.
fn outcome(failed_turn: bool, exit_code: Option<i32>, stderr: &str) -> Option<String> {
    if !failed_turn {
        return None;
    }
    let code = exit_code.map_or_else(|| "a signal".to_owned(), |c| format!("code {c}"));
    let mut message = format!("claude exited with {code} before reporting a result");
    let detail = stderr.trim();
    if !detail.is_empty() {
        message.push_str(": ");
        message.push_str(detail);
    }
    Some(message)
}
