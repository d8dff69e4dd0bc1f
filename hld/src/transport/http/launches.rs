//! Session routes that run Claude or end a draft: create (a draft or a launch), launch a draft,
//! discard one, continue, interrupt; over the domain functions of `createDraft`,
//! `launchSession`, `launchDraft`, `discardDraft`, `continueSession` and `interruptSession`.

use std::path::Path;
use std::sync::Arc;

use hld_client::protocol::{
    ContinueSessionParams, DraftFields, DraftState, LaunchDraftParams, LaunchSessionParams,
    McpConfigParam, SessionIdParams, UpdateSessionSettingsParams,
};
use http_body_util::{BodyExt, Empty};
use hyper::{Response, StatusCode};
use serde::Deserialize;
use serde_json::json;

use super::api::{data, domain, Call};
use super::guard::{json, Refusal};
use super::shapes::session_detail;
use super::Reply;
use crate::daemon::Daemon;
use crate::handlers::{control, drafts, sessions};
use crate::session::options::{bypass_expiry, missing_dir};
use crate::store::SessionRow;

/// The proxy settings of the reference, which this daemon does not serve: any of them set is
/// refused rather than ignored, so a client never believes a proxy is in use.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Proxy {
    proxy_enabled: Option<bool>,
    proxy_base_url: Option<String>,
    proxy_model_override: Option<String>,
    proxy_api_key: Option<String>,
}

impl Proxy {
    pub(super) fn refuse(&self) -> Result<(), Refusal> {
        let set = |s: &Option<String>| s.as_deref().is_some_and(|s| !s.is_empty());
        if self.proxy_enabled == Some(true)
            || set(&self.proxy_base_url)
            || set(&self.proxy_model_override)
            || set(&self.proxy_api_key)
        {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "HLD-3001",
                "proxy providers are not served by this daemon: leave proxy_* unset",
            ));
        }
        Ok(())
    }
}

/// `POST /sessions` (reference section 3); required fields are not enforced, as upstream.
#[derive(Debug, Deserialize)]
struct Create {
    #[serde(default)]
    query: String,
    title: Option<String>,
    model: Option<String>,
    working_dir: Option<String>,
    additional_directories: Option<Vec<String>>,
    auto_accept_edits: Option<bool>,
    dangerously_skip_permissions: Option<bool>,
    dangerously_skip_permissions_timeout: Option<i64>,
    #[serde(default)]
    draft: bool,
    #[serde(default, rename = "createDirectoryIfNotExists")]
    create_directory: bool,
    #[serde(flatten)]
    proxy: Proxy,
    mcp_config: Option<McpConfigParam>,
    permission_prompt_tool: Option<String>,
    allowed_tools: Option<Vec<String>>,
    disallowed_tools: Option<Vec<String>>,
    max_turns: Option<i64>,
    system_prompt: Option<String>,
    append_system_prompt: Option<String>,
    custom_instructions: Option<String>,
    verbose: Option<bool>,
}

/// An answer without a body (the reference's 204s).
pub(super) fn no_content() -> Reply {
    let mut response = Response::new(Empty::new().boxed());
    *response.status_mut() = StatusCode::NO_CONTENT;
    response
}

/// The reference's 422 for a working directory that does not exist: a flat body.
fn directory_not_found(path: &Path) -> Reply {
    let path = path.display().to_string();
    let body = json!({
        "error": "directory_not_found",
        "message": format!("working directory does not exist: {path}"),
        "path": path,
        "requiresCreation": true,
    });
    json(StatusCode::UNPROCESSABLE_ENTITY, &body)
}

/// Whether a launch in `dir` may go on: `Ok(None)` when it exists or was created as asked,
/// else the 422 to answer.
async fn directory(dir: Option<&str>, create: bool) -> Result<Option<Reply>, Refusal> {
    let Some(dir) = dir.filter(|d| !d.is_empty()) else {
        return Ok(None);
    };
    match missing_dir(dir) {
        None => Ok(None),
        Some(missing) if !create => Ok(Some(directory_not_found(&missing))),
        Some(_) => drafts::create_directory(dir)
            .await
            .map(|()| None)
            .map_err(domain),
    }
}

/// `POST /sessions`: a draft (`createDraft`) with `draft: true`, else a launch
/// (`launchSession`) → 201 `{session_id, run_id}`.
pub async fn create(call: &Call<'_>, daemon: &Arc<Daemon>) -> Result<Reply, Refusal> {
    let c: Create = call.json()?;
    c.proxy.refuse()?;
    let bypass = c.dangerously_skip_permissions.unwrap_or(false);
    let timeout = c.dangerously_skip_permissions_timeout;
    if c.draft {
        bypass_expiry(bypass, timeout, "dangerously_skip_permissions_timeout").map_err(domain)?;
        let fields = DraftFields {
            working_dir: c.working_dir,
            query: Some(c.query),
            title: c.title,
            model: c.model,
            auto_accept_edits: c.auto_accept_edits,
            dangerously_skip_permissions: c.dangerously_skip_permissions,
            editor_state: None,
        };
        let made = drafts::create_draft(Arc::clone(daemon), fields)
            .await
            .map_err(domain)?;
        if timeout.is_some() {
            let params = UpdateSessionSettingsParams {
                session_id: made.session_id.clone(),
                dangerously_skip_permissions: Some(bypass),
                dangerously_skip_permissions_timeout_ms: timeout,
                ..UpdateSessionSettingsParams::default()
            };
            control::update_session_settings(Arc::clone(daemon), params)
                .await
                .map_err(domain)?;
        }
        let row = sessions::session(daemon, &made.session_id)
            .await
            .map_err(domain)?;
        let ids = json!({"session_id": row.new.id, "run_id": row.new.run_id});
        return Ok(data(StatusCode::CREATED, ids));
    }
    if let Some(refused) = directory(c.working_dir.as_deref(), c.create_directory).await? {
        return Ok(refused);
    }
    let params = LaunchSessionParams {
        query: c.query,
        title: c.title,
        model: c.model,
        working_dir: c.working_dir,
        additional_directories: c.additional_directories,
        auto_accept_edits: c.auto_accept_edits,
        dangerously_skip_permissions: c.dangerously_skip_permissions,
        dangerously_skip_permissions_timeout: timeout,
        mcp_config: c.mcp_config,
        permission_prompt_tool: c.permission_prompt_tool,
        allowed_tools: c.allowed_tools,
        disallowed_tools: c.disallowed_tools,
        max_turns: c.max_turns,
        system_prompt: c.system_prompt,
        append_system_prompt: c.append_system_prompt,
        custom_instructions: c.custom_instructions,
        verbose: c.verbose,
        ..LaunchSessionParams::default()
    };
    let launched = sessions::launch_session(Arc::clone(daemon), params)
        .await
        .map_err(domain)?;
    let ids = json!({"session_id": launched.session_id, "run_id": launched.run_id});
    Ok(data(StatusCode::CREATED, ids))
}

/// The session `id` when it is a draft being composed, else `code` (400).
async fn draft(daemon: &Arc<Daemon>, id: &str, code: &'static str) -> Result<SessionRow, Refusal> {
    let row = sessions::session(daemon, id).await.map_err(domain)?;
    if row.draft != Some(DraftState::Draft) {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            code,
            format!("session {id} is not a draft"),
        ));
    }
    Ok(row)
}

#[derive(Debug, Deserialize)]
struct Launch {
    prompt: Option<String>,
    #[serde(default, rename = "createDirectoryIfNotExists")]
    create_directory: bool,
}

/// `POST /sessions/{id}/launch`: `launchDraft` with `prompt` → 200 `{data: Session}`; a
/// non-draft is 400 `HLD-4001`, a missing directory 422 (the draft stays a draft).
pub async fn launch(call: &Call<'_>, daemon: &Arc<Daemon>, id: &str) -> Result<Reply, Refusal> {
    let l: Launch = call.json()?;
    let row = draft(daemon, id, "HLD-4001").await?;
    let dir = row.to_info().working_dir;
    if let Some(refused) = directory(dir.as_deref(), l.create_directory).await? {
        return Ok(refused);
    }
    let params = LaunchDraftParams {
        session_id: id.to_owned(),
        query: l.prompt,
        create_directory: None,
    };
    drafts::launch_draft(Arc::clone(daemon), params)
        .await
        .map_err(domain)?;
    let row = sessions::session(daemon, id).await.map_err(domain)?;
    Ok(data(
        StatusCode::OK,
        session_detail(&row.to_info(), &row.to_state()),
    ))
}

/// `DELETE /sessions/{id}/launch`: `discardDraft` → 204; a non-draft is 400 `HLD-4002`.
pub async fn discard(daemon: &Arc<Daemon>, id: &str) -> Result<Reply, Refusal> {
    draft(daemon, id, "HLD-4002").await?;
    let params = SessionIdParams {
        session_id: id.to_owned(),
    };
    drafts::discard_draft(Arc::clone(daemon), params)
        .await
        .map_err(domain)?;
    Ok(no_content())
}

/// `POST /sessions/{id}/continue`: the Claude options of create, minus model, directories and
/// proxy.
#[derive(Debug, Deserialize)]
struct Continue {
    #[serde(default)]
    query: String,
    mcp_config: Option<McpConfigParam>,
    permission_prompt_tool: Option<String>,
    allowed_tools: Option<Vec<String>>,
    disallowed_tools: Option<Vec<String>>,
    max_turns: Option<i64>,
    system_prompt: Option<String>,
    append_system_prompt: Option<String>,
    custom_instructions: Option<String>,
}

/// `POST /sessions/{id}/continue`: `continueSession` → 201 with the four ids.
pub async fn continue_session(
    call: &Call<'_>,
    daemon: &Arc<Daemon>,
    id: &str,
) -> Result<Reply, Refusal> {
    let c: Continue = call.json()?;
    let params = ContinueSessionParams {
        session_id: id.to_owned(),
        query: c.query,
        mcp_config: c.mcp_config,
        permission_prompt_tool: c.permission_prompt_tool,
        allowed_tools: c.allowed_tools,
        disallowed_tools: c.disallowed_tools,
        max_turns: c.max_turns,
        system_prompt: c.system_prompt,
        append_system_prompt: c.append_system_prompt,
        custom_instructions: c.custom_instructions,
        ..ContinueSessionParams::default()
    };
    let r = sessions::continue_session(Arc::clone(daemon), params)
        .await
        .map_err(domain)?;
    let body = json!({
        "session_id": r.session_id,
        "run_id": r.run_id,
        "claude_session_id": r.claude_session_id,
        "parent_session_id": r.parent_session_id,
    });
    Ok(data(StatusCode::CREATED, body))
}

/// `POST /sessions/{id}/interrupt`: `interruptSession`; a session not running is 400
/// `HLD-3001`.
pub async fn interrupt(daemon: &Arc<Daemon>, id: &str) -> Result<Reply, Refusal> {
    let params = SessionIdParams {
        session_id: id.to_owned(),
    };
    let r = sessions::interrupt_session(Arc::clone(daemon), params)
        .await
        .map_err(domain)?;
    let body = json!({"success": r.success, "session_id": r.session_id, "status": "interrupting"});
    Ok(data(StatusCode::OK, body))
}
