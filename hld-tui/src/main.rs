//! `hld-tui`: the dashboard's entry point: finds (or starts) the daemon, sets up the terminal
//! and restores it however the program ends.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// A live dashboard for Claude Code sessions run by hld: watch sessions, read conversations as
/// they stream, and approve or deny tool calls. Press ? inside for the keys.
#[derive(Parser)]
#[command(version)]
struct Cli {
    /// The daemon's socket [default: $HUMANLAYER_DAEMON_SOCKET, humanlayer.json, ~/.humanlayer/daemon.sock].
    #[arg(long, value_name = "PATH")]
    daemon_socket: Option<PathBuf>,
    /// Do not ring the bell or show a terminal notification (OSC 9/777) when the daemon
    /// notifies: an approval or question waits, a session ends or hits a limit (B toggles it).
    #[arg(long)]
    no_bell: bool,
    /// The `hld` binary to start when no daemon answers [default: next to hld-tui, then PATH].
    #[arg(long, env = "HLD_PATH", value_name = "PATH")]
    hld_path: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let socket = match hld_client::config::resolve_socket_path(cli.daemon_socket.as_deref()) {
        Ok(socket) => socket,
        Err(e) => {
            eprintln!("hld-tui: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("hld-tui: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        if !hld_client::autostart::healthy(&socket).await {
            eprintln!("hld-tui: no daemon at {}; starting hld…", socket.display());
            let hld = hld_client::autostart::hld_binary(cli.hld_path.as_deref());
            hld_client::autostart::start(&hld, &socket).await?;
        }
        let options = hld_tui::runtime::Options {
            socket,
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
            bell: !cli.no_bell,
            alert: hld_client::view::alert::Alert::from_env(),
        };
        // `init` also restores the terminal on panic.
        let mut terminal = ratatui::init();
        let result = hld_tui::runtime::run(&mut terminal, options).await;
        ratatui::restore();
        result
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hld-tui: {e}");
            ExitCode::FAILURE
        }
    }
}
