//! Approvals: a human approves or denies each tool call, or answers a question. Local or fetched
//! by the [`cloud`] poller; a cloud decision is stored only once the HumanLayer API accepted it.

pub mod api;
pub mod cloud;
pub mod expiry;
pub mod server;

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use hld_client::protocol::{
    Approval, ApprovalSource, ApprovalStatus, ApprovalType, RefusalReason, ANSWERED_ELSEWHERE,
};

use crate::store::{read, NewApproval, Store, StoreError, Writer};
use api::{ApiError, CloudClient};

/// Why a decision was not recorded (sent as `{"success": false, "error": …, "reason": …}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub reason: RefusalReason,
    pub message: String,
}

impl Refused {
    fn new(reason: RefusalReason, message: impl Into<String>) -> Refused {
        Refused {
            reason,
            message: message.into(),
        }
    }

    fn not_found(id: &str) -> Refused {
        Refused::new(RefusalReason::NotFound, format!("approval not found: {id}"))
    }

    fn failed(message: impl Into<String>) -> Refused {
        Refused::new(RefusalReason::Failed, message)
    }
}

/// The deny message Claude reads when the reviewer gave no reason.
pub const DEFAULT_DENIAL: &str = "Request denied by human reviewer";

/// The refusal of a cloud approval that was answered elsewhere (the API said 409).
pub const ALREADY_RESPONDED: &str = "this approval has already been responded to";

#[derive(Clone)]
pub struct Approvals {
    store: Store,
    cloud: Option<CloudClient>,
    /// Cloud approvals being decided: their leaving the pending list is no outside answer.
    sending: Arc<Mutex<HashSet<String>>>,
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals")
            .field("cloud", &self.cloud)
            .finish_non_exhaustive()
    }
}

/// Marks a cloud approval as being sent until dropped.
struct Sending {
    set: Arc<Mutex<HashSet<String>>>,
    id: String,
}

impl Drop for Sending {
    fn drop(&mut self) {
        self.set
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

impl Approvals {
    /// A manager over `store`, with the HumanLayer API client when an API key is configured.
    pub fn new(store: Store, cloud: Option<CloudClient>) -> Self {
        Approvals {
            store,
            cloud,
            sending: Arc::default(),
        }
    }

    pub fn cloud(&self) -> Option<&CloudClient> {
        self.cloud.as_ref()
    }

    /// Stores a new approval linked to its tool call (its session waits), or approved by a rule.
    pub async fn create(&self, new: NewApproval) -> Result<Approval, StoreError> {
        let approval = self
            .store
            .write(move |w, out| w.create_approval(&new, out))
            .await?;
        tracing::info!(
            approval = %approval.id,
            session = %approval.session_id,
            kind = %approval.kind.as_str(),
            source = %approval.source.as_str(),
            status = %approval.status.as_str(),
            decided_by = approval.decided_by.as_deref().unwrap_or_default(),
            "approval requested"
        );
        Ok(approval)
    }

    /// Stores a cloud approval as [`create`](Self::create) does (resolved if its session ended),
    /// or links a stored one whose tool call has appeared since.
    pub async fn sync_cloud(&self, new: NewApproval) -> Result<(), StoreError> {
        let id = new.id.clone();
        let sync = move |w: &mut Writer, out: &mut Vec<_>| w.sync_cloud_approval(&new, out);
        if self.store.write(sync).await? {
            tracing::info!(approval = %id, "cloud approval linked to its tool call");
        }
        Ok(())
    }

    /// Marks a cloud approval gone from the pending list `resolved`, unless a decision is sent.
    pub async fn resolve_externally(&self, id: &str) {
        if self.lock_sending().contains(id) {
            return;
        }
        match self.resolve_elsewhere(id).await {
            Ok(_) => tracing::info!(approval = %id, "cloud approval resolved elsewhere"),
            Err(refused) => {
                tracing::debug!(approval = %id, reason = %refused.message, "cloud approval not marked resolved")
            }
        }
    }

    /// Records a decision on an approval of `kind`. A pending cloud one goes to the HumanLayer
    /// API first; if it answers 409 the approval is marked `resolved` and the decision refused.
    pub async fn decide(
        &self,
        id: &str,
        kind: ApprovalType,
        status: ApprovalStatus,
        comment: Option<String>,
    ) -> Result<Approval, Refused> {
        let existing = self.lookup(id, kind).await?;
        if existing.source == ApprovalSource::Cloud && existing.status == ApprovalStatus::Pending {
            // Held until the decision is stored, so the poller leaves the approval alone.
            let _sending = self.start_sending(id)?;
            self.send_to_cloud(&existing, status, comment.as_deref())
                .await?;
            return self.record(id, status, comment).await;
        }
        self.record(id, status, comment).await
    }

    /// The approval `id`, which must be of `kind`.
    async fn lookup(&self, id: &str, kind: ApprovalType) -> Result<Approval, Refused> {
        let owned = id.to_owned();
        let existing = match self.store.read(move |c| read::approval(c, &owned)).await {
            Ok(Some(a)) => a,
            Ok(None) => return Err(Refused::not_found(id)),
            Err(e) => {
                tracing::error!(approval = %id, error = %e, "cannot read approval");
                return Err(Refused::failed("failed to read the approval"));
            }
        };
        if existing.kind != kind {
            return Err(Refused::new(
                RefusalReason::WrongType,
                format!(
                    "approval {id} is a {}, not a {}",
                    existing.kind.as_str(),
                    kind.as_str()
                ),
            ));
        }
        Ok(existing)
    }

    fn lock_sending(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.sending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Claims the right to send a decision on cloud approval `id`.
    fn start_sending(&self, id: &str) -> Result<Sending, Refused> {
        if !self.lock_sending().insert(id.to_owned()) {
            return Err(Refused::failed(format!(
                "a decision on approval {id} is already being sent"
            )));
        }
        Ok(Sending {
            set: Arc::clone(&self.sending),
            id: id.to_owned(),
        })
    }

    async fn send_to_cloud(
        &self,
        approval: &Approval,
        status: ApprovalStatus,
        comment: Option<&str>,
    ) -> Result<(), Refused> {
        let Some(client) = &self.cloud else {
            return Err(Refused::failed(
                "approval features not available: no API key configured",
            ));
        };
        let id = approval.id.as_str();
        let (action, sent) = match status {
            ApprovalStatus::Approved => (
                "failed to approve function call",
                client.respond_function_call(id, true, comment).await,
            ),
            ApprovalStatus::Denied => (
                "failed to deny function call",
                client.respond_function_call(id, false, comment).await,
            ),
            ApprovalStatus::Responded => (
                "failed to respond to human contact",
                client
                    .respond_human_contact(id, comment.unwrap_or_default())
                    .await,
            ),
            // Nothing to send: no decision (or none this daemon makes).
            _ => return Ok(()),
        };
        match sent {
            Ok(()) => Ok(()),
            Err(ApiError::Conflict) => {
                tracing::info!(approval = %id, "cloud approval was already responded to");
                if let Err(refused) = self.resolve_elsewhere(id).await {
                    tracing::debug!(approval = %id, reason = %refused.message, "cloud approval not marked resolved");
                }
                Err(Refused::new(RefusalReason::Resolved, ALREADY_RESPONDED))
            }
            Err(e) => {
                tracing::warn!(approval = %id, error = %e, "{action}");
                Err(Refused::failed(format!("{action}: {e}")))
            }
        }
    }

    /// Marks cloud approval `id` `resolved`, with the comment that it was answered elsewhere.
    async fn resolve_elsewhere(&self, id: &str) -> Result<Approval, Refused> {
        let comment = Some(ANSWERED_ELSEWHERE.to_owned());
        self.record(id, ApprovalStatus::Resolved, comment).await
    }

    /// Stores a decision; the session runs again once nothing is pending.
    async fn record(
        &self,
        id: &str,
        status: ApprovalStatus,
        comment: Option<String>,
    ) -> Result<Approval, Refused> {
        let owned = id.to_owned();
        let decide = move |w: &mut Writer, out: &mut Vec<_>| {
            w.decide_approval(&owned, status, comment.as_deref(), None, out)
        };
        let approval = match self.store.write(decide).await {
            Ok(approval) => approval,
            Err(StoreError::AlreadyDecided {
                status: ApprovalStatus::Resolved,
                ..
            }) => {
                return Err(Refused::new(
                    RefusalReason::Resolved,
                    format!(
                        "approval {id} was resolved without a decision: its session ended, or \
                         it was answered elsewhere"
                    ),
                ))
            }
            Err(StoreError::AlreadyDecided { status, .. }) => {
                return Err(Refused::new(
                    RefusalReason::AlreadyDecided,
                    format!("approval {id} was already decided: {}", status.as_str()),
                ));
            }
            Err(StoreError::ApprovalNotFound(_)) => return Err(Refused::not_found(id)),
            Err(e) => {
                tracing::error!(approval = %id, error = %e, "cannot store decision");
                return Err(Refused::failed("failed to store the decision"));
            }
        };
        tracing::info!(approval = %approval.id, decision = %status.as_str(), "approval decided");
        Ok(approval)
    }
}
