//! A live process's turns: messages written on its stdin (queued while a turn runs), a turn's
//! end, interrupts and their fallbacks, the idle window, and permission requests answered on
//! the control channel once a human (or a rule) decided.

use hld_client::protocol::{ApprovalStatus, MessageMode, SessionStatus};
use tokio::io::AsyncWriteExt;
use tokio::time::Instant;

use super::supervisor::{cannot_interrupt, Asked, Command, Phase, Sent, Supervisor};
use crate::approval::DEFAULT_DENIAL;
use crate::claude::control::{self, CanUseTool, Control, ControlRequest, Request};
use crate::claude::prompt::Prompt;
use crate::claude::{process, RunResult};
use crate::error::{Error, Result};
use crate::model::Happening;
use crate::store::messages::Outgoing;
use crate::store::{Ingest, NewApproval, SessionUpdate, TurnEnd};

/// The comment on an approval whose request `claude` withdrew: its turn was interrupted.
const WITHDRAWN: &str = crate::model::SESSION_ENDED;

impl Supervisor {
    /// Writes `line` on the process's stdin; false when it is closed or broken.
    pub(super) async fn write(&mut self, line: &str) -> bool {
        let Some(stdin) = self.turns.stdin.as_mut() else {
            return false;
        };
        match stdin.write_all(line.as_bytes()).await {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(session = %self.session_id, error = %e, "cannot write to claude's stdin");
                self.turns.stdin = None;
                false
            }
        }
    }

    pub(super) async fn command(&mut self, command: Command) {
        match command {
            Command::Interrupt(reply) => {
                let _ = reply.send(self.interrupt().await);
            }
            Command::Send {
                prompt,
                mode,
                reply,
            } => {
                let _ = reply.send(self.send(prompt, mode).await);
            }
            Command::Control { request, reply } => self.request(request, reply).await,
            Command::Decided {
                approval_id,
                status,
                comment,
            } => self.decided(&approval_id, status, comment).await,
            Command::Close(why) => {
                if self.turns.idle_until.is_some() {
                    self.close(why);
                }
            }
            Command::Shutdown => {
                self.turns.closing = true;
                match self.turns.owed {
                    0 if !self.turns.ending => self.close("the daemon shuts down"),
                    0 => {}
                    _ => {
                        let _ = self.interrupt().await;
                    }
                }
            }
            Command::Kill => {
                tracing::warn!(session = %self.session_id, "killing session that outlived the grace period");
                process::kill_group(self.turns.pid);
            }
        }
    }

    /// A message: queued while a turn runs (a steer interrupts it and goes in at once),
    /// else delivered as the next turn.
    async fn send(&mut self, prompt: Prompt, mode: MessageMode) -> Result<Sent> {
        if self.turns.stdin.is_none() || self.turns.closing {
            return Ok(Sent::Closing);
        }
        let busy = self.turns.owed > 0 || self.turns.ending;
        if !busy && self.working_dir.gone().is_some() {
            // A session resumed in the directory made again, if it is, takes the message.
            self.close("its working directory was removed");
            return Ok(Sent::Closing);
        }
        let (text, images) = (prompt.text.clone(), prompt.paths());
        if busy && mode != MessageMode::Steer {
            let id = self.session_id.clone();
            let queued = (self.sessions.store)
                .write(move |w, out| {
                    let (text, images) = (&text, &images);
                    w.queue_message(&id, Outgoing { text, images, mode }, out)
                })
                .await
                .map_err(|e| Error::internal("failed to queue the message", e))?;
            return Ok(Sent::Queued(queued.id));
        }
        let (id, claude_id) = (self.session_id.clone(), self.claude_id());
        // Queued to the store now, committed in order: before anything the agent answers.
        // The agent does not wait for the commit.
        let delivered = (self.sessions.store).write(move |w, out| {
            let (text, images) = (&text, &images);
            w.deliver(&id, Outgoing { text, images, mode }, &claude_id, out)
        });
        if self.turns.owed > 0 {
            if self.turns.phase == Phase::Running {
                self.start_interrupt().await;
            }
            self.turns.steered = Some(prompt.clone());
        }
        self.hand_over(&prompt).await;
        let delivered = delivered
            .await
            .map_err(|e| Error::internal("failed to store the delivered message", e))?;
        Ok(Sent::Delivered(delivered.id))
    }

    /// Writes a delivered message: a turn runs with it.
    async fn hand_over(&mut self, prompt: &Prompt) {
        self.turns.owed += 1;
        self.turns.idle_until = None;
        self.sessions.set_warm(&self.session_id, false);
        self.write(&control::user_message(prompt)).await;
    }

    fn claude_id(&self) -> String {
        self.transcript
            .claude_session_id()
            .unwrap_or_default()
            .to_owned()
    }

    async fn interrupt(&mut self) -> Result<()> {
        match self.turns.phase {
            _ if self.turns.owed == 0 => Err(cannot_interrupt(SessionStatus::Completed)),
            Phase::Interrupting { .. } => Err(cannot_interrupt(SessionStatus::Completing)),
            Phase::Running => {
                self.start_interrupt().await;
                Ok(())
            }
        }
    }

    /// Asks `claude` to stop its turn (SIGINT if its stdin is gone); status `completing`.
    async fn start_interrupt(&mut self) {
        let request = control::interrupt(&uuid::Uuid::new_v4().to_string());
        let signalled = !self.write(&request).await;
        if signalled {
            process::interrupt(self.turns.pid);
        }
        let grace = self.sessions.config.interrupt_grace;
        self.turns.phase = Phase::Interrupting {
            signalled,
            // The control request gets half the grace before SIGINT follows.
            deadline: Some(Instant::now() + if signalled { grace } else { grace / 2 }),
        };
        let update = SessionUpdate {
            interrupted: Some(true),
            ..Default::default()
        };
        let happening = Happening::InterruptRequested;
        self.sessions
            .advance(&self.session_id, happening, update)
            .await;
    }

    /// The interrupt's time ran out: SIGINT after the control request, then the whole group.
    pub(super) fn escalate(&mut self) {
        let grace = self.sessions.config.interrupt_grace;
        self.turns.phase = match self.turns.phase {
            Phase::Interrupting {
                signalled: false, ..
            } => {
                tracing::warn!(session = %self.session_id, "claude ignored the interrupt request; sending SIGINT");
                process::interrupt(self.turns.pid);
                Phase::Interrupting {
                    signalled: true,
                    deadline: Some(Instant::now() + grace),
                }
            }
            Phase::Interrupting { .. } => {
                tracing::warn!(session = %self.session_id, "claude ignored SIGINT; killing its process group");
                process::kill_group(self.turns.pid);
                Phase::Interrupting {
                    signalled: true,
                    deadline: None,
                }
            }
            phase => phase,
        };
    }

    /// Closes the process's stdin: it exits, and the session is no longer live.
    pub(super) fn close(&mut self, why: &str) {
        if self.turns.stdin.take().is_some() {
            tracing::info!(session = %self.session_id, "closing the session's process: {why}");
        }
        self.turns.idle_until = None;
    }

    /// A `result` ended a turn: the batch ending with it ends the turn when stored.
    pub(super) fn turn_ended(&mut self, result: &RunResult, batch: &mut Ingest) {
        self.turns.owed = self.turns.owed.saturating_sub(1);
        let interrupted = matches!(self.turns.phase, Phase::Interrupting { .. });
        let mut error = result.error_message();
        let mut usage_limit = self.transcript.take_usage_limit();
        if interrupted {
            // An interrupt is not an error: Claude's diagnostics about it are not stored as one.
            self.turns.phase = Phase::Running;
            error = None;
            usage_limit = None;
            if let Some(update) = batch.update.as_mut() {
                update.error_message = None;
            }
        }
        if self.turns.owed == 0 {
            self.turns.steered = None;
        }
        let status = if error.is_some() {
            "failed"
        } else {
            "completed"
        };
        tracing::info!(session = %self.session_id, status = %status, interrupted, "turn ended");
        if let Some(limit) = &usage_limit {
            let resets_at = limit.resets_at.as_deref().unwrap_or("unknown");
            tracing::info!(session = %self.session_id, kind = %limit.kind.as_str(), %resets_at, "the turn hit a usage limit");
        }
        let idle = self.sessions.config.live_idle;
        let live_until = (self.turns.owed == 0).then(|| crate::time::after(idle));
        batch.turn_end = Some(TurnEnd {
            error,
            live_until,
            usage_limit,
        });
        self.turns.ending = true;
    }

    /// A turn's end is stored: the oldest queued message starts the next turn, else the
    /// process stays warm for the idle window (closed at once when the daemon shuts down).
    pub(super) async fn after_turn(&mut self) {
        self.turns.ending = false;
        if self.turns.owed > 0 {
            return;
        }
        if self.turns.closing {
            self.close("the daemon shuts down");
            return;
        }
        if let Some(gone) = self.working_dir.gone() {
            self.sessions.give_up(&self.session_id, &gone).await;
            self.close("its working directory was removed");
            return;
        }
        let (id, claude_id) = (self.session_id.clone(), self.claude_id());
        let next = (self.sessions.store)
            .write(move |w, out| w.deliver_next(&id, &claude_id, out))
            .await;
        match next {
            Ok(Some(message)) => {
                let prompt = super::live::stored_prompt(&self.session_id, message).await;
                return self.hand_over(&prompt).await;
            }
            Ok(None) => {}
            Err(e) => {
                tracing::error!(session = %self.session_id, error = %e, "cannot deliver the next queued message")
            }
        }
        self.turns.idle_until = Some(Instant::now() + self.sessions.config.live_idle);
        self.sessions.set_warm(&self.session_id, true);
    }

    /// A control line from `claude`.
    pub(super) async fn control(&mut self, control: Control) {
        match control {
            Control::Request(ControlRequest {
                request_id,
                request: Request::CanUseTool(ask),
            }) => self.can_use_tool(request_id, ask).await,
            Control::Request(ControlRequest { request_id, .. }) => {
                tracing::debug!(session = %self.session_id, request = %request_id, "control request not served");
            }
            Control::Cancel(cancel) => {
                let Some(asked) = self.turns.asked.remove(&cancel.request_id) else {
                    return;
                };
                let id = asked.approval_id;
                let resolved = ApprovalStatus::Resolved;
                let withdraw = move |w: &mut crate::store::Writer, out: &mut Vec<_>| {
                    w.decide_approval(&id, resolved, Some(WITHDRAWN), None, out)
                };
                if let Err(e) = self.sessions.store.write(withdraw).await {
                    tracing::debug!(session = %self.session_id, error = %e, "withdrawn approval not resolved");
                }
            }
        }
    }

    /// A permission request becomes an approval (a question for `AskUserQuestion`), stored by
    /// the rules of every approval; answered at once when a rule decided it.
    async fn can_use_tool(&mut self, request_id: String, ask: CanUseTool) {
        let id = format!("local-{}", uuid::Uuid::new_v4());
        let question = ask.tool_name == control::ASK_USER_QUESTION;
        let new = if question {
            let message = control::questions(&ask.input);
            // The tool's input goes with it: each question's choices, for the front ends.
            NewApproval {
                tool_use_id: ask.tool_use_id.clone(),
                tool_input: Some(ask.input.clone()),
                ..NewApproval::human_contact(&id, &self.session_id, &message)
            }
        } else {
            let (name, input, tool_use) = (&ask.tool_name, ask.input.clone(), &ask.tool_use_id);
            NewApproval::function_call(&id, &self.session_id, name, input, tool_use.as_deref())
        };
        let created = (self.sessions.store)
            .write(move |w, out| w.create_approval(&new, out))
            .await;
        let asked = Asked {
            approval_id: id,
            input: ask.input,
            question,
        };
        match created {
            Ok(approval) if approval.status == ApprovalStatus::Pending => {
                self.turns.asked.insert(request_id, asked);
            }
            Ok(approval) => {
                let comment = approval.comment;
                self.answer(&request_id, &asked, approval.status, comment)
                    .await
            }
            Err(e) => {
                tracing::error!(session = %self.session_id, error = %e, "cannot store a permission request");
                let reason = format!("Denied: the daemon could not store the request ({e})");
                self.write(&control::deny(&request_id, &reason)).await;
            }
        }
    }

    /// An approval was decided: its permission request, if it is this process's, is answered.
    async fn decided(
        &mut self,
        approval_id: &str,
        status: ApprovalStatus,
        comment: Option<String>,
    ) {
        let Some(request_id) = self
            .turns
            .asked
            .iter()
            .find(|(_, a)| a.approval_id == approval_id)
            .map(|(r, _)| r.clone())
        else {
            return;
        };
        let asked = self.turns.asked.remove(&request_id).expect("found above");
        self.answer(&request_id, &asked, status, comment).await;
    }

    /// Writes the answer to a permission request: allow (a question with its answer in the
    /// input), or deny with the reviewer's comment. A resolution needs none: its turn ended.
    async fn answer(
        &mut self,
        request_id: &str,
        asked: &Asked,
        status: ApprovalStatus,
        comment: Option<String>,
    ) {
        let comment = comment.filter(|c| !c.trim().is_empty());
        let line = match status {
            ApprovalStatus::Approved => control::allow(request_id, &asked.input),
            ApprovalStatus::Responded if asked.question => {
                let answer = comment.unwrap_or_default();
                control::allow(request_id, &control::answered(&asked.input, &answer))
            }
            ApprovalStatus::Resolved => return,
            _ => control::deny(request_id, comment.as_deref().unwrap_or(DEFAULT_DENIAL)),
        };
        self.write(&line).await;
    }
}
