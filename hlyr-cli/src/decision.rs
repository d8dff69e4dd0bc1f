//! Deciding an approval: the one place that builds `sendDecision` and judges its result, used
//! by `approve`, `deny`, `respond` (blocking client) and by inline approvals while following a
//! session (async client).

use hld_client::protocol::{ApprovalStatus, ApprovalType, SendDecisionParams, SendDecisionResult};
use serde::Serialize;

use crate::error::{CliError, Exit};
use crate::output::{paint, short_id, Render, GREEN, RED};
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

    /// The `sendDecision` params deciding `call_id` this way.
    pub fn params(self, call_id: &str, comment: Option<String>) -> SendDecisionParams {
        SendDecisionParams {
            call_id: Some(call_id.to_owned()),
            kind: Some(self.kind().as_str().to_owned()),
            decision: Some(self.as_str().to_owned()),
            comment,
        }
    }

    /// The outcome of `sendDecision` for `call_id`: a refusal (`success: false`) is an error
    /// carrying the daemon's reason.
    pub fn outcome(self, call_id: &str, result: SendDecisionResult) -> Result<(), CliError> {
        if result.success {
            Ok(())
        } else {
            Err(CliError::failure(result.error.unwrap_or_else(|| {
                format!("the daemon refused to {} {call_id}", self.as_str())
            })))
        }
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
        format!("{} {}", paint(style, word), self.call_id)
    }
}

/// `approve`, `deny` and `respond`: resolves the id among pending approvals, checks that the
/// decision fits the approval's kind, sends it and prints the outcome.
pub fn decide(
    ctx: &Context,
    prefix: &str,
    decision: Decision,
    comment: Option<String>,
) -> Result<Exit, CliError> {
    let client = ctx.connect()?;
    let call_id = match ids::approval(prefix, client.fetch_approvals(None)?)? {
        Some(approval) if approval.kind != decision.kind() => {
            let (what, how) = match approval.kind {
                ApprovalType::HumanContact => {
                    ("a question", "answer it with `hlyr respond ID --comment …`")
                }
                ApprovalType::FunctionCall => (
                    "a tool call",
                    "use `hlyr approve ID` or `hlyr deny ID --comment …`",
                ),
                // A kind this version does not know.
                _ => ("of a kind hlyr does not know", "update hlyr"),
            };
            return Err(
                CliError::usage(format!("approval {} is {what}", short_id(&approval.id))).hint(how),
            );
        }
        Some(approval) => approval.id,
        None => prefix.to_owned(),
    };
    let result = client.send_decision(decision.params(&call_id, comment.clone()))?;
    decision.outcome(&call_id, result)?;
    ctx.out.print(&Decided {
        call_id,
        decision,
        comment,
    })?;
    Ok(Exit::Ok)
}
