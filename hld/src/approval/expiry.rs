//! Approvals whose session ended before anyone decided them: nobody is waiting for them any
//! more, so they are marked `resolved` ("the session ended before a decision") and leave the
//! pending list. Driven by the bus; after a missed event, every session that ended since the
//! daemon started is swept. Sessions a previous daemon left behind keep their approvals, so
//! that those can still be decided after a restart.

use std::collections::VecDeque;

use hld_client::protocol::{ApprovalSource, ApprovalStatus, Event, SessionStatus};
use tokio_util::sync::CancellationToken;

use super::Approvals;
use crate::bus::{Bus, Filter};

/// The comment recorded on an approval that expired with its session.
pub const SESSION_ENDED: &str = "the session ended before a decision";

impl Approvals {
    /// Resolves the pending local approvals of sessions that ended at or after `since` (all
    /// such sessions, or only `session_id`).
    pub async fn expire_ended(&self, session_id: Option<&str>, since: &str) {
        let pending = match self.store.pending_approvals(session_id).await {
            Ok(p) => p,
            Err(e) => {
                tracing::error!(error = %e, "cannot list pending approvals");
                return;
            }
        };
        for approval in pending {
            if approval.source != ApprovalSource::Local {
                continue;
            }
            let ended = match self.store.get_session(&approval.session_id).await {
                Ok(Some(s)) => {
                    !s.status.is_active() && s.completed_at.as_deref().is_some_and(|t| t >= since)
                }
                Ok(None) | Err(_) => false,
            };
            if ended {
                let expired = self
                    .record(
                        &approval.id,
                        ApprovalStatus::Resolved,
                        Some(SESSION_ENDED.into()),
                    )
                    .await;
                if expired.is_ok() {
                    tracing::info!(approval = %approval.id, "approval expired with its session");
                }
            }
        }
    }
}

/// Expires approvals as sessions end, until `shutdown`.
pub async fn run(approvals: Approvals, bus: Bus, shutdown: CancellationToken) {
    let subscriber = bus.subscribe(Filter::of_types(&["session_status_changed"]));
    let started = crate::time::now();
    let mut events = VecDeque::new();
    loop {
        let taken = tokio::select! {
            _ = shutdown.cancelled() => return,
            taken = subscriber.next_batch(&mut events) => match taken {
                Some(taken) => taken,
                None => return,
            },
        };
        if taken.lost > 0 {
            events.clear();
            approvals.expire_ended(None, &started).await;
            continue;
        }
        for published in events.drain(..) {
            if let Event::SessionStatusChanged {
                session_id,
                new_status: SessionStatus::Completed | SessionStatus::Failed,
                ..
            } = &published.event.event
            {
                approvals.expire_ended(Some(session_id), &started).await;
            }
        }
    }
}
