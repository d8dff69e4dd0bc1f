//! Session methods: launch, list, state, conversation, continue, interrupt.

use std::sync::Arc;
use std::time::Duration;

use hld_client::protocol::*;

use super::control::store_error;
use super::messages::read_images;
use super::worktrees::{continuable, run_in, settle};
use crate::claude::prompt::Prompt;
use crate::daemon::Daemon;
use crate::error::{Error, Result};
use crate::model::{SessionOptions, Settings};
use crate::session::options::{max_turns, permission_mode, title};
use crate::session::Parent;
use crate::store::{read, SessionRow, StoreError};
use crate::worktree::Request;

/// A required, non-empty string param.
pub(super) fn required(value: &str, param: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::required(param, "non-empty string", "empty string"));
    }
    Ok(())
}

fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|s| !s.is_empty())
}

pub(crate) async fn session(daemon: &Daemon, session_id: &str) -> Result<SessionRow> {
    required(session_id, "session_id")?;
    let id = session_id.to_owned();
    daemon
        .store
        .read(move |c| read::session(c, &id)?.ok_or(StoreError::SessionNotFound(id)))
        .await
        .map_err(store_error("failed to get session"))
}

pub async fn launch_session(
    daemon: Arc<Daemon>,
    p: LaunchSessionParams,
) -> Result<LaunchSessionResult> {
    launch(daemon, p, None).await
}

/// Launches `p`, in place of the draft `draft` when given.
pub(super) async fn launch(
    daemon: Arc<Daemon>,
    mut p: LaunchSessionParams,
    draft: Option<String>,
) -> Result<LaunchSessionResult> {
    no_nul(&p)?;
    required(&p.query, "query")?;
    let query = std::mem::take(&mut p.query);
    let settings = Settings::launch(&p, daemon.config.resume_on_reset)?;
    let images = p.images.take().unwrap_or_default();
    let isolate = p.worktree.take();
    let mut options = SessionOptions::launch(p)?;
    let prompt = Prompt {
        text: query,
        images: read_images(images).await?,
    };
    let expires = settings.modes.bypass_expires_at.is_some();
    let made = match isolate {
        Some(w) => {
            let text = settings.title.as_deref().unwrap_or(&prompt.text);
            let req = Request {
                working_dir: &options.working_dir,
                branch: w.branch,
                base: w.base,
                text,
                base_branch: None,
            };
            Some(daemon.worktrees.create(&daemon.store, req).await?)
        }
        None => None,
    };
    run_in(&mut options, made.as_ref());
    let launched = daemon
        .sessions
        .launch(prompt, options, settings, None, draft)
        .await;
    let (session_id, run_id) = settle(&daemon, launched, made.as_ref()).await?;
    if expires {
        daemon.bypass_set.notify_one();
    }
    Ok(LaunchSessionResult { session_id, run_id })
}

pub async fn list_sessions(daemon: Arc<Daemon>, _: NoParams) -> Result<ListSessionsResult> {
    let rows = daemon
        .store
        .read(read::list_sessions)
        .await
        .map_err(|e| Error::internal("failed to list sessions", e))?;
    Ok(ListSessionsResult {
        sessions: rows.iter().map(SessionRow::to_info).collect(),
    })
}

pub async fn get_session_state(
    daemon: Arc<Daemon>,
    p: SessionIdParams,
) -> Result<GetSessionStateResult> {
    let row = session(&daemon, &p.session_id).await?;
    Ok(GetSessionStateResult {
        session: row.to_state(),
    })
}

pub async fn get_conversation(
    daemon: Arc<Daemon>,
    p: GetConversationParams,
) -> Result<GetConversationResult> {
    if p.limit.is_some_and(|l| l <= 0) {
        return Err(Error::invalid_param(
            "limit",
            "positive integer",
            "non-positive integer",
            "limit must be positive",
        ));
    }
    let fault = |e| Error::internal("failed to get conversation", e);
    let (after, limit) = (p.after_sequence, p.limit);
    let events = match (non_empty(p.claude_session_id), non_empty(p.session_id)) {
        (Some(claude_id), _) => daemon
            .store
            .read(move |c| read::conversation_for_claude_session(c, &claude_id, after, limit))
            .await
            .map_err(fault)?,
        (None, Some(id)) => daemon
            .store
            .read(move |c| {
                let found = read::conversation_for_session(c, &id, after, limit)?;
                found.ok_or(StoreError::SessionNotFound(id))
            })
            .await
            .map_err(store_error("failed to get conversation"))?,
        (None, None) => {
            return Err(Error::invalid_param(
                "session_id",
                "string (or claude_session_id)",
                "missing",
                "either session_id or claude_session_id is required",
            ))
        }
    };
    Ok(GetConversationResult { events })
}

pub async fn continue_session(
    daemon: Arc<Daemon>,
    mut p: ContinueSessionParams,
) -> Result<ContinueSessionResult> {
    no_nul(&p)?;
    required(&p.query, "query")?;
    // Checked before a running parent is interrupted.
    let images = read_images(p.images.take().unwrap_or_default()).await?;
    let mode = permission_mode(p.permission_mode.take())?;
    max_turns(p.max_turns)?;
    let named = p.title.take().as_deref().map(title).transpose()?;
    let parent = session(&daemon, &p.session_id).await?;
    continuable(&parent, p.worktree.as_ref())?;
    let Some(claude_session_id) = parent.claude_session_id.clone() else {
        return Err(Error::invalid_param(
            "session_id",
            "a session with a claude_session_id",
            "no claude_session_id",
            "parent session missing claude_session_id (cannot resume)",
        ));
    };
    if parent.status.is_active() {
        // A running parent is interrupted first, and the continuation waits for its turn to end.
        if daemon.sessions.interrupt(&parent.new.id).await.is_ok() {
            let wait = daemon.config.interrupt_grace + Duration::from_secs(5);
            daemon.sessions.wait_turn_ended(&parent.new.id, wait).await;
        }
    }
    let query = std::mem::take(&mut p.query);
    // Read again: the interrupt above may have ended a bypass or changed the parent.
    let parent = session(&daemon, &parent.new.id).await?;
    let settings = Settings::continued(&parent, named, mode, p.resume_on_reset);
    let isolate = p.worktree.take();
    let mut options = parent.new.options.continued(p)?;
    let made = match (isolate, &parent.worktree) {
        (Some(w), Some(info)) => {
            let req = Request {
                working_dir: std::path::Path::new(&info.repository),
                branch: w.branch,
                base: Some(info.branch.clone()),
                text: settings.title.as_deref().unwrap_or(&query),
                base_branch: Some(info.base_branch.clone()),
            };
            Some(daemon.worktrees.create(&daemon.store, req).await?)
        }
        _ => None,
    };
    run_in(&mut options, made.as_ref());
    let expires = settings.modes.bypass_expires_at.is_some();
    let parent = Parent {
        session_id: parent.new.id,
        claude_session_id,
    };
    let parent_session_id = parent.session_id.clone();
    let prompt = Prompt {
        text: query,
        images,
    };
    let launched = daemon
        .sessions
        .launch(prompt, options, settings, Some(parent), None)
        .await;
    let (session_id, run_id) = settle(&daemon, launched, made.as_ref()).await?;
    if expires {
        daemon.bypass_set.notify_one();
    }
    Ok(ContinueSessionResult {
        session_id,
        run_id,
        claude_session_id: String::new(),
        parent_session_id,
    })
}

pub async fn interrupt_session(
    daemon: Arc<Daemon>,
    p: SessionIdParams,
) -> Result<InterruptSessionResult> {
    required(&p.session_id, "session_id")?;
    daemon.sessions.interrupt(&p.session_id).await?;
    // Interrupting an archived session is working with it again: it comes back to the list.
    super::control::unarchive(&daemon, &p.session_id).await;
    Ok(InterruptSessionResult {
        success: true,
        session_id: p.session_id,
        status: SessionStatus::Completing.as_str().to_owned(),
        message: "Session interrupt requested, shutting down gracefully".to_owned(),
    })
}

/// Refuses params with a NUL in any string or key: no command line or environment carries one.
pub(super) fn no_nul(params: &impl serde::Serialize) -> Result<()> {
    fn find(value: &serde_json::Value, path: &mut String) -> bool {
        let nul = |s: &str| s.contains('\0');
        match value {
            serde_json::Value::String(s) => nul(s),
            serde_json::Value::Array(items) => items.iter().enumerate().any(|(i, item)| {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let found = find(item, path);
                if !found {
                    path.truncate(len);
                }
                found
            }),
            serde_json::Value::Object(map) => map.iter().any(|(key, item)| {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&key.escape_debug().to_string());
                let found = nul(key) || find(item, path);
                if !found {
                    path.truncate(len);
                }
                found
            }),
            _ => false,
        }
    }
    let value = serde_json::to_value(params).map_err(|e| Error::internal("params", e))?;
    let mut path = String::new();
    if find(&value, &mut path) {
        return Err(Error::invalid_param(
            &path,
            "a string without NUL characters",
            "a string with a NUL character",
            format!("{path} must not contain a NUL character"),
        ));
    }
    Ok(())
}
