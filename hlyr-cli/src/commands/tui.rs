//! `hlyr tui`: the live dashboard. `hlyr` replaces itself with `hld-tui` (next to `hlyr`, else
//! on PATH), passing on the context, the socket and the `hld` to start when none answers.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command as Process;

use crate::connect::StartArgs;
use crate::error::{CliError, Exit};
use crate::Context;

// `hlyr tui`'s own options. (`//`: clap would take a doc comment for the command's description.)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Do not ring the terminal bell when an approval arrives.
    #[arg(long)]
    no_bell: bool,
    /// Watch every context's daemon in one list (`local`, then each of `hlyr context list`).
    #[arg(long)]
    all_contexts: bool,
    #[command(flatten)]
    start: StartArgs,
}

/// The `hld-tui` to run: the one next to this executable, else PATH.
fn tui_binary() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("hld-tui")))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("hld-tui"))
}

/// Replaces this process with `hld-tui`; returns only if that fails.
pub fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let tui = tui_binary();
    let mut command = Process::new(&tui);
    if let Some(socket) = &ctx.daemon_socket {
        command.arg("--daemon-socket").arg(socket);
    }
    if let Some(name) = &ctx.context {
        command.arg("--context").arg(name);
    }
    if let Some(hld) = &args.start.hld_path {
        command.arg("--hld-path").arg(hld);
    }
    if args.no_bell {
        command.arg("--no-bell");
    }
    if args.all_contexts {
        command.arg("--all-contexts");
    }
    let error = command.exec();
    Err(
        CliError::failure(format!("cannot run {}: {error}", tui.display()))
            .hint("install hld-tui next to hlyr (see the README) or put it on PATH"),
    )
}
