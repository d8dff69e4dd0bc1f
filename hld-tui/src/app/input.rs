//! Keys: the global ones, then those of each screen (sessions, search, conversation, reply,
//! approvals).

use super::*;

pub(super) fn on_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    if ctrl && key.code == KeyCode::Char('c') {
        return vec![Command::Quit];
    }
    if state.modal.is_some() {
        return modal_key(state, key);
    }
    if state.list.searching {
        return search_key(state, key);
    }
    if state
        .conversation
        .as_ref()
        .is_some_and(|c| c.reply.is_some())
        && state.screen == Screen::Conversation
    {
        return reply_key(state, key);
    }
    if std::mem::take(&mut state.chord) {
        match key.code {
            KeyCode::Char('g') => return first(state),
            KeyCode::Char('s') => state.screen = Screen::Sessions,
            KeyCode::Char('a') => state.screen = Screen::Approvals,
            _ => {}
        }
        return Vec::new();
    }
    match key.code {
        KeyCode::Char(c) if ctrl && c == JUMP_TO_APPROVAL => {
            if state.approvals.is_empty() {
                state.flash("no pending approvals", false);
            } else {
                state.screen = Screen::Approvals;
                state.approval_selected = 0;
            }
            return Vec::new();
        }
        KeyCode::Char('x') if ctrl => {
            if let Some(s) = state.selected_session() {
                if s.status.is_active() {
                    let session_id = s.id.clone();
                    state.modal = Some(Modal::ConfirmInterrupt { session_id });
                } else {
                    state.flash(format!("the session is {}, not running", s.status), true);
                }
            }
            return Vec::new();
        }
        _ if ctrl => return screen_key(state, key),
        KeyCode::Char('?') => state.modal = Some(Modal::Help),
        KeyCode::Char('q') => {
            if state.screen == Screen::Sessions {
                return vec![Command::Quit];
            }
            state.screen = Screen::Sessions;
        }
        KeyCode::Char('1') => state.screen = Screen::Sessions,
        KeyCode::Char('2') => state.screen = Screen::Approvals,
        KeyCode::Char('g') => state.chord = true,
        KeyCode::Char('c') => state.modal = Some(Modal::Launch(Box::new(launch_form(state)))),
        KeyCode::Char('B') => {
            state.bell = !state.bell;
            let on = if state.bell { "on" } else { "off" };
            state.flash(format!("bell for new approvals {on}"), false);
        }
        KeyCode::Char('Y') => {
            let id = match state.screen {
                Screen::Approvals => state
                    .approvals
                    .get(state.approval_selected)
                    .map(|a| a.id.clone()),
                _ => state.selected_session().map(|s| s.id.clone()),
            };
            if let Some(id) = id {
                state.flash(format!("copied {id}"), false);
                return vec![Command::Copy(id)];
            }
        }
        KeyCode::Char('e') if state.screen != Screen::Approvals => {
            if let Some(s) = state.selected_session() {
                let archived = !s.control.archived;
                let session_id = s.id.clone();
                state.flash(if archived { "archived" } else { "unarchived" }, false);
                return vec![Command::Archive {
                    session_id,
                    archived,
                }];
            }
        }
        KeyCode::Char('R') if state.screen != Screen::Approvals => {
            if let Some(s) = state.selected_session() {
                let mut input = TextArea::default();
                input.insert_str(&s.control.title);
                let session_id = s.id.clone();
                state.modal = Some(Modal::Rename {
                    session_id,
                    input: Box::new(input),
                });
            }
        }
        KeyCode::Char('a') if alt && state.screen != Screen::Approvals => {
            if let Some(s) = state.selected_session() {
                let on = !s.control.auto_accept_edits;
                let session_id = s.id.clone();
                let mode = if on { "on" } else { "off" };
                state.flash(format!("auto-accept edits {mode}"), false);
                return vec![Command::Settings(UpdateSessionSettingsParams {
                    session_id,
                    auto_accept_edits: Some(on),
                    ..Default::default()
                })];
            }
        }
        KeyCode::Char('y') if alt && state.screen != Screen::Approvals => {
            if let Some(s) = state.selected_session() {
                let session_id = s.id.clone();
                if bypass_left(s, state.now).is_some() {
                    state.flash("bypass off", false);
                    return vec![Command::Settings(UpdateSessionSettingsParams {
                        session_id,
                        dangerously_skip_permissions: Some(false),
                        ..Default::default()
                    })];
                }
                let mut input = TextArea::default();
                input.insert_str("15m");
                state.modal = Some(Modal::Bypass {
                    session_id,
                    input: Box::new(input),
                });
            }
        }
        KeyCode::Char('p') if state.screen != Screen::Approvals => {
            let parent = state
                .selected_session()
                .map(|s| s.parent_session_id.clone());
            match parent {
                Some(Some(parent)) => return open(state, &parent),
                Some(None) => state.flash("this session has no parent", false),
                None => {}
            }
        }
        _ => return screen_key(state, key),
    }
    Vec::new()
}

pub(super) fn first(state: &mut State) -> Vec<Command> {
    match state.screen {
        Screen::Sessions => state.list.selected = 0,
        Screen::Approvals => state.approval_selected = 0,
        Screen::Conversation => {
            if let Some(c) = state.conversation.as_mut() {
                c.follow = false;
                c.scroll = 0;
            }
        }
    }
    Vec::new()
}

pub(super) fn screen_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    match state.screen {
        Screen::Sessions => sessions_key(state, key),
        Screen::Conversation => conversation_key(state, key),
        Screen::Approvals => approvals_key(state, key),
    }
}

/// j/k/arrows/G over a list of `len` rows.
pub(super) fn move_in(selected: &mut usize, len: usize, key: KeyEvent) -> bool {
    match key.code {
        KeyCode::Char('j') | KeyCode::Down => {
            *selected = (*selected + 1).min(len.saturating_sub(1))
        }
        KeyCode::Char('k') | KeyCode::Up => *selected = selected.saturating_sub(1),
        KeyCode::Char('G') | KeyCode::End => *selected = len.saturating_sub(1),
        KeyCode::Home => *selected = 0,
        KeyCode::PageDown => *selected = (*selected + 10).min(len.saturating_sub(1)),
        KeyCode::PageUp => *selected = selected.saturating_sub(10),
        _ => return false,
    }
    true
}

pub(super) fn sessions_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    let len = state.rows().len();
    if move_in(&mut state.list.selected, len, key) {
        return Vec::new();
    }
    match key.code {
        KeyCode::Enter => {
            if let Some(id) = state
                .rows()
                .get(state.list.selected)
                .map(|r| r.session.id.clone())
            {
                return open(state, &id);
            }
        }
        KeyCode::Char(' ') | KeyCode::Right | KeyCode::Char('l') => {
            let row = state
                .rows()
                .get(state.list.selected)
                .map(|r| (r.session.id.clone(), r.depth, r.chain));
            match row {
                Some((id, 0, chain)) if chain > 1 && !state.list.expanded.remove(&id) => {
                    state.list.expanded.insert(id);
                }
                Some((_, 0, chain)) if chain > 1 => {}
                Some((_, 0, _)) => state.flash("this session has no earlier sessions", false),
                _ => {}
            }
        }
        KeyCode::Char('/') => {
            state.list.searching = true;
            state.list.search.get_or_insert_with(String::new);
        }
        KeyCode::Char('f') => {
            state.list.filter = state.list.filter.next();
            state.list.selected = 0;
        }
        KeyCode::Tab => {
            state.list.archived = !state.list.archived;
            state.list.selected = 0;
        }
        KeyCode::Esc => {
            state.list.search = None;
            state.list.filter = Filter::All;
            state.list.archived = false;
        }
        _ => {}
    }
    Vec::new()
}

pub(super) fn search_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    let search = state.list.search.get_or_insert_with(String::new);
    match key.code {
        KeyCode::Esc => {
            state.list.search = None;
            state.list.searching = false;
        }
        KeyCode::Enter => {
            state.list.searching = false;
            if search.is_empty() {
                state.list.search = None;
            }
        }
        KeyCode::Backspace => {
            search.pop();
        }
        KeyCode::Down | KeyCode::Up => {
            let len = state.rows().len();
            move_in(&mut state.list.selected, len, key);
            return Vec::new();
        }
        KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => search.push(c),
        _ => {}
    }
    state.list.selected = 0;
    Vec::new()
}

pub(super) fn conversation_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    let height = state.conversation_height();
    let top = state.conversation_top();
    let Some(c) = state.conversation.as_mut() else {
        state.screen = Screen::Sessions;
        return Vec::new();
    };
    let last_top = c.total_lines().saturating_sub(height);
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let scroll_to = |c: &mut Conversation, to: usize| {
        c.scroll = to.min(last_top);
        c.follow = c.scroll >= last_top;
    };
    match key.code {
        KeyCode::Char('j') | KeyCode::Down => scroll_to(c, top + 1),
        KeyCode::Char('k') | KeyCode::Up => scroll_to(c, top.saturating_sub(1)),
        KeyCode::Char('d') if ctrl => scroll_to(c, top + height / 2),
        KeyCode::Char('u') if ctrl => scroll_to(c, top.saturating_sub(height / 2)),
        KeyCode::PageDown => scroll_to(c, top + height),
        KeyCode::PageUp => scroll_to(c, top.saturating_sub(height)),
        KeyCode::Char('G') | KeyCode::End => c.follow = true,
        KeyCode::Home => scroll_to(c, 0),
        KeyCode::Char('t') => {
            c.options.thinking = !c.options.thinking;
            state.rerender();
        }
        KeyCode::Char('i') => {
            c.options.expanded = !c.options.expanded;
            state.rerender();
        }
        KeyCode::Char('r') | KeyCode::Enter => {
            let status = state
                .sessions
                .iter()
                .find(|s| s.id == c.session_id)
                .map(|s| &s.status);
            if status.is_some_and(SessionStatus::is_active) {
                state.flash(
                    "the session is still running: wait for it, or interrupt it (Ctrl+X)",
                    true,
                );
            } else {
                let mut reply = TextArea::default();
                reply.set_placeholder_text("Continue the conversation… (Enter sends, Esc cancels)");
                c.reply = Some(reply);
            }
        }
        KeyCode::Char('a') | KeyCode::Char('d') => {
            let id = c.session_id.clone();
            let Some(i) = state.approvals.iter().position(|a| a.session_id == id) else {
                state.flash("this session has no pending approval", false);
                return Vec::new();
            };
            return decide(state, i, key.code == KeyCode::Char('a'));
        }
        KeyCode::Esc => state.screen = Screen::Sessions,
        _ => {}
    }
    Vec::new()
}

pub(super) fn reply_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    let Some(c) = state.conversation.as_mut() else {
        return Vec::new();
    };
    let Some(reply) = c.reply.as_mut() else {
        return Vec::new();
    };
    match key.code {
        KeyCode::Esc => c.reply = None,
        KeyCode::Enter if !key.modifiers.contains(KeyModifiers::ALT) => {
            let query = reply.lines().join("\n");
            if query.trim().is_empty() {
                return Vec::new();
            }
            let session_id = c.session_id.clone();
            c.reply = None;
            state.flash("continuing…", false);
            return vec![Command::Continue(ContinueSessionParams {
                session_id,
                query,
                ..Default::default()
            })];
        }
        KeyCode::Enter => reply.insert_newline(),
        _ => {
            reply.input(key);
        }
    }
    Vec::new()
}

pub(super) fn approvals_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    if move_in(&mut state.approval_selected, state.approvals.len(), key) {
        return Vec::new();
    }
    let i = state.approval_selected;
    let Some(approval) = state.approvals.get(i) else {
        if key.code == KeyCode::Esc {
            state.screen = Screen::Sessions;
        }
        return Vec::new();
    };
    match key.code {
        KeyCode::Char('a' | 'y') => return decide(state, i, true),
        KeyCode::Char('d' | 'n') => return decide(state, i, false),
        KeyCode::Char('r') | KeyCode::Enter if approval.kind == ApprovalType::HumanContact => {
            return decide(state, i, false)
        }
        KeyCode::Enter => {
            let id = approval.session_id.clone();
            return open(state, &id);
        }
        KeyCode::Esc => state.screen = Screen::Sessions,
        _ => {}
    }
    Vec::new()
}

/// Approves the `i`th pending approval at once, or opens the box for a denial's comment (or a
/// question's answer).
pub(super) fn decide(state: &mut State, i: usize, approve: bool) -> Vec<Command> {
    let approval = &state.approvals[i];
    if approval.kind == ApprovalType::HumanContact || !approve {
        state.modal = Some(Modal::Decide {
            approval_id: approval.id.clone(),
            kind: approval.kind,
            input: Box::default(),
        });
        return Vec::new();
    }
    let id = approval.id.clone();
    state.flash(
        format!(
            "approved {}",
            approval.function_name.as_deref().unwrap_or("the call")
        ),
        false,
    );
    resolve(state, &id, ApprovalStatus::Approved, None);
    vec![Command::Decide(SendDecisionParams {
        call_id: Some(id),
        kind: Some("function_call".into()),
        decision: Some("approve".into()),
        comment: None,
    })]
}
