//! Several daemons in one dashboard (`--context a --context b`, `--all-contexts`): each
//! daemon's link, the daemon each session, draft and approval came from, how one daemon's
//! answers join the others' rows, and which daemon each command goes to.

use super::*;

/// One daemon of the fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Daemon {
    /// Its context's name, marking its rows.
    pub name: String,
    pub link: Link,
}

/// The daemons shown. Empty outside a fleet (one daemon): then `State::link` alone says how
/// the daemon is reached and no row is marked.
#[derive(Debug, Default)]
pub struct Fleet {
    /// In the order given, the first being where a launch goes unless the form says otherwise.
    pub daemons: Vec<Daemon>,
    /// The daemon each session, draft and approval id came from (ids are UUIDs: one daemon's
    /// never names another's).
    origins: HashMap<String, usize>,
}

/// Where a command goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// The daemon the command's session or approval came from.
    One(usize),
    /// Every connected daemon: each answers with its own rows.
    All,
}

impl Fleet {
    /// A fleet of the contexts `names`, connecting.
    pub fn new(names: Vec<String>) -> Fleet {
        let daemons = names.into_iter().map(|name| Daemon {
            name,
            link: Link::Connecting,
        });
        Fleet {
            daemons: daemons.collect(),
            origins: HashMap::new(),
        }
    }

    /// Whether several daemons are shown (and rows are marked with theirs).
    pub fn is_fleet(&self) -> bool {
        self.daemons.len() > 1
    }

    /// The daemon `id` (a session, draft or approval) came from; the first when unknown.
    pub fn origin(&self, id: &str) -> usize {
        self.origins.get(id).copied().unwrap_or(0)
    }

    /// In a fleet, the daemon that `session_id`'s row is marked with.
    pub fn daemon_of(&self, session_id: &str) -> Option<&Daemon> {
        self.is_fleet()
            .then(|| self.daemons.get(self.origin(session_id)))
            .flatten()
    }

    /// The links summed up for the title bar's and footer's single link: connected when all
    /// are, else the first daemon that is not, named.
    fn link(&self) -> Link {
        let down = self.daemons.iter().find(|d| d.link != Link::Connected);
        match down.map(|d| (&d.name, &d.link)) {
            None => Link::Connected,
            Some((_, Link::Connecting)) => Link::Connecting,
            Some((name, Link::Reconnecting { error, retry_in_ms })) => Link::Reconnecting {
                error: format!("{name}: {error}"),
                retry_in_ms: *retry_in_ms,
            },
            Some((_, Link::Connected)) => unreachable!("found as not connected"),
        }
    }

    /// `rows` of `daemon`, joined to the other daemons' among `current`.
    fn join<T: Clone>(
        &mut self,
        daemon: usize,
        current: &[T],
        rows: Vec<T>,
        id: impl Fn(&T) -> &str,
    ) -> Vec<T> {
        let mut joined: Vec<T> = current
            .iter()
            .filter(|row| self.origin(id(row)) != daemon)
            .cloned()
            .collect();
        for row in &rows {
            self.origins.insert(id(row).to_owned(), daemon);
        }
        joined.extend(rows);
        joined
    }

    fn learn(&mut self, id: &str, daemon: usize) {
        self.origins.insert(id.to_owned(), daemon);
    }
}

/// Applies what `daemon` reported: its link, and its rows joined to the other daemons'. With
/// one daemon, the message is applied as it is.
pub(super) fn on_msg(state: &mut State, daemon: usize, msg: Msg) -> Vec<Command> {
    if !state.fleet.is_fleet() {
        return update(state, msg);
    }
    let fleet = &mut state.fleet;
    match msg {
        Msg::Connected | Msg::Disconnected { .. } => {
            let link = match msg {
                Msg::Disconnected { error, retry_in_ms } => {
                    Link::Reconnecting { error, retry_in_ms }
                }
                _ => Link::Connected,
            };
            let connected = link == Link::Connected;
            if let Some(d) = fleet.daemons.get_mut(daemon) {
                d.link = link;
            }
            state.link = state.fleet.link();
            // The daemon back may have changed while away: its rows, and the open
            // conversation, are loaded again (the others answer the same loads with theirs).
            if connected {
                reload(state)
            } else {
                Vec::new()
            }
        }
        Msg::Sessions(sessions) => {
            let joined = fleet.join(daemon, &state.sessions, sessions, |s| &s.id);
            update(state, Msg::Sessions(joined))
        }
        Msg::Drafts(drafts) => {
            let joined = fleet.join(daemon, &state.drafts, drafts, |s| &s.id);
            update(state, Msg::Drafts(joined))
        }
        Msg::Approvals(approvals) => {
            for a in &approvals {
                fleet.learn(&a.session_id, daemon);
            }
            let joined = fleet.join(daemon, &state.approvals, approvals, |a| &a.id);
            update(state, Msg::Approvals(joined))
        }
        Msg::Event(event) => {
            if let Some(id) = event.event.session_id() {
                fleet.learn(id, daemon);
            }
            if let Event::NewApproval { approval, .. } = &event.event {
                fleet.learn(&approval.id, daemon);
            }
            update(state, Msg::Event(event))
        }
        Msg::Usage { table, result } => {
            usage::loaded(state, Some(daemon), table, result);
            Vec::new()
        }
        Msg::Opened(session_id) => {
            fleet.learn(&session_id, daemon);
            update(state, Msg::Opened(session_id))
        }
        // Which daemon refused, or could not be reached; a form waiting for its launch says
        // why itself, and names its daemon.
        Msg::Failed(text) => said_by(state, daemon, text),
        Msg::LaunchFailed { message, .. } if !form::waits(state) => said_by(state, daemon, message),
        msg => update(state, msg),
    }
}

/// Says in the footer that `daemon` answered `text`, naming it.
fn said_by(state: &mut State, daemon: usize, text: String) -> Vec<Command> {
    let name = state.fleet.daemons.get(daemon).map(|d| d.name.clone());
    let text = format!("{}: {text}", name.unwrap_or_default());
    update(state, Msg::Failed(text))
}

/// When `daemon` (the only one outside a fleet) is not connected, its name to say so:
/// `⌂NAME`, or `the daemon` for the local one alone.
pub fn away(state: &State, daemon: usize) -> Option<String> {
    let (name, link) = match state.fleet.daemons.get(daemon) {
        Some(d) if state.fleet.is_fleet() => (Some(&d.name), &d.link),
        _ => (state.context.as_ref(), &state.link),
    };
    (*link != Link::Connected).then(|| name.map_or("the daemon".into(), |n| format!("⌂{n}")))
}

/// Why a decision on `approval_id` cannot be sent now: the daemon it came from is not
/// connected. The approval then stays listed, with this said, rather than leaving the list
/// until that daemon is back (a load of every daemon's rows skips one not connected).
pub(super) fn unsent(state: &State, approval_id: &str) -> Option<String> {
    let name = away(state, state.fleet.origin(approval_id))?;
    Some(format!(
        "{name} is not connected: the decision was not sent, it stays pending"
    ))
}

/// The daemon `command` goes to: the one its session, draft or approval came from; the loads
/// of every row go to all.
pub fn route(state: &State, command: &Command) -> Route {
    let of = |id: &str| Route::One(state.fleet.origin(id));
    match command {
        Command::LoadSessions
        | Command::LoadDrafts
        | Command::LoadApprovals
        | Command::LoadRateLimits => Route::All,
        Command::On { daemon, .. } => Route::One(*daemon),
        Command::SaveDraft { session_id, .. } => session_id.as_deref().map_or(Route::One(0), of),
        Command::LaunchDraft { session_id, .. }
        | Command::SuggestFiles { session_id, .. }
        | Command::LoadDiff { session_id, .. }
        | Command::Merge { session_id, .. }
        | Command::Discard { session_id, .. }
        | Command::Send { session_id, .. }
        | Command::ApproveAcceptingEdits { session_id, .. }
        | Command::Archive { session_id, .. }
        | Command::Rename { session_id, .. } => of(session_id),
        Command::DiscardDraft(id)
        | Command::LoadConversation(id)
        | Command::LoadQueue(id)
        | Command::LoadCommands(id)
        | Command::LoadDiffStat(id)
        | Command::Interrupt(id) => of(id),
        Command::Settings(params) => of(&params.session_id),
        Command::Decide(params) => params.call_id.as_deref().map_or(Route::One(0), of),
        // A queued message is cancelled from its session's open conversation.
        Command::CancelMessage(_) => state
            .conversation
            .as_ref()
            .map_or(Route::One(0), |c| of(&c.session_id)),
        // The usage view's loads are pinned to the daemon it shows; a launch the form did not
        // pin goes to the first daemon.
        Command::LoadUsage { .. } | Command::Launch(_) => Route::One(0),
        Command::Copy(_) | Command::Notify { .. } | Command::Quit => Route::One(0),
    }
}

/// In a fleet, `command` pinned to the launch form's daemon.
pub(super) fn on_daemon(state: &State, daemon: usize, command: Command) -> Command {
    match state.fleet.is_fleet() {
        true => Command::On {
            daemon,
            command: Box::new(command),
        },
        false => command,
    }
}
