//! `hlyr daemon start`: start hld detached, logging next to its socket, unless one answers.

use std::path::PathBuf;

use crate::connect::{start_daemon, StartArgs};
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
    let socket = ctx.socket()?;
    let running = crate::connect::health(&socket).await.ok();
    let (started, pid, log) = match running {
        Some(_) => (false, None, None),
        None => {
            let started = start_daemon(&socket, &args.start).await?;
            (true, Some(started.pid), Some(started.log))
        }
    };
    let version = crate::connect::health(&socket).await?.version;
    ctx.out.print(&Outcome {
        socket,
        version,
        started,
        pid,
        log,
    })?;
    Ok(Exit::Ok)
}
