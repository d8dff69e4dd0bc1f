//! Drafts: sessions composed but not launched, kept by the daemon (CodeLayer makes them as
//! you type). The list's third view shows them; Enter edits one in the launch form, which
//! launches it; Esc on a form with a query keeps it as a draft; X discards one.

use hld_client::protocol::{DraftFields, LaunchSessionParams, SessionInfo};
use tui_textarea::{CursorMove, TextArea};

use super::{
    launch_form, ApprovalMode, Command, FormError, LaunchForm, ListView, Modal, State, MODELS,
};

/// The drafts the daemon reported (`getSessionLeaves` with `filter: "draft"`).
pub(super) fn loaded(state: &mut State, mut drafts: Vec<SessionInfo>) {
    drafts.sort_by(|a, b| b.last_activity_at.cmp(&a.last_activity_at));
    state.drafts = drafts;
    if state.list.view == ListView::Drafts {
        let last = state.rows().len().saturating_sub(1);
        state.list.selected = state.list.selected.min(last);
    }
}

/// The launch form filled from `draft`, launching it when submitted.
pub(super) fn form_of(state: &State, draft: &SessionInfo) -> LaunchForm {
    let fields = DraftFields {
        working_dir: draft.working_dir.clone(),
        query: Some(draft.query.clone()),
        model: draft.model.clone(),
        auto_accept_edits: Some(draft.control.auto_accept_edits),
        ..Default::default()
    };
    filled(
        state,
        &fields,
        Some(draft.id.clone()),
        state.fleet.origin(&draft.id),
    )
}

/// The launch form holding `fields`, of draft `draft` (if any) on daemon `daemon`.
fn filled(state: &State, fields: &DraftFields, draft: Option<String>, daemon: usize) -> LaunchForm {
    let mut form = launch_form(state);
    form.query = TextArea::from(fields.query.as_deref().unwrap_or_default().lines());
    form.query.move_cursor(CursorMove::Bottom);
    form.query.move_cursor(CursorMove::End);
    if let Some(dir) = &fields.working_dir {
        form.working_dir = TextArea::default();
        form.working_dir.insert_str(dir);
    }
    form.model = MODELS
        .iter()
        .position(|m| *m == fields.model.as_deref())
        .unwrap_or(0);
    if fields.auto_accept_edits == Some(true) {
        form.approvals = ApprovalMode::AutoAcceptEdits;
    }
    (form.draft, form.daemon) = (draft, daemon);
    form
}

/// Keeping a form as a draft failed: it opens again with what it held (unless another box is
/// open), saying why; Esc then closes it for good.
pub(super) fn unsaved(
    state: &mut State,
    daemon: usize,
    draft: Option<String>,
    fields: &DraftFields,
    error: &str,
) -> Vec<Command> {
    let said = format!("Not kept as a draft: {error}. Esc again leaves it unsaved");
    if state.modal.is_some() {
        state.flash(said, true);
        return Vec::new();
    }
    let mut form = filled(state, fields, draft, daemon);
    form.unsaved = true;
    form.error = Some(FormError {
        field: None,
        text: said,
    });
    state.modal = Some(Modal::Launch(Box::new(form)));
    Vec::new()
}

/// What a draft keeps of `params` (the launch the form would make).
fn fields_of(params: &LaunchSessionParams) -> DraftFields {
    DraftFields {
        working_dir: params.working_dir.clone(),
        query: Some(params.query.clone()),
        model: params.model.clone(),
        auto_accept_edits: Some(params.auto_accept_edits == Some(true)),
        ..Default::default()
    }
}

/// Keeps the form's launch as a draft: a new one, or the draft it edits.
pub(super) fn save(form: &LaunchForm, params: LaunchSessionParams) -> Command {
    Command::SaveDraft {
        session_id: form.draft.clone(),
        fields: Box::new(fields_of(&params)),
    }
}

/// Launches the draft `session_id` as the form says; the list shows the sessions again.
pub(super) fn launch(
    state: &mut State,
    session_id: String,
    params: LaunchSessionParams,
) -> Command {
    state.drafts.retain(|d| d.id != session_id);
    state.list.view = ListView::Sessions;
    state.list.selected = 0;
    Command::LaunchDraft {
        session_id,
        fields: Box::new(fields_of(&params)),
        params: Box::new(params),
    }
}

/// Whether a draft can hold every option of `params`; if not, the draft is launched as a new
/// session and set aside.
pub fn holds(params: &LaunchSessionParams) -> bool {
    params.permission_mode.is_none() && params.no_approvals.is_none() && params.worktree.is_none()
}

/// `X` in the drafts view: sets the selected draft aside (`discardDraft`).
pub(super) fn discard(state: &mut State) -> Vec<Command> {
    let Some(id) = state
        .rows()
        .get(state.list.selected)
        .map(|r| r.session.id.clone())
    else {
        return Vec::new();
    };
    state.drafts.retain(|d| d.id != id);
    vec![Command::DiscardDraft(id)]
}
