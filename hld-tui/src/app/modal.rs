//! Keys of the modal dialogs (deny, answer, launch form, confirmations) and the launch form's
//! values.

use hld_client::protocol::{PermissionMode, WorktreeParams};

use super::*;

pub(super) fn modal_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    let Some(modal) = state.modal.take() else {
        return Vec::new();
    };
    match modal {
        Modal::Help { top } => {
            let last = crate::help::overflow(state.width, state.height);
            let page = usize::from(state.height / 2);
            let top = match key.code {
                KeyCode::Char('?' | 'q') | KeyCode::Esc => return Vec::new(),
                KeyCode::Char('j') | KeyCode::Down => top + 1,
                KeyCode::Char('k') | KeyCode::Up => top.saturating_sub(1),
                KeyCode::Char(' ') | KeyCode::PageDown => top + page,
                KeyCode::PageUp => top.saturating_sub(page),
                KeyCode::Char('g') | KeyCode::Home => 0,
                KeyCode::Char('G') | KeyCode::End => last,
                _ => top,
            };
            state.modal = Some(Modal::Help { top: top.min(last) });
            Vec::new()
        }
        Modal::ConfirmInterrupt { session_id } => match key.code {
            KeyCode::Char('y') | KeyCode::Enter => {
                state.flash("interrupting…", false);
                vec![Command::Interrupt(session_id)]
            }
            KeyCode::Char('n') | KeyCode::Esc => Vec::new(),
            _ => {
                state.modal = Some(Modal::ConfirmInterrupt { session_id });
                Vec::new()
            }
        },
        Modal::Decide {
            approval_id,
            kind,
            mut input,
        } => match key.code {
            KeyCode::Esc => Vec::new(),
            // Alt+Enter starts a line; so does Enter, for the next of several questions asked
            // together, until each has its line.
            KeyCode::Enter
                if key.modifiers.contains(KeyModifiers::ALT)
                    || input.lines().len() < asked_here(state, &approval_id, kind) =>
            {
                input.insert_newline();
                state.modal = Some(Modal::Decide {
                    approval_id,
                    kind,
                    input,
                });
                Vec::new()
            }
            KeyCode::Enter => {
                let text = input.lines().join("\n").trim().to_owned();
                if kind == ApprovalType::HumanContact && text.is_empty() {
                    state.modal = Some(Modal::Decide {
                        approval_id,
                        kind,
                        input,
                    });
                    return Vec::new();
                }
                // The box stays open, what was typed kept, while the daemon is away or when a
                // choice's number names none.
                let slip = (kind == ApprovalType::HumanContact)
                    .then(|| no_such_choice(state, &approval_id, input.lines()))
                    .flatten();
                if let Some(why) = slip.or_else(|| fleet::unsent(state, &approval_id)) {
                    state.flash(why, true);
                    state.modal = Some(Modal::Decide {
                        approval_id,
                        kind,
                        input,
                    });
                    return Vec::new();
                }
                let (decision, status, kind_name, comment) = match kind {
                    ApprovalType::HumanContact => {
                        ("respond", ApprovalStatus::Responded, "human_contact", text)
                    }
                    // A tool call, or a kind this version does not know: the daemon refuses
                    // a denial that does not fit.
                    _ if text.is_empty() => (
                        "deny",
                        ApprovalStatus::Denied,
                        "function_call",
                        DEFAULT_DENIAL.to_owned(),
                    ),
                    _ => ("deny", ApprovalStatus::Denied, "function_call", text),
                };
                state.flash(
                    if decision == "respond" {
                        "answered"
                    } else {
                        "denied"
                    },
                    false,
                );
                resolve(state, &approval_id, status, Some(comment.clone()));
                vec![Command::Decide(SendDecisionParams {
                    call_id: Some(approval_id),
                    kind: Some(kind_name.into()),
                    decision: Some(decision.into()),
                    comment: Some(comment),
                })]
            }
            _ => {
                edit(&mut input, key);
                state.modal = Some(Modal::Decide {
                    approval_id,
                    kind,
                    input,
                });
                Vec::new()
            }
        },
        Modal::Rename {
            session_id,
            mut input,
        } => match key.code {
            KeyCode::Esc => Vec::new(),
            KeyCode::Enter => {
                let title = input.lines().join(" ").trim().to_owned();
                vec![Command::Rename { session_id, title }]
            }
            _ => {
                edit(&mut input, key);
                state.modal = Some(Modal::Rename { session_id, input });
                Vec::new()
            }
        },
        Modal::Bypass {
            session_id,
            mut input,
        } => match key.code {
            KeyCode::Esc => Vec::new(),
            KeyCode::Enter => match parse_duration(&input.lines().join("")) {
                Ok(timeout) => {
                    state.flash("bypassing permissions", false);
                    vec![Command::Settings(UpdateSessionSettingsParams {
                        session_id,
                        dangerously_skip_permissions: Some(true),
                        dangerously_skip_permissions_timeout_ms: timeout,
                        ..Default::default()
                    })]
                }
                Err(e) => {
                    state.flash(e, true);
                    state.modal = Some(Modal::Bypass { session_id, input });
                    Vec::new()
                }
            },
            _ => {
                edit(&mut input, key);
                state.modal = Some(Modal::Bypass { session_id, input });
                Vec::new()
            }
        },
        Modal::Launch(mut form) => {
            let (commands, open) = launch_key(state, &mut form, key);
            if open {
                state.modal = Some(Modal::Launch(form));
            }
            commands
        }
        Modal::Merge {
            session_id,
            strategy,
        } => review::merge_key(state, session_id, strategy, key),
        Modal::ConfirmDiscard {
            session_id,
            refused,
        } => review::discard_key(state, session_id, refused, key),
        Modal::Model(mut picker) => {
            settings::picker_key(state, &mut picker, key).unwrap_or_else(|| {
                state.modal = Some(Modal::Model(picker));
                Vec::new()
            })
        }
    }
}

/// Working directories of recent sessions, most recent first, each once.
pub fn recent_dirs(state: &State) -> Vec<String> {
    let mut seen = HashSet::new();
    // An isolated session's is its repository: its own worktree is no place for another.
    let dir = |s: &SessionInfo| match &s.worktree {
        Some(w) => Some(w.repository.clone()),
        None => s.working_dir.clone(),
    };
    state
        .sessions
        .iter()
        .filter_map(dir)
        .filter(|d| !d.is_empty() && seen.insert(d.clone()))
        .collect()
}

pub(super) fn launch_form(state: &State) -> LaunchForm {
    let mut query = TextArea::default();
    query.set_placeholder_text("What should Claude do? (Enter launches, Alt+Enter: new line)");
    let mut branch = TextArea::default();
    branch.set_placeholder_text("optional, when isolated: else named from the query");
    let mut working_dir = TextArea::default();
    // Where the dashboard was started, as `hlyr launch` and `claude` take it (an isolated
    // session's worktree stands for its repository, as in `recent_dirs`); else the most
    // recent directory. The recent ones are on ↑/↓.
    let here = state.here.as_deref().map(|here| {
        let worktree = state
            .sessions
            .iter()
            .filter_map(|s| s.worktree.as_ref())
            .find(|w| !w.path.is_empty() && std::path::Path::new(here).starts_with(&w.path));
        worktree.map_or_else(|| here.to_owned(), |w| w.repository.clone())
    });
    if let Some(dir) = here.or_else(|| recent_dirs(state).into_iter().next()) {
        working_dir.insert_str(dir);
    }
    LaunchForm {
        query,
        working_dir,
        model: 0,
        approvals: ApprovalMode::Ask,
        worktree: false,
        branch,
        field: Field::Query,
        recent: None,
        draft: None,
        daemon: 0,
        launching: false,
        error: None,
        unsaved: false,
    }
}

/// A key in the launch form: the commands it sends, and whether the form stays open.
pub(super) fn launch_key(
    state: &mut State,
    form: &mut LaunchForm,
    key: KeyEvent,
) -> (Vec<Command>, bool) {
    let action = keys::action(&[Scope::Forms], Key::of(key, false));
    // Enter launches from any field, as it sends in Claude Code; Alt+Enter starts a new line
    // of the query.
    let enter = key.code == KeyCode::Enter && !key.modifiers.contains(KeyModifiers::ALT);
    let submit = action == Some(Action::Submit) || enter;
    let back = action == Some(Action::Back);
    if form.launching {
        // Esc hides the form: the launch goes on, and its session opens once started.
        if back {
            state.flash("launching…", false);
        }
        return (Vec::new(), !back);
    }
    if submit || back {
        let query = form.query.lines().join("\n");
        if back && (query.trim().is_empty() || form.unsaved) {
            return (Vec::new(), false);
        }
        if query.trim().is_empty() {
            state.flash("the query is empty", true);
            form.field = Field::Query;
            return (Vec::new(), true);
        }
        let dir = form.working_dir.lines().join("");
        let params = LaunchSessionParams {
            query,
            model: MODELS[form.model].map(str::to_owned),
            working_dir: Some(dir.trim().to_owned()).filter(|d| !d.is_empty()),
            no_approvals: (form.approvals == ApprovalMode::Off).then_some(true),
            auto_accept_edits: (form.approvals == ApprovalMode::AutoAcceptEdits).then_some(true),
            permission_mode: (form.approvals == ApprovalMode::Plan).then_some(PermissionMode::Plan),
            worktree: form.worktree.then(|| WorktreeParams {
                branch: Some(form.branch.lines().join("").trim().to_owned())
                    .filter(|b| !b.is_empty()),
                base: None,
            }),
            ..Default::default()
        };
        if back {
            let save = drafts::save(form, params);
            let save = match form.draft {
                Some(_) => save,
                None => fleet::on_daemon(state, form.daemon, save),
            };
            return (vec![save], false);
        }
        (form.launching, form.error) = (true, None);
        let launch = match form.draft.clone() {
            Some(id) => drafts::launch(state, id, params),
            None => fleet::on_daemon(state, form.daemon, Command::Launch(Box::new(params))),
        };
        return (vec![launch], true);
    }
    match action {
        Some(Action::NextDaemon) if state.fleet.is_fleet() && form.draft.is_none() => {
            form.daemon = (form.daemon + 1) % state.fleet.daemons.len();
        }
        Some(Action::NextField) => form.field = form.field.step(true),
        Some(Action::PreviousField) => form.field = form.field.step(false),
        Some(Action::PreviousChoice | Action::NextChoice) if form.field == Field::Worktree => {
            toggle_worktree(form);
        }
        Some(choice @ (Action::PreviousChoice | Action::NextChoice))
            if matches!(form.field, Field::Model | Field::Approvals) =>
        {
            let forward = choice == Action::NextChoice;
            if form.field == Field::Model {
                let n = MODELS.len();
                form.model = if forward {
                    (form.model + 1) % n
                } else {
                    (form.model + n - 1) % n
                };
            } else {
                form.approvals = form.approvals.step(forward);
            }
            form.error.take_if(|e| e.field == Some(form.field));
        }
        Some(dir @ (Action::Up | Action::Down)) if form.field == Field::WorkingDir => {
            let dirs = recent_dirs(state);
            if !dirs.is_empty() {
                let next = match (form.recent, dir == Action::Down) {
                    (None, _) => 0,
                    (Some(i), true) => (i + 1) % dirs.len(),
                    (Some(i), false) => (i + dirs.len() - 1) % dirs.len(),
                };
                form.recent = Some(next);
                form.working_dir = TextArea::default();
                form.working_dir.insert_str(&dirs[next]);
                form.error.take_if(|e| e.field == Some(Field::WorkingDir));
            }
        }
        _ => {
            let edited = match form.field {
                Field::Query => edit(&mut form.query, key),
                Field::WorkingDir => edit(&mut form.working_dir, key),
                Field::Branch => edit(&mut form.branch, key),
                Field::Worktree if key.code == KeyCode::Char(' ') => {
                    toggle_worktree(form);
                    false
                }
                Field::Model | Field::Approvals | Field::Worktree => false,
            };
            // What the daemon refused is said until the field it names changes.
            if edited {
                form.error.take_if(|e| e.field == Some(form.field));
            }
        }
    }
    (Vec::new(), true)
}

/// Turns isolation on or off: what the daemon refused was a launch with the other setting,
/// whichever field it named (a worktree it could not make is said at the branch, a directory
/// in no repository at the directory), so it is said no more.
fn toggle_worktree(form: &mut LaunchForm) {
    form.worktree = !form.worktree;
    form.error = None;
}

/// A bypass duration as typed: `30s`, `15m`, `2h` (a bare number is minutes), or empty,
/// `0` or `until off` for none. Milliseconds, or `None` for no expiry.
pub fn parse_duration(text: &str) -> Result<Option<i64>, String> {
    let text = text.trim().to_lowercase();
    if text.is_empty() || text == "0" || text == "until off" {
        return Ok(None);
    }
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text.as_str(), "m"),
    };
    let scale = match unit.trim() {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(format!("not a duration: {text} (try 30s, 15m, 2h)")),
    };
    match number.parse::<i64>() {
        Ok(n) if n > 0 => Ok(Some(n * scale)),
        _ => Err(format!("not a duration: {text} (try 30s, 15m, 2h)")),
    }
}

/// How long a session's bypass lasts from `now`: `Some(None)` when it has no expiry, `None`
/// when it is off (or over).
pub fn bypass_left(s: &SessionInfo, now: DateTime<Utc>) -> Option<Option<chrono::Duration>> {
    if !s.control.dangerously_skip_permissions {
        return None;
    }
    let Some(expiry) = &s.control.dangerously_skip_permissions_expires_at else {
        return Some(None);
    };
    let expiry = DateTime::parse_from_rfc3339(expiry)
        .ok()?
        .with_timezone(&Utc);
    (expiry > now).then(|| Some(expiry - now))
}

/// What to tell an answer to approval `id` (a line per question asked together) whose number
/// names no choice of its question; `None` when every answer may go.
fn no_such_choice(state: &State, id: &str, lines: &[String]) -> Option<String> {
    let approval = state.approvals.iter().find(|a| a.id == id)?;
    let questions = hld_client::view::questions_of(approval)?;
    let answers = match questions.len() {
        1 => vec![lines.join("\n")],
        _ => lines.to_vec(),
    };
    let (question, _) = questions
        .iter()
        .zip(&answers)
        .find(|(q, answer)| q.names_no_choice(answer.trim()))?;
    Some(format!("“{}”: {}", question.text, question.choose_hint()))
}

/// How many questions approval `id` asks together (a line each), when it asks several.
fn asked_here(state: &State, id: &str, kind: ApprovalType) -> usize {
    let approval = state.approvals.iter().find(|a| a.id == id);
    match (kind, approval) {
        (ApprovalType::HumanContact, Some(a)) => hld_client::view::asked_together(a).len(),
        _ => 0,
    }
}

/// The rename box of `session_id`, holding `title`.
pub(super) fn rename_box(session_id: String, title: &str) -> Modal {
    let mut input = TextArea::default();
    input.insert_str(title);
    Modal::Rename {
        session_id,
        input: Box::new(input),
    }
}

/// A title the daemon refused: its reason is shown and the rename box opens again with the
/// title, to be corrected rather than typed again, unless another dialog took the screen.
pub(super) fn unrenamed(
    state: &mut State,
    session_id: String,
    title: &str,
    error: &str,
) -> Vec<Command> {
    state.flash(format!("not renamed: {error}"), true);
    if state.modal.is_none() {
        state.modal = Some(rename_box(session_id, title));
    }
    Vec::new()
}

/// Types `key` into `area` as a shell's line takes it: Ctrl+U erases what is before the
/// cursor (tui-textarea's own Ctrl+U undoes). Returns whether the text changed.
pub(super) fn edit(area: &mut TextArea<'_>, key: KeyEvent) -> bool {
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('u') {
        return area.delete_line_by_head();
    }
    area.input(key)
}
