//! hld-tui's loop without a terminal, for the approval rows: each batch of messages through
//! `update`, the commands it returns sent to their daemon (as hld-tui's runtime routes them)
//! and run there in tasks that send their results back, then one draw on a `TestBackend`.
//! With several daemons it is the fleet view.

use anyhow::{anyhow, bail, Context};
use chrono::Utc;
use futures::StreamExt;
use hld_client::protocol::{SessionStatus, SubscribeParams};
use hld_client::{Client, SubscribeOptions, SubscriptionItem};
use hld_tui::app::{route, update, Command, Fleet, Msg, Route, State};
use hld_tui::view::draw;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use tokio::sync::mpsc;

use crate::stats::monotonic_ns;
use crate::tui::{HEIGHT, STEP_TIMEOUT, WIDTH};

/// The drawn screen's lines.
pub(crate) fn screen_lines(terminal: &Terminal<TestBackend>) -> Vec<String> {
    let buffer = terminal.backend().buffer();
    buffer
        .content
        .chunks(usize::from(buffer.area.width))
        .map(|row| row.iter().map(|c| c.symbol()).collect())
        .collect()
}

/// Whether one line of the drawn screen holds `text`.
pub(crate) fn shows(terminal: &Terminal<TestBackend>, text: &str) -> bool {
    screen_lines(terminal)
        .iter()
        .any(|line| line.contains(text))
}

/// `msg` as daemon `daemon` reported it.
fn from(daemon: usize, msg: Msg) -> Msg {
    Msg::From {
        daemon,
        msg: Box::new(msg),
    }
}

/// What reaches the headless loop: the reply of a command it started, or a bus event.
enum Inbound {
    Reply(Msg),
    Event(Msg),
}

/// The dashboard, headless.
pub(crate) struct Headless {
    pub(crate) state: State,
    pub(crate) terminal: Terminal<TestBackend>,
    /// Each daemon's client, in the fleet's order.
    pub(crate) clients: Vec<Client>,
    tx: mpsc::UnboundedSender<Inbound>,
    rx: mpsc::UnboundedReceiver<Inbound>,
    /// Commands started whose result has not been applied yet.
    in_flight: usize,
}

impl Headless {
    /// The dashboard of `daemons` (each context's name and its client), subscribed to each
    /// as hld-tui subscribes, and connected; with more than one, the fleet view.
    pub(crate) async fn connect(daemons: Vec<(String, Client)>) -> anyhow::Result<Headless> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut state = State::new(Utc::now(), WIDTH, HEIGHT, false);
        let names = daemons.iter().map(|(name, _)| name.clone()).collect();
        if daemons.len() > 1 {
            state.fleet = Fleet::new(names);
        }
        let mut clients = Vec::new();
        for (daemon, (_, client)) in daemons.into_iter().enumerate() {
            let mut subscription = client
                .subscribe(SubscribeParams::default(), SubscribeOptions::default())
                .await?;
            // As in hld-tui's runtime, a task per daemon forwards its events into the channel
            // that also carries the commands' results.
            let events = tx.clone();
            tokio::spawn(async move {
                while let Some(Ok(item)) = subscription.next().await {
                    if let SubscriptionItem::Event(event) = item {
                        let msg = from(daemon, Msg::Event(event));
                        if events.send(Inbound::Event(msg)).is_err() {
                            return;
                        }
                    }
                }
            });
            clients.push(client);
        }
        let mut ui = Headless {
            state,
            terminal: Terminal::new(TestBackend::new(WIDTH, HEIGHT))?,
            clients,
            tx,
            rx,
            in_flight: 0,
        };
        for daemon in 0..ui.clients.len() {
            ui.apply(from(daemon, Msg::Connected))?;
        }
        Ok(ui)
    }

    /// Applies what arrived: a command's reply (one fewer in flight) or an event.
    fn receive(&mut self, inbound: Inbound) -> anyhow::Result<()> {
        match inbound {
            Inbound::Reply(msg) => {
                self.in_flight -= 1;
                self.apply(msg)
            }
            Inbound::Event(msg) => self.apply(msg),
        }
    }

    /// Applies one message and starts the commands it yields; a failed call fails the run.
    pub(crate) fn apply(&mut self, msg: Msg) -> anyhow::Result<()> {
        if let Msg::From { msg: inner, .. } = &msg {
            if let Msg::Failed(text) = &**inner {
                bail!("a call to the daemon failed: {text}");
            }
        }
        for command in update(&mut self.state, msg) {
            self.execute(command)?;
        }
        Ok(())
    }

    /// Runs a command with hld-tui's runtime on the daemon it is routed to (a load of every
    /// daemon's rows on each), for the commands these sessions lead to.
    fn execute(&mut self, command: Command) -> anyhow::Result<()> {
        if matches!(
            command,
            Command::Copy(_) | Command::Notify { .. } | Command::Quit
        ) {
            bail!("update asked for {command:?}, which no step here leads to");
        }
        let daemons = match route(&self.state, &command) {
            Route::One(daemon) => vec![daemon],
            Route::All => (0..self.clients.len()).collect(),
        };
        let command = match command {
            Command::On { command, .. } => *command,
            command => command,
        };
        for daemon in daemons {
            let client = self.clients[daemon].clone();
            let command = command.clone();
            let tx = self.tx.clone();
            self.in_flight += 1;
            tokio::spawn(async move {
                let reply = hld_tui::runtime::run_command(&client, command)
                    .await
                    .unwrap_or_else(|e| Msg::Failed(e.to_string()));
                let _ = tx.send(Inbound::Reply(from(daemon, reply)));
            });
        }
        Ok(())
    }

    /// Applies batches and draws until `done` holds after a draw; returns that draw's end on
    /// CLOCK_MONOTONIC.
    pub(crate) async fn until(
        &mut self,
        done: impl Fn(&Headless) -> anyhow::Result<bool>,
    ) -> anyhow::Result<u64> {
        let deadline = tokio::time::Instant::now() + STEP_TIMEOUT;
        loop {
            let first = tokio::time::timeout_at(deadline, self.rx.recv())
                .await
                .map_err(|_| {
                    let statuses: Vec<_> = self
                        .state
                        .sessions
                        .iter()
                        .map(|s| s.status.clone())
                        .collect();
                    anyhow!(
                        "timed out after {STEP_TIMEOUT:?}; sessions {statuses:?}, {} pending; \
                         the screen:\n{}",
                        self.state.approvals.len(),
                        screen_lines(&self.terminal).join("\n")
                    )
                })?
                .context("the channel closed")?;
            self.receive(first)?;
            while let Ok(inbound) = self.rx.try_recv() {
                self.receive(inbound)?;
            }
            self.terminal.draw(|frame| draw(&self.state, frame, true))?;
            let drawn = monotonic_ns()?;
            if done(self)? {
                return Ok(drawn);
            }
        }
    }

    /// Applies messages until every command started has answered. A session is launched only
    /// then: `update` replaces the pending approvals with a `fetchApprovals` reply, so a reply
    /// still on its way would hide an approval that arrived by event after it was taken.
    pub(crate) async fn settle(&mut self) -> anyhow::Result<()> {
        if self.in_flight > 0 {
            self.until(|ui| Ok(ui.in_flight == 0)).await?;
        }
        Ok(())
    }

    /// Whether `session` has completed, as the dashboard knows it; an error if it failed.
    pub(crate) fn ended(&self, session: &str) -> anyhow::Result<bool> {
        let status = self
            .state
            .sessions
            .iter()
            .find(|s| s.id == session)
            .map(|s| &s.status);
        match status {
            Some(SessionStatus::Completed) => Ok(true),
            Some(SessionStatus::Failed) => bail!("session {session} failed"),
            _ => Ok(false),
        }
    }
}
