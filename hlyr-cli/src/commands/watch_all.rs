//! `hlyr watch --all-contexts`: the sessions of every context's daemon on one board, each line
//! marked with its context. A task per context keeps that daemon's board (as `hlyr watch`
//! does: subscribed before it reads, read again after missed events) and reports it whole
//! after each change; one that cannot reach its daemon, or loses it, reports why and tries
//! again every [`RETRY`], while the others keep showing. On a terminal the block is drawn
//! again in place with a line per daemon that is down, and read the keys of `hlyr watch`
//! ([`super::watch_keys`]): an answer goes to the daemon of the line it was asked from,
//! through the connection that context's task holds (a daemon down is said, and its
//! approval stays pending). Without a terminal, a line per change; with `--json`, the
//! `session` lines carry `context`, and a `context` line says when a daemon is lost
//! (`connected: false`, `error`) or reached again.

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt;
use hld_client::protocol::SubscribeParams;
use hld_client::{Address, Client, SubscribeOptions, SubscriptionItem};
use tokio::sync::mpsc;

use super::watch::{self, Args, Line, Shown};
use super::watch_keys::{self, Live, Typed};
use crate::board::{Board, Next, Row};
use crate::connect::not_running;
use crate::error::{CliError, Exit};
use crate::output::{paint, Printer, DIM, YELLOW};
use crate::prompt::Answer;
use crate::Context;

/// How long a context whose daemon is down waits before trying it again.
const RETRY: Duration = Duration::from_secs(1);

/// What the task of the context at `.0` reports.
type Report = (usize, Reported);

/// What a context's task reports.
enum Reported {
    /// Its daemon was reached: answers go through this connection.
    Reached(Client),
    /// Its rows, after each change; or why its daemon is out of reach.
    State(Result<Vec<Row>, String>),
}

/// Every context, in `hlyr context list`'s order, as last reported.
struct Fleet {
    names: Vec<String>,
    /// Each context's rows (`None` before it reported any), or why its daemon is down.
    states: Vec<Option<Result<Vec<Row>, String>>>,
    /// Each context's connection while its daemon is reached.
    clients: Vec<Option<Client>>,
}

impl Fleet {
    /// One board of every context's rows, each marked with its context.
    fn board(&self) -> Board {
        let mut board = Board::default();
        for (name, state) in self.names.iter().zip(&self.states) {
            if let Some(Ok(rows)) = state {
                board.rows.extend(rows.iter().cloned().map(|row| Row {
                    context: Some(name.clone()),
                    ..row
                }));
            }
        }
        board
    }

    /// Sends an answer to the daemon of its context; one down, or refusing it, is said.
    async fn send(&self, answer: &Answer) {
        let at = self
            .names
            .iter()
            .position(|n| Some(n) == answer.context.as_ref());
        let Some(at) = at else {
            return;
        };
        let name = &self.names[at];
        let sent = match &self.clients[at] {
            Some(client) => watch_keys::send(client, answer).await,
            None => Err(CliError::unreachable("its daemon is down")),
        };
        if let Err(mut e) = sent {
            e.message = format!("{name}: not answered: {}", e.message);
            e.print();
        }
    }

    /// The contexts whose daemon is down, with why.
    fn down(&self) -> impl Iterator<Item = (&str, &str)> {
        let states = self.names.iter().zip(&self.states);
        states.filter_map(|(name, state)| match state {
            Some(Err(why)) => Some((name.as_str(), why.as_str())),
            _ => None,
        })
    }
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let (reports, mut reported) = mpsc::unbounded_channel();
    let mut fleet = Fleet {
        names: Vec::new(),
        states: Vec::new(),
        clients: Vec::new(),
    };
    for (at, (name, address)) in ctx.all_contexts()?.into_iter().enumerate() {
        fleet.names.push(name);
        fleet.states.push(None);
        fleet.clients.push(None);
        tokio::spawn(feed(at, address, args.all, reports.clone()));
    }
    drop(reports);
    let shown = watch::shown(ctx);
    let mut screen = Screen {
        shown,
        begun: false,
        printed: HashMap::new(),
        live: (shown == Shown::Live).then(Live::on_terminal),
    };
    let mut sigint = watch::sigint()?;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        let reading = screen.live.as_ref().is_some_and(Live::reads);
        tokio::select! {
            report = reported.recv() => match report {
                // Nothing shows until its rows come.
                Some((at, Reported::Reached(client))) => {
                    fleet.clients[at] = Some(client);
                    continue;
                }
                Some((at, Reported::State(state))) => screen.take(&mut fleet, at, state)?,
                // Every context's address was unusable (each said why).
                None => return Ok(Exit::Unreachable),
            },
            keys = async { screen.live.as_mut()?.keys().await }, if reading => {
                let typed = match screen.live.as_mut() {
                    Some(live) => live.typed(keys, &fleet.board()),
                    None => Typed::Nothing,
                };
                match typed {
                    Typed::Nothing => {}
                    Typed::Quit => return Ok(Exit::Ok),
                    Typed::Answer(answer) => fleet.send(&answer).await,
                }
            }
            _ = tick.tick(), if screen.shown == Shown::Live => {}
            // Only watching stops: the block stays as last drawn.
            _ = sigint.recv() => return Ok(Exit::CtrlC),
        }
        screen.show(&fleet)?;
    }
}

/// Keeps the board of one context's daemon and reports it, reaching the daemon again
/// whenever it is lost, until the command ends. A context whose address cannot be used (a
/// missing token file) is reported once.
async fn feed(
    at: usize,
    address: Result<Address, CliError>,
    all: bool,
    reports: mpsc::UnboundedSender<Report>,
) {
    let address = match address {
        Ok(address) => address,
        Err(e) => {
            let _ = reports.send((at, Reported::State(Err(e.message))));
            return;
        }
    };
    loop {
        let lost = follow(at, &address, all, &reports).await;
        if reports
            .send((at, Reported::State(Err(lost.message))))
            .is_err()
        {
            return;
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// Connects, subscribes, reads the board and reports it after each change; returns why it
/// stopped.
async fn follow(
    at: usize,
    address: &Address,
    all: bool,
    reports: &mpsc::UnboundedSender<Report>,
) -> CliError {
    let client = match Client::connect_to(address).await {
        Ok(client) => client,
        Err(e) => return not_running(address, e),
    };
    if reports
        .send((at, Reported::Reached(client.clone())))
        .is_err()
    {
        return CliError::failure("stopped watching");
    }
    let subscribed = client
        .subscribe(SubscribeParams::default(), SubscribeOptions::default())
        .await;
    let mut events = match subscribed {
        Ok(events) => events,
        Err(e) => return e.into(),
    };
    let mut board = Board {
        all,
        ..Board::default()
    };
    if let Err(e) = watch::load(&client, &mut board).await {
        return e;
    }
    loop {
        if reports
            .send((at, Reported::State(Ok(board.rows.clone()))))
            .is_err()
        {
            return CliError::failure("stopped watching");
        }
        let event = match events.next().await {
            Some(Ok(SubscriptionItem::Event(event))) => event.event,
            // An item this version does not know.
            Some(Ok(_)) => continue,
            Some(Err(e)) => return e.into(),
            None => return CliError::unreachable("the daemon closed the event stream"),
        };
        let read = match board.event(&event) {
            Next::Fetch(session_id) => watch::fetch(&client, &mut board, &session_id).await,
            Next::Reload => watch::load(&client, &mut board).await,
            Next::Show => Ok(()),
        };
        if let Err(e) = read {
            return e;
        }
    }
}

/// What was shown of the fleet.
struct Screen {
    shown: Shown,
    /// The table's header was printed (`Lines`).
    begun: bool,
    /// What was last printed of each line, by context and session (`Lines`, `Json`).
    printed: HashMap<(String, String), Vec<String>>,
    /// The block drawn in place and its keys (`Live`).
    live: Option<Live>,
}

impl Screen {
    /// Takes in a context's report; a daemon lost or reached again is said at once (as a
    /// line, without a terminal).
    fn take(
        &mut self,
        fleet: &mut Fleet,
        at: usize,
        state: Result<Vec<Row>, String>,
    ) -> Result<(), CliError> {
        let was_down = matches!(fleet.states[at], Some(Err(_)));
        let name = fleet.names[at].as_str();
        match (&state, self.shown) {
            (Err(why), Shown::Json) if !was_down => Printer::new(true).print(&Line::Context {
                context: name,
                connected: false,
                error: Some(why),
            })?,
            (Ok(_), Shown::Json) if was_down => Printer::new(true).print(&Line::Context {
                context: name,
                connected: true,
                error: None,
            })?,
            (Err(why), Shown::Lines) if !was_down => Printer::new(false).line(&down(name, why))?,
            (Ok(_), Shown::Lines) if was_down => {
                Printer::new(false).line(&paint(DIM, format!("{name}: reached again")))?
            }
            _ => {}
        }
        if let (Some(live), Ok(rows)) = (self.live.as_mut(), &state) {
            live.settle(Some(name), rows);
        }
        if state.is_err() {
            fleet.clients[at] = None;
        }
        fleet.states[at] = Some(state);
        Ok(())
    }

    fn show(&mut self, fleet: &Fleet) -> Result<(), CliError> {
        let board = fleet.board();
        match self.shown {
            Shown::Live => {
                let down = fleet.down().map(|(name, why)| down(name, why)).collect();
                match self.live.as_mut() {
                    Some(live) => live.draw(&board, None, down),
                    None => Ok(()),
                }
            }
            // The table waits for a first row: its header names the contexts' column then.
            Shown::Lines if !self.begun && board.rows.is_empty() => Ok(()),
            Shown::Lines => {
                if !std::mem::replace(&mut self.begun, true) {
                    Printer::new(false).line(&board.table(usize::MAX, None))?;
                    for row in &board.rows {
                        self.printed.insert(key(row), row.key());
                    }
                    return Ok(());
                }
                self.print_changed(&board, |row| Printer::new(false).line(&row.plain_line()))
            }
            Shown::Json => self.print_changed(&board, |row| {
                Printer::new(true).print(&Line::Session(row.json()))
            }),
        }
    }

    /// Prints, with `print`, each line that changed since last printed.
    fn print_changed(
        &mut self,
        board: &Board,
        print: impl Fn(&Row) -> Result<(), CliError>,
    ) -> Result<(), CliError> {
        for row in &board.rows {
            let shown = row.key();
            if self.printed.get(&key(row)) != Some(&shown) {
                print(row)?;
                self.printed.insert(key(row), shown);
            }
        }
        Ok(())
    }
}

/// A line told apart across daemons: by its context and its session.
fn key(row: &Row) -> (String, String) {
    (
        row.context.clone().unwrap_or_default(),
        row.session.id.clone(),
    )
}

/// The line saying a daemon is down.
fn down(name: &str, why: &str) -> String {
    paint(YELLOW, format!("{name}: down: {why}"))
}
