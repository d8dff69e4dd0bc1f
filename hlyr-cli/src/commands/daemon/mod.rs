//! `hlyr daemon start|stop|status`.

mod start;
mod status;
mod stop;

use clap::Subcommand;

use super::{on_runtime, NoArgs, With};
use crate::error::{CliError, Exit};
use crate::Globals;

// The `daemon` group: one of its commands. (`//`: clap would take a doc comment here for the
// group's description.)
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

// Not deferred: the whole `daemon` group is built only when it is used (see the top-level
// `Command`), and deferring would let `StartArgs`' doc comment replace `start`'s description.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start hld in the background unless one already answers.
    Start(With<start::Args>),
    /// Stop the daemon gracefully.
    Stop(With<NoArgs>),
    /// Show the daemon's health; exit code 3 when it is not running.
    Status(With<NoArgs>),
}

impl Command {
    /// Runs the command; `before` are the options given before its name.
    pub fn run(self, before: Globals) -> Result<Exit, CliError> {
        match self {
            Command::Start(c) => c.run(before, |ctx, args| {
                on_runtime(Box::pin(start::run(ctx, args)))
            }),
            Command::Stop(c) => c.run(before, |ctx, NoArgs {}| {
                on_runtime(Box::pin(stop::run(ctx)))
            }),
            Command::Status(c) => c.run(before, |ctx, NoArgs {}| status::run(ctx)),
        }
    }
}
