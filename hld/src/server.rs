//! The server: a function of (config, log control, shutdown token). `main` is a thin wrapper,
//! and tests call the same function.
//!
//! Shutdown order: stop accepting → let in-flight requests finish and subscriptions close
//! (at most 2 s) → remove the socket.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::Config;
use crate::daemon::Daemon;
use crate::logging::LogControl;
use crate::transport::unix;

/// How long in-flight requests get to finish at shutdown.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// Runs the daemon until `shutdown` is cancelled.
pub async fn run(
    config: Config,
    log: LogControl,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let socket = unix::bind(&config.socket)?;
    let daemon = Daemon::new(config, log, shutdown.clone());
    tracing::info!(
        socket = %daemon.config.socket.display(),
        version = crate::handlers::VERSION,
        pid = std::process::id(),
        "daemon started"
    );

    let connections = TaskTracker::new();
    loop {
        tokio::select! {
            biased;
            _ = shutdown.cancelled() => break,
            accepted = socket.listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(unix::serve_connection(stream, Arc::clone(&daemon)));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
        }
    }

    // 1. Stop accepting: no new connection from here on.
    let unix::BoundSocket { listener, file } = socket;
    drop(listener);
    // 2–3. In-flight requests finish; subscriptions see the token and close.
    connections.close();
    if tokio::time::timeout(DRAIN_TIMEOUT, connections.wait())
        .await
        .is_err()
    {
        tracing::warn!("some connections did not finish within the drain timeout");
    }
    // 4. Remove the socket.
    drop(file);
    tracing::info!("daemon shutdown complete");
    Ok(())
}
