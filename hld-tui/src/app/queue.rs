//! Talking to the open conversation's session: the reply box sends into it (`sendMessage`,
//! queued while the agent works), and its queue is shown and kept up to date from the
//! `message_*` events, the newest queued message cancelled with a key.

use tui_textarea::CursorMove;

use super::*;

/// The most queued messages listed above the reply box; more are counted on one line.
pub const QUEUE_LINES: usize = 3;

impl Conversation {
    /// Rows the queue takes below the conversation: a heading, then a line per message.
    pub fn queue_rows(&self) -> u16 {
        match self.queue.len() {
            0 => 0,
            n => 1 + n.min(QUEUE_LINES) as u16,
        }
    }
}

/// Whether the open conversation's session is working (a message to it is queued).
pub fn working(state: &State) -> bool {
    let Some(c) = &state.conversation else {
        return false;
    };
    state
        .sessions
        .iter()
        .find(|s| s.id == c.session_id)
        .is_some_and(|s| s.status.is_active())
}

/// Opens the reply box, saying where the message goes, with what was typed in it and not
/// sent; loads the session's slash commands for `/` completion.
pub(super) fn open_reply(state: &mut State) -> Vec<Command> {
    let placeholder = if working(state) {
        "Message for the agent: queued until its turn ends (Enter sends; Esc closes, keeping it)"
    } else {
        "Reply: the session goes on with it (Enter sends; Esc closes, keeping it)"
    };
    let Some(c) = state.conversation.as_mut() else {
        return Vec::new();
    };
    let mut reply = TextArea::default();
    reply.set_placeholder_text(placeholder);
    if let Some(text) = state.unsent.remove(&c.session_id) {
        reply.insert_str(text);
    }
    c.reply = Some(reply);
    vec![Command::LoadCommands(c.session_id.clone())]
}

/// Closes the open conversation's reply box, keeping what it holds for the next time it opens
/// for the session (as Claude Code keeps what was typed).
pub(super) fn close_reply(state: &mut State) {
    let Some(c) = state.conversation.as_mut() else {
        return;
    };
    let Some(reply) = c.reply.take() else {
        return;
    };
    c.complete.open = None;
    let text = reply.lines().join("\n");
    if text.trim().is_empty() {
        state.unsent.remove(&c.session_id);
    } else {
        state.unsent.insert(c.session_id.clone(), text);
    }
}

/// Sends what the reply box holds into the session.
pub(super) fn send(state: &mut State, text: String) -> Vec<Command> {
    let Some(c) = state.conversation.as_mut() else {
        return Vec::new();
    };
    c.reply = None;
    c.complete.open = None;
    let session_id = c.session_id.clone();
    state.flash("sending…", false);
    vec![Command::Send { session_id, text }]
}

/// A message the daemon did not take (or could not be reached for): the error is shown and
/// the text goes back into the reply box of its session's open conversation, ahead of what was
/// typed since, so that nothing typed is lost.
pub(super) fn unsent(state: &mut State, session_id: &str, text: &str, error: &str) -> Vec<Command> {
    state.flash(format!("not sent: {error}"), true);
    let Some(c) = state
        .conversation
        .as_ref()
        .filter(|c| c.session_id == session_id)
    else {
        return Vec::new();
    };
    let commands = match c.reply {
        Some(_) => Vec::new(),
        None => open_reply(state),
    };
    if let Some(reply) = state.conversation.as_mut().and_then(|c| c.reply.as_mut()) {
        let typed = !reply.is_empty();
        reply.move_cursor(CursorMove::Top);
        reply.move_cursor(CursorMove::Head);
        reply.insert_str(text);
        if typed {
            reply.insert_newline();
        }
    }
    commands
}

/// Cancels the newest message queued for the open conversation's session.
pub(super) fn cancel_last(state: &mut State) -> Vec<Command> {
    match state.conversation.as_ref().and_then(|c| c.queue.last()) {
        Some(message) => vec![Command::CancelMessage(message.id.clone())],
        None => {
            state.flash("no queued message", false);
            Vec::new()
        }
    }
}

/// The open conversation's queue, as loaded.
pub(super) fn loaded(state: &mut State, session_id: &str, messages: Vec<QueuedMessage>) {
    if let Some(c) = state
        .conversation
        .as_mut()
        .filter(|c| c.session_id == session_id)
    {
        c.queue = messages;
    }
}

/// A message of the open conversation's session changed: queued ones join its queue,
/// delivered or cancelled ones leave it.
pub(super) fn changed(state: &mut State, message: QueuedMessage) -> Vec<Command> {
    let Some(c) = state
        .conversation
        .as_mut()
        .filter(|c| c.session_id == message.session_id)
    else {
        return Vec::new();
    };
    let known = c.queue.iter().position(|m| m.id == message.id);
    match (message.status == MessageStatus::Queued, known) {
        (true, None) => c.queue.push(message),
        (false, Some(at)) => {
            c.queue.remove(at);
        }
        _ => {}
    }
    // A queue fetched before this change may still be on its way: a newer load overtakes it
    // (the runtime drops the older answer).
    vec![Command::LoadQueue(c.session_id.clone())]
}
