//! Following a session: one stream of everything that happens to it, from its first
//! conversation event to its end, each thing once.
//!
//! # A guide to following a session
//!
//! [`Client::follow`](crate::Client::follow) takes a session id;
//! [`Client::launch_and_follow`](crate::Client::launch_and_follow) launches one first. Both
//! return a [`Follow`]: a `Stream` of [`FollowItem`]s that says what each item is.
//!
//! ```no_run
//! use futures::StreamExt;
//! use hld_client::protocol::{LaunchSessionParams, SessionStatus};
//! use hld_client::{Client, FollowItem};
//!
//! # async fn demo() -> Result<(), hld_client::Error> {
//! let client = Client::connect_default().await?;
//! let mut follow = client
//!     .launch_and_follow(LaunchSessionParams {
//!         query: "Fix the failing test in src/lib.rs".into(),
//!         ..Default::default()
//!     })
//!     .await?;
//! println!("following {}", follow.session_id());
//! while let Some(item) = follow.next().await {
//!     match item? {
//!         FollowItem::Conversation(event) => {
//!             println!("{}", event.content.as_deref().unwrap_or_default())
//!         }
//!         FollowItem::ApprovalRequested(approval) => {
//!             // Decide it here, or leave it to a person elsewhere.
//!             client.approve(&approval.id).await?;
//!         }
//!         FollowItem::Ended(state) if state.status == SessionStatus::Failed => {
//!             eprintln!("failed: {:?}", state.error_message)
//!         }
//!         other => println!("{other:?}"),
//!     }
//! }
//! # Ok(())
//! # }
//! ```
//!
//! ## What comes, in what order
//!
//! 1. The stored conversation, oldest first, as [`FollowItem::Conversation`]. For a
//!    continuation this starts with the sessions it continues, as `getConversation` gives it.
//! 2. The session's pending approvals, as [`FollowItem::ApprovalRequested`].
//! 3. Then, live, whatever happens: new conversation events, tool calls that changed
//!    ([`FollowItem::ConversationChanged`]: linked to their approval, then to its decision),
//!    status changes, approvals asked and decided, settings changed, messages sent into the
//!    session queued and delivered ([`FollowItem::Message`]; those waiting as following
//!    begins come first), the daemon's notifications about it ([`FollowItem::Notification`]).
//! 4. At the end of each turn (the status moves to `completed` or `failed`) whose session goes
//!    on, because its process stays for the next message or a message is queued,
//!    [`FollowItem::TurnEnded`], after everything stored before it. A queued message then
//!    starts the next turn, which is followed in turn.
//! 5. Last, [`FollowItem::Ended`] with the session's final state, once its status is
//!    `completed` or `failed`, nothing is queued, and everything stored before the end was
//!    yielded. The stream then ends. For a session that had already ended, the history is
//!    followed by `Ended`. To follow the turn a later message starts, without the history
//!    again, [`Client::follow_after`](crate::Client::follow_after) picks up at
//!    [`Follow::last_sequence`].
//!
//! Each conversation event comes once, as `Conversation`, whether the store or a live event
//! told it first; each approval is asked once and decided once. Conversation events come in
//! the store's order (by `sequence`), whatever order the daemon publishes them in: when a live
//! event overtakes some stored before it (a tool call linked to its approval can be published
//! before the messages of the same burst), the stream reads those from the store first. An
//! approval can come before its tool call, when Claude asked for it before the call was
//! stored.
//!
//! ## Nothing is lost
//!
//! The stream subscribes to the session's events before it reads anything, so nothing falls
//! between what the store held and what the subscription brings. When the daemon drops events
//! for a follower that fell behind (it sends `lagged`), the stream yields
//! [`FollowItem::Lagged`] and catches up from the store: conversation events after the last
//! `sequence` it yielded, tool calls still waiting for a decision, the pending approvals, the
//! decisions on approvals it announced (and on those a tool call read names, told right after
//! it: a session rule's decision is never pending), and the session's status and settings (a change found
//! this way has no `reason`). What no store keeps can still be missed: an approval both asked
//! and decided while events were dropped shows only as its tool call's
//! `ConversationChanged`, and a status that came and went as one `Status` item from the first
//! to the last.
//!
//! A lost connection to the daemon is an [`Error`] item, after which the stream ends; so is a
//! failed call made while catching up.
//!
//! ## Where it stops
//!
//! Only `completed` and `failed` with nothing queued end a follow: a status this version does not know
//! ([`SessionStatus::Unknown`]) counts as active. Drop the stream to stop following earlier;
//! the session keeps running.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::{Stream, StreamExt};

use crate::error::Error;
use crate::protocol::{
    Approval, ApprovalStatus, ConversationEvent, ErrorCode, GetConversationParams, Notification,
    QueuedMessage, SessionControl, SessionState, SessionStatus, SubscribeParams, TurnResult,
};
use crate::{Client, SubscribeOptions, Subscription, SubscriptionItem};

mod ledger;

use ledger::{Ledger, Next, Settled};

/// How many conversation events a catch-up reads per `getConversation` call.
const PAGE: usize = 500;

/// One thing that happened to a followed session.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FollowItem {
    /// A conversation event, the first time it is seen.
    Conversation(Box<ConversationEvent>),
    /// A tool call yielded before changed: it is now linked to its approval
    /// (`approval_status` `pending`), or that approval was decided.
    ConversationChanged(Box<ConversationEvent>),
    /// The session's status changed.
    Status {
        /// The status before.
        old_status: SessionStatus,
        /// The status now.
        new_status: SessionStatus,
        /// The error, for a failure.
        error: Option<String>,
    },
    /// An approval is waiting for a decision.
    ApprovalRequested(Box<Approval>),
    /// An approval was decided: by a person, by a session rule (`decided_by`), or resolved
    /// because its session ended.
    ApprovalResolved {
        /// The approval.
        approval_id: String,
        /// `approved`, `denied`, `responded` or `resolved`.
        decision: ApprovalStatus,
        /// The reviewer's comment or answer.
        comment: Option<String>,
        /// The session rule that decided it, when no person did.
        decided_by: Option<String>,
    },
    /// The session's title, archive state or approval modes changed.
    SettingsChanged {
        /// The settings now.
        control: SessionControl,
        /// Why, as the daemon said it (`updated`, `expired`, …); `None` when the change was
        /// found while catching up.
        reason: Option<String>,
    },
    /// A message sent into the session (`sendMessage`) was queued, delivered, cancelled or
    /// given up: its `status` says which.
    Message(Box<QueuedMessage>),
    /// A turn ended (the status moved to `completed` or `failed`) and the session goes on:
    /// its process stays for the next message, or a queued one starts the next turn.
    TurnEnded {
        /// How the turn ended: `completed` or `failed`.
        status: SessionStatus,
        /// The session's state read after the turn ended: its result, totals and `live`. A
        /// queued message may have started the next turn by then.
        state: Box<SessionState>,
        /// What the turn's `result` reported of the turn alone, when its end was taken in
        /// live (`None` when a catch-up found it).
        turn: Option<Box<TurnResult>>,
    },
    /// The daemon notified the user about the session (an approval waits, it completed…):
    /// a front end rings once per [`Notification::id`]. Live only: none is caught up.
    Notification(Box<Notification>),
    /// The daemon dropped `missed` events for this follower, which fell behind; what comes
    /// next was caught up from the store.
    Lagged {
        /// How many events the daemon dropped (of every session, before filtering).
        missed: u64,
    },
    /// The session ended; the last item.
    Ended(Box<SessionState>),
}

/// A followed session: a `Stream` of [`FollowItem`]s, ending after [`FollowItem::Ended`] (see
/// the [module docs](self)).
pub struct Follow {
    session_id: String,
    initial_state: SessionState,
    last_sequence: Option<i64>,
    items: Pin<Box<dyn Stream<Item = Result<FollowItem, Error>> + Send>>,
}

impl std::fmt::Debug for Follow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follow")
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

impl Follow {
    /// The session followed.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The session's state as following began (read right after subscribing): its run id,
    /// parent, status and settings before the first item.
    pub fn initial_state(&self) -> &SessionState {
        &self.initial_state
    }

    /// The `sequence` of the session's last conversation event yielded (or the one following
    /// started after): where [`Client::follow_after`](crate::Client::follow_after) picks up.
    pub fn last_sequence(&self) -> Option<i64> {
        self.last_sequence
    }
}

impl Stream for Follow {
    type Item = Result<FollowItem, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = self.items.as_mut().poll_next(cx);
        if let Poll::Ready(Some(Ok(FollowItem::Conversation(event)))) = &polled {
            if event.session_id == self.session_id {
                self.last_sequence = Some(
                    self.last_sequence
                        .map_or(event.sequence, |s| s.max(event.sequence)),
                );
            }
        }
        polled
    }
}

/// Subscribes to `session_id`'s events, reads its state, and returns the stream that catches
/// up (from after conversation event `after`, by `sequence`) and then follows.
pub(crate) async fn follow(
    client: Client,
    session_id: &str,
    after: Option<i64>,
) -> Result<Follow, Error> {
    let subscription = client
        .subscribe(
            SubscribeParams::default().session(session_id),
            SubscribeOptions::default(),
        )
        .await?;
    let state = client.get_session_state(session_id).await?;
    let mut ledger = Ledger::new(session_id, state.clone());
    ledger.read_to = after;
    ledger.turn_from = after;
    let follower = Follower {
        client,
        subscription,
        phase: Phase::CatchingUp { after },
        ledger,
        page: PAGE,
    };
    let items = futures::stream::unfold(follower, |mut follower| async move {
        let item = follower.next().await?;
        Some((item, follower))
    });
    Ok(Follow {
        session_id: session_id.to_owned(),
        initial_state: state,
        last_sequence: after,
        items: Box::pin(items),
    })
}

/// Where a follower is.
enum Phase {
    /// Reading the store, from after this `sequence`: at the start, after a lag, at the end.
    CatchingUp { after: Option<i64> },
    /// Reading the stored conversation that a live event came before.
    Filling,
    /// Reading the subscription.
    Live,
    /// The session ended, or following failed.
    Done,
}

/// The follower's I/O: the store through the client, the live events through the
/// subscription. What it learns goes to its [`Ledger`].
struct Follower {
    client: Client,
    subscription: Subscription,
    phase: Phase,
    ledger: Ledger,
    /// Events a catch-up page asks for: [`PAGE`], halved after a page too large to carry.
    page: usize,
}

impl Follower {
    /// The next item; `None` once the stream is over.
    async fn next(&mut self) -> Option<Result<FollowItem, Error>> {
        loop {
            if let Some(item) = self.ledger.queue.pop_front() {
                return Some(Ok(item));
            }
            let step = match self.phase {
                Phase::CatchingUp { after } => self.read_page(after).await,
                Phase::Filling => self.fill().await,
                Phase::Live => self.listen().await,
                Phase::Done => return None,
            };
            if let Err(e) = step {
                self.phase = Phase::Done;
                return Some(Err(e));
            }
        }
    }

    /// Reads one page of the stored conversation; after the last, settles approvals and
    /// status.
    async fn read_page(&mut self, after: Option<i64>) -> Result<(), Error> {
        let page = self
            .client
            .get_conversation(GetConversationParams {
                session_id: Some(self.ledger.session_id.clone()),
                after_sequence: after,
                limit: Some(self.page as i64),
                ..Default::default()
            })
            .await;
        let page = match page {
            // Too large for the transport (a WebSocket's 1 MiB): read again, half as long.
            Err(e) if e.is_too_large() && self.page > 1 => {
                self.page /= 2;
                return Ok(());
            }
            page => page?,
        };
        let full = page.len() == self.page;
        let last = self.ledger.stored(page);
        self.tell_decisions().await?;
        // What follows a turn's end taken in live is left to come live: read no further.
        if full && !self.ledger.went_on() {
            self.phase = Phase::CatchingUp { after: last };
            return Ok(());
        }
        self.settle().await
    }

    /// Reads a page of the stored conversation between what was yielded and the live event
    /// that came early, and no further: what was stored after that event comes live, after
    /// whatever was published with it. Once nothing is left between, takes the event in.
    async fn fill(&mut self) -> Result<(), Error> {
        if let Some((after, limit)) = self.ledger.gap() {
            let page = self
                .client
                .get_conversation(GetConversationParams {
                    session_id: Some(self.ledger.session_id.clone()),
                    after_sequence: after,
                    limit: Some(limit as i64),
                    ..Default::default()
                })
                .await?;
            let more = self.ledger.fill(page, limit);
            self.tell_decisions().await?;
            if more {
                return Ok(());
            }
        }
        self.ledger.filled();
        self.phase = Phase::Live;
        Ok(())
    }

    /// Reads the decisions the tool calls just read from the store name and were not told.
    async fn tell_decisions(&mut self) -> Result<(), Error> {
        while let Some(id) = self.ledger.untold.first().cloned() {
            match self.client.get_approval(&id).await {
                Ok(approval) => self.ledger.told(approval),
                // One the daemon cannot give: its tool call still shows how it ended.
                Err(Error::Rpc(_)) => self.ledger.untold.retain(|untold| untold != &id),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// After reading the store: the pending approvals, the decisions on those announced, the
    /// status and settings; then the end if the session ended, else live events.
    async fn settle(&mut self) -> Result<(), Error> {
        let session_id = self.ledger.session_id.clone();
        let pending = self.client.fetch_approvals(Some(&session_id)).await?;
        for id in self.ledger.undecided(&pending) {
            let approval = self.client.get_approval(&id).await?;
            if approval.status != ApprovalStatus::Pending {
                let Approval {
                    id,
                    status,
                    comment,
                    decided_by,
                    ..
                } = approval;
                self.ledger.resolved(id, status, comment, decided_by);
            }
        }
        for approval in pending {
            self.ledger.requested(approval);
        }
        let queued = match self.client.list_queued_messages(&session_id).await {
            // A daemon without message queues has nothing queued.
            Err(Error::Rpc(e)) if e.code == ErrorCode::MethodNotFound.code() => Vec::new(),
            queued => queued?,
        };
        self.ledger.queue_read(queued);
        let state = self.client.get_session_state(&session_id).await?;
        self.phase = match self.ledger.state(state) {
            Settled::Live => Phase::Live,
            Settled::ReadAgain => Phase::CatchingUp {
                after: self.ledger.catch_up_after(),
            },
            Settled::Ended => Phase::Done,
        };
        Ok(())
    }

    /// Takes in the subscription's next event; reads the store when a conversation event
    /// overtook others, when events were dropped, and once the session ended.
    async fn listen(&mut self) -> Result<(), Error> {
        let event = match self.subscription.next().await {
            Some(Ok(SubscriptionItem::Event(timed))) => timed.event,
            // No other item without reconnection, which a follower does not ask for.
            Some(Ok(_)) => return Ok(()),
            Some(Err(e)) => return Err(e),
            None => return Err(Error::Disconnected),
        };
        self.phase = match self.ledger.event(event) {
            Next::Listen => Phase::Live,
            Next::Fill => Phase::Filling,
            Next::CatchUp => Phase::CatchingUp {
                after: self.ledger.catch_up_after(),
            },
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests;
