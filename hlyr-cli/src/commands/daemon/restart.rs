//! `hlyr daemon restart`: `daemon stop`, then `daemon start`, started as the stopped daemon
//! was: with its arguments, working directory and `HUMANLAYER_` variables. This shell's
//! environment wins where it sets a variable (its `PATH`, a new `HUMANLAYER_CLAUDE_PATH`).

use crate::connect::StartArgs;
use crate::error::{CliError, Exit};
use crate::output::Render;
use crate::Context;

use super::start::{self, Outcome};
use super::stop::{self, Stopped};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Stop without asking, even when sessions are running.
    #[arg(short, long)]
    force: bool,
    #[command(flatten)]
    start: StartArgs,
}

/// What `daemon restart` prints: what `stop` and `start` print.
#[derive(serde::Serialize)]
struct Restarted {
    stopped: Stopped,
    started: Outcome,
}

impl Render for Restarted {
    fn human(&self) -> String {
        format!("{}\n{}", self.stopped.human(), self.started.human())
    }
}

/// Stops the daemon (asking first when sessions run, unless `force`) and starts it again with
/// `start`, as it was started; prints what happened.
pub async fn restarted(ctx: &Context, start: &StartArgs, force: bool) -> Result<(), CliError> {
    let stopped = stop::stop(ctx, force).await?;
    let start = StartArgs {
        hld_path: start.hld_path.clone(),
        like: stopped.invocation.clone(),
    };
    let started = start::start(ctx, &start).await?;
    ctx.out.print(&Restarted { stopped, started })
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    restarted(ctx, &args.start, args.force).await?;
    Ok(Exit::Ok)
}
