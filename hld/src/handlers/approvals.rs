//! Approval methods: createApproval, getApproval, fetchApprovals, sendDecision.

use std::sync::Arc;

use hld_client::protocol::*;

use crate::daemon::Daemon;
use crate::error::{Error, Result};
use crate::store::{read, NewApproval, StoreError};

const DECISION_TYPES: [&str; 2] = ["function_call", "human_contact"];

fn present(value: Option<String>) -> Option<String> {
    value.filter(|s| !s.trim().is_empty())
}

/// The name of a JSON value's type, as `data.received` says it.
fn json_type(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// The id of the session asking, by run id. HumanLayer HEAD's approvals server sends its
/// session id in `run_id` with a `tool_use_id`: then a `run_id` may name a session.
async fn session_of_run(
    daemon: &Daemon,
    run_id: Option<String>,
    with_tool_use_id: bool,
) -> Result<String> {
    let Some(run) = present(run_id) else {
        return Err(Error::invalid_param(
            "session_id",
            "string (or run_id)",
            "missing",
            "session_id or run_id is required",
        ));
    };
    let failed = |e| Error::internal("failed to look up the session", e);
    let wanted = run.clone();
    let session = daemon
        .store
        .read(move |c| match read::session_by_run_id(c, &wanted)? {
            None if with_tool_use_id => read::session(c, &wanted),
            found => Ok(found),
        })
        .await
        .map_err(failed)?;
    session.map(|session| session.new.id).ok_or_else(|| {
        Error::invalid_param(
            "run_id",
            "existing run id",
            UNKNOWN_ID,
            format!("session not found for run_id: {run}"),
        )
    })
}

pub async fn create_approval(
    daemon: Arc<Daemon>,
    p: CreateApprovalParams,
) -> Result<CreateApprovalResult> {
    let kind = match p.kind.as_deref().unwrap_or("function_call") {
        "function_call" => ApprovalType::FunctionCall,
        "human_contact" => ApprovalType::HumanContact,
        other => return Err(Error::not_accepted("type", other, &DECISION_TYPES)),
    };
    // With a session id, the store checks the session exists as it inserts: one writer trip.
    let session_id = match present(p.session_id) {
        Some(id) => id,
        None => {
            let with_tool_use_id = present(p.tool_use_id.clone()).is_some();
            session_of_run(&daemon, p.run_id, with_tool_use_id).await?
        }
    };
    let id = format!("local-{}", uuid::Uuid::new_v4());
    let new = match kind {
        ApprovalType::FunctionCall => {
            let tool_name = present(p.tool_name)
                .ok_or_else(|| Error::required("tool_name", "string", "missing"))?;
            let input = p
                .tool_input
                .ok_or_else(|| Error::required("tool_input", "object", "missing"))?;
            if !input.is_object() {
                return Err(Error::invalid_param(
                    "tool_input",
                    "object",
                    json_type(&input),
                    "tool_input must be a JSON object",
                ));
            }
            NewApproval::function_call(
                &id,
                &session_id,
                &tool_name,
                input,
                present(p.tool_use_id).as_deref(),
            )
        }
        ApprovalType::HumanContact => {
            let message = present(p.message)
                .ok_or_else(|| Error::required("message", "string", "missing"))?;
            // The `contact_human` tool call that asks it, when the caller knows it.
            NewApproval {
                tool_use_id: present(p.tool_use_id),
                ..NewApproval::human_contact(&id, &session_id, &message)
            }
        }
        other => return Err(Error::not_accepted("type", other.as_str(), &DECISION_TYPES)),
    };
    match daemon.approvals.create(new).await {
        Ok(_) => Ok(CreateApprovalResult { approval_id: id }),
        Err(StoreError::SessionNotFound(_)) => {
            Err(Error::not_found("session_id", "session", &session_id))
        }
        Err(e) => Err(Error::internal("failed to create approval", e)),
    }
}

pub async fn get_approval(daemon: Arc<Daemon>, p: GetApprovalParams) -> Result<GetApprovalResult> {
    if p.approval_id.trim().is_empty() {
        return Err(Error::required(
            "approval_id",
            "non-empty string",
            "empty string",
        ));
    }
    let failed = |e| Error::internal("failed to get approval", e);
    let id = p.approval_id.clone();
    let mut found = daemon
        .store
        .read(move |c| match read::approval(c, &id)? {
            Some(approval) => Ok(vec![approval]),
            None => read::approvals_by_prefix(c, &id),
        })
        .await
        .map_err(failed)?;
    match found.len() {
        0 => Err(Error::not_found("approval_id", "approval", &p.approval_id)),
        1 => Ok(GetApprovalResult {
            approval: found.remove(0),
        }),
        _ => Err(Error::invalid_param(
            "approval_id",
            "a unique approval id prefix",
            &p.approval_id,
            format!("approval id {} is ambiguous", p.approval_id),
        )),
    }
}

pub async fn fetch_approvals(
    daemon: Arc<Daemon>,
    p: FetchApprovalsParams,
) -> Result<FetchApprovalsResult> {
    let session = present(p.session_id);
    if let Some(id) = &session {
        let wanted = id.clone();
        let known = daemon
            .store
            .read(move |c| read::session(c, &wanted))
            .await
            .map_err(|e| Error::internal("failed to look up the session", e))?;
        if known.is_none() {
            return Err(Error::not_found("session_id", "session", id));
        }
    }
    let approvals = daemon
        .store
        .read(move |c| read::pending_approvals(c, session.as_deref()))
        .await
        .map_err(|e| Error::internal("failed to fetch approvals", e))?;
    Ok(FetchApprovalsResult { approvals })
}

/// The decision a validated `sendDecision` asks for.
fn validate_decision(
    p: &SendDecisionParams,
) -> Result<(String, ApprovalType, ApprovalStatus, Option<String>)> {
    let call_id = present(p.call_id.clone())
        .ok_or_else(|| Error::required("call_id", "string", "missing"))?;
    let kind =
        present(p.kind.clone()).ok_or_else(|| Error::required("type", "string", "missing"))?;
    let decision = present(p.decision.clone())
        .ok_or_else(|| Error::required("decision", "string", "missing"))?;
    let comment = present(p.comment.clone());
    let needs_comment = |message: &str| {
        Error::invalid_param("comment", "non-empty string", "missing", message.to_owned())
    };
    match kind.as_str() {
        "function_call" => {
            let status = match decision.as_str() {
                "approve" => ApprovalStatus::Approved,
                "deny" => ApprovalStatus::Denied,
                other => return Err(Error::not_accepted("decision", other, &["approve", "deny"])),
            };
            if status == ApprovalStatus::Denied && comment.is_none() {
                return Err(needs_comment("comment is required for denial"));
            }
            Ok((call_id, ApprovalType::FunctionCall, status, comment))
        }
        "human_contact" => {
            if decision != "respond" {
                return Err(Error::not_accepted("decision", &decision, &["respond"]));
            }
            if comment.is_none() {
                return Err(needs_comment(
                    "comment is required for human contact response",
                ));
            }
            Ok((
                call_id,
                ApprovalType::HumanContact,
                ApprovalStatus::Responded,
                comment,
            ))
        }
        other => Err(Error::not_accepted("type", other, &DECISION_TYPES)),
    }
}

pub async fn send_decision(
    daemon: Arc<Daemon>,
    p: SendDecisionParams,
) -> Result<SendDecisionResult> {
    let (id, kind, status, mut comment) = validate_decision(&p)?;
    // An answer to Claude Code's questions is kept as it is read: a choice's number as its
    // label, so that every front end shows what the agent was told.
    if kind == ApprovalType::HumanContact {
        let owned = id.clone();
        let asked = daemon.store.read(move |c| read::approval(c, &owned)).await;
        if let (Ok(Some(approval)), Some(answer)) = (asked, comment.as_mut()) {
            if let Some(input) = &approval.function_args {
                *answer = crate::claude::control::read_answer(input, answer);
            }
        }
    }
    Ok(
        match daemon.approvals.decide(&id, kind, status, comment).await {
            Ok(_) => SendDecisionResult {
                success: true,
                error: None,
                reason: None,
            },
            Err(refused) => SendDecisionResult {
                success: false,
                error: Some(refused.message),
                reason: Some(refused.reason),
            },
        },
    )
}
