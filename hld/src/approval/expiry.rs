//! Ends each bypass when its time is up: a task sleeps until the earliest expiry or a change.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::store::{read, Store};

/// How long the task sleeps when no bypass has an expiry (a change wakes it anyway).
const IDLE: Duration = Duration::from_secs(3600);

/// Runs until `shutdown`; `wake` is notified whenever a bypass with an expiry may have been set.
pub async fn run(store: Store, wake: Arc<Notify>, shutdown: CancellationToken) {
    loop {
        let pause = match store.read(read::next_bypass_expiry).await {
            Ok(Some(expiry)) => crate::time::until(&expiry),
            Ok(None) => IDLE,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read bypass expiries");
                Duration::from_secs(1)
            }
        };
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = wake.notified() => continue,
            () = tokio::time::sleep(pause) => {}
        }
        match store
            .write(|w, out| w.expire_bypasses(&crate::time::now(), out))
            .await
        {
            Ok(ended) => {
                for session in &ended {
                    tracing::info!(%session, "bypass of permissions expired");
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot end expired bypasses"),
        }
    }
}
