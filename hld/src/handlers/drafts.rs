//! Draft methods: create, update, discard and restore a session that has not run yet.

use std::sync::Arc;

use hld_client::protocol::*;

use super::control::store_error;
use super::sessions::{no_nul, session};
use crate::daemon::Daemon;
use crate::error::{Error, Result};
use crate::session::options::title;

pub async fn create_draft(daemon: Arc<Daemon>, mut p: DraftFields) -> Result<CreateDraftResult> {
    no_nul(&p)?;
    p.title = p.title.as_deref().map(title).transpose()?;
    let id = uuid::Uuid::new_v4().to_string();
    let run_id = uuid::Uuid::new_v4().to_string();
    let session_id = id.clone();
    daemon
        .store
        .write(move |w, _| w.create_draft(&id, &run_id, &p))
        .await
        .map_err(store_error("failed to create the draft"))?;
    Ok(CreateDraftResult { session_id })
}

pub async fn update_draft(daemon: Arc<Daemon>, mut p: UpdateDraftParams) -> Result<SuccessResult> {
    no_nul(&p)?;
    p.fields.title = p.fields.title.as_deref().map(title).transpose()?;
    drafted(&daemon, &p.session_id, None).await?;
    daemon
        .store
        .write(move |w, _| w.update_draft(&p.session_id, &p.fields))
        .await
        .map_err(store_error("failed to update the draft"))?;
    Ok(SuccessResult { success: true })
}

/// `launchDraft`: the draft's fields become `launchSession` params, run by the same code.
pub async fn launch_draft(
    daemon: Arc<Daemon>,
    p: LaunchDraftParams,
) -> Result<LaunchSessionResult> {
    no_nul(&p)?;
    drafted(&daemon, &p.session_id, Some(&DraftState::Draft)).await?;
    let row = session(&daemon, &p.session_id).await?;
    let (working_dir, control) = (row.to_info().working_dir, row.control());
    if let (Some(dir), Some(true)) = (&working_dir, p.create_directory) {
        create_directory(dir).await?;
    }
    let modes = &row.new.modes;
    // A bypass with an expiry keeps the time it has left; one that has ended is off.
    let now = crate::time::now();
    let params = LaunchSessionParams {
        query: p.query.unwrap_or(row.new.query.clone()),
        working_dir,
        model: row.new.options.model.clone(),
        title: row.new.title.clone(),
        auto_accept_edits: Some(modes.auto_accept_edits),
        dangerously_skip_permissions: Some(modes.bypass_active(&now)),
        dangerously_skip_permissions_timeout: modes.bypass_left_ms(&now),
        additional_directories: Some(control.additional_directories),
        ..LaunchSessionParams::default()
    };
    super::sessions::launch(daemon, params, Some(p.session_id)).await
}

/// Creates `dir` (`~` expanded) and its parents, for a launch asked to.
pub async fn create_directory(dir: &str) -> Result<()> {
    let path = hld_client::config::expand_tilde(dir);
    tokio::fs::create_dir_all(&path).await.map_err(|e| {
        Error::invalid_param(
            "create_directory",
            "a directory that can be created",
            "a directory that cannot be created",
            format!("cannot create {}: {e}", path.display()),
        )
    })
}

pub async fn discard_draft(daemon: Arc<Daemon>, p: SessionIdParams) -> Result<SuccessResult> {
    moved(
        &daemon,
        p.session_id,
        DraftState::Draft,
        DraftState::Discarded,
    )
    .await
}

pub async fn restore_draft(daemon: Arc<Daemon>, p: SessionIdParams) -> Result<SuccessResult> {
    moved(
        &daemon,
        p.session_id,
        DraftState::Discarded,
        DraftState::Draft,
    )
    .await
}

async fn moved(
    daemon: &Daemon,
    session_id: String,
    from: DraftState,
    to: DraftState,
) -> Result<SuccessResult> {
    drafted(daemon, &session_id, Some(&from)).await?;
    let (id, want) = (session_id.clone(), from.clone());
    let done = daemon
        .store
        .write(move |w, _| w.move_draft(&id, &from, &to))
        .await
        .map_err(store_error("failed to change the draft"))?;
    if !done {
        return Err(not_draft(&session_id, Some(&want)));
    }
    Ok(SuccessResult { success: true })
}

/// Refuses a session that is not a draft (or not one in `state`, when given).
async fn drafted(daemon: &Daemon, session_id: &str, state: Option<&DraftState>) -> Result<()> {
    let row = session(daemon, session_id).await?;
    match (&row.draft, state) {
        (Some(_), None) => Ok(()),
        (Some(is), Some(want)) if is == want => Ok(()),
        _ => Err(not_draft(session_id, state)),
    }
}

fn not_draft(session_id: &str, state: Option<&DraftState>) -> Error {
    let expected = match state {
        Some(DraftState::Discarded) => "a discarded draft",
        Some(_) => "a draft being composed",
        None => "a draft",
    };
    Error::invalid_param(
        "session_id",
        expected,
        "another session",
        format!("session {session_id} is not {expected}"),
    )
}

/// Whether a draft holds nothing worth keeping (the reference's rule for deleting one): no
/// title but "Untitled", a blank query, no editor contents but `{}`, no model but `sonnet`.
pub(super) fn empty(row: &crate::store::SessionRow) -> bool {
    let blank = |s: &Option<String>, allowed: &str| {
        s.as_deref()
            .is_none_or(|s| s.trim().is_empty() || s == allowed)
    };
    blank(&row.new.title, "Untitled")
        && row.new.query.trim().is_empty()
        && blank(&row.editor_state, "{}")
        && blank(&row.new.options.model, "sonnet")
}
