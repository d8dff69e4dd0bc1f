//! Keys: what each action of the key map ([`crate::keys`]) does on each screen, and the keys
//! of the text being typed (search, reply).

use super::modal::{self, edit};
use super::*;

/// How soon a second Ctrl+C must follow the first to quit.
pub const QUIT_WINDOW: chrono::Duration = chrono::Duration::seconds(2);
/// What the first Ctrl+C says, in the key-help line.
pub const QUIT_AGAIN: &str = "Ctrl+C again quits (the sessions keep running)";

pub(super) fn on_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    // Ctrl+C quits from anywhere, a dialog included, once pressed twice.
    if keys::action(&[Scope::Global], Key::of(key, false)) == Some(Action::Quit) {
        return quit(state);
    }
    if !matches!(key.code, KeyCode::Modifier(_)) {
        state.quit_asked = None;
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
    let after_g = std::mem::take(&mut state.chord);
    let scope = match state.screen {
        Screen::Sessions => Scope::Sessions,
        Screen::Conversation => Scope::Conversation,
        Screen::Approvals => Scope::Approvals,
        Screen::Review => Scope::Review,
        Screen::Usage => Scope::Usage,
    };
    match keys::action(&[Scope::Global, scope], Key::of(key, after_g)) {
        Some(action) => act(state, action),
        None => Vec::new(),
    }
}

/// Does what a key bound to `action` does on the current screen.
fn act(state: &mut State, action: Action) -> Vec<Command> {
    match action {
        Action::Quit => return quit(state),
        Action::Help => state.modal = Some(Modal::Help { top: 0 }),
        Action::QuitOrBack => {
            if state.screen == Screen::Sessions {
                return vec![Command::Quit];
            }
            state.screen = Screen::Sessions;
        }
        Action::ShowSessions => state.screen = Screen::Sessions,
        Action::ShowApprovals => state.screen = Screen::Approvals,
        Action::ShowUsage => return usage::open(state),
        Action::G => state.chord = true,
        Action::JumpToApproval => {
            if state.approvals.is_empty() {
                state.flash("no pending approvals", false);
            } else {
                state.screen = Screen::Approvals;
                state.approval_selected = 0;
            }
        }
        Action::NewSession => state.modal = Some(Modal::Launch(Box::new(launch_form(state)))),
        Action::ToggleBell => {
            state.bell = !state.bell;
            let on = if state.bell { "on" } else { "off" };
            state.flash(format!("bell for notifications {on}"), false);
        }
        Action::CopyId => {
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
        Action::Interrupt => {
            if let Some(s) = state.selected_session() {
                if s.status.is_active() {
                    let session_id = s.id.clone();
                    state.modal = Some(Modal::ConfirmInterrupt { session_id });
                } else {
                    state.flash(format!("the session is {}, not running", s.status), true);
                }
            }
        }
        Action::Archive => {
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
        Action::Rename => {
            if let Some(s) = state.selected_session() {
                state.modal = Some(modal::rename_box(s.id.clone(), &s.control.title));
            }
        }
        Action::AutoAccept => {
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
        Action::ResumeOnReset => {
            if let Some(s) = state.selected_session() {
                let on = !s.control.resume_on_reset;
                let session_id = s.id.clone();
                let text = match on {
                    true => "resumes when its usage limit resets",
                    false => "stays stopped at a usage limit",
                };
                state.flash(text, false);
                return vec![Command::Settings(UpdateSessionSettingsParams {
                    session_id,
                    resume_on_reset: Some(on),
                    ..Default::default()
                })];
            }
        }
        Action::Bypass => {
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
                // 15 minutes unless typed over: what is typed replaces it.
                let mut input = TextArea::default();
                input.insert_str("15m");
                input.select_all();
                state.modal = Some(Modal::Bypass {
                    session_id,
                    input: Box::new(input),
                });
            }
        }
        Action::CycleMode => return settings::cycle_mode(state),
        Action::Review => return review::open(state),
        Action::Model => settings::open_picker(state),
        Action::Parent => {
            let parent = state
                .selected_session()
                .map(|s| s.parent_session_id.clone());
            match parent {
                Some(Some(parent)) => return open(state, &parent),
                Some(None) => state.flash("this session has no parent", false),
                None => {}
            }
        }
        action => {
            return match state.screen {
                Screen::Sessions => sessions_act(state, action),
                Screen::Conversation => conversation_act(state, action),
                Screen::Approvals => approvals_act(state, action),
                Screen::Review => review::act(state, action),
                Screen::Usage => usage::act(state, action),
            }
        }
    }
    Vec::new()
}

/// Ctrl+C: quits when pressed a second time soon after the first, which says so (Claude Code's
/// users press it to interrupt, and the dashboard leaves its sessions running).
fn quit(state: &mut State) -> Vec<Command> {
    if state
        .quit_asked
        .is_some_and(|at| state.now - at <= QUIT_WINDOW)
    {
        return vec![Command::Quit];
    }
    state.quit_asked = Some(state.now);
    let running = state
        .selected_session()
        .is_some_and(|s| s.status.is_active());
    let text = match state.screen == Screen::Conversation && running {
        true => format!("{QUIT_AGAIN} · ^X interrupts this session"),
        false => QUIT_AGAIN.to_owned(),
    };
    state.flash(text, false);
    Vec::new()
}

/// The first Ctrl+C lapses once [`QUIT_WINDOW`] is over, and no longer says it quits.
pub(super) fn quit_lapsed(state: &mut State) {
    if state
        .quit_asked
        .is_some_and(|at| state.now - at > QUIT_WINDOW)
    {
        state.quit_asked = None;
        state.flash.take_if(|f| f.text.starts_with(QUIT_AGAIN));
    }
}

/// Moves the selection among `len` rows; false for an action that is no move.
pub(super) fn move_in(selected: &mut usize, len: usize, action: Action) -> bool {
    let last = len.saturating_sub(1);
    *selected = match action {
        Action::Down => (*selected + 1).min(last),
        Action::Up => selected.saturating_sub(1),
        Action::First => 0,
        Action::Last => last,
        Action::PageDown => (*selected + 10).min(last),
        Action::PageUp => selected.saturating_sub(10),
        _ => return false,
    };
    true
}

fn sessions_act(state: &mut State, action: Action) -> Vec<Command> {
    let len = state.rows().len();
    if move_in(&mut state.list.selected, len, action) {
        return Vec::new();
    }
    match action {
        Action::Open if state.list.view == ListView::Drafts => {
            if let Some(draft) = state.rows().get(state.list.selected).map(|r| r.session) {
                let form = drafts::form_of(state, draft);
                state.modal = Some(Modal::Launch(Box::new(form)));
            }
        }
        Action::Open => {
            if let Some(id) = state
                .rows()
                .get(state.list.selected)
                .map(|r| r.session.id.clone())
            {
                return open(state, &id);
            }
        }
        Action::Discard if state.list.view == ListView::Drafts => return drafts::discard(state),
        Action::Discard => state.flash("X discards a draft (Tab to the drafts view)", false),
        Action::ToggleChain => {
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
        Action::Search => {
            state.list.searching = true;
            state.list.search.get_or_insert_with(String::new);
        }
        Action::Filter => {
            state.list.filter = state.list.filter.next();
            state.list.selected = 0;
        }
        Action::ToggleArchived => {
            state.list.view = state.list.view.next();
            state.list.selected = 0;
            if state.list.view == ListView::Drafts {
                return vec![Command::LoadDrafts];
            }
        }
        Action::Clear => {
            state.list.search = None;
            state.list.filter = Filter::All;
            state.list.view = ListView::Sessions;
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
            let action = if key.code == KeyCode::Down {
                Action::Down
            } else {
                Action::Up
            };
            move_in(&mut state.list.selected, len, action);
            return Vec::new();
        }
        KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => search.push(c),
        _ => {}
    }
    state.list.selected = 0;
    Vec::new()
}

fn conversation_act(state: &mut State, action: Action) -> Vec<Command> {
    let height = state.conversation_height();
    let top = state.conversation_top();
    let Some(c) = state.conversation.as_mut() else {
        state.screen = Screen::Sessions;
        return Vec::new();
    };
    let last_top = c.total_lines().saturating_sub(height);
    let scroll_to = |c: &mut Conversation, to: usize| {
        c.scroll = to.min(last_top);
        c.follow = c.scroll >= last_top;
    };
    match action {
        Action::Down => scroll_to(c, top + 1),
        Action::Up => scroll_to(c, top.saturating_sub(1)),
        Action::HalfPageDown => scroll_to(c, top + height / 2),
        Action::HalfPageUp => scroll_to(c, top.saturating_sub(height / 2)),
        Action::PageDown => scroll_to(c, top + height),
        Action::PageUp => scroll_to(c, top.saturating_sub(height)),
        Action::First => {
            c.follow = false;
            c.scroll = 0;
        }
        Action::Last => c.follow = true,
        Action::Thinking => {
            c.options.thinking = !c.options.thinking;
            state.rerender();
        }
        Action::Expand => {
            c.options.expanded = !c.options.expanded;
            state.rerender();
        }
        Action::Reply => return queue::open_reply(state),
        Action::CancelQueued => return queue::cancel_last(state),
        Action::Approve | Action::ApproveAcceptEdits | Action::Deny => {
            let id = c.session_id.clone();
            let Some(i) = state.approvals.iter().position(|a| a.session_id == id) else {
                state.flash("this session has no pending approval", false);
                return Vec::new();
            };
            if action == Action::ApproveAcceptEdits {
                return settings::approve_accepting_edits(state, i);
            }
            return decide(state, i, action == Action::Approve);
        }
        Action::Back => {
            let id = c.session_id.clone();
            state.screen = Screen::Sessions;
            // Back on the list, the session just read is the one selected.
            if let Some(i) = state.rows().iter().position(|r| r.session.id == id) {
                state.list.selected = i;
            }
        }
        _ => {}
    }
    Vec::new()
}

/// A key in the reply box: the completion list's keys while it is open, the mode, sending,
/// and the rest to the text.
pub(super) fn reply_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    let action = keys::action(&[Scope::Reply], Key::of(key, false));
    if action == Some(Action::CycleMode) {
        return settings::cycle_mode(state);
    }
    let Some(c) = state.conversation.as_mut() else {
        return Vec::new();
    };
    let choosing = complete::choosing(c);
    let send = key.code == KeyCode::Enter && !key.modifiers.contains(KeyModifiers::ALT);
    match action {
        Some(Action::Back) if c.complete.open.is_some() => complete::dismiss(c),
        Some(Action::Back) => queue::close_reply(state),
        Some(step @ (Action::Up | Action::Down)) if choosing => {
            complete::step(c, step == Action::Down)
        }
        Some(Action::Complete) if choosing => {
            complete::accept(c);
        }
        // Enter takes the chosen entry, unless the token is that entry already.
        _ if send && choosing && complete::accept(c) => {}
        _ if send => {
            let text = c.reply.as_ref().map(|r| r.lines().join("\n"));
            match text.filter(|t| !t.trim().is_empty()) {
                Some(text) => return queue::send(state, text),
                None => return Vec::new(),
            }
        }
        _ => {
            if let Some(reply) = c.reply.as_mut() {
                if key.code == KeyCode::Enter {
                    reply.insert_newline();
                } else {
                    edit(reply, key);
                }
            }
        }
    }
    complete::refresh(state)
}

fn approvals_act(state: &mut State, action: Action) -> Vec<Command> {
    let (last, page) = crate::lists::approval_scroll(state);
    let (scroll, half) = (state.approval_scroll, (page / 2).max(1));
    let scrolled = match action {
        Action::HalfPageDown => Some(scroll.saturating_add(half)),
        Action::HalfPageUp => Some(scroll.saturating_sub(half)),
        Action::PageDown => Some(scroll.saturating_add(page.max(1))),
        Action::PageUp => Some(scroll.saturating_sub(page.max(1))),
        Action::DetailTop => Some(0),
        Action::DetailEnd => Some(last),
        _ => None,
    };
    if let Some(to) = scrolled {
        state.approval_scroll = to.min(last);
        return Vec::new();
    }
    let before = state.approval_selected;
    if move_in(&mut state.approval_selected, state.approvals.len(), action) {
        // Another approval's detail starts at its top; the same one's stays where it was.
        if state.approval_selected != before {
            state.approval_scroll = 0;
        }
        return Vec::new();
    }
    if action == Action::Back {
        state.screen = Screen::Sessions;
        return Vec::new();
    }
    let i = state.approval_selected;
    let Some(approval) = state.approvals.get(i) else {
        return Vec::new();
    };
    let question = approval.kind == ApprovalType::HumanContact;
    match action {
        Action::Approve => return decide(state, i, true),
        Action::ApproveAcceptEdits => return settings::approve_accepting_edits(state, i),
        Action::Deny => return decide(state, i, false),
        Action::Reply | Action::Open if question => return decide(state, i, false),
        Action::Open => {
            let id = approval.session_id.clone();
            return open(state, &id);
        }
        _ => {}
    }
    Vec::new()
}

/// Approves the `i`th pending approval at once, or opens the box for a denial's comment (or a
/// question's answer). While its daemon is not connected, nothing is sent and it stays listed.
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
    if let Some(why) = fleet::unsent(state, &approval.id) {
        state.flash(why, true);
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
    vec![Command::Decide(approve_params(id))]
}

/// The decision that approves tool call `id`.
pub(super) fn approve_params(id: String) -> SendDecisionParams {
    SendDecisionParams {
        call_id: Some(id),
        kind: Some("function_call".into()),
        decision: Some("approve".into()),
        comment: None,
    }
}
