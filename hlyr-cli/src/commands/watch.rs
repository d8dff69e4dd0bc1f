//! `hlyr watch [--all] [--notify]`: one live line per session across the daemon, as `kubectl
//! get -w` shows pods. On a terminal the block of lines is drawn again in place as they change,
//! under the usage-limit windows; ↑/↓ pick a line and Enter answers what it waits for (the
//! first waiting line when the picked one waits for nothing), with the prompt `launch` asks
//! approvals with. Without a terminal, a line is printed per change; with `--json`, a JSON
//! line (`session`, `limits`, `notification`). With `--all-contexts`, every context's daemon
//! on one board (see [`super::watch_all`]). The block and its keys are [`super::watch_keys`]'s.
//!
//! It subscribes before it reads anything, so nothing falls between what it read and what
//! the events bring; when events were dropped (`lagged`) it reads everything again. A daemon
//! lost is said on stderr and waited for ([`Reconnect`]); once it is back, watching starts
//! over the same way, and only what changed meanwhile is printed.

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt;
use hld_client::protocol::{
    Approval, ErrorCode, Event, GetRateLimits, GetSessionLeaves, GetSessionLeavesParams,
    LeafFilter, NoParams, Notification, RateLimitWindow, SessionStatus, SubscribeParams,
};
use hld_client::{Client, SubscribeOptions, SubscriptionItem};
use serde::Serialize;
use tokio::signal::unix::{signal, Signal, SignalKind};

use super::watch_keys::{self, Live, Typed};
use crate::board::{Board, Next, Row, RowJson};
use crate::error::{CliError, Exit};
use crate::keys::Key;
use crate::notify::Notify;
use crate::output::{short_id, Printer, Render};
use crate::prompt::waiting_text;
use crate::reconnect::Reconnect;
use crate::Context;

/// How many sessions are watched without `--all`, beside those at work.
const RECENT: usize = 20;

#[derive(Debug, clap::Args)]
#[command(after_help = "\
On a terminal: ↑/↓ (or k/j) pick a session, Enter answers what it waits for (or the first session
that waits), q or Ctrl-D quits. Ctrl-C stops watching and exits 130. With --all-contexts, the
answer goes to the daemon of the session's context.")]
pub struct Args {
    /// Every session, each one of a chain continued, and archived ones (by default one line
    /// per chain: the 20 most recent, and every one at work).
    #[arg(short, long)]
    pub all: bool,
    /// Ring the terminal's bell and send it a notification (OSC 9 or 777) when the daemon
    /// notifies about any session; on the desktop too unless the daemon shows them itself.
    #[arg(long)]
    notify: bool,
    /// The sessions of every context's daemon (`hlyr context list`) on one board, each line
    /// marked with its context; a daemon that cannot be reached is said and tried again.
    /// On a terminal, the keys are the same: an answer goes to the line's daemon.
    #[arg(long, conflicts_with = "notify")]
    pub all_contexts: bool,
}

/// How the board is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shown {
    /// Drawn again in place (text to a terminal).
    Live,
    /// A line per change.
    Lines,
    /// A JSON line per change.
    Json,
}

/// A JSON line of `--json`.
#[derive(Serialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub(super) enum Line<'a> {
    Session(RowJson<'a>),
    Limits {
        windows: &'a [RateLimitWindow],
    },
    Notification(&'a Notification),
    /// A context's daemon was reached, or lost (`error`), with `--all-contexts`.
    Context {
        context: &'a str,
        connected: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
    },
}

impl Render for Line<'_> {
    /// Printed only as JSON.
    fn human(&self) -> String {
        String::new()
    }
}

struct Watch {
    /// The daemon's connection; a new one once it was lost and is back.
    client: Client,
    /// Waits out the daemon's loss.
    reconnect: Reconnect,
    board: Board,
    shown: Shown,
    notify: Notify,
    /// The table's header was printed (`Lines`).
    begun: bool,
    /// What was last printed of each line (`Lines`, `Json`), to print only changes.
    printed: HashMap<String, Vec<String>>,
    /// The windows' line last printed (`Lines`).
    printed_windows: Option<String>,
    /// The block drawn in place and its keys (`Live`).
    live: Option<Live>,
}

/// How `ctx` shows the board.
pub(super) fn shown(ctx: &Context) -> Shown {
    if ctx.out.is_json() {
        Shown::Json
    } else if ctx.out.rewrites() {
        Shown::Live
    } else {
        Shown::Lines
    }
}

/// Ctrl-C, listened for.
pub(super) fn sigint() -> Result<Signal, CliError> {
    signal(SignalKind::interrupt())
        .map_err(|e| CliError::failure(format!("cannot listen for Ctrl-C: {e}")))
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    if args.all_contexts {
        return super::watch_all::run(ctx, args).await;
    }
    let client = ctx.connect().await?;
    let shown = shown(ctx);
    let mut sigint = sigint()?;
    let live = (shown == Shown::Live).then(Live::on_terminal);
    let mut reconnect = Reconnect::new(client.address());
    if live.as_ref().is_some_and(Live::reads) {
        reconnect = reconnect.stopped_by("q or Ctrl-C stops");
    }
    let mut watch = Watch {
        notify: Notify::new(&client, args.notify).await?,
        reconnect,
        client,
        board: Board {
            all: args.all,
            ..Board::default()
        },
        shown,
        begun: false,
        printed: HashMap::new(),
        printed_windows: None,
        live,
    };
    loop {
        let lost = match watch.watch(&mut sigint).await {
            Err(e) if e.exit == Exit::Unreachable => e,
            done => return done,
        };
        // The daemon is waited for below the block, which is drawn anew once it is back;
        // meanwhile its keys quit as in the view.
        if let Some(live) = watch.live.as_mut() {
            live.written_below();
        }
        let reading = watch.live.as_ref().is_some_and(Live::reads);
        watch.client = tokio::select! {
            client = watch.reconnect.connect(&lost.message) => client,
            () = async {
                if let Some(live) = watch.live.as_mut() {
                    live.quit_key().await;
                }
            }, if reading => return Ok(Exit::Ok),
            _ = sigint.recv() => return Ok(Exit::CtrlC),
        };
    }
}

/// Reads the sessions, their pending approvals and the windows.
pub(super) async fn load(client: &Client, board: &mut Board) -> Result<(), CliError> {
    let sessions = if board.all {
        client.list_sessions().await?
    } else {
        let params = GetSessionLeavesParams {
            filter: Some(LeafFilter::Normal),
        };
        let mut leaves = client.call::<GetSessionLeaves>(params).await?.sessions;
        let mut at = 0;
        leaves.retain(|s| {
            at += 1;
            at <= RECENT || s.status.is_active()
        });
        leaves
    };
    board.rows = sessions.into_iter().map(|s| Row::new(s.into())).collect();
    for approval in client.fetch_approvals(None).await? {
        board.wait(approval);
    }
    board.windows.clear();
    match client.call::<GetRateLimits>(NoParams {}).await {
        Ok(limits) => limits.windows.into_iter().for_each(|w| board.window(w)),
        // A daemon without usage-limit windows.
        Err(hld_client::Error::Rpc(e))
            if ErrorCode::from_code(e.code) == Some(ErrorCode::MethodNotFound) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// Reads a session again and puts it on the board; one new to the board brings its
/// pending approvals. A session gone meanwhile is left out.
pub(super) async fn fetch(
    client: &Client,
    board: &mut Board,
    session_id: &str,
) -> Result<(), CliError> {
    let state = match client.get_session_state(session_id).await {
        Ok(state) => state,
        Err(hld_client::Error::Rpc(_)) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let new = board.row(session_id).is_none();
    board.put(state.into());
    if new {
        for approval in client.fetch_approvals(Some(session_id)).await? {
            board.wait(approval);
        }
    }
    Ok(())
}

impl Watch {
    /// Subscribes, reads the board and shows it, then takes in events, keys and Ctrl-C until
    /// watching stops. Returns the exit code, or the error that lost the daemon
    /// ([`Exit::Unreachable`]).
    async fn watch(&mut self, sigint: &mut Signal) -> Result<Exit, CliError> {
        let mut events = self
            .client
            .subscribe(SubscribeParams::default(), SubscribeOptions::default())
            .await?;
        self.load().await?;
        self.reconnect.resumed();
        self.show()?;
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            let reading = self.live.as_ref().is_some_and(Live::reads);
            tokio::select! {
                item = events.next() => match item {
                    Some(Ok(SubscriptionItem::Event(event))) => self.event(event.event).await?,
                    // An item this version does not know.
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return Err(e.into()),
                    None => return Err(CliError::unreachable("the daemon closed the connection")),
                },
                keys = async { self.live.as_mut()?.keys().await }, if reading => {
                    if let Some(exit) = self.keys(keys).await? {
                        return Ok(exit);
                    }
                }
                _ = tick.tick(), if self.shown == Shown::Live => {}
                // Only watching stops: the block stays as last drawn.
                _ = sigint.recv() => return Ok(Exit::CtrlC),
            }
            self.show()?;
        }
    }

    async fn load(&mut self) -> Result<(), CliError> {
        load(&self.client, &mut self.board).await
    }

    /// Takes in an event: the board changes, and rings when asked to.
    async fn event(&mut self, event: Event) -> Result<(), CliError> {
        match &event {
            Event::Notification(notification) => {
                self.notify.notification(notification);
                if self.shown == Shown::Json {
                    Printer::new(true).print(&Line::Notification(notification))?;
                }
            }
            // A daemon without a notifier: hlyr's own triggers.
            Event::NewApproval { approval, .. } => self.own_trigger(approval),
            Event::SessionStatusChanged {
                session_id,
                new_status,
                ..
            } if matches!(new_status, SessionStatus::Completed | SessionStatus::Failed) => {
                let title = self.title(session_id);
                self.notify.own(&title, new_status.as_str());
            }
            _ => {}
        }
        match self.board.event(&event) {
            Next::Fetch(session_id) => self.fetch(&session_id).await?,
            Next::Reload => self.load().await?,
            Next::Show => {}
        }
        if let Some(live) = self.live.as_mut() {
            live.settle(None, &self.board.rows);
        }
        Ok(())
    }

    fn own_trigger(&self, approval: &Approval) {
        if approval.status == hld_client::protocol::ApprovalStatus::Pending {
            let title = self.title(&approval.session_id);
            self.notify.own(&title, &waiting_text(approval));
        }
    }

    /// The title a session is shown by (its short id when it is not on the board).
    fn title(&self, session_id: &str) -> String {
        self.board.row(session_id).map_or_else(
            || short_id(session_id).to_owned(),
            |r| r.session.shown_title(),
        )
    }

    async fn fetch(&mut self, session_id: &str) -> Result<(), CliError> {
        fetch(&self.client, &mut self.board, session_id).await
    }

    /// Takes in keys; returns the exit code when they end watching.
    async fn keys(&mut self, keys: Option<Vec<Key>>) -> Result<Option<Exit>, CliError> {
        let Some(live) = self.live.as_mut() else {
            return Ok(None);
        };
        match live.typed(keys, &self.board) {
            Typed::Nothing => {}
            Typed::Quit => return Ok(Some(Exit::Ok)),
            // A refused answer is reported, not fatal.
            Typed::Answer(answer) => {
                if let Err(e) = watch_keys::send(&self.client, &answer).await {
                    e.print();
                }
            }
        }
        Ok(None)
    }

    /// Shows what changed, as the board is shown.
    fn show(&mut self) -> Result<(), CliError> {
        match self.shown {
            Shown::Live => self.draw(),
            Shown::Lines => self.print_lines(),
            Shown::Json => self.print_json(),
        }
    }

    /// Draws the block again in place, under the windows.
    fn draw(&mut self) -> Result<(), CliError> {
        let Some(live) = self.live.as_mut() else {
            return Ok(());
        };
        let windows = self.board.windows_line(chrono::Utc::now());
        live.draw(&self.board, windows, Vec::new())
    }

    /// Prints the lines that changed since last printed, and the windows when they changed.
    fn print_lines(&mut self) -> Result<(), CliError> {
        let out = Printer::new(false);
        if !std::mem::replace(&mut self.begun, true) {
            // The first time, a table with its header.
            if let Some(windows) = self.board.windows_line(chrono::Utc::now()) {
                out.line(&windows)?;
                self.printed_windows = Some(windows);
            }
            out.line(&self.board.table(usize::MAX, None))?;
            for row in &self.board.rows {
                self.printed.insert(row.session.id.clone(), row.key());
            }
            return Ok(());
        }
        let windows = self.board.windows_line(chrono::Utc::now());
        if windows.is_some() && windows != self.printed_windows {
            out.line(windows.as_deref().unwrap_or_default())?;
            self.printed_windows = windows;
        }
        for row in &self.board.rows {
            let key = row.key();
            if self.printed.get(&row.session.id) != Some(&key) {
                out.line(&row.plain_line())?;
                self.printed.insert(row.session.id.clone(), key);
            }
        }
        Ok(())
    }

    /// Prints a JSON line for each session that changed, and for the windows when they did.
    fn print_json(&mut self) -> Result<(), CliError> {
        let out = Printer::new(true);
        let windows = serde_json::to_string(&self.board.windows).unwrap_or_default();
        if self.printed_windows.as_ref() != Some(&windows) {
            if !self.board.windows.is_empty() {
                out.print(&Line::Limits {
                    windows: &self.board.windows,
                })?;
            }
            self.printed_windows = Some(windows);
        }
        for row in &self.board.rows {
            let key = row.key();
            if self.printed.get(&row.session.id) != Some(&key) {
                out.print(&Line::Session(row.json()))?;
                self.printed.insert(row.session.id.clone(), key);
            }
        }
        Ok(())
    }
}
