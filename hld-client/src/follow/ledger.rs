//! What a follower knows of a session, without I/O: which items to yield, each once and
//! in store order, and what a live event or a read of the state asks of the follower next.

use std::collections::{HashMap, HashSet, VecDeque};

use super::{FollowItem, PAGE};
use crate::protocol::{
    Approval, ApprovalStatus, ConversationEvent, ConversationEventType, Event, MessageStatus,
    QueuedMessage, SessionControl, SessionState, SessionStatus, TurnResult,
};

/// What the session's state, read after the store, asks of the follower.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Settled {
    /// It is active, or a message waits for its next turn: listen.
    Live,
    /// It ended, and the store was not read since this end was read: read what was stored
    /// since, then settle again.
    ReadAgain,
    /// It ended, and the store was read since: the stream is over.
    Ended,
}

/// What a live event asks of the follower.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// Keep listening.
    Listen,
    /// Read the conversation stored before a live event that came early, then listen.
    Fill,
    /// Read the store: events were dropped, or the session ended.
    CatchUp,
}

/// How far a tool call's approval link got: none, a pending approval, a decision. A version
/// of the call that got less far is an older one, arriving late.
pub(super) fn link_rank(event: &ConversationEvent) -> u8 {
    match event.approval_status.as_deref() {
        None => 0,
        Some("pending") => 1,
        Some(_) => DECIDED,
    }
}

/// The [`link_rank`] of a tool call whose approval was decided.
pub(super) const DECIDED: u8 = 2;

/// What a follower knows of the session, and the items still to yield: everything that
/// decides what to yield once, without I/O.
pub(super) struct Ledger {
    pub(super) session_id: String,
    /// Items to yield, in order.
    pub(super) queue: VecDeque<FollowItem>,
    /// Conversation event ids yielded.
    pub(super) seen: HashSet<i64>,
    /// The `sequence` up to which this session's conversation was yielded, every event up to
    /// it (`None`: nothing yet, and the session's first event will be 1): the highest read
    /// from the store, or one just after it that came live.
    pub(super) read_to: Option<i64>,
    /// A live conversation event that came before some stored ahead of it: taken in once the
    /// store's events before it were read.
    pub(super) early: Option<ConversationEvent>,
    /// Each tool call yielded, by event id: its [`link_rank`].
    pub(super) links: HashMap<i64, u8>,
    /// This session's tool calls that may still change (no decision and no result yet), by
    /// tool use id: their `sequence`. A catch-up reads from the oldest of them.
    pub(super) open_calls: HashMap<String, i64>,
    /// Each approval yielded, by id: whether its decision was.
    pub(super) approvals: HashMap<String, bool>,
    /// Approvals that tool calls read from the store name as decided, their decision not yet
    /// yielded: read and told right after their call (a session rule's decision, which no
    /// store read of pending approvals finds, would be lost when its event was not taken in).
    pub(super) untold: Vec<String>,
    /// The ended state read last, before the store was read again. The store holds all
    /// of a turn's conversation once read between two reads of the same ended state: a status
    /// event may tell of an earlier turn's end, another turn having run since.
    pub(super) ended_read: Option<SessionState>,
    /// The status last yielded or read.
    pub(super) status: SessionStatus,
    /// The settings last yielded or read.
    pub(super) control: SessionControl,
    /// A turn ended (the status went from active to `completed` or `failed`) since the
    /// state was last read: how.
    pub(super) turn_end: Option<SessionStatus>,
    /// Following after a `sequence`: conversation stored past it is a turn this follower may
    /// not have seen start (it can run whole before the follow subscribes); once the status is
    /// final, that turn ended. Cleared at that end.
    pub(super) turn_from: Option<i64>,
    /// Each message sent into the session that was yielded, by id: its status as yielded.
    pub(super) messages: HashMap<String, MessageStatus>,
    /// The messages known to wait for the session's next turn.
    pub(super) queued: HashSet<String>,
    /// A turn's end taken in live, until the catch-up it starts settles (see [`LiveEnd`]).
    pub(super) live_end: Option<LiveEnd>,
}

/// A turn's end taken in live. Every conversation event stored before it came live before
/// it, so the catch-up it starts takes nothing stored past `upto`: that is the next turn's
/// (a queued message starts it at once), which comes live after the statuses that start it.
#[derive(Debug, Default)]
pub(super) struct LiveEnd {
    /// The `sequence` of the last conversation event taken in before the end.
    upto: Option<i64>,
    /// What the turn's `result` reported, as its end told it.
    turn: Option<TurnResult>,
    /// The catch-up found events stored past `upto`: the session went on.
    went_on: bool,
}

impl Ledger {
    pub(super) fn new(session_id: &str, state: SessionState) -> Ledger {
        Ledger {
            session_id: session_id.to_owned(),
            queue: VecDeque::new(),
            seen: HashSet::new(),
            read_to: None,
            early: None,
            links: HashMap::new(),
            open_calls: HashMap::new(),
            approvals: HashMap::new(),
            untold: Vec::new(),
            ended_read: (!state.status.is_active()).then(|| state.clone()),
            status: state.status,
            control: state.control,
            turn_end: None,
            turn_from: None,
            messages: HashMap::new(),
            queued: HashSet::new(),
            live_end: None,
        }
    }

    /// Where a catch-up starts: after [`Ledger::read_to`], or before the oldest tool call that
    /// may have changed since.
    pub(super) fn catch_up_after(&self) -> Option<i64> {
        let oldest_open = self.open_calls.values().min().map(|s| s - 1);
        match (self.read_to, oldest_open) {
            (Some(read), Some(open)) => Some(read.min(open)),
            (read, None) => read,
            (None, Some(_)) => None,
        }
    }

    /// Takes in a page read from the store (but what follows a turn's end taken in live);
    /// returns the last `sequence` taken.
    pub(super) fn stored(&mut self, mut page: Vec<ConversationEvent>) -> Option<i64> {
        if let Some(end) = self.live_end.as_mut() {
            let own = &self.session_id;
            let past = |e: &ConversationEvent| &e.session_id == own && Some(e.sequence) > end.upto;
            end.went_on |= page.iter().any(past);
            page.retain(|e| !past(e));
        }
        let last = page.last().map(|e| e.sequence);
        for event in page {
            let decided = (event.event_type == ConversationEventType::ToolCall
                && link_rank(&event) == DECIDED)
                .then(|| event.approval_id.clone())
                .flatten();
            self.conversation(event);
            if let Some(id) = decided.filter(|id| self.approvals.get(id) != Some(&true)) {
                if !self.untold.contains(&id) {
                    self.untold.push(id);
                }
            }
        }
        if let Some(last) = last {
            self.read_to = Some(self.read_to.map_or(last, |read| read.max(last)));
        }
        last
    }

    /// Takes in a live event.
    pub(super) fn event(&mut self, event: Event) -> Next {
        match event {
            Event::ConversationUpdated { event, .. } => return self.live_conversation(*event),
            Event::SessionStatusChanged {
                old_status,
                new_status,
                error,
                turn,
                ..
            } => {
                if new_status != self.status {
                    if self.turn_ended(&new_status) {
                        self.live_end = Some(LiveEnd {
                            upto: self.read_to,
                            turn,
                            went_on: false,
                        });
                    }
                    self.status = new_status.clone();
                    self.queue.push_back(FollowItem::Status {
                        old_status,
                        new_status,
                        error,
                    });
                }
                if !self.status.is_active() {
                    // What was stored before the end, and the approvals it resolved.
                    return Next::CatchUp;
                }
            }
            Event::MessageQueued { message, .. }
            | Event::MessageDelivered { message, .. }
            | Event::MessageCancelled { message, .. } => self.message(message),
            Event::NewApproval { approval, .. } => self.requested(*approval),
            Event::ApprovalResolved {
                approval_id,
                decision,
                comment,
                decided_by,
                ..
            } => self.resolved(approval_id, decision, comment, decided_by),
            Event::SessionSettingsChanged {
                control, reason, ..
            } => self.settings(control, Some(reason)),
            Event::Notification(notification) => self
                .queue
                .push_back(FollowItem::Notification(Box::new(notification))),
            Event::Lagged { missed } => {
                self.queue.push_back(FollowItem::Lagged { missed });
                return Next::CatchUp;
            }
            // A type this version does not know: nothing in it to follow.
            _ => {}
        }
        Next::Listen
    }

    /// Takes in a live conversation event: a new one of this session only in its place, right
    /// after [`Ledger::read_to`]. One further on came before some stored ahead of it (the
    /// daemon stores before it publishes, so the store has them): it waits while they are
    /// read.
    pub(super) fn live_conversation(&mut self, event: ConversationEvent) -> Next {
        if event.session_id == self.session_id && !self.seen.contains(&event.id) {
            let next = self.read_to.unwrap_or(0) + 1;
            if event.sequence > next {
                self.early = Some(event);
                return Next::Fill;
            }
            if event.sequence == next {
                self.read_to = Some(next);
            }
        }
        self.conversation(event);
        Next::Listen
    }

    /// The stored events still to read before the early live event: after which `sequence`,
    /// and how many at most.
    pub(super) fn gap(&self) -> Option<(Option<i64>, usize)> {
        let early = self.early.as_ref()?;
        let missing = early.sequence - 1 - self.read_to.unwrap_or(0);
        (missing > 0).then(|| (self.read_to, missing.min(PAGE as i64) as usize))
    }

    /// Takes in a page read to fill the gap (of at most `limit` events), up to the early
    /// event; returns whether to read on. A page that reaches the early event, or is not full,
    /// ends the gap: what the store lacks in it is a hole in its sequences.
    pub(super) fn fill(&mut self, page: Vec<ConversationEvent>, limit: usize) -> bool {
        let Some(early) = self.early.as_ref().map(|e| e.sequence) else {
            return false;
        };
        let before: Vec<ConversationEvent> =
            page.into_iter().filter(|e| e.sequence < early).collect();
        let whole = before.len() == limit;
        self.stored(before);
        whole && self.gap().is_some()
    }

    /// Takes in the live event that waited for the store's events before it: the conversation
    /// is now yielded up to it.
    pub(super) fn filled(&mut self) {
        if let Some(event) = self.early.take() {
            self.read_to = Some(
                self.read_to
                    .map_or(event.sequence, |r| r.max(event.sequence)),
            );
            self.conversation(event);
        }
    }

    /// Takes in a conversation event, from the store or live: new, a tool call that got
    /// further, or one already yielded.
    pub(super) fn conversation(&mut self, event: ConversationEvent) {
        if let (ConversationEventType::ToolResult, Some(call)) =
            (event.event_type, &event.tool_result_for_id)
        {
            self.open_calls.remove(call);
        }
        if event.event_type != ConversationEventType::ToolCall {
            if self.seen.insert(event.id) {
                self.queue
                    .push_back(FollowItem::Conversation(Box::new(event)));
            }
            return;
        }
        let rank = link_rank(&event);
        if let Some(call) = &event.tool_id {
            let own = event.session_id == self.session_id;
            if rank == DECIDED {
                self.open_calls.remove(call);
            } else if own && !event.is_completed && !self.seen.contains(&event.id) {
                self.open_calls.insert(call.clone(), event.sequence);
            }
        }
        if self.seen.insert(event.id) {
            self.links.insert(event.id, rank);
            self.queue
                .push_back(FollowItem::Conversation(Box::new(event)));
        } else if self.links.get(&event.id).is_some_and(|&had| rank > had) {
            self.links.insert(event.id, rank);
            self.queue
                .push_back(FollowItem::ConversationChanged(Box::new(event)));
        }
    }

    /// Takes in an approval asked, once.
    pub(super) fn requested(&mut self, approval: Approval) {
        if !self.approvals.contains_key(&approval.id) {
            self.approvals.insert(approval.id.clone(), false);
            self.queue
                .push_back(FollowItem::ApprovalRequested(Box::new(approval)));
        }
    }

    /// Takes in a decision, once.
    pub(super) fn resolved(
        &mut self,
        approval_id: String,
        decision: ApprovalStatus,
        comment: Option<String>,
        decided_by: Option<String>,
    ) {
        if self.approvals.insert(approval_id.clone(), true) != Some(true) {
            self.queue.push_back(FollowItem::ApprovalResolved {
                approval_id,
                decision,
                comment,
                decided_by,
            });
        }
    }

    /// Notes a turn's end when the status moves from active to `new` final one; says whether
    /// it did.
    fn turn_ended(&mut self, new: &SessionStatus) -> bool {
        let ended = self.status.is_active() && !new.is_active();
        if ended {
            self.turn_end = Some(new.clone());
        }
        ended
    }

    /// Whether the catch-up after a turn's end taken in live found the next turn stored.
    pub(super) fn went_on(&self) -> bool {
        self.live_end.as_ref().is_some_and(|end| end.went_on)
    }

    /// Takes in a message sent into the session, live or from the queue read: yielded when its
    /// status is news.
    pub(super) fn message(&mut self, message: QueuedMessage) {
        if message.status == MessageStatus::Queued {
            self.queued.insert(message.id.clone());
        } else {
            self.queued.remove(&message.id);
        }
        if self.messages.get(&message.id) != Some(&message.status) {
            self.messages
                .insert(message.id.clone(), message.status.clone());
            self.queue.push_back(FollowItem::Message(Box::new(message)));
        }
    }

    /// Takes in the queue as read: the messages in it wait; those that had waited and are no
    /// longer in it left it meanwhile (how is told by their event, if it comes).
    pub(super) fn queue_read(&mut self, queued: Vec<QueuedMessage>) {
        self.queued.clear();
        for message in queued {
            self.message(message);
        }
    }

    /// Takes in a decision read for an [untold](Ledger::untold) approval: yielded right after
    /// the tool call naming it, if that is still to yield, once.
    pub(super) fn told(&mut self, approval: Approval) {
        self.untold.retain(|id| id != &approval.id);
        if approval.status == ApprovalStatus::Pending
            || self.approvals.insert(approval.id.clone(), true) == Some(true)
        {
            return;
        }
        let call = self.queue.iter().rposition(|item| match item {
            FollowItem::Conversation(e) | FollowItem::ConversationChanged(e) => {
                e.approval_id.as_deref() == Some(approval.id.as_str())
            }
            _ => false,
        });
        let item = FollowItem::ApprovalResolved {
            approval_id: approval.id,
            decision: approval.status,
            comment: approval.comment,
            decided_by: approval.decided_by,
        };
        match call {
            Some(at) => self.queue.insert(at + 1, item),
            None => self.queue.push_back(item),
        }
    }

    /// Takes in settings, if they changed.
    pub(super) fn settings(&mut self, control: SessionControl, reason: Option<String>) {
        if control != self.control {
            self.control = control.clone();
            self.queue
                .push_back(FollowItem::SettingsChanged { control, reason });
        }
    }

    /// The approvals announced and not decided, but no longer among the `pending` ones: their
    /// decisions are to be read.
    pub(super) fn undecided(&self, pending: &[Approval]) -> Vec<String> {
        self.approvals
            .iter()
            .filter(|(id, decided)| !**decided && !pending.iter().any(|a| &a.id == *id))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Takes in the session's state read after a catch-up (with its queue, taken in just
    /// before): a status or settings it missed; a turn's end, when the process stays or a
    /// message waits; the end, once the store was read after it and nothing waits.
    pub(super) fn state(&mut self, state: SessionState) -> Settled {
        if self.went_on() {
            // The turn ended and the next one began: it comes live, statuses first.
            if let Some(status) = self.turn_end.take() {
                let turn = self.live_end.take().and_then(|end| end.turn).map(Box::new);
                self.queue.push_back(FollowItem::TurnEnded {
                    status,
                    state: Box::new(state),
                    turn,
                });
            }
            self.live_end = None;
            self.ended_read = None;
            return Settled::Live;
        }
        let active = state.status.is_active();
        if active {
            self.ended_read = None;
        } else if self.ended_read.as_ref() != Some(&state) {
            // What it stored before this end may not have been read yet.
            self.ended_read = Some(state);
            return Settled::ReadAgain;
        }
        self.turn_ended(&state.status);
        if let Some(from) = self.turn_from {
            if !active && self.read_to > Some(from) {
                self.turn_end.get_or_insert_with(|| state.status.clone());
                self.turn_from = None;
            }
        }
        let next_turn = active || state.live || !self.queued.is_empty();
        let turn = self.live_end.take().and_then(|end| end.turn).map(Box::new);
        if let Some(status) = self.turn_end.take().filter(|_| next_turn) {
            self.queue.push_back(FollowItem::TurnEnded {
                status,
                state: Box::new(state.clone()),
                turn,
            });
        }
        if state.status != self.status {
            self.queue.push_back(FollowItem::Status {
                old_status: std::mem::replace(&mut self.status, state.status.clone()),
                new_status: state.status.clone(),
                error: state.error_message.clone(),
            });
        }
        self.settings(state.control.clone(), None);
        if active || !self.queued.is_empty() {
            return Settled::Live;
        }
        self.queue.push_back(FollowItem::Ended(Box::new(state)));
        Settled::Ended
    }
}
