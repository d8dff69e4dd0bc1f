//! Deciding an approval: the one place that builds `sendDecision` and judges its result, used
//! by `approve`, `deny`, `respond` and by inline approvals while following a session.

use hld_client::protocol::{
    Approval, ApprovalStatus, ApprovalType, ErrorCode, RefusalReason, SendDecisionParams,
    SendDecisionResult, UpdateSessionSettingsParams, NO_REASON, UNKNOWN_ID,
};
use hld_client::Client;
use serde::Serialize;

use crate::error::{CliError, Exit, Kind};
use crate::hint::{hlyr, hlyr_in};
use crate::output::{paint, short_id, Render, GREEN, RED};
use crate::prompt::Answer;
use crate::{ids, Context};

/// What a human decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Approve,
    Deny,
    Respond,
}

impl Decision {
    /// The wire spelling of `decision`.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Deny => "deny",
            Decision::Respond => "respond",
        }
    }

    /// The status an approval has once decided this way.
    pub fn status(self) -> ApprovalStatus {
        match self {
            Decision::Approve => ApprovalStatus::Approved,
            Decision::Deny => ApprovalStatus::Denied,
            Decision::Respond => ApprovalStatus::Responded,
        }
    }

    /// The kind of approval this decision answers.
    pub fn kind(self) -> ApprovalType {
        match self {
            Decision::Approve | Decision::Deny => ApprovalType::FunctionCall,
            Decision::Respond => ApprovalType::HumanContact,
        }
    }

    /// The `sendDecision` params deciding `call_id` this way. A denial without a reason
    /// carries [`NO_REASON`] (the daemon needs one); everywhere in hlyr the reason is optional.
    pub fn params(self, call_id: &str, comment: Option<String>) -> SendDecisionParams {
        let comment = match self {
            Decision::Deny => comment.or_else(|| Some(NO_REASON.to_owned())),
            _ => comment,
        };
        SendDecisionParams {
            call_id: Some(call_id.to_owned()),
            kind: Some(self.kind().as_str().to_owned()),
            decision: Some(self.as_str().to_owned()),
            comment,
        }
    }

    /// The outcome of `sendDecision` for `call_id`: a refusal (`success: false`) is an error
    /// carrying the daemon's reason: an unknown id is a usage error (exit 2), an approval
    /// decided already, or resolved without a decision, a failure (exit 1) of that kind.
    /// Hints name the daemon of `context` (`None`: the one in use).
    pub fn outcome(
        self,
        call_id: &str,
        result: SendDecisionResult,
        context: Option<&str>,
    ) -> Result<(), CliError> {
        if result.success {
            return Ok(());
        }
        let message = result
            .error
            .unwrap_or_else(|| format!("the daemon refused to {} {call_id}", self.as_str()));
        Err(match result.reason {
            Some(RefusalReason::NotFound) => not_found(call_id, context),
            Some(RefusalReason::AlreadyDecided) => {
                CliError::failure(message).kind(Kind::AlreadyDecided)
            }
            Some(RefusalReason::Resolved) => CliError::failure(message).kind(Kind::Resolved),
            _ => CliError::failure(message),
        })
    }
}

/// Sends the decision keys completed on the terminal (inline approvals of a followed session,
/// `hlyr watch`), and judges the daemon's answer.
pub async fn send_answer(client: &Client, answer: &Answer) -> Result<(), CliError> {
    let id = &answer.approval.id;
    let context = answer.context.as_deref();
    let params = answer.decision.params(id, answer.comment.clone());
    let result = client
        .send_decision(params)
        .await
        .map_err(|e| CliError::from_sdk(e, context))?;
    answer.decision.outcome(id, result, context)?;
    if answer.stop {
        // A session that ended meanwhile has no turn left to stop.
        let _ = client.interrupt_session(&answer.approval.session_id).await;
    }
    Ok(())
}

/// Whether `e` turns on auto-accept of edits before the decision is sent: for a plan, so
/// that the edits following its approval at once are never asked. After an edit's approval,
/// not before it: the daemon would approve the call itself and refuse the decision.
pub fn accepts_edits_first(answer: &Answer) -> bool {
    answer.accept_edits && crate::prompt::is_plan(&answer.approval)
}

/// With `e`: turns on auto-accept of edits for the answer's session (see
/// [`accepts_edits_first`] for when).
pub async fn accept_edits(client: &Client, answer: &Answer) -> Result<(), CliError> {
    client
        .update_session_settings(UpdateSessionSettingsParams {
            session_id: answer.approval.session_id.clone(),
            auto_accept_edits: Some(true),
            ..Default::default()
        })
        .await
        .map_err(|e| CliError::from_sdk(e, answer.context.as_deref()))?;
    Ok(())
}

/// An approval id that names nothing, asked of the daemon of `context` (`None`: the one in
/// use).
fn not_found(id: &str, context: Option<&str>) -> CliError {
    CliError::not_found(format!("approval not found: {id}")).hint(format!(
        "{} lists the pending ones",
        hlyr_in(context, "approvals")
    ))
}

/// The error for an approval that is no longer pending.
fn no_longer_pending(approval: &Approval) -> CliError {
    let id = &approval.id;
    match approval.status {
        ApprovalStatus::Resolved => CliError::failure(format!(
            "approval {id} was resolved without a decision (its session ended, or it was \
             answered elsewhere)"
        ))
        .kind(Kind::Resolved),
        status => CliError::failure(format!(
            "approval {id} was already decided: {}",
            status.as_str()
        ))
        .kind(Kind::AlreadyDecided),
    }
}

/// The approval `prefix` names: a pending one (`fetchApprovals`), else whichever the daemon
/// finds by that id or prefix (`getApproval`), decided or not.
async fn find(client: &Client, prefix: &str) -> Result<Approval, CliError> {
    if let Some(pending) = ids::approval(prefix, client.fetch_approvals(None).await?)? {
        return Ok(pending);
    }
    client.get_approval(prefix).await.map_err(|e| match e {
        // The daemon says which: an id it does not know, or a prefix of several.
        hld_client::Error::Rpc(r)
            if ErrorCode::from_code(r.code) == Some(ErrorCode::InvalidParams) =>
        {
            if r.invalid_params().is_some_and(|d| d.received == UNKNOWN_ID) {
                not_found(prefix, None)
            } else {
                CliError::usage(r.message)
                    .kind(Kind::Ambiguous)
                    .hint("give more characters of the id")
            }
        }
        other => other.into(),
    })
}

/// The one approval of `decision`'s kind that waits in the session `prefix` names (as `hlyr
/// watch` lists sessions); `None` when that session has none.
async fn of_session(
    client: &Client,
    prefix: &str,
    decision: Decision,
) -> Result<Option<Approval>, CliError> {
    let Ok(session) = ids::session(prefix, client.list_sessions().await?) else {
        return Ok(None);
    };
    let mut waiting: Vec<Approval> = (client.fetch_approvals(Some(&session.id)).await?)
        .into_iter()
        .filter(|a| a.kind == decision.kind())
        .collect();
    match waiting.len() {
        0 | 1 => Ok(waiting.pop()),
        n => Err(CliError::usage(format!(
            "session {} has {n} approvals waiting",
            short_id(&session.id)
        ))
        .kind(Kind::Ambiguous)
        .hint(format!(
            "give one's id: {} lists them",
            hlyr(&format!("approvals --session {}", short_id(&session.id)))
        ))),
    }
}

/// What `approve`, `deny` and `respond` print.
#[derive(Debug, Serialize)]
struct Decided {
    call_id: String,
    decision: Decision,
    #[serde(skip_serializing_if = "Option::is_none")]
    comment: Option<String>,
}

impl Render for Decided {
    fn human(&self) -> String {
        let (style, word) = match self.decision {
            Decision::Approve => (GREEN, "✓ approved"),
            Decision::Deny => (RED, "✗ denied"),
            Decision::Respond => (GREEN, "✓ answered"),
        };
        let decided = format!("{} {}", paint(style, word), self.call_id);
        match self.comment.as_deref().filter(|c| !c.trim().is_empty()) {
            Some(comment) => {
                let answered = matches!(self.decision, Decision::Respond);
                format!(
                    "{decided}: {}",
                    crate::transcript::said_with(answered, comment)
                )
            }
            None => decided,
        }
    }
}

/// `approve`, `deny` and `respond`: finds the approval the id names, checks that it waits
/// for a decision of this kind, sends it and prints the outcome.
pub async fn decide(
    ctx: &Context,
    prefix: &str,
    decision: Decision,
    comment: Option<String>,
) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let approval = pending(&client, prefix, decision).await?;
    send(ctx, &client, approval.id, decision, comment).await
}

/// The approval `prefix` names, if it waits for a decision of `decision`'s kind.
pub async fn pending(
    client: &Client,
    prefix: &str,
    decision: Decision,
) -> Result<Approval, CliError> {
    let approval = match find(client, prefix).await {
        Err(e) if e.kind == Kind::NotFound => match of_session(client, prefix, decision).await? {
            Some(approval) => approval,
            None => return Err(e),
        },
        found => found?,
    };
    if approval.status != ApprovalStatus::Pending {
        return Err(no_longer_pending(&approval));
    }
    if approval.kind != decision.kind() {
        let (what, how) = match approval.kind {
            ApprovalType::HumanContact => (
                "a question",
                format!("answer it with {}", hlyr("respond ID --comment …")),
            ),
            ApprovalType::FunctionCall => (
                "a tool call",
                format!(
                    "use {} or {}",
                    hlyr("approve ID"),
                    hlyr("deny ID [--comment …]")
                ),
            ),
            // A kind this version does not know.
            _ => ("of a kind hlyr does not know", "update hlyr".to_owned()),
        };
        return Err(
            CliError::usage(format!("approval {} is {what}", short_id(&approval.id))).hint(how),
        );
    }
    Ok(approval)
}

/// Sends `decision` (with `comment`) on approval `call_id` and prints the outcome.
pub async fn send(
    ctx: &Context,
    client: &Client,
    call_id: String,
    decision: Decision,
    comment: Option<String>,
) -> Result<Exit, CliError> {
    let result = client
        .send_decision(decision.params(&call_id, comment.clone()))
        .await?;
    decision.outcome(&call_id, result, None)?;
    ctx.out.print(&Decided {
        call_id,
        decision,
        comment,
    })?;
    Ok(Exit::Ok)
}
