//! Gives memory freed after a burst of load back to the system.
//!
//! glibc's malloc returns freed memory to the kernel only from the top of its heap. After a
//! thousand connections close, the heap is left full of free holes that still count as
//! resident, and the daemon would sit at several times its idle size all day. Every
//! [`INTERVAL`], SQLite's page caches are emptied and `malloc_trim(0)` releases the free pages
//! wherever they are. Both cost little: the caches refill from the OS page cache, and a trim
//! walks only the free lists.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::store::Store;

/// How often memory is handed back.
pub const INTERVAL: Duration = Duration::from_secs(3);

/// Hands memory back every [`INTERVAL`] until `shutdown`.
pub async fn release_periodically(store: Store, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        if let Err(e) = store.release_memory().await {
            tracing::debug!(error = %e, "could not shrink the database caches");
        }
        trim();
    }
}

/// Releases every free page malloc holds.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim(0) takes malloc's own locks and only returns free pages to the
    // kernel (madvise); no live allocation is touched.
    #[allow(unsafe_code)]
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Other allocators return memory on their own.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
