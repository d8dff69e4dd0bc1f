//! `hlyr daemon start|stop|status`.

mod start;
mod status;
mod stop;

use clap::Subcommand;

use crate::error::{CliError, Exit};
use crate::Context;

// `defer`, as for the top-level commands: the `daemon` group itself is built on every run
// (clap builds nested groups eagerly), its subcommands' arguments only when used.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Start hld in the background unless one already answers.
    Start(start::Args),
    /// Stop the daemon gracefully.
    Stop,
    /// Show the daemon's health; exit code 3 when it is not running.
    Status,
}

impl Command {
    pub fn run(self, ctx: &Context) -> Result<Exit, CliError> {
        match self {
            Command::Start(args) => super::on_runtime(Box::pin(start::run(ctx, args))),
            Command::Stop => super::on_runtime(Box::pin(stop::run(ctx))),
            Command::Status => status::run(ctx),
        }
    }
}
