//! Steering a session mid-way: Shift+Tab cycles its mode (default → accept edits → plan, as
//! `hld_client::mode` defines it), the model picker sets its model, and a plan (or any tool
//! call) can be approved with auto-accept of edits turned on after it.

use hld_client::mode::Mode;

use super::modal::edit;
use super::*;

/// The aliases `claude` takes for its current models, offered after the recent models.
const ALIASES: [&str; 3] = ["opus", "sonnet", "haiku"];
/// The most recent models the picker offers.
const RECENT_MODELS: usize = 8;

/// The model picker: recent models and the aliases, filtered by what is typed, or the typed
/// text itself (the daemon passes any model string to `claude` unchecked).
#[derive(Debug)]
pub struct ModelPicker {
    pub session_id: String,
    /// The session's model now.
    pub current: Option<String>,
    pub input: TextArea<'static>,
    /// Recent models, most recent first, then the aliases not among them.
    pub models: Vec<String>,
    /// The chosen row of [`ModelPicker::choices`]: typing puts it back on the first, the best
    /// match, which Enter takes.
    pub selected: usize,
}

impl ModelPicker {
    /// The rows shown: the models that contain the typed text, best first (the one it names,
    /// then those it begins, then the rest, each in the order of `models`); last, the typed
    /// text itself unless it names one of them, which is thus taken only when nothing
    /// matches or when moved to.
    pub fn choices(&self) -> Vec<String> {
        let typed = self.input.lines().join("").trim().to_owned();
        let needle = typed.to_lowercase();
        let mut rows: Vec<String> = self
            .models
            .iter()
            .filter(|m| m.to_lowercase().contains(&needle))
            .cloned()
            .collect();
        rows.sort_by_key(|m| {
            let m = m.to_lowercase();
            (m != needle, !m.starts_with(&needle))
        });
        if !typed.is_empty() && !rows.iter().any(|m| m.eq_ignore_ascii_case(&typed)) {
            rows.push(typed);
        }
        rows
    }
}

/// The models of the known sessions, most recent activity first, each once, then the
/// aliases not among them.
pub fn recent_models(state: &State) -> Vec<String> {
    let mut models: Vec<String> = Vec::new();
    for model in state.sessions.iter().filter_map(|s| s.model.as_deref()) {
        if !model.is_empty() && !models.iter().any(|m| m == model) {
            models.push(model.to_owned());
            if models.len() == RECENT_MODELS {
                break;
            }
        }
    }
    for alias in ALIASES {
        if !models.iter().any(|m| m == alias) {
            models.push(alias.to_owned());
        }
    }
    models
}

/// Puts the selected session in the next mode of the cycle.
pub(super) fn cycle_mode(state: &mut State) -> Vec<Command> {
    let Some(id) = state.selected_session().map(|s| s.id.clone()) else {
        return Vec::new();
    };
    let Some(session) = state.sessions.iter().find(|s| s.id == id) else {
        return Vec::new();
    };
    // The next of the mode the daemon last reported: its `session_settings_changed` shows
    // the change, so the row never shows a mode the daemon does not have.
    let mode = Mode::of(&session.control).next();
    state.flash(format!("mode: {}…", mode.label()), false);
    vec![Command::Settings(mode.settings(&id))]
}

/// Opens the model picker for the selected session.
pub(super) fn open_picker(state: &mut State) {
    let Some(s) = state.selected_session() else {
        return;
    };
    let models = recent_models(state);
    let selected = s
        .model
        .as_ref()
        .and_then(|m| models.iter().position(|x| x == m))
        .unwrap_or(0);
    let mut input = TextArea::default();
    input.set_placeholder_text("a model id or alias; the list below narrows as you type");
    state.modal = Some(Modal::Model(Box::new(ModelPicker {
        session_id: s.id.clone(),
        current: s.model.clone(),
        input,
        models,
        selected,
    })));
}

/// A key in the model picker: `Some(commands)` closes it.
pub(super) fn picker_key(
    state: &mut State,
    picker: &mut ModelPicker,
    key: KeyEvent,
) -> Option<Vec<Command>> {
    let action = keys::action(&[Scope::Forms], Key::of(key, false));
    let choices = picker.choices();
    match action {
        Some(Action::Back) => return Some(Vec::new()),
        Some(Action::Submit) => {}
        _ if key.code == KeyCode::Enter => {}
        Some(Action::Down) if !choices.is_empty() => {
            picker.selected = (picker.selected + 1) % choices.len();
            return None;
        }
        Some(Action::Up) if !choices.is_empty() => {
            picker.selected = (picker.selected + choices.len() - 1) % choices.len();
            return None;
        }
        _ => {
            if edit(&mut picker.input, key) {
                picker.selected = 0;
            }
            return None;
        }
    }
    let Some(model) = choices.get(picker.selected).cloned() else {
        state.flash("type a model, or pick one with ↑/↓", true);
        return None;
    };
    state.flash(format!("model: {model}"), false);
    Some(vec![Command::Settings(UpdateSessionSettingsParams {
        session_id: picker.session_id.clone(),
        model: Some(model),
        ..Default::default()
    })])
}

/// Approves the `i`th pending approval, then turns auto-accept of edits on for its session
/// (for a plan: leaves plan mode for accept edits).
pub(super) fn approve_accepting_edits(state: &mut State, i: usize) -> Vec<Command> {
    let approval = &state.approvals[i];
    if approval.kind == ApprovalType::HumanContact {
        state.flash("a question: r answers it", false);
        return Vec::new();
    }
    if let Some(why) = fleet::unsent(state, &approval.id) {
        state.flash(why, true);
        return Vec::new();
    }
    let (id, session_id) = (approval.id.clone(), approval.session_id.clone());
    state.flash("approved; edits are accepted from now on", false);
    resolve(state, &id, ApprovalStatus::Approved, None);
    vec![Command::ApproveAcceptingEdits {
        decision: approve_params(id),
        session_id,
    }]
}
