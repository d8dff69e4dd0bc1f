//! Session methods: launch, list, state, conversation, continue, interrupt.

use std::sync::Arc;
use std::time::Duration;

use hld_client::protocol::*;

use crate::daemon::Daemon;
use crate::rpc::error::RpcError;
use crate::session::{parse_mcp_config, resolve_working_dir, LaunchRequest};
use crate::store::SessionRow;

/// A required, non-empty string param.
fn required(value: &str, param: &str) -> Result<(), RpcError> {
    if value.trim().is_empty() {
        return Err(RpcError::required(
            param,
            "non-empty string",
            "empty string",
        ));
    }
    Ok(())
}

fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|s| !s.is_empty())
}

fn non_empty_list(value: Option<Vec<String>>) -> Option<Vec<String>> {
    value.filter(|v| !v.is_empty())
}

async fn session(daemon: &Daemon, session_id: &str) -> Result<SessionRow, RpcError> {
    required(session_id, "session_id")?;
    daemon
        .store
        .get_session(session_id)
        .await
        .map_err(|e| RpcError::internal("failed to get session", e))?
        .ok_or_else(|| {
            RpcError::invalid_param(
                "session_id",
                "existing session id",
                "unknown id",
                format!("failed to get session: session not found: {session_id}"),
            )
        })
}

pub async fn launch_session(
    daemon: Arc<Daemon>,
    p: LaunchSessionParams,
) -> Result<LaunchSessionResult, RpcError> {
    required(&p.query, "query")?;
    if p.max_turns.is_some_and(|n| n < 0) {
        return Err(RpcError::invalid_param(
            "max_turns",
            "non-negative integer",
            "negative integer",
            "max_turns must not be negative",
        ));
    }
    let request = LaunchRequest {
        query: p.query,
        model: non_empty(p.model),
        mcp_config: parse_mcp_config(p.mcp_config)?,
        permission_prompt_tool: non_empty(p.permission_prompt_tool),
        working_dir: resolve_working_dir(p.working_dir.as_deref())?,
        max_turns: p.max_turns.filter(|n| *n > 0),
        system_prompt: non_empty(p.system_prompt),
        append_system_prompt: non_empty(p.append_system_prompt),
        custom_instructions: non_empty(p.custom_instructions),
        allowed_tools: non_empty_list(p.allowed_tools),
        disallowed_tools: non_empty_list(p.disallowed_tools),
        no_approvals: p.no_approvals.unwrap_or(false),
        parent_session_id: None,
        resume: None,
    };
    let (session_id, run_id) = daemon.sessions.launch(request).await?;
    Ok(LaunchSessionResult { session_id, run_id })
}

pub async fn list_sessions(
    daemon: Arc<Daemon>,
    _: NoParams,
) -> Result<ListSessionsResult, RpcError> {
    let rows = daemon
        .store
        .list_sessions()
        .await
        .map_err(|e| RpcError::internal("failed to list sessions", e))?;
    Ok(ListSessionsResult {
        sessions: rows.iter().map(SessionRow::to_info).collect(),
    })
}

pub async fn get_session_state(
    daemon: Arc<Daemon>,
    p: SessionIdParams,
) -> Result<GetSessionStateResult, RpcError> {
    let row = session(&daemon, &p.session_id).await?;
    Ok(GetSessionStateResult {
        session: row.to_state(),
    })
}

pub async fn get_conversation(
    daemon: Arc<Daemon>,
    p: GetConversationParams,
) -> Result<GetConversationResult, RpcError> {
    if p.limit.is_some_and(|l| l <= 0) {
        return Err(RpcError::invalid_param(
            "limit",
            "positive integer",
            "non-positive integer",
            "limit must be positive",
        ));
    }
    let fault = |e| RpcError::internal("failed to get conversation", e);
    let events = match (non_empty(p.claude_session_id), non_empty(p.session_id)) {
        (Some(claude_id), _) => daemon
            .store
            .conversation_for_claude_session(&claude_id, p.after_sequence, p.limit)
            .await
            .map_err(fault)?,
        (None, Some(session_id)) => daemon
            .store
            .conversation_for_session(&session_id, p.after_sequence, p.limit)
            .await
            .map_err(fault)?
            .ok_or_else(|| {
                RpcError::invalid_param(
                    "session_id",
                    "existing session id",
                    "unknown id",
                    format!("failed to get conversation: session not found: {session_id}"),
                )
            })?,
        (None, None) => {
            return Err(RpcError::invalid_param(
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
    p: ContinueSessionParams,
) -> Result<ContinueSessionResult, RpcError> {
    required(&p.query, "query")?;
    let parent = session(&daemon, &p.session_id).await?;
    let Some(claude_session_id) = parent.claude_session_id.clone() else {
        return Err(RpcError::invalid_param(
            "session_id",
            "a session with a claude_session_id",
            "no claude_session_id",
            "parent session missing claude_session_id (cannot resume)",
        ));
    };
    if parent.status.is_active() {
        // A running parent is interrupted first, and the continuation waits for it to end.
        if daemon.sessions.interrupt(&parent.new.id).await.is_ok() {
            let wait = daemon.config.interrupt_grace + Duration::from_secs(5);
            daemon.sessions.wait_finished(&parent.new.id, wait).await;
        }
    }
    let inherited = parent.new;
    let working_dir = resolve_working_dir(inherited.working_dir.as_deref())?;
    let request = LaunchRequest {
        query: p.query,
        model: non_empty(p.model).or(inherited.model),
        mcp_config: parse_mcp_config(p.mcp_config)?.or(inherited.mcp_config),
        permission_prompt_tool: non_empty(p.permission_prompt_tool)
            .or(inherited.permission_prompt_tool),
        working_dir,
        max_turns: p.max_turns.filter(|n| *n > 0),
        system_prompt: non_empty(p.system_prompt).or(inherited.system_prompt),
        append_system_prompt: non_empty(p.append_system_prompt).or(inherited.append_system_prompt),
        custom_instructions: non_empty(p.custom_instructions).or(inherited.custom_instructions),
        allowed_tools: non_empty_list(p.allowed_tools).or(inherited.allowed_tools),
        disallowed_tools: non_empty_list(p.disallowed_tools).or(inherited.disallowed_tools),
        no_approvals: inherited.no_approvals,
        parent_session_id: Some(inherited.id.clone()),
        resume: Some(claude_session_id),
    };
    let (session_id, run_id) = daemon.sessions.launch(request).await?;
    Ok(ContinueSessionResult {
        session_id,
        run_id,
        claude_session_id: String::new(),
        parent_session_id: inherited.id,
    })
}

pub async fn interrupt_session(
    daemon: Arc<Daemon>,
    p: SessionIdParams,
) -> Result<InterruptSessionResult, RpcError> {
    required(&p.session_id, "session_id")?;
    daemon.sessions.interrupt(&p.session_id).await?;
    Ok(InterruptSessionResult {
        success: true,
        session_id: p.session_id,
        status: SessionStatus::Completing.as_str().to_owned(),
        message: "Session interrupt requested, shutting down gracefully".to_owned(),
    })
}
