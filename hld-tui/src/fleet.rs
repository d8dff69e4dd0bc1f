//! The daemon links: one task per daemon keeps its subscription open, reconnecting with
//! back-off, tags what it reports with the daemon's index, and publishes the client that
//! commands to that daemon use while it is connected. A daemon of this machine that went away
//! is started again by a launch, as `hlyr launch` starts one.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use hld_client::autostart;
use hld_client::contexts::Entry;
use hld_client::protocol::SubscribeParams;
use hld_client::{Address, Client, SubscribeOptions, SubscriptionItem};
use tokio::sync::{mpsc, watch, Notify};

use crate::app::{Command, Msg, Route};
use crate::load::Tagged;

/// Backoff between attempts to reach a daemon: doubles from the first to the second.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(250), Duration::from_secs(5));

/// A daemon to watch: its context's name and where it is.
#[derive(Debug, Clone)]
pub struct Target {
    pub name: String,
    pub place: Place,
}

/// Where a daemon is.
#[derive(Debug, Clone)]
pub enum Place {
    /// Its socket, or a remote daemon's `wss://` address with its token.
    Known(Address),
    /// A context whose address could not be made at start (its token file missing,
    /// unreadable, or readable by others): it is made again at each attempt to connect, so
    /// the daemon shows as disconnected, with why, until the file is put right.
    Unresolved(Entry),
}

impl Place {
    /// Whether both are known to reach the same daemon.
    pub fn same_daemon(&self, other: &Place) -> bool {
        match (self, other) {
            (Place::Known(a), Place::Known(b)) => a.same_daemon(b),
            _ => false,
        }
    }
}

/// Each daemon's client while it is connected, by index.
pub(crate) struct Links {
    clients: Vec<watch::Receiver<Option<Client>>>,
    /// What starts each daemon that listens at a socket of this machine.
    starters: Vec<Option<Starter>>,
}

impl Links {
    /// Starts a link task for each of `targets`, reporting into `tx`; `hld` is the binary that
    /// starts a local daemon again.
    pub(crate) fn spawn(
        targets: Vec<Target>,
        hld: &std::path::Path,
        tx: &mpsc::UnboundedSender<Tagged>,
    ) -> Links {
        let (clients, starters) = targets
            .into_iter()
            .enumerate()
            .map(|(daemon, target)| {
                let (client_tx, client_rx) = watch::channel(None);
                let retry = Arc::new(Notify::new());
                let starter = match &target.place {
                    Place::Known(Address::Socket(socket)) => Some(Starter {
                        socket: socket.clone(),
                        hld: hld.to_owned(),
                        retry: Arc::clone(&retry),
                    }),
                    _ => None,
                };
                let task = link(daemon, target.place, tx.clone(), client_tx, retry);
                tokio::spawn(task);
                (client_rx, starter)
            })
            .unzip();
        Links { clients, starters }
    }

    /// `daemon`'s client, while connected.
    pub(crate) fn client(&self, daemon: usize) -> Option<Client> {
        self.clients.get(daemon)?.borrow().clone()
    }

    /// What starts `daemon` again, when it is this machine's.
    pub(crate) fn starter(&self, daemon: usize) -> Option<Starter> {
        self.starters.get(daemon)?.clone()
    }

    /// The daemons `command` goes to by `route`, and the command to run there (a command
    /// pinned to a daemon is unwrapped). A load of every daemon's rows skips those not
    /// connected: each loads its rows again when it connects.
    pub(crate) fn targets(&self, route: Route, command: Command) -> (Vec<usize>, Command) {
        let command = match command {
            Command::On { command, .. } => *command,
            command => command,
        };
        let daemons = match route {
            Route::One(daemon) => vec![daemon],
            Route::All => (0..self.clients.len())
                .filter(|d| self.clients[*d].borrow().is_some())
                .collect(),
        };
        (daemons, command)
    }
}

/// Starts this machine's daemon at its socket, as at start-up, and has its link retry at once.
#[derive(Debug, Clone)]
pub(crate) struct Starter {
    socket: PathBuf,
    hld: PathBuf,
    retry: Arc<Notify>,
}

impl Starter {
    /// A client of a daemon started at the socket. Only where nothing listens: a process that
    /// takes connections without answering is not replaced (a new daemon could not bind).
    pub(crate) async fn start(&self) -> Result<Client, String> {
        if !autostart::nothing_listens(&self.socket).await {
            return Err("not connected to the daemon".to_owned());
        }
        autostart::start(&self.hld, &self.socket)
            .await
            .map_err(|e| e.to_string())?;
        self.retry.notify_one();
        Client::connect(&self.socket)
            .await
            .map_err(|e| e.to_string())
    }
}

/// Keeps a subscription to every event of `daemon` open, reconnecting with backoff (or at
/// once when `retry` is notified); publishes the client commands use while connected.
async fn link(
    daemon: usize,
    place: Place,
    tx: mpsc::UnboundedSender<Tagged>,
    client_tx: watch::Sender<Option<Client>>,
    retry: Arc<Notify>,
) {
    let send = |msg: Msg| {
        let msg = Msg::From {
            daemon,
            msg: Box::new(msg),
        };
        tx.send(Tagged { load: None, msg }).is_ok()
    };
    let mut pause = BACKOFF.0;
    loop {
        let error = match connect(&place).await {
            Ok((client, mut subscription)) => {
                client_tx.send_replace(Some(client));
                pause = BACKOFF.0;
                if !send(Msg::Connected) {
                    return;
                }
                loop {
                    match subscription.next().await {
                        Some(Ok(SubscriptionItem::Event(event))) => {
                            if !send(Msg::Event(event)) {
                                return;
                            }
                        }
                        // A reconnection, or an item this version does not know.
                        Some(Ok(_)) => {}
                        Some(Err(e)) => break e.to_string(),
                        None => break "the daemon closed the connection".to_owned(),
                    }
                }
            }
            Err(e) => e.to_string(),
        };
        client_tx.send_replace(None);
        let retry_in_ms = u64::try_from(pause.as_millis()).unwrap_or(u64::MAX);
        if !send(Msg::Disconnected { error, retry_in_ms }) {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(pause) => pause = (pause * 2).min(BACKOFF.1),
            () = retry.notified() => pause = BACKOFF.0,
        }
    }
}

async fn connect(place: &Place) -> Result<(Client, hld_client::Subscription), hld_client::Error> {
    let client = match place {
        Place::Known(address) => Client::connect_to(address).await?,
        Place::Unresolved(entry) => Client::connect_to(&entry.address()?).await?,
    };
    let subscription = client
        .subscribe(SubscribeParams::default(), SubscribeOptions::default())
        .await?;
    Ok((client, subscription))
}
