//! `hld-tui`: the dashboard's entry point: finds (or starts) the daemon, sets up the terminal
//! and restores it however the program ends.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use hld_client::contexts::{Contexts, LOCAL};
use hld_client::Address;
use hld_tui::runtime::{Place, Target};

/// A live dashboard for Claude Code sessions run by hld: watch sessions, read conversations as
/// they stream, and approve or deny tool calls. Press ? inside for the keys.
#[derive(Parser)]
#[command(version)]
struct Cli {
    /// The daemon's socket [default: $HUMANLAYER_DAEMON_SOCKET, humanlayer.json, ~/.humanlayer/daemon.sock].
    #[arg(long, value_name = "PATH")]
    daemon_socket: Option<PathBuf>,
    /// The daemon to watch, by its context's name (`hlyr context list`): this machine's
    /// socket (`local`) or a daemon elsewhere over `wss://`. Given more than once, the
    /// daemons are watched together, each row marked with its context [default: the one
    /// `hlyr context use` chose, else `local`].
    #[arg(long, value_name = "NAME", env = "HLD_CONTEXT")]
    context: Vec<String>,
    /// Watch every context together: `local`, then each of `hlyr context list`.
    #[arg(long, conflicts_with = "context")]
    all_contexts: bool,
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
    let daemons = match resolve(&cli) {
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
    let hld = hld_client::autostart::hld_binary(cli.hld_path.as_deref());
    let result = runtime.block_on(async {
        // Only this machine's daemons are started, where nothing listens; a remote one, or one
        // that listens without answering, is waited for.
        for target in &daemons {
            if let Place::Known(Address::Socket(socket)) = &target.place {
                if hld_client::autostart::nothing_listens(socket).await {
                    eprintln!("hld-tui: no daemon at {}; starting hld…", socket.display());
                    hld_client::autostart::start(&hld, socket).await?;
                }
            }
        }
        let options = hld_tui::runtime::Options {
            daemons,
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
            bell: !cli.no_bell,
            alert: hld_client::view::alert::Alert::from_env(),
            hld,
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

/// The daemons to watch: `--all-contexts`' every context, `local` first; else each
/// `--context` (or `HLD_CONTEXT`) once, in the order given; else `hlyr context use`'s. `local`
/// is the socket of `--daemon-socket`, `HUMANLAYER_DAEMON_SOCKET`, humanlayer.json or the
/// default. A name that is no context is refused; so is a context whose token cannot be read
/// when it is the only daemon, while in a fleet it is shown disconnected, with why, and the
/// others are served. A context that reaches a daemon already listed is watched once, under
/// the first name (its rows would otherwise come twice).
fn resolve(cli: &Cli) -> Result<Vec<Target>, String> {
    let contexts = Contexts::load().map_err(|e| e.to_string())?;
    let mut names: Vec<String> = Vec::new();
    if cli.all_contexts {
        names.push(LOCAL.to_owned());
        names.extend(contexts.contexts.keys().cloned());
    }
    for name in cli.context.iter().filter(|name| !name.is_empty()) {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    if names.is_empty() {
        names.push(contexts.name_in_force(None));
    }
    let fleet = names.len() > 1;
    let target = |name: String| {
        let place = match contexts.get(&name).map_err(|e| e.to_string())? {
            Some(entry) => match entry.address() {
                Ok(address) => Place::Known(address),
                Err(_) if fleet => Place::Unresolved(entry.clone()),
                Err(e) => return Err(format!("context {name:?}: {e}")),
            },
            None => Place::Known(Address::Socket(hld_client::config::resolve_socket_path(
                cli.daemon_socket.as_deref(),
            )?)),
        };
        Ok(Target { name, place })
    };
    let mut targets: Vec<Target> = Vec::new();
    for name in names {
        let target = target(name)?;
        match targets.iter().find(|t| t.place.same_daemon(&target.place)) {
            Some(twin) => eprintln!(
                "hld-tui: context {} reaches the same daemon as {}; watched once",
                target.name, twin.name
            ),
            None => targets.push(target),
        }
    }
    Ok(targets)
}
