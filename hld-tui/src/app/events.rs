//! Daemon events and loads arriving in the state: sessions, approvals, the open
//! conversation.

use super::*;

pub(super) fn on_event(state: &mut State, timed: TimedEvent) -> Vec<Command> {
    let at = timed.timestamp;
    match timed.event {
        Event::SessionStatusChanged {
            session_id,
            old_status,
            new_status,
            usage_limit,
            ..
        } => {
            // A question about stopping a session that stopped meanwhile is moot.
            let asked = matches!(&state.modal, Some(Modal::ConfirmInterrupt { session_id: s }) if *s == session_id);
            if asked && !new_status.is_active() {
                state.modal = None;
                state.flash(
                    format!("the session is {new_status}: nothing to interrupt"),
                    false,
                );
            }
            let known = state.sessions.iter_mut().find(|s| s.id == session_id);
            if let Some(s) = known {
                // Shown right, even with no reload to come (the daemon gone): only an
                // interrupt moves a session to `completing`, and a new turn starts afresh.
                s.interrupted = match (&old_status, &new_status) {
                    (SessionStatus::Completing, SessionStatus::Completed) => true,
                    (_, new) if new.is_active() => false,
                    _ => s.interrupted,
                };
                s.status = new_status;
                s.usage_limit = usage_limit;
            }
            state.touch(&session_id, &at);
            // Cost, turns and errors arrive with the row; a new session needs its row.
            let mut commands = vec![Command::LoadSessions];
            commands.extend(review::on_status(state, &session_id));
            // A turn that ended added to what the sessions cost.
            commands.extend(usage::reload(state));
            commands
        }
        Event::ConversationUpdated {
            session_id, event, ..
        } => {
            state.touch(&session_id, &at);
            state.activity.record(&session_id, &event);
            if state
                .conversation
                .as_ref()
                .is_some_and(|c| c.chain.contains(&session_id))
            {
                state.add_events(vec![*event]);
            }
            Vec::new()
        }
        Event::NewApproval { approval, .. } => {
            if state.approvals.iter().any(|a| a.id == approval.id) {
                return Vec::new();
            }
            state.set_mark(&approval, ApprovalStatus::Pending, None);
            let at = state
                .approvals
                .partition_point(|a| a.requested_at <= approval.requested_at);
            state.approvals.insert(at, *approval);
            // A list fetched before this approval existed may still be on its way: a newer
            // load overtakes it (the runtime drops the older answer).
            vec![Command::LoadApprovals]
        }
        Event::ApprovalResolved {
            approval_id,
            decision,
            comment,
            ..
        } => {
            if state.approvals.iter().any(|a| a.id == approval_id) {
                resolve(state, &approval_id, decision, comment);
            } else {
                // Never pending here: its tool call shows the rule's comment, as a reload does.
                let mark = Mark {
                    status: decision,
                    comment,
                };
                state.ruled.insert(approval_id.clone(), mark);
                state.rerender_where(|e| e.approval_id.as_deref() == Some(&approval_id));
            }
            vec![Command::LoadApprovals]
        }
        Event::SessionSettingsChanged {
            session_id,
            control,
            model,
            ..
        } => {
            if let Some(session) = state.sessions.iter_mut().find(|s| s.id == session_id) {
                session.control = control;
                if model.is_some() {
                    session.model = model;
                }
                clamp_selection(state);
            }
            // A list fetched before the change may still be on its way: a newer load
            // overtakes it (the runtime drops the older answer). An unknown session needs
            // its row.
            vec![Command::LoadSessions]
        }
        Event::MessageQueued { message, .. }
        | Event::MessageDelivered { message, .. }
        | Event::MessageCancelled { message, .. } => queue::changed(state, message),
        // The daemon decides what is worth the user's attention (the bell rings for it alone,
        // not for each approval as well).
        Event::Notification(notification) => usage::notified(state, notification),
        Event::RateLimitUpdated { window, .. } => {
            usage::merge_windows(state, vec![window]);
            Vec::new()
        }
        Event::Lagged { .. } => reload(state),
        // An event this version does not know: nothing here depends on it.
        _ => Vec::new(),
    }
}

/// Loads again everything shown: after a reconnect, or events missed. The conversation's
/// events are dropped now, so that those streaming in before the load's answer are kept.
pub(super) fn reload(state: &mut State) -> Vec<Command> {
    let mut commands = vec![
        Command::LoadSessions,
        Command::LoadDrafts,
        Command::LoadApprovals,
        Command::LoadRateLimits,
    ];
    commands.extend(usage::reload(state));
    if let Some(c) = &mut state.conversation {
        c.loaded = false;
        c.events.clear();
        c.blocks.clear();
        commands.push(Command::LoadConversation(c.session_id.clone()));
        commands.push(Command::LoadQueue(c.session_id.clone()));
    }
    commands
}

/// Takes a decided approval off the pending list and marks its tool call.
pub(super) fn resolve(
    state: &mut State,
    approval_id: &str,
    status: ApprovalStatus,
    comment: Option<String>,
) {
    if let Some(i) = state.approvals.iter().position(|a| a.id == approval_id) {
        let approval = state.approvals.remove(i);
        state.set_mark(&approval, status, comment);
        clamp_selection(state);
    }
}

pub(super) fn clamp_selection(state: &mut State) {
    let rows = state.rows().len();
    state.list.selected = state.list.selected.min(rows.saturating_sub(1));
    state.approval_selected = state
        .approval_selected
        .min(state.approvals.len().saturating_sub(1));
    state.approval_scroll = state
        .approval_scroll
        .min(crate::lists::approval_scroll(state).0);
}

/// Opens `session_id`'s conversation, with its chain of ancestors.
pub(super) fn open(state: &mut State, session_id: &str) -> Vec<Command> {
    queue::close_reply(state);
    // The session and its ancestors, up to one already seen (a cycle) or missing.
    let mut chain = HashSet::new();
    let mut next = Some(session_id.to_owned());
    while let Some(id) = next.filter(|id| chain.insert(id.clone())) {
        next = state
            .sessions
            .iter()
            .find(|s| s.id == id)
            .and_then(|s| s.parent_session_id.clone());
    }
    state.conversation = Some(Conversation {
        session_id: session_id.to_owned(),
        chain,
        loaded: false,
        events: Vec::new(),
        blocks: Vec::new(),
        follow: true,
        scroll: 0,
        options: Options {
            thinking: false,
            expanded: false,
        },
        reply: None,
        queue: Vec::new(),
        complete: Completer::default(),
    });
    state.screen = Screen::Conversation;
    vec![
        Command::LoadConversation(session_id.to_owned()),
        Command::LoadQueue(session_id.to_owned()),
    ]
}
