//! `hld-tui`: the dashboard's entry point: finds (or starts) the daemon, sets up the terminal
//! and restores it however the program ends.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use hld_client::contexts::Contexts;
use hld_client::Address;

/// A live dashboard for Claude Code sessions run by hld: watch sessions, read conversations as
/// they stream, and approve or deny tool calls. Press ? inside for the keys.
#[derive(Parser)]
#[command(version)]
struct Cli {
    /// The daemon's socket [default: $HUMANLAYER_DAEMON_SOCKET, humanlayer.json, ~/.humanlayer/daemon.sock].
    #[arg(long, value_name = "PATH")]
    daemon_socket: Option<PathBuf>,
    /// The daemon to watch, by its context's name (`hlyr context list`): this machine's
    /// socket (`local`) or a daemon elsewhere over `wss://` [default: the one `hlyr context
    /// use` chose, else `local`].
    #[arg(long, value_name = "NAME", env = "HLD_CONTEXT")]
    context: Option<String>,
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
    let (context, address) = match resolve(&cli) {
        Ok(resolved) => resolved,
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
        // Only this machine's daemon is started when none answers; a remote one is waited for.
        if let Address::Socket(socket) = &address {
            if !hld_client::autostart::healthy(socket).await {
                eprintln!("hld-tui: no daemon at {}; starting hld…", socket.display());
                let hld = hld_client::autostart::hld_binary(cli.hld_path.as_deref());
                hld_client::autostart::start(&hld, socket).await?;
            }
        }
        let options = hld_tui::runtime::Options {
            address,
            context,
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

/// The context in force (`None` for `local`) and its daemon's address: `--context`, else
/// `HLD_CONTEXT`, else `hlyr context use`'s; `local` is the socket of `--daemon-socket`,
/// `HUMANLAYER_DAEMON_SOCKET`, humanlayer.json or the default.
fn resolve(cli: &Cli) -> Result<(Option<String>, Address), String> {
    let contexts = Contexts::load().map_err(|e| e.to_string())?;
    let flag = cli.context.as_deref().filter(|name| !name.is_empty());
    let name = contexts.name_in_force(flag);
    match contexts.get(&name).map_err(|e| e.to_string())? {
        Some(entry) => Ok((Some(name), entry.address().map_err(|e| e.to_string())?)),
        None => {
            let socket = hld_client::config::resolve_socket_path(cli.daemon_socket.as_deref())?;
            Ok((None, Address::Socket(socket)))
        }
    }
}
