//! `hlyr daemon start|stop|status`.

mod start;
mod status;
mod stop;

use clap::Subcommand;

use crate::error::{CliError, Exit};
use crate::Context;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start hld in the background unless one already answers.
    Start(start::Args),
    /// Stop the daemon gracefully.
    Stop,
    /// Show the daemon's health; exit code 3 when it is not running.
    Status,
}

impl Command {
    pub async fn run(self, ctx: &Context) -> Result<Exit, CliError> {
        match self {
            Command::Start(args) => start::run(ctx, args).await,
            Command::Stop => stop::run(ctx).await,
            Command::Status => status::run(ctx).await,
        }
    }
}
