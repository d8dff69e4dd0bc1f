//! Usage limits: the latest state of each window, as the sessions' `claude` last reported it.

use std::sync::Arc;

use hld_client::protocol::{GetRateLimitsResult, NoParams};

use crate::daemon::Daemon;
use crate::error::{Error, Result};
use crate::store::limits;

/// `getRateLimits`: every window reported so far (stored, so kept over a restart).
pub async fn get_rate_limits(daemon: Arc<Daemon>, _: NoParams) -> Result<GetRateLimitsResult> {
    let windows = daemon
        .store
        .read(limits::rate_limits)
        .await
        .map_err(|e| Error::internal("failed to read the usage-limit windows", e))?;
    Ok(GetRateLimitsResult { windows })
}
