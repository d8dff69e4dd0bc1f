//! Reaching the daemon: resolving its context (a remote daemon, or the local socket),
//! connecting, and starting the local `hld` in the background when a command that may start
//! it (`launch`, `continue`, `daemon start`) finds none.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hld_client::autostart::{nothing_listens, Invocation, StartError, Started};
use hld_client::{Address, Client};

use crate::contexts::{Contexts, LOCAL};

use crate::error::{start_hint, CliError};
use crate::output::{paint, DIM};
use crate::Context;

// How to find `hld` when it has to be started. (A plain comment: clap would take a doc
// comment as the description of every command that flattens these arguments.)
#[derive(Debug, clap::Args)]
pub struct StartArgs {
    /// The `hld` binary to start when no daemon answers [default: next to hlyr, then PATH].
    #[arg(long, env = "HLD_PATH", value_name = "PATH")]
    pub hld_path: Option<PathBuf>,
    /// How the daemon being restarted was started: the new one is started the same way.
    #[arg(skip)]
    pub like: Option<Invocation>,
}

impl StartArgs {
    /// The arguments when none were parsed: `HLD_PATH` alone.
    pub fn from_env() -> StartArgs {
        StartArgs {
            hld_path: std::env::var_os("HLD_PATH").map(PathBuf::from),
            like: None,
        }
    }
}

/// Says on stderr that a daemon was started, for commands whose output is something else.
pub fn announce(started: &Started) {
    let note = format!(
        "started hld (pid {}), logging to {}",
        started.pid,
        started.log.display()
    );
    anstream::eprintln!("{}", paint(DIM, note));
}

/// A context's name and its daemon's address, or why it has none.
pub type Named = (String, Result<Address, CliError>);

impl Context {
    /// The daemon to talk to: the context named by `--context`, else `HLD_CONTEXT`, else
    /// `hlyr context use`'s; `local` is the socket of [`Self::local_socket`]. The contexts
    /// file is checked whenever there is one, whatever is asked.
    pub fn address(&self) -> Result<Address, CliError> {
        let contexts = Contexts::load()?;
        match contexts.get(&self.context_name(&contexts))? {
            Some(entry) => Ok(entry.address()?),
            None => Ok(Address::Socket(self.local_socket()?)),
        }
    }

    /// Every context, `local` first, with its address (or why it has none); a context that
    /// reaches a daemon already listed is left out, and said so on stderr (its rows would
    /// otherwise come twice).
    pub fn all_contexts(&self) -> Result<Vec<Named>, CliError> {
        let contexts = Contexts::load()?;
        let local = self.local_socket().map(Address::Socket);
        let mut all = vec![(LOCAL.to_owned(), local)];
        for (name, entry) in &contexts.contexts {
            let address = entry.address().map_err(CliError::from);
            let twin = all.iter().find(|(_, listed)| match (listed, &address) {
                (Ok(listed), Ok(address)) => listed.same_daemon(address),
                _ => false,
            });
            match twin {
                Some((twin, _)) if !self.out.is_json() => {
                    let note = format!("context {name} reaches the same daemon as {twin}");
                    anstream::eprintln!("{}", paint(DIM, note));
                }
                Some(_) => {}
                None => all.push((name.clone(), address)),
            }
        }
        Ok(all)
    }

    /// The name of the context in force.
    pub fn context_name(&self, contexts: &Contexts) -> String {
        contexts.name_in_force(self.context.as_deref())
    }

    /// The socket of the daemon in force, for the commands that work on a daemon of this
    /// machine (`daemon …`, `tui`); a remote context is refused.
    pub fn socket(&self) -> Result<PathBuf, CliError> {
        match self.address()? {
            Address::Socket(path) => Ok(path),
            Address::Remote(remote) => Err(CliError::usage(format!(
                "this command works on a daemon of this machine, and the context in force \
                 is {}",
                remote.url()
            ))
            .hint("give --context local, or run it on that machine")),
        }
    }

    /// The local socket: `--daemon-socket`, `HUMANLAYER_DAEMON_SOCKET`, `humanlayer.json`,
    /// default.
    fn local_socket(&self) -> Result<PathBuf, CliError> {
        hld_client::config::resolve_socket_path(self.daemon_socket.as_deref())
            .map_err(|e| CliError::usage(e).hint("fix or remove that humanlayer.json"))
    }

    /// Connects to the daemon in force; a missing daemon is exit code 3 with a hint.
    pub async fn connect(&self) -> Result<Client, CliError> {
        let address = self.address()?;
        Client::connect_to(&address)
            .await
            .map_err(|e| not_running(&address, e))
    }

    /// Connects, starting the local `hld` first when nothing listens at its socket (a remote
    /// daemon is only connected to). Returns the daemon it started.
    pub async fn connect_or_start(
        &self,
        start: &StartArgs,
    ) -> Result<(Client, Option<Started>), CliError> {
        let address = self.address()?;
        let Address::Socket(socket) = &address else {
            return Ok((self.connect().await?, None));
        };
        hld_client::trust::check_socket(socket)?;
        let started = if nothing_listens(socket).await {
            Some(start_daemon(socket, start).await?)
        } else {
            None
        };
        let client = Client::connect(socket)
            .await
            .map_err(|e| not_running(&address, e))?;
        Ok((client, started))
    }
}

/// Whether connecting failed because no daemon serves the socket (none there, or a stale
/// one that refuses), rather than for another reason.
pub fn is_not_running(e: &hld_client::Error) -> bool {
    matches!(e, hld_client::Error::DaemonNotRunning { .. })
}

/// The error for a failed connection to `address`.
pub fn not_running(address: &Address, e: hld_client::Error) -> CliError {
    if !is_not_running(&e) && !matches!(e, hld_client::Error::Io(_)) {
        return e.into();
    }
    let message = if is_not_running(&e) {
        format!("the daemon is not running (nothing answers at {address})")
    } else {
        format!("cannot connect to the daemon at {address}: {e}")
    };
    CliError::unreachable(message).hint(start_hint(None))
}

/// The `hld` to start: `--hld-path`/`HLD_PATH`, else the one next to this executable, else PATH.
pub fn hld_binary(start: &StartArgs) -> PathBuf {
    hld_client::autostart::hld_binary(start.hld_path.as_deref())
}

/// Starts `hld` and waits for it to answer `health`, showing a spinner on a terminal.
async fn start_daemon(socket: &Path, start: &StartArgs) -> Result<Started, CliError> {
    let hld = hld_binary(start);
    let spinner = indicatif::ProgressBar::new_spinner().with_message("starting hld…");
    spinner.enable_steady_tick(Duration::from_millis(80));
    let result = hld_client::autostart::start_like(&hld, socket, start.like.as_ref()).await;
    spinner.finish_and_clear();
    result.map_err(|e| {
        let error = CliError::unreachable(e.to_string());
        match e {
            StartError::Spawn { .. } => error
                .hint("install hld next to hlyr, put it on PATH, or give --hld-path / HLD_PATH"),
            StartError::Failed { log: Some(log), .. } => {
                error.hint(format!("see its log: {}", log.display()))
            }
            StartError::Failed { log: None, .. } => error,
            // A failure this version does not know: its message says it.
            _ => error,
        }
    })
}
