//! Gives SQLite's page caches back after load: once the daemon is quiet (under 1% of a CPU over
//! the last [`INTERVAL`]), not under load, when the next queries would only refill them.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::store::Store;

/// How often memory is handed back.
pub const INTERVAL: Duration = Duration::from_secs(3);

/// The CPU time, as a share of [`INTERVAL`], under which the daemon counts as quiet.
const QUIET: f64 = 0.01;

/// Hands memory back after each quiet [`INTERVAL`] that follows a busy one, until `shutdown`.
pub async fn release_periodically(store: Store, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last = cpu_time();
    // Whether anything happened since memory was last handed back.
    let mut busy_since_release = true;
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        let now = cpu_time();
        let used = now.saturating_sub(last);
        last = now;
        if used.as_secs_f64() > INTERVAL.as_secs_f64() * QUIET {
            busy_since_release = true;
            continue;
        }
        if !busy_since_release {
            continue;
        }
        busy_since_release = false;
        if let Err(e) = store.release_memory().await {
            tracing::debug!(error = %e, "could not shrink the database caches");
        }
    }
}

/// The CPU time the daemon has used, user and system.
fn cpu_time() -> Duration {
    use nix::sys::resource::{getrusage, UsageWho};
    getrusage(UsageWho::RUSAGE_SELF).map_or(Duration::ZERO, |usage| {
        let time = |t: nix::sys::time::TimeVal| {
            Duration::new(t.tv_sec().max(0) as u64, (t.tv_usec().max(0) as u32) * 1000)
        };
        time(usage.user_time()) + time(usage.system_time())
    })
}
