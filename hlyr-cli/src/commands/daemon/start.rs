//! `hlyr daemon start`: start hld detached, logging next to its socket, unless one answers.

use std::path::PathBuf;

use crate::connect::StartArgs;
use crate::error::{CliError, Exit};
use crate::output::{paint, Render, GREEN};
use crate::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    start: StartArgs,
}

#[derive(serde::Serialize)]
struct Outcome {
    socket: PathBuf,
    version: String,
    /// Whether this command started it (false: one was already running).
    started: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log: Option<PathBuf>,
}

impl Render for Outcome {
    fn human(&self) -> String {
        match (&self.pid, &self.log) {
            (Some(pid), Some(log)) => format!(
                "{} hld {} (pid {pid}) on {}\nlog: {}",
                paint(GREEN, "started"),
                self.version,
                self.socket.display(),
                log.display()
            ),
            _ => format!(
                "hld {} is already running on {}",
                self.version,
                self.socket.display()
            ),
        }
    }
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let (client, started) = ctx.connect_or_start(&args.start).await?;
    let version = client.health().await?.version;
    ctx.out.print(&Outcome {
        socket: ctx.socket()?,
        version,
        started: started.is_some(),
        pid: started.as_ref().map(|s| s.pid),
        log: started.map(|s| s.log),
    })?;
    Ok(Exit::Ok)
}
