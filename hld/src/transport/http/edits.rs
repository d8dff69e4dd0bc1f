//! Session routes that change what is stored: PATCH, bulk archive and restore, hard delete;
//! over the domain functions of `updateSessionTitle`, `updateSessionSettings`,
//! `archiveSession`, `bulkArchiveSessions`, `updateDraft`, `discardDraft`, `restoreDraft` and
//! `deleteSession`.

use std::sync::Arc;

use hld_client::protocol::{
    ArchiveSessionParams, BulkArchiveSessionsParams, DraftFields, DraftState, SessionIdParams,
    UpdateDraftParams, UpdateSessionSettingsParams, UpdateSessionTitleParams,
};
use hyper::StatusCode;
use serde::Deserialize;
use serde_json::json;

use super::api::{data, domain, Call};
use super::guard::Refusal;
use super::launches::{no_content, Proxy};
use super::shapes::session_detail;
use super::Reply;
use crate::daemon::Daemon;
use crate::error::Error;
use crate::handlers::{control, drafts, sessions};

/// `PATCH /sessions/{id}` (reference section 3). `model_id` is the model when `model` is not
/// given: the daemon keeps one model string.
#[derive(Debug, Deserialize)]
struct Patch {
    title: Option<String>,
    auto_accept_edits: Option<bool>,
    dangerously_skip_permissions: Option<bool>,
    dangerously_skip_permissions_timeout_ms: Option<i64>,
    archived: Option<bool>,
    model: Option<String>,
    model_id: Option<String>,
    #[serde(flatten)]
    proxy: Proxy,
    additional_directories: Option<Vec<String>>,
    working_dir: Option<String>,
    editor_state: Option<String>,
    status: Option<String>,
}

fn bad(message: String) -> Refusal {
    Refusal::new(StatusCode::BAD_REQUEST, "HLD-3001", message)
}

/// `PATCH /sessions/{id}`: each field given through the domain function that owns it (the
/// modes, model and extra directories through `updateSessionSettings`, so turning the bypass
/// on approves the pending approvals it covers) → 200 `{data: Session}`. Everything refusable is checked
/// before anything is written.
pub async fn patch(call: &Call<'_>, daemon: &Arc<Daemon>, id: &str) -> Result<Reply, Refusal> {
    let p: Patch = call.json()?;
    p.proxy.refuse()?;
    let row = sessions::session(daemon, id).await.map_err(domain)?;
    let is_draft = row.draft.is_some();
    if !is_draft && (p.working_dir.is_some() || p.editor_state.is_some()) {
        return Err(bad(format!(
            "session {id} has run: working_dir and editor_state belong to drafts"
        )));
    }
    let current = match &row.draft {
        Some(state) => state.as_str(),
        None => row.status.as_str(),
    };
    // Only a draft moves, between draft and discarded; naming the current status is no change.
    let moved = match (p.status.as_deref(), &row.draft) {
        (None, _) => None,
        (Some(status), _) if status == current => None,
        (Some("discarded"), Some(DraftState::Draft)) => Some(DraftState::Discarded),
        (Some("draft"), Some(DraftState::Discarded)) => Some(DraftState::Draft),
        (Some(status), _) => {
            return Err(bad(format!(
                "status can only move between draft and discarded, not {current} to {status}"
            )))
        }
    };
    let d = || Arc::clone(daemon);
    if let Some(title) = p.title {
        let params = UpdateSessionTitleParams {
            session_id: id.to_owned(),
            title,
        };
        control::update_session_title(d(), params)
            .await
            .map_err(domain)?;
    }
    if p.working_dir.is_some() || p.editor_state.is_some() {
        let params = UpdateDraftParams {
            session_id: id.to_owned(),
            fields: DraftFields {
                working_dir: p.working_dir,
                editor_state: p.editor_state,
                ..DraftFields::default()
            },
        };
        drafts::update_draft(d(), params).await.map_err(domain)?;
    }
    let model = p.model.or(p.model_id);
    let timeout = p.dangerously_skip_permissions_timeout_ms;
    if p.auto_accept_edits.is_some()
        || p.dangerously_skip_permissions.is_some()
        || timeout.is_some()
        || model.is_some()
        || p.additional_directories.is_some()
    {
        // A timeout of 0 clears the expiry: the bypass stays as it is, without one.
        let (bypass, timeout) = match timeout {
            Some(0) => (
                p.dangerously_skip_permissions
                    .or(Some(row.new.modes.dangerously_skip_permissions)),
                None,
            ),
            t => (p.dangerously_skip_permissions, t),
        };
        let params = UpdateSessionSettingsParams {
            session_id: id.to_owned(),
            auto_accept_edits: p.auto_accept_edits,
            dangerously_skip_permissions: bypass,
            dangerously_skip_permissions_timeout_ms: timeout,
            model,
            additional_directories: p.additional_directories,
            ..UpdateSessionSettingsParams::default()
        };
        control::update_session_settings(d(), params)
            .await
            .map_err(domain)?;
    }
    if let Some(archived) = p.archived {
        let params = ArchiveSessionParams {
            session_id: id.to_owned(),
            archived,
        };
        control::archive_session(d(), params)
            .await
            .map_err(domain)?;
    }
    if let Some(to) = moved {
        let params = SessionIdParams {
            session_id: id.to_owned(),
        };
        let done = match to {
            DraftState::Discarded => drafts::discard_draft(d(), params).await,
            _ => drafts::restore_draft(d(), params).await,
        };
        done.map_err(domain)?;
    }
    let row = sessions::session(daemon, id).await.map_err(domain)?;
    Ok(data(
        StatusCode::OK,
        session_detail(&row.to_info(), &row.to_state()),
    ))
}

/// 200 `{success: true}` or 207 `{success: false, failed_sessions}`.
fn bulk(failed_sessions: Vec<String>) -> Reply {
    if failed_sessions.is_empty() {
        data(StatusCode::OK, json!({"success": true}))
    } else {
        let body = json!({"success": false, "failed_sessions": failed_sessions});
        data(StatusCode::MULTI_STATUS, body)
    }
}

/// `POST /sessions/archive`: `bulkArchiveSessions`; an empty list is 400 `HLD-3001`.
pub async fn archive(call: &Call<'_>, daemon: &Arc<Daemon>) -> Result<Reply, Refusal> {
    let params: BulkArchiveSessionsParams = call.json()?;
    let r = control::bulk_archive_sessions(Arc::clone(daemon), params)
        .await
        .map_err(domain)?;
    Ok(bulk(r.failed_sessions))
}

#[derive(Debug, Deserialize)]
struct Restore {
    #[serde(default)]
    session_ids: Vec<String>,
}

/// `POST /sessions/restore`: `restoreDraft` of each discarded draft; an empty list is 400
/// `HLD-3002`.
pub async fn restore(call: &Call<'_>, daemon: &Arc<Daemon>) -> Result<Reply, Refusal> {
    let r: Restore = call.json()?;
    if r.session_ids.is_empty() {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "HLD-3002",
            "session_ids must name at least one session",
        ));
    }
    let mut failed = Vec::new();
    for id in r.session_ids {
        let params = SessionIdParams {
            session_id: id.clone(),
        };
        if drafts::restore_draft(Arc::clone(daemon), params)
            .await
            .is_err()
        {
            failed.push(id);
        }
    }
    Ok(bulk(failed))
}

/// `DELETE /sessions/{id}/hard-delete-empty`: `deleteSession` of an empty draft → 204; not a
/// draft 400 `HLD-4010`, a draft with contents 400 `HLD-4011`.
pub async fn hard_delete(daemon: &Arc<Daemon>, id: &str) -> Result<Reply, Refusal> {
    let row = sessions::session(daemon, id).await.map_err(domain)?;
    if row.draft.is_none() {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "HLD-4010",
            format!("session {id} is not a draft"),
        ));
    }
    let params = SessionIdParams {
        session_id: id.to_owned(),
    };
    match control::delete_session(Arc::clone(daemon), params).await {
        Ok(_) => Ok(no_content()),
        Err(Error::InvalidParams { message, .. }) => {
            Err(Refusal::new(StatusCode::BAD_REQUEST, "HLD-4011", message))
        }
        Err(e) => Err(domain(e)),
    }
}
