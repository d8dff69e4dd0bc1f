//! `hlyr daemon stop`: the `shutdown` method, then wait until the daemon has removed its socket.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::error::{CliError, Exit};
use crate::output::Render;
use crate::Context;

/// How long the daemon has to go away after `shutdown` (it allows itself 2 s).
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(serde::Serialize)]
struct Stopped {
    socket: PathBuf,
    stopped: bool,
}

impl Render for Stopped {
    fn human(&self) -> String {
        format!("stopped hld on {}", self.socket.display())
    }
}

pub async fn run(ctx: &Context) -> Result<Exit, CliError> {
    let socket = ctx.socket()?;
    let client = ctx.connect_async().await?;
    client.shutdown().await?;
    drop(client);
    // Removing its socket is the daemon's last act before exiting.
    let deadline = Instant::now() + STOP_TIMEOUT;
    while socket.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if crate::connect::healthy(&socket).await {
        return Err(
            CliError::failure("the daemon is still answering after `shutdown`")
                .hint("look at its log, or stop its process"),
        );
    }
    ctx.out.print(&Stopped {
        socket,
        stopped: true,
    })?;
    Ok(Exit::Ok)
}
