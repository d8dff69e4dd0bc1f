//! `hlyr daemon start|stop|restart|status|logs`.

mod logs;
mod restart;
mod start;
mod status;
mod stop;

use clap::Subcommand;

pub use self::restart::{restart, restarted};
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
    /// Stop the daemon gracefully, interrupting its sessions; waits until it has exited.
    Stop(With<stop::Args>),
    /// Stop the daemon and start it again, with this shell's environment.
    Restart(With<restart::Args>),
    /// Show the daemon's pid, version, uptime, files and load; exit code 3 when it is not
    /// running.
    Status(With<NoArgs>),
    /// Print the daemon's log, and with --follow keep printing it.
    Logs(With<logs::Args>),
}

impl Command {
    /// Runs the command; `before` are the options given before its name.
    pub fn run(self, before: Globals) -> Result<Exit, CliError> {
        match self {
            Command::Start(c) => c.run(before, |ctx, args| {
                on_runtime(Box::pin(start::run(ctx, args)))
            }),
            Command::Stop(c) => c.run(before, stop::run),
            Command::Restart(c) => c.run(before, restart::run),
            Command::Status(c) => c.run(before, |ctx, NoArgs {}| status::run(ctx)),
            Command::Logs(c) => c.run(before, logs::run),
        }
    }
}
