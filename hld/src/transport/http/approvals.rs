//! Approval routes, over the domain functions of `fetchApprovals`, `getApproval`,
//! `createApproval` and `sendDecision`.

use std::sync::Arc;

use hld_client::protocol::{
    CreateApprovalParams, FetchApprovalsParams, GetApprovalParams, RefusalReason,
    SendDecisionParams,
};
use hyper::StatusCode;
use serde::Deserialize;
use serde_json::{json, Value};

use super::api::{data, domain, Call};
use super::guard::Refusal;
use super::shapes::approval;
use super::Reply;
use crate::daemon::Daemon;
use crate::handlers::approvals;

/// The reply to `call` if it is an approval route.
pub async fn route(call: &Call<'_>, daemon: &Arc<Daemon>) -> Option<Result<Reply, Refusal>> {
    let reply = match (call.method.as_str(), call.segments.as_slice()) {
        ("GET", ["approvals"]) => pending(daemon, call.query.get("sessionId")).await,
        ("POST", ["approvals"]) => create(daemon, call).await,
        ("GET", ["approvals", id]) => one(daemon, id).await,
        ("POST", ["approvals", id, "decide"]) => decide(daemon, id, call).await,
        _ => return None,
    };
    Some(reply)
}

/// `GET /approvals?sessionId=`: that session's pending approvals; none without a session.
async fn pending(daemon: &Arc<Daemon>, session: Option<&str>) -> Result<Reply, Refusal> {
    let Some(session) = session.filter(|s| !s.is_empty()) else {
        return Ok(data(StatusCode::OK, json!([])));
    };
    let params = FetchApprovalsParams {
        session_id: Some(session.to_owned()),
    };
    let found = approvals::fetch_approvals(Arc::clone(daemon), params)
        .await
        .map_err(domain)?;
    let shown: Vec<Value> = found.approvals.iter().map(approval).collect();
    Ok(data(StatusCode::OK, shown))
}

/// `GET /approvals/{id}`.
async fn one(daemon: &Arc<Daemon>, id: &str) -> Result<Reply, Refusal> {
    let params = GetApprovalParams {
        approval_id: id.to_owned(),
    };
    let found = approvals::get_approval(Arc::clone(daemon), params)
        .await
        .map_err(domain)?;
    Ok(data(StatusCode::OK, approval(&found.approval)))
}

/// The body of `POST /approvals`.
#[derive(Deserialize)]
struct NewApproval {
    run_id: Option<String>,
    tool_name: Option<String>,
    tool_input: Option<Value>,
}

/// `POST /approvals`: a tool call's approval, asked by its run → 201 `{approval_id}`.
async fn create(daemon: &Arc<Daemon>, call: &Call<'_>) -> Result<Reply, Refusal> {
    let body: NewApproval = call.json()?;
    let params = CreateApprovalParams {
        run_id: body.run_id,
        tool_name: body.tool_name,
        tool_input: body.tool_input,
        ..Default::default()
    };
    let made = approvals::create_approval(Arc::clone(daemon), params)
        .await
        .map_err(domain)?;
    Ok(data(
        StatusCode::CREATED,
        json!({"approval_id": made.approval_id}),
    ))
}

/// The body of `POST /approvals/{id}/decide`.
#[derive(Deserialize)]
struct Decision {
    decision: Option<String>,
    comment: Option<String>,
}

/// `POST /approvals/{id}/decide`: `approve`, or `deny` with a comment. A question (a human
/// contact: Claude Code's `AskUserQuestion`) is answered as CodeLayer denies a call, with the
/// answer as the comment; approving one gives no answer and is refused. Decided already or
/// resolved → 400 `HLD-3002`; unknown → 404.
async fn decide(daemon: &Arc<Daemon>, id: &str, call: &Call<'_>) -> Result<Reply, Refusal> {
    let body: Decision = call.json()?;
    let send = |kind: &str, decision: Option<String>| {
        let params = SendDecisionParams {
            call_id: Some(id.to_owned()),
            kind: Some(kind.into()),
            decision,
            comment: body.comment.clone(),
        };
        approvals::send_decision(Arc::clone(daemon), params)
    };
    let mut sent = send("function_call", body.decision.clone())
        .await
        .map_err(domain)?;
    if sent.reason == Some(RefusalReason::WrongType) {
        let answer = body
            .comment
            .as_deref()
            .is_some_and(|c| !c.trim().is_empty());
        if body.decision.as_deref() != Some("deny") || !answer {
            let message =
                format!("approval {id} asks a question: deny it with the answer as the comment");
            return Err(Refusal::new(StatusCode::BAD_REQUEST, "HLD-3001", message));
        }
        sent = send("human_contact", Some("respond".into()))
            .await
            .map_err(domain)?;
    }
    if sent.success {
        return Ok(data(StatusCode::OK, json!({"success": true})));
    }
    let message = sent.error.unwrap_or_default();
    Err(match sent.reason {
        Some(RefusalReason::NotFound) => Refusal::new(StatusCode::NOT_FOUND, "HLD-1002", message),
        Some(RefusalReason::AlreadyDecided | RefusalReason::Resolved) => {
            Refusal::new(StatusCode::BAD_REQUEST, "HLD-3002", message)
        }
        Some(RefusalReason::WrongType) => {
            Refusal::new(StatusCode::BAD_REQUEST, "HLD-3001", message)
        }
        _ => Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, "HLD-4001", message),
    })
}
