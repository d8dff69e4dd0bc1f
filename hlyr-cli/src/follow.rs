//! Following a session live, for `launch`, `continue` and `conversation --follow`.
//!
//! The subscription is opened before anything is read, so nothing falls in a gap: then the
//! session's state and stored conversation are read and printed, and the stream takes over.
//! Conversation events and approvals are deduplicated by id (the history and the stream may
//! overlap).

use std::collections::HashSet;

use futures::StreamExt;
use hld_client::protocol::{
    Approval, Event, GetConversationParams, SessionStatus, SubscribeParams,
};
use hld_client::{Client, SubscribeOptions, SubscriptionItem};
use tokio::signal::unix::{signal, SignalKind};

use crate::error::{CliError, Exit};
use crate::output::{paint, short_id, Printer, Update, DIM};
use crate::prompt::Prompter;

/// Prints `session_id`'s conversation so far, then follows it until it ends. Returns
/// [`Exit::Ok`] when it completed (or was interrupted), [`Exit::Failure`] when it failed, and
/// [`Exit::Detached`] on Ctrl-C.
pub async fn follow(client: &Client, out: Printer, session_id: &str) -> Result<Exit, CliError> {
    following(client, out, session_id)
        .await
        .map_err(|e| match e.exit {
            Exit::Unreachable => lost_daemon(session_id),
            _ => e,
        })
}

async fn following(client: &Client, out: Printer, session_id: &str) -> Result<Exit, CliError> {
    // Listening from the start: Ctrl-C must detach, never kill, once following has begun.
    let mut sigint = signal(SignalKind::interrupt())
        .map_err(|e| CliError::failure(format!("cannot listen for Ctrl-C: {e}")))?;
    let mut events = client
        .subscribe(
            SubscribeParams {
                session_id: Some(session_id.to_owned()),
                ..Default::default()
            },
            SubscribeOptions::default(),
        )
        .await?;
    let mut follower = Follower {
        client,
        out,
        session_id,
        seen: HashSet::new(),
        approvals: HashSet::new(),
        prompter: Prompter::on_terminal(),
    };
    let state = client.get_session_state(session_id).await?;
    follower.catch_up().await?;
    if !state.status.is_active() {
        return follower.finish().await;
    }
    follower.pending_approvals().await?;

    loop {
        if let Some(prompter) = follower.prompter.as_mut() {
            prompter.resume();
        }
        let asking = follower.prompter.as_ref().is_some_and(Prompter::asking);
        tokio::select! {
            item = events.next() => match item {
                Some(Ok(SubscriptionItem::Event(timed))) => {
                    if follower.event(timed.event).await? {
                        return follower.finish().await;
                    }
                }
                Some(Ok(SubscriptionItem::Reconnected { .. })) => {}
                Some(Err(e)) => return Err(e.into()),
                None => return Err(lost_daemon(session_id)),
            },
            line = async { follower.prompter.as_mut()?.line().await }, if asking => {
                if let Some(line) = line {
                    follower.answer(&line).await;
                }
            }
            _ = sigint.recv() => {
                if let Some(prompter) = follower.prompter.as_mut() {
                    prompter.interrupt();
                }
                let note = format!(
                    "stopped following; the session keeps running (stop it with `hlyr interrupt {}`)",
                    short_id(session_id)
                );
                anstream::eprintln!("{}", paint(DIM, note));
                return Ok(Exit::Detached);
            }
        }
    }
}

fn lost_daemon(session_id: &str) -> CliError {
    CliError::unreachable("lost the connection to the daemon").hint(format!(
        "once it is back, follow again with `hlyr conversation {} --follow`",
        short_id(session_id)
    ))
}

struct Follower<'a> {
    client: &'a Client,
    out: Printer,
    session_id: &'a str,
    /// Conversation event ids already printed.
    seen: HashSet<i64>,
    /// Approval ids already printed.
    approvals: HashSet<String>,
    /// Asks approvals on the terminal; `None` when stdin is not one.
    prompter: Option<Prompter>,
}

impl Follower<'_> {
    /// Prints below any prompt on screen (the loop asks again afterwards).
    fn print(&mut self, update: &Update) -> Result<(), CliError> {
        let text = self.out.render(update)?;
        if text.is_empty() {
            return Ok(());
        }
        if let Some(prompter) = self.prompter.as_mut() {
            prompter.interrupt();
        }
        self.out.line(&text)
    }

    /// Handles one event; returns whether the session ended.
    async fn event(&mut self, event: Event) -> Result<bool, CliError> {
        match event {
            Event::ConversationUpdated { event, .. } => {
                if self.seen.insert(event.id) {
                    self.print(&Update::Event(*event))?;
                }
            }
            Event::SessionStatusChanged {
                session_id,
                old_status,
                new_status,
                error,
                ..
            } => {
                self.print(&Update::Status {
                    session_id,
                    old_status,
                    new_status,
                    error,
                })?;
                return Ok(!new_status.is_active());
            }
            Event::NewApproval { approval, .. } => self.approval_requested(*approval)?,
            Event::ApprovalResolved {
                approval_id,
                decision,
                comment,
                ..
            } => {
                if let Some(prompter) = self.prompter.as_mut() {
                    prompter.forget(&approval_id);
                }
                self.print(&Update::Decision {
                    approval_id,
                    decision,
                    comment,
                })?;
            }
            Event::Lagged { .. } => {
                // Events were dropped for us: the store has everything that matters.
                self.catch_up().await?;
                self.pending_approvals().await?;
                let state = self.client.get_session_state(self.session_id).await?;
                return Ok(!state.status.is_active());
            }
        }
        Ok(false)
    }

    fn approval_requested(&mut self, approval: Approval) -> Result<(), CliError> {
        if !self.approvals.insert(approval.id.clone()) {
            return Ok(());
        }
        self.print(&Update::Approval(approval.clone()))?;
        if let Some(prompter) = self.prompter.as_mut() {
            prompter.ask(approval);
        }
        Ok(())
    }

    /// Sends the decision a typed line completed; a refused decision is reported, not fatal.
    async fn answer(&mut self, line: &str) {
        let Some(prompter) = self.prompter.as_mut() else {
            return;
        };
        if let Some((approval, decision, comment)) = prompter.answer(line) {
            let params = decision.params(&approval.id, comment);
            let sent = self.client.send_decision(params).await;
            if let Err(e) = sent
                .map_err(CliError::from)
                .and_then(|result| decision.outcome(&approval.id, result))
            {
                e.print();
            }
        }
    }

    /// Prints (and asks) the session's pending approvals not printed yet.
    async fn pending_approvals(&mut self) -> Result<(), CliError> {
        for approval in self.client.fetch_approvals(Some(self.session_id)).await? {
            self.approval_requested(approval)?;
        }
        Ok(())
    }

    /// Prints the stored conversation events not printed yet.
    async fn catch_up(&mut self) -> Result<(), CliError> {
        let events = self
            .client
            .get_conversation(GetConversationParams {
                session_id: Some(self.session_id.to_owned()),
                ..Default::default()
            })
            .await?;
        for event in events {
            if self.seen.insert(event.id) {
                self.print(&Update::Event(event))?;
            }
        }
        Ok(())
    }

    /// Prints what is left of the conversation and the outcome.
    async fn finish(mut self) -> Result<Exit, CliError> {
        self.catch_up().await?;
        let state = self.client.get_session_state(self.session_id).await?;
        let exit = match state.status {
            SessionStatus::Failed => Exit::Failure,
            _ => Exit::Ok,
        };
        self.print(&Update::Finished(state))?;
        Ok(exit)
    }
}
