//! The prompt between a conversation's turns, and a daemon lost. The prompt follows the
//! session still: a turn another front end starts (`hlyr send`, hld-tui's reply) is followed
//! as it happens, its message and its end included, the line being typed kept beside the
//! spinner and on the prompt drawn after it. The session's events are watched on a
//! subscription of their own, opened at the prompt; a turn that began before it was opened is
//! found by reading the store once.
//!
//! A daemon lost while a conversation is held is waited for at the prompt ([`Turns::lost`]),
//! which connects again by itself once it is back ([`Turns::back`]) or when a line is sent;
//! otherwise it is waited out ([`Turns::resume`]). A turn the loss cut short is told how it
//! ended once the daemon is back, before the next line goes to it: what became of the
//! approvals it left waiting, and its end (a daemon that restarted failed it).

use futures::StreamExt;
use hld_client::protocol::{
    ApprovalStatus, ConversationEvent, ConversationEventType, Event, EventType,
    GetConversationParams, SubscribeParams,
};
use hld_client::{Client, Follow, FollowItem, SubscribeOptions, SubscriptionItem};

use hld_client::mode::Mode;

use tokio::signal::unix::Signal;

use super::turns::{ring_waiting, Turns};
use super::{Follower, OnCtrlC};
use crate::error::{CliError, Exit};
use crate::output::Update;
use crate::reconnect::Reconnect;

/// What a conversation that lost its daemon says it waits for.
const LOST_HINT: &str = "once the daemon is back, the conversation connects again and goes on \
with the session; Ctrl-D ends";

/// How many of the events stored since the last turn are read for a message that started
/// another: the settings changed between turns store a few.
const NEWER: i64 = 50;

/// Whether `event` is a user's message, which starts a turn (unlike a notice, such as the
/// one a model switched at the prompt stores).
fn is_message(event: &ConversationEvent) -> bool {
    event.event_type == ConversationEventType::Message && event.role.as_deref() == Some("user")
}

impl Turns {
    /// Whether the prompt is up after a turn whose end was told, with nothing watching the
    /// session yet.
    pub(super) fn unwatched(&self, follower: &Follower<'_>) -> bool {
        self.follow.is_none()
            && self.watch.is_none()
            && matches!(self.told, Some(exit) if exit != Exit::Unreachable)
            && follower.holds_keys()
    }

    /// Watches the session from the prompt; follows at once a turn begun since the last one
    /// ended.
    pub(super) async fn watch(&mut self, follower: &mut Follower<'_>) -> Result<(), CliError> {
        let types = [
            EventType::SessionStatusChanged,
            EventType::ConversationUpdated,
        ];
        let params = SubscribeParams::types(types).session(follower.session_id);
        let client = &follower.client;
        self.watch = Some(
            client
                .subscribe(params, SubscribeOptions::default())
                .await?,
        );
        let state = client.get_session_state(follower.session_id).await?;
        let newer = client
            .get_conversation(GetConversationParams {
                session_id: Some(follower.session_id.to_owned()),
                after_sequence: self.last_sequence,
                limit: Some(NEWER),
                ..Default::default()
            })
            .await?;
        if state.status.is_active() || newer.iter().any(is_message) {
            self.follow_next(follower).await?;
        }
        Ok(())
    }

    /// Takes in what the watch saw: a turn starting is followed; the watch ending is the
    /// daemon lost.
    pub(super) async fn watched(
        &mut self,
        follower: &mut Follower<'_>,
        item: Option<Result<SubscriptionItem, hld_client::Error>>,
    ) -> Result<(), CliError> {
        match item {
            Some(Ok(SubscriptionItem::Event(timed))) => {
                let starts = match &timed.event {
                    Event::SessionStatusChanged { new_status, .. } => new_status.is_active(),
                    Event::ConversationUpdated { event, .. } => is_message(event),
                    _ => false,
                };
                if starts {
                    self.follow_next(follower).await?;
                }
            }
            Some(Ok(_)) => {}
            Some(Err(_)) | None => {
                let lost = super::lost_daemon(follower.session_id);
                self.lost(follower, lost);
            }
        }
        Ok(())
    }

    /// Follows the session's next turn from where the last follow got to: the prompt gives
    /// way to it, and the line typed waits beside the spinner.
    pub(super) async fn follow_next(
        &mut self,
        follower: &mut Follower<'_>,
    ) -> Result<(), CliError> {
        self.watch = None;
        self.erase_prompt();
        let follow = follower
            .client
            .follow_after(follower.session_id, self.last_sequence)
            .await?;
        // Changed elsewhere between turns, the mode is told as the turn starts.
        follower.mode_now(Mode::of(&follow.initial_state().control));
        self.follow = Some(follow);
        ring_waiting(follower).await?;
        // The next turn's end is told, even when it ended before following began.
        self.told = None;
        follower.next_turn();
        Ok(())
    }

    /// With the daemon back after a loss, tells how the turn it cut short ended, unless the
    /// session went on: the rest of what it stored, the approvals it left waiting, its end.
    pub(super) async fn tell_lost_end(
        &mut self,
        follower: &mut Follower<'_>,
    ) -> Result<(), CliError> {
        let follow = self.cut_follow(follower).await?;
        self.tell_cut_end(follower, follow).await
    }

    /// The session followed from where the loss cut its turn short.
    async fn cut_follow(&self, follower: &Follower<'_>) -> Result<Follow, CliError> {
        let client = &follower.client;
        Ok(client
            .follow_after(follower.session_id, self.last_sequence)
            .await?)
    }

    /// [`Self::tell_lost_end`], `follow` going on from where the turn was cut.
    async fn tell_cut_end(
        &mut self,
        follower: &mut Follower<'_>,
        mut follow: Follow,
    ) -> Result<(), CliError> {
        let client = follower.client.clone();
        self.cut = false;
        if follow.initial_state().status.is_active() {
            return Ok(());
        }
        self.erase_prompt();
        while let Some(item) = follow.next().await {
            let state = match item? {
                FollowItem::Ended(state) => state,
                item => {
                    follower.item(item);
                    follower.flush()?;
                    continue;
                }
            };
            self.last_sequence = follow.last_sequence();
            let waiting: Vec<String> = follower.waiting.iter().map(|(id, _)| id.clone()).collect();
            for id in waiting {
                let approval = client.get_approval(&id).await?;
                if approval.status != ApprovalStatus::Pending {
                    follower.decided(Update::Decision {
                        approval_id: approval.id,
                        decision: approval.status,
                        comment: approval.comment,
                        decided_by: approval.decided_by,
                    });
                }
            }
            self.told = Some(follower.finish(*state, None)?);
            break;
        }
        Ok(())
    }
    /// Whether the prompt waits for a daemon lost, whose return it watches for.
    pub(super) fn waits_for_daemon(&self, follower: &Follower<'_>) -> bool {
        self.follow.is_none() && self.told == Some(Exit::Unreachable) && follower.holds_keys()
    }

    /// The daemon back while the prompt waited for it. What the prompt needs of it is read
    /// before its return is said, so that a daemon that closes the connection at once is waited
    /// for on the same backoff, unsaid. Then a turn the loss cut short is told how it ended,
    /// and the prompt watches the session again (a turn started meanwhile is followed).
    pub(super) async fn back(
        &mut self,
        follower: &mut Follower<'_>,
        client: Client,
        reconnect: &mut Reconnect,
    ) -> Result<(), CliError> {
        follower.client = client;
        let cut = if self.cut {
            match self.cut_follow(follower).await {
                Err(e) if e.exit == Exit::Unreachable => return Ok(()),
                follow => Some(follow?),
            }
        } else {
            self.told = Some(Exit::Ok);
            match self.watch(follower).await {
                Err(e) if e.exit == Exit::Unreachable => {
                    self.watch = None;
                    self.told = Some(Exit::Unreachable);
                    return Ok(());
                }
                watched => watched?,
            }
            None
        };
        if self.follow.is_none() {
            self.erase_prompt();
        }
        reconnect.resumed();
        if let Some(follow) = cut {
            match self.tell_cut_end(follower, follow).await {
                // Lost again after its return was said: said again, and waited for anew.
                Err(e) if e.exit == Exit::Unreachable => {
                    self.lost(follower, e);
                    *reconnect = Reconnect::new(follower.client.address()).said();
                    return Ok(());
                }
                told => told?,
            }
            if self.told == Some(Exit::Unreachable) {
                self.told = Some(Exit::Ok);
            }
        }
        if self.follow.is_none() {
            self.prompt(false, follower.mode);
        }
        Ok(())
    }

    /// The daemon's connection was lost, while the agent worked or at the prompt: the
    /// conversation waits at the prompt, where the next line sent connects again and goes on
    /// with the session (which a daemon that restarted has ended).
    pub(super) fn lost(&mut self, follower: &mut Follower<'_>, e: CliError) {
        self.watch = None;
        let working = match self.follow.take() {
            Some(follow) => {
                self.last_sequence = follow.last_sequence();
                follower.end();
                // Nothing can be decided without the daemon: its return tells what became of
                // the approvals asked (see `tell_lost_end`).
                if let Some(prompter) = follower.prompter.as_mut() {
                    prompter.give_up();
                }
                true
            }
            None => {
                self.erase_prompt();
                false
            }
        };
        self.cut = working;
        CliError {
            hint: Some(LOST_HINT.to_owned()),
            ..e
        }
        .print();
        self.told = Some(Exit::Unreachable);
        self.prompt(working, follower.mode);
    }

    /// The daemon's connection was lost while following, with no conversation holding the
    /// keys: waits for the daemon ([`Reconnect`]), then follows on from the last conversation
    /// event taken in, so that nothing is told twice nor skipped (a session the restarted
    /// daemon ended comes with its end). Ctrl-C meanwhile stops following at once (there is no
    /// daemon to interrupt the session through); returns its exit code then.
    pub(super) async fn resume(
        &mut self,
        follower: &mut Follower<'_>,
        sigint: &mut Signal,
        lost: CliError,
        on_ctrl_c: OnCtrlC,
    ) -> Result<Option<Exit>, CliError> {
        let after = self.follow.take().and_then(|f| f.last_sequence());
        if let Some(prompter) = follower.prompter.as_mut() {
            prompter.interrupt();
        }
        follower.activity.hide();
        if std::mem::take(&mut follower.retrying) {
            follower.out.end_line()?;
        }
        let on_ctrl_c = match on_ctrl_c {
            OnCtrlC::StopWatching => OnCtrlC::StopWatching,
            OnCtrlC::Interrupt | OnCtrlC::Detach => OnCtrlC::Detach,
        };
        let mut reconnect = Reconnect::new(follower.client.address());
        let mut why = lost.message;
        loop {
            let client = tokio::select! {
                client = reconnect.connect(&why) => client,
                _ = sigint.recv() => return Ok(follower.ctrl_c(on_ctrl_c).await),
            };
            match client.follow_after(follower.session_id, after).await {
                Ok(follow) => {
                    reconnect.resumed();
                    follower.client = client;
                    self.follow = Some(follow);
                    return Ok(None);
                }
                Err(e) if e.is_lost() => why = CliError::from(e).message,
                Err(e) => return Err(e.into()),
            }
        }
    }
}
