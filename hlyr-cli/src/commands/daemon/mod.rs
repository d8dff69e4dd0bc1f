//! `hlyr daemon start|stop|restart|status|logs|url`.

mod logs;
mod restart;
mod start;
mod status;
mod stop;
mod url;

use clap::Subcommand;

pub use self::restart::restarted;
use crate::error::{CliError, Exit};
use crate::Context;

// The `daemon` group: one of its commands. (`//`: clap would take a doc comment here for the
// group's description.)
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start hld in the background unless one already answers.
    Start(start::Args),
    /// Stop the daemon gracefully, interrupting its sessions; waits until it has exited.
    Stop(stop::Args),
    /// Stop the daemon and start it again as it was started (its flags and HUMANLAYER_
    /// variables), this shell's environment winning where it sets a variable.
    Restart(restart::Args),
    /// Show the daemon's pid, version, uptime, files and load; exit code 3 when it is not
    /// running.
    Status,
    /// Print the daemon's log, and with --follow keep printing it.
    Logs(logs::Args),
    /// Print what reaches this daemon from elsewhere: with --ws its address, certificate
    /// fingerprint and token file; with --http the URL to give CodeLayer (with its secret).
    Url(url::Args),
}

impl Command {
    pub async fn run(self, ctx: &Context) -> Result<Exit, CliError> {
        match self {
            Command::Start(args) => start::run(ctx, args).await,
            Command::Stop(args) => stop::run(ctx, args).await,
            Command::Restart(args) => restart::run(ctx, args).await,
            Command::Status => status::run(ctx).await,
            Command::Logs(args) => logs::run(ctx, args).await,
            Command::Url(args) => url::run(ctx, args).await,
        }
    }
}
