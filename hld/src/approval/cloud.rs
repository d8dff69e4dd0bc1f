//! The cloud poller (hld-anchor.md §4.2–4.3): stores our sessions' pending items as approvals,
//! resolves those the API no longer lists, and backs off ([`PollSettings::delay`]) on failure.

use std::collections::HashSet;
use std::time::Duration;

use hld_client::protocol::{ApprovalSource, ApprovalStatus, ApprovalType};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::api::{ApiError, CloudCall, CloudClient, FunctionCallSpec, HumanContactSpec};
use super::Approvals;
use crate::model::SESSION_ENDED;
use crate::store::{read, NewApproval, Store};

/// Time between polls (spec/000 `DEFAULT_POLL_INTERVAL`).
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(5_000);
/// The longest wait after failures (spec/000 `MAX_BACKOFF`).
pub const MAX_BACKOFF: Duration = Duration::from_millis(300_000);
/// How much the wait grows per consecutive failure (spec/000 `BACKOFF_FACTOR`).
pub const BACKOFF_FACTOR: f64 = 2.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollSettings {
    pub interval: Duration,
    pub max_backoff: Duration,
}

impl PollSettings {
    /// The wait before the next poll after `failures` consecutive failed polls:
    /// `interval × 2^failures`, at most `max_backoff` (but never below `interval`).
    pub fn delay(&self, failures: u32) -> Duration {
        if failures == 0 {
            return self.interval;
        }
        let exponent = i32::try_from(failures).unwrap_or(i32::MAX);
        let grown = self.interval.as_secs_f64() * BACKOFF_FACTOR.powi(exponent);
        Duration::try_from_secs_f64(grown)
            .unwrap_or(Duration::MAX)
            .min(self.max_backoff)
            .max(self.interval)
    }
}

/// Starts the poller if cloud approvals are enabled; it stops when `shutdown` is cancelled.
pub fn spawn(
    approvals: &Approvals,
    store: &Store,
    settings: PollSettings,
    shutdown: CancellationToken,
) -> Option<JoinHandle<()>> {
    let poller = Poller {
        client: approvals.cloud()?.clone(),
        approvals: approvals.clone(),
        store: store.clone(),
        outlived: HashSet::new(),
    };
    Some(tokio::spawn(poller.run(settings, shutdown)))
}

struct Poller {
    client: CloudClient,
    approvals: Approvals,
    store: Store,
    /// The items the cloud still lists whose approval was resolved here because its session
    /// ended, by kind and id. One that leaves the list was answered in the cloud.
    outlived: HashSet<(ApprovalType, String)>,
}

impl Poller {
    async fn run(mut self, settings: PollSettings, shutdown: CancellationToken) {
        tracing::info!(
            interval_ms = settings.interval.as_millis() as u64,
            "cloud approval poller started"
        );
        let mut failures: u32 = 0;
        loop {
            let ok = tokio::select! {
                biased;
                _ = shutdown.cancelled() => break,
                ok = self.poll() => ok,
            };
            failures = if ok { 0 } else { failures.saturating_add(1) };
            let delay = settings.delay(failures);
            if failures > 0 {
                tracing::warn!(
                    failures,
                    retry_in_ms = delay.as_millis() as u64,
                    "cloud approval poll failed; backing off"
                );
            }
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => break,
                _ = tokio::time::sleep(delay) => {}
            }
        }
        tracing::info!("cloud approval poller stopped");
    }

    /// One poll of both lists; false if either fetch failed.
    async fn poll(&mut self) -> bool {
        let (calls, contacts) = tokio::join!(
            self.client.pending_function_calls(),
            self.client.pending_human_contacts()
        );
        let calls_ok = self
            .reconcile(ApprovalType::FunctionCall, calls, "function calls")
            .await;
        let contacts_ok = self
            .reconcile(ApprovalType::HumanContact, contacts, "human contacts")
            .await;
        calls_ok && contacts_ok
    }

    /// Applies one fetched list (false if the fetch failed): items stored, absent ones resolved.
    async fn reconcile<S: Spec>(
        &mut self,
        kind: ApprovalType,
        fetched: Result<Vec<CloudCall<S>>, ApiError>,
        what: &str,
    ) -> bool {
        let items = match fetched {
            Ok(items) => items,
            Err(e) => {
                tracing::warn!(error = %e, "cannot fetch pending {what}");
                return false;
            }
        };
        let listed: HashSet<&str> = items.iter().map(|i| i.call_id.as_str()).collect();
        self.ignore_answers(kind, &listed);
        match self.store.read(|c| read::pending_approvals(c, None)).await {
            Ok(stored) => {
                for approval in stored {
                    let ours = approval.source == ApprovalSource::Cloud && approval.kind == kind;
                    if ours && !listed.contains(approval.id.as_str()) {
                        self.approvals.resolve_externally(&approval.id).await;
                    }
                }
            }
            Err(e) => tracing::error!(error = %e, "cannot read pending approvals"),
        }
        for item in &items {
            match self.sync(item).await {
                Ok(true) => {
                    self.outlived.insert((kind, item.call_id.clone()));
                }
                Ok(false) => {}
                Err(e) => {
                    tracing::error!(approval = %item.call_id, error = %e, "cannot store cloud approval")
                }
            }
        }
        true
    }

    /// Logs once, and forgets, each approval of `kind` resolved when its session ended that
    /// the cloud no longer lists: it was answered there, and the answer reaches no one.
    fn ignore_answers(&mut self, kind: ApprovalType, listed: &HashSet<&str>) {
        self.outlived.retain(|(of, id)| {
            let answered = *of == kind && !listed.contains(id.as_str());
            if answered {
                tracing::info!(approval = %id, "cloud answer ignored: the approval was resolved when its session ended");
            }
            !answered
        });
    }

    /// Stores one item of our sessions if new (or unlinked); true if resolved as its session ended.
    async fn sync<S: Spec>(&self, item: &CloudCall<S>) -> Result<bool, crate::store::StoreError> {
        let call_id = item.call_id.clone();
        if let Some(stored) = self
            .store
            .read(move |c| read::approval(c, &call_id))
            .await?
        {
            if stored.status == ApprovalStatus::Resolved {
                return Ok(stored.comment.as_deref() == Some(SESSION_ENDED));
            }
            let may_link = stored.status == ApprovalStatus::Pending
                && stored.kind == ApprovalType::FunctionCall
                && stored.tool_use_id.is_none();
            if !may_link {
                return Ok(false);
            }
        }
        let run_id = item.run_id.clone();
        if run_id.is_empty() {
            return Ok(false);
        }
        let Some(session) = self
            .store
            .read(move |c| read::session_by_run_id(c, &run_id))
            .await?
        else {
            tracing::debug!(approval = %item.call_id, run = %item.run_id, "cloud approval of another run ignored");
            return Ok(false);
        };
        self.approvals
            .sync_cloud(to_approval(item, &session.new.id))
            .await?;
        Ok(false)
    }
}

/// The `spec` of a fetched cloud item, which says what approval it is.
trait Spec {
    /// The approval `call_id` asks for, of session `session_id`.
    fn approval(&self, call_id: &str, session_id: &str) -> NewApproval;
}

impl Spec for FunctionCallSpec {
    fn approval(&self, call_id: &str, session_id: &str) -> NewApproval {
        let (tool, input) = (&self.function, self.kwargs.clone());
        NewApproval::function_call(call_id, session_id, tool, input, None)
    }
}

impl Spec for HumanContactSpec {
    fn approval(&self, call_id: &str, session_id: &str) -> NewApproval {
        NewApproval {
            subject: self.subject.clone(),
            ..NewApproval::human_contact(call_id, session_id, &self.msg)
        }
    }
}

/// The cloud approval to store for a fetched item of session `session_id`.
fn to_approval<S: Spec>(item: &CloudCall<S>, session_id: &str) -> NewApproval {
    let mut new = item.spec.approval(&item.call_id, session_id);
    new.source = ApprovalSource::Cloud;
    if let Some(at) = item.requested_at() {
        new.requested_at = at;
    }
    new
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_backoff_doubles_from_5_s_up_to_5_min() {
        let settings = PollSettings {
            interval: DEFAULT_POLL_INTERVAL,
            max_backoff: MAX_BACKOFF,
        };
        let secs: Vec<u64> = (0..=8).map(|n| settings.delay(n).as_secs()).collect();
        assert_eq!(secs, [5, 10, 20, 40, 80, 160, 300, 300, 300]);
        assert_eq!(settings.delay(u32::MAX), MAX_BACKOFF);
        let odd = PollSettings {
            interval: Duration::from_millis(500),
            max_backoff: Duration::from_millis(100),
        };
        let never_below = odd.delay(3);
        assert_eq!(never_below, Duration::from_millis(500), "the interval");
    }
}
