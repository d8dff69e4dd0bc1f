//! A daemon that finds no `claude`: hlyr runs the daemon's own search
//! ([`hld_client::claude_path`]) with this shell's environment, says where it finds one, and
//! on a terminal offers to restart the daemon, which then inherits that environment. Nothing
//! names a program to the daemon over the wire.

use std::path::{Path, PathBuf};

use hld_client::claude_path;
use hld_client::protocol::HealthResult;

use crate::connect::StartArgs;
use crate::error::{CliError, Kind};
use crate::hint::{self, hlyr_daemon};
use crate::output::{paint, DIM};
use crate::Context;

/// The `claude` a daemon started from this shell would find, if any; none for a daemon in
/// use on another machine, which this shell does not start.
pub fn here() -> Option<PathBuf> {
    if hint::is_remote() {
        return None;
    }
    claude_path::locate(claude_path::from_env().as_deref())
}

/// Where hlyr finds `claude` when the daemon, by its `health`, does not.
pub fn missed_by(health: &HealthResult) -> Option<PathBuf> {
    let found = health.claude.as_ref().is_some_and(|c| c.available);
    if found {
        None
    } else {
        here()
    }
}

/// What to do about a daemon without `claude`, given where hlyr finds one.
pub fn advice(found_here: Option<&PathBuf>) -> String {
    match found_here {
        Some(path) => format!(
            "hlyr finds it at {}; {} restarts the daemon with this shell's environment, where \
             it will find it too",
            path.display(),
            hlyr_daemon(None, "restart")
        ),
        None if hint::is_remote() => "on the daemon's machine, install Claude Code (npm \
            install -g @anthropic-ai/claude-code) or set HUMANLAYER_CLAUDE_PATH, then run \
            `hlyr daemon restart` there"
            .to_owned(),
        None => format!(
            "install Claude Code (npm install -g @anthropic-ai/claude-code) or set \
             HUMANLAYER_CLAUDE_PATH, then {}",
            hlyr_daemon(None, "restart")
        ),
    }
}

/// The error for a launch the daemon refused for want of `claude`.
pub fn not_found() -> CliError {
    CliError::failure("the daemon cannot find the claude CLI")
        .kind(Kind::ClaudeNotFound)
        .hint(advice(here().as_ref()))
}

/// Asks, on a terminal, whether to restart the daemon so that it finds `path`.
fn restart_wanted(path: &Path) -> bool {
    let question = format!(
        "Restart the daemon now, so that it finds {}?",
        path.display()
    );
    crate::ask::confirm(&question) == Some(true)
}

/// Offers, on a terminal, to restart the daemon so that it finds `path` (`daemon status`).
pub async fn offer_restart(ctx: &Context, path: &Path) -> Result<(), CliError> {
    if restart_wanted(path) {
        crate::commands::daemon::restarted(ctx, &StartArgs::from_env(), false).await?;
    }
    Ok(())
}

/// `launch` or `continue` refused for want of `claude` (`error`): when hlyr finds one, the
/// error is told and, on a terminal, a restart offered. `Ok` once the daemon was restarted
/// with `start`, for the command to go on; else the error left to report.
pub async fn restart_to_go_on(
    ctx: &Context,
    start: &StartArgs,
    error: CliError,
) -> Result<(), CliError> {
    let found = here().filter(|_| error.kind == Kind::ClaudeNotFound && !ctx.out.is_json());
    let Some(path) = found else {
        return Err(error);
    };
    error.print();
    if !restart_wanted(&path) {
        return Err(CliError::new(error.exit, String::new()));
    }
    crate::commands::daemon::restarted(ctx, start, false).await?;
    anstream::eprintln!("{}", paint(DIM, "the daemon was restarted; going on"));
    Ok(())
}
