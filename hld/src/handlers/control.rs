//! Organising sessions: titles, the archive, leaves, approval modes, paths, search, deletion.

use std::sync::Arc;

use hld_client::protocol::*;

use super::sessions::{no_nul, required};
use crate::daemon::Daemon;
use crate::error::{Error, Result};
use crate::model::Modes;
use crate::session::options::{additional_directories, bypass_expiry, permission_mode, title};
use crate::store::{read, SessionRow, StoreError, Writer};

/// Default and largest `limit` of `searchSessions`; default of `getRecentPaths`.
const SEARCH_LIMIT: (i64, i64) = (50, 1000);
const RECENT_PATHS_LIMIT: i64 = 20;

/// A store failure as the client sees it: unknown or running session -32602, else -32603.
pub(super) fn store_error(action: &str) -> impl Fn(StoreError) -> Error + '_ {
    move |e| match e {
        StoreError::SessionNotFound(id) => Error::invalid_param(
            "session_id",
            "existing session id",
            UNKNOWN_ID,
            format!("{action}: session not found: {id}"),
        ),
        StoreError::SessionActive(id) => Error::invalid_param(
            "session_id",
            "a session that is not running",
            "a running session",
            format!("{action}: session is still running: {id} (interrupt it first)"),
        ),
        e => Error::internal(action, e),
    }
}

/// A positive `limit`, or `default`, at most `max`.
fn limit(value: Option<i64>, default: i64, max: i64) -> Result<i64> {
    match value {
        None => Ok(default),
        Some(n) if n <= 0 => Err(Error::invalid_param(
            "limit",
            "positive integer",
            "non-positive integer",
            "limit must be positive",
        )),
        Some(n) => Ok(n.min(max)),
    }
}

fn infos(rows: &[SessionRow]) -> SessionsResult {
    SessionsResult {
        sessions: rows.iter().map(SessionRow::to_info).collect(),
    }
}

pub async fn update_session_title(
    daemon: Arc<Daemon>,
    p: UpdateSessionTitleParams,
) -> Result<SuccessResult> {
    no_nul(&p)?;
    required(&p.session_id, "session_id")?;
    let kept = Some(title(&p.title)?).filter(|t| !t.is_empty());
    let id = p.session_id.clone();
    daemon
        .store
        .write(move |w, out| w.set_title(&id, kept.as_deref(), out))
        .await
        .map_err(store_error("failed to update the title"))?;
    Ok(SuccessResult { success: true })
}

pub async fn archive_session(
    daemon: Arc<Daemon>,
    p: ArchiveSessionParams,
) -> Result<SuccessResult> {
    required(&p.session_id, "session_id")?;
    let id = p.session_id.clone();
    let missing = daemon
        .store
        .write(move |w, out| w.set_archived(&[id], p.archived, out))
        .await
        .map_err(store_error("failed to archive the session"))?;
    if !missing.is_empty() {
        return Err(store_error("failed to archive the session")(
            StoreError::SessionNotFound(p.session_id),
        ));
    }
    Ok(SuccessResult { success: true })
}

pub async fn bulk_archive_sessions(
    daemon: Arc<Daemon>,
    p: BulkArchiveSessionsParams,
) -> Result<BulkArchiveSessionsResult> {
    if p.session_ids.is_empty() {
        return Err(Error::required(
            "session_ids",
            "non-empty array of session ids",
            "empty array",
        ));
    }
    let failed_sessions = daemon
        .store
        .write(move |w, out| w.set_archived(&p.session_ids, p.archived, out))
        .await
        .map_err(store_error("failed to archive the sessions"))?;
    Ok(BulkArchiveSessionsResult {
        success: failed_sessions.is_empty(),
        failed_sessions,
    })
}

/// Brings an archived session back to the list, as working with it does; failures are logged.
pub async fn unarchive(daemon: &Daemon, session_id: &str) {
    // Read first: a session that is not archived needs no write, so the call it follows is
    // not held up behind a store that cannot write.
    let id = session_id.to_owned();
    let archived = daemon.store.read(move |c| read::session(c, &id)).await;
    if !matches!(archived, Ok(Some(SessionRow { archived: true, .. }))) {
        return;
    }
    let ids = vec![session_id.to_owned()];
    let unarchive = move |w: &mut Writer, out: &mut Vec<_>| w.set_archived(&ids, false, out);
    if let Err(e) = daemon.store.write(unarchive).await {
        tracing::warn!(session = %session_id, error = %e, "cannot unarchive");
    }
}

pub async fn get_session_leaves(
    daemon: Arc<Daemon>,
    p: GetSessionLeavesParams,
) -> Result<SessionsResult> {
    let filter = p.filter.unwrap_or_default();
    let rows = daemon
        .store
        .read(move |c| read::leaves(c, filter))
        .await
        .map_err(|e| Error::internal("failed to list sessions", e))?;
    Ok(infos(&rows))
}

/// `updateSessionSettings`: stored (publishing `session_settings_changed`), then the model and
/// permission mode given applied to the session's live process, if it has one.
pub async fn update_session_settings(
    daemon: Arc<Daemon>,
    mut p: UpdateSessionSettingsParams,
) -> Result<SuccessResult> {
    let mode = permission_mode(p.permission_mode.take())?;
    if p.model.as_deref().is_some_and(|m| m.trim().is_empty()) {
        return Err(Error::invalid_param(
            "model",
            "a model alias or id",
            "empty string",
            "model must not be empty",
        ));
    }
    no_nul(&p)?;
    let dirs = match p.additional_directories.take() {
        Some(dirs) => Some(additional_directories(Some(dirs))?),
        None => None,
    };
    let current = super::sessions::session(&daemon, &p.session_id).await?;
    let now = crate::time::now();
    let before = &current.new.modes;
    let bypass = p
        .dangerously_skip_permissions
        .unwrap_or_else(|| before.bypass_active(&now));
    let bypass_expires_at = match (
        p.dangerously_skip_permissions,
        p.dangerously_skip_permissions_timeout_ms,
    ) {
        (None, None) => before.bypass_expires_at.clone().filter(|_| bypass),
        // Turned on or off, or given a new timeout: the expiry runs from now.
        (_, timeout) => bypass_expiry(bypass, timeout, "dangerously_skip_permissions_timeout_ms")?,
    };
    let modes = Modes {
        auto_accept_edits: p.auto_accept_edits.unwrap_or(before.auto_accept_edits),
        dangerously_skip_permissions: bypass,
        bypass_expires_at,
        permission_mode: before.permission_mode.clone(),
        resume_on_reset: p.resume_on_reset.unwrap_or(before.resume_on_reset),
    };
    let has_expiry = modes.bypass_expires_at.is_some();
    let (id, model, run_mode) = (p.session_id.clone(), p.model.clone(), mode.clone());
    let set = move |w: &mut Writer, out: &mut Vec<_>| {
        w.set_run_settings(&id, model.as_deref(), run_mode.as_ref())?;
        if let Some(dirs) = &dirs {
            w.set_additional_directories(&id, dirs, out)?;
        }
        w.set_modes(&id, &modes, out)
    };
    daemon
        .store
        .write(set)
        .await
        .map_err(store_error("failed to update the settings"))?;
    if has_expiry {
        daemon.bypass_set.notify_one();
    }
    daemon.sessions.apply(&p.session_id, p.model, mode).await;
    Ok(SuccessResult { success: true })
}

pub async fn get_recent_paths(
    daemon: Arc<Daemon>,
    p: GetRecentPathsParams,
) -> Result<GetRecentPathsResult> {
    let limit = limit(p.limit, RECENT_PATHS_LIMIT, SEARCH_LIMIT.1)?;
    let paths = daemon
        .store
        .read(move |c| read::recent_paths(c, limit))
        .await
        .map_err(|e| Error::internal("failed to list recent paths", e))?
        .into_iter()
        .map(|(path, last_used, usage_count)| RecentPath {
            path,
            last_used,
            usage_count,
        })
        .collect();
    Ok(GetRecentPathsResult { paths })
}

/// The FTS5 expression for what a person typed: every word, quoted, as a prefix.
fn fts_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| w.replace('"', ""))
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{w}\"*"))
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

pub async fn search_sessions(
    daemon: Arc<Daemon>,
    p: SearchSessionsParams,
) -> Result<SessionsResult> {
    no_nul(&p)?;
    let Some(matching) = fts_query(&p.query) else {
        return Err(Error::required(
            "query",
            "words to search for",
            "empty string",
        ));
    };
    let limit = limit(p.limit, SEARCH_LIMIT.0, SEARCH_LIMIT.1)?;
    let rows = daemon
        .store
        .read(move |c| read::search(c, &matching, limit))
        .await
        .map_err(|e| Error::internal("failed to search sessions", e))?;
    Ok(infos(&rows))
}

pub async fn delete_session(daemon: Arc<Daemon>, p: SessionIdParams) -> Result<SuccessResult> {
    let row = super::sessions::session(&daemon, &p.session_id).await?;
    if row.draft.is_some() && !super::drafts::empty(&row) {
        return Err(Error::invalid_param(
            "session_id",
            "a finished session or an empty draft",
            "a draft with contents",
            format!(
                "session {} is a draft with contents (discard it)",
                p.session_id
            ),
        ));
    }
    if !row.status.is_active() {
        super::worktrees::release(&daemon, &row).await?;
    }
    let id = p.session_id.clone();
    daemon
        .store
        .write(move |w, _| w.delete_session(&id))
        .await
        .map_err(store_error("failed to delete the session"))?;
    daemon.sessions.close_deleted(&p.session_id);
    tracing::info!(session = %p.session_id, "session deleted");
    Ok(SuccessResult { success: true })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_words_become_quoted_prefixes() {
        assert_eq!(
            fts_query("flaky  test").as_deref(),
            Some("\"flaky\"* \"test\"*")
        );
        assert_eq!(fts_query("a\"b OR").as_deref(), Some("\"ab\"* \"OR\"*"));
        assert_eq!(fts_query(" \" "), None);
    }
}
