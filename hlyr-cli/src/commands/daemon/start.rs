//! `hlyr daemon start`: start hld detached, logging next to its socket, unless one answers.

use std::path::PathBuf;

use crate::connect::StartArgs;
use crate::error::{CliError, Exit};
use crate::output::{paint, Render, DIM, GREEN, YELLOW};
use crate::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    start: StartArgs,
}

/// What `daemon start` (and the second half of `daemon restart`) prints.
#[derive(Debug, serde::Serialize)]
pub struct Outcome {
    socket: PathBuf,
    version: String,
    /// Whether this command started it (false: one was already running).
    started: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log: Option<PathBuf>,
    /// Where hlyr finds the `claude` that the running daemon does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    claude_found_by_hlyr: Option<PathBuf>,
}

impl Render for Outcome {
    fn human(&self) -> String {
        let mut text = match (&self.pid, &self.log) {
            (Some(pid), Some(log)) => format!(
                "{} hld {} (pid {pid}) on {}\n{} {}",
                paint(GREEN, "started"),
                self.version,
                self.socket.display(),
                paint(DIM, "log:"),
                log.display()
            ),
            _ => format!(
                "hld {} is already running on {}",
                self.version,
                self.socket.display()
            ),
        };
        if let Some(path) = &self.claude_found_by_hlyr {
            text.push_str(&format!(
                "\n{} {}",
                paint(YELLOW, "⚠ the daemon finds no claude:"),
                crate::claude::advice(Some(path))
            ));
        }
        text
    }
}

/// Starts the daemon unless one answers; says what happened.
pub async fn start(ctx: &Context, args: &StartArgs) -> Result<Outcome, CliError> {
    let (client, started) = ctx.connect_or_start(args).await?;
    let health = client.health().await?;
    Ok(Outcome {
        socket: ctx.socket()?,
        claude_found_by_hlyr: crate::claude::missed_by(&health),
        version: health.version,
        started: started.is_some(),
        pid: started.as_ref().map(|s| s.pid),
        log: started.map(|s| s.log),
    })
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let outcome = start(ctx, &args.start).await?;
    ctx.out.print(&outcome)?;
    Ok(Exit::Ok)
}
