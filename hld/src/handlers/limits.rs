//! Usage limits: the latest state of each window, as the sessions' `claude` last reported it.

use std::sync::Arc;

use hld_client::protocol::{GetRateLimitsResult, NoParams};
use hld_client::view::usage::window_current;

use crate::daemon::Daemon;
use crate::error::{Error, Result};
use crate::store::limits;

/// `getRateLimits`: every window reported so far (stored, so kept over a restart) whose reset
/// has not passed: what a window said no longer holds once it is over.
pub async fn get_rate_limits(daemon: Arc<Daemon>, _: NoParams) -> Result<GetRateLimitsResult> {
    let mut windows = daemon
        .store
        .read(limits::rate_limits)
        .await
        .map_err(|e| Error::internal("failed to read the usage-limit windows", e))?;
    let now = chrono::Utc::now();
    windows.retain(|w| window_current(w, now));
    Ok(GetRateLimitsResult { windows })
}
