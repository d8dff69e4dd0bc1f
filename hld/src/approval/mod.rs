//! Approvals: a human approves or denies each tool call Claude wants to make, or answers its
//! question. Every approval is stored before anyone hears of it; deciding one is atomic, so
//! of two racing decisions exactly one wins.

use std::sync::Arc;

use hld_client::protocol::{Approval, ApprovalStatus, ApprovalType, Event, SessionStatus};

use crate::bus::Bus;
use crate::session::Sessions;
use crate::store::{ApprovalChange, NewApproval, SessionUpdate, Store, StoreError};

/// Why a decision was not recorded (sent as `{"success": false, "error": …}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

/// The approval manager.
#[derive(Clone)]
pub struct Approvals {
    store: Store,
    bus: Bus,
    sessions: Arc<Sessions>,
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals").finish_non_exhaustive()
    }
}

impl Approvals {
    /// A manager over the daemon's store, bus and sessions.
    pub fn new(store: Store, bus: Bus, sessions: Arc<Sessions>) -> Self {
        Approvals {
            store,
            bus,
            sessions,
        }
    }

    /// Stores a new pending approval, links it to its tool call, publishes `new_approval`,
    /// and puts its session in `waiting_input`.
    pub async fn create(&self, new: NewApproval) -> Result<Approval, StoreError> {
        let change = self.store.create_approval(new).await?;
        self.publish_linked(&change);
        let approval = change.approval;
        self.bus.publish(Event::NewApproval {
            approval: Box::new(approval.clone()),
            session_id: approval.session_id.clone(),
            run_id: approval.run_id.clone(),
        });
        if let Ok(Some(session)) = self.store.get_session(&approval.session_id).await {
            if session.status == SessionStatus::Running {
                self.sessions
                    .transition(
                        &approval.session_id,
                        &approval.run_id,
                        SessionStatus::WaitingInput,
                        SessionUpdate::default(),
                        None,
                    )
                    .await;
            }
        }
        tracing::info!(approval = %approval.id, session = %approval.session_id, kind = approval.kind.as_str(), "approval requested");
        Ok(approval)
    }

    /// Records a decision. `kind` is what the decider believes the approval is.
    pub async fn decide(
        &self,
        id: &str,
        kind: ApprovalType,
        status: ApprovalStatus,
        comment: Option<String>,
    ) -> Result<Approval, Refused> {
        let existing = match self.store.get_approval(id).await {
            Ok(Some(a)) => a,
            Ok(None) => return Err(Refused(format!("approval not found: {id}"))),
            Err(e) => {
                tracing::error!(approval = %id, error = %e, "cannot read approval");
                return Err(Refused("failed to read the approval".into()));
            }
        };
        if existing.kind != kind {
            return Err(Refused(format!(
                "approval {id} is a {}, not a {}",
                existing.kind.as_str(),
                kind.as_str()
            )));
        }
        let change = match self
            .store
            .decide_approval(id, status, comment.clone())
            .await
        {
            Ok(change) => change,
            Err(StoreError::AlreadyDecided { status, .. }) => {
                return Err(Refused(format!(
                    "approval {id} was already decided: {}",
                    status.as_str()
                )))
            }
            Err(StoreError::ApprovalNotFound(_)) => {
                return Err(Refused(format!("approval not found: {id}")))
            }
            Err(e) => {
                tracing::error!(approval = %id, error = %e, "cannot store decision");
                return Err(Refused("failed to store the decision".into()));
            }
        };
        self.publish_linked(&change);
        let approval = change.approval;
        self.bus.publish(Event::ApprovalResolved {
            approval_id: approval.id.clone(),
            call_id: approval.call_id.clone(),
            session_id: approval.session_id.clone(),
            run_id: approval.run_id.clone(),
            decision: status,
            comment,
        });
        self.resume_if_unblocked(&approval).await;
        tracing::info!(approval = %approval.id, decision = status.as_str(), "approval decided");
        Ok(approval)
    }

    /// Back to `running` once a waiting session has nothing pending.
    async fn resume_if_unblocked(&self, approval: &Approval) {
        let pending = self
            .store
            .pending_approvals(Some(&approval.session_id))
            .await
            .map(|p| p.len())
            .unwrap_or(1);
        if pending > 0 {
            return;
        }
        if let Ok(Some(session)) = self.store.get_session(&approval.session_id).await {
            if session.status == SessionStatus::WaitingInput {
                self.sessions
                    .transition(
                        &approval.session_id,
                        &approval.run_id,
                        SessionStatus::Running,
                        SessionUpdate::default(),
                        None,
                    )
                    .await;
            }
        }
    }

    fn publish_linked(&self, change: &ApprovalChange) {
        for event in &change.events {
            self.sessions.publish_conversation(
                &change.approval.session_id,
                &change.approval.run_id,
                event.clone(),
            );
        }
    }
}
