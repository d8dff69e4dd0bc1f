//! The dashboard's state and `update`: a pure function from the state and one [`Msg`] (a key,
//! a daemon event, a command's result, a tick) to the [`Command`]s the runtime must run. It
//! draws nothing and does no I/O, so every behaviour is tested without a terminal.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use hld_client::protocol::{
    Approval, ApprovalStatus, ApprovalType, ContinueSessionParams, ConversationEvent,
    ConversationEventType, Event, LaunchSessionParams, SendDecisionParams, SessionInfo,
    SessionStatus, TimedEvent, UpdateSessionSettingsParams,
};
use ratatui::text::Line;
use tui_textarea::TextArea;

use crate::keys::JUMP_TO_APPROVAL;
use crate::render::{self, Mark, Options};

/// Rows taken by the title bar and the key-help line around every screen.
pub const CHROME_ROWS: u16 = 2;
/// Rows the reply box takes at the bottom of a conversation.
pub const REPLY_ROWS: u16 = 3;
/// The models the launch form offers (`None`: claude's default).
pub const MODELS: [Option<&str>; 4] = [None, Some("opus"), Some("sonnet"), Some("haiku")];
/// What a denial says when the reviewer gave no comment (the daemon needs one).
pub const DEFAULT_DENIAL: &str = "Denied by the reviewer.";

/// A message to `update`.
#[derive(Debug)]
pub enum Msg {
    /// A key was pressed.
    Key(KeyEvent),
    /// The terminal's size, in columns and rows.
    Resize(u16, u16),
    /// The clock moved (ages, spinners).
    Tick(DateTime<Utc>),
    /// The daemon answered and the subscription is live.
    Connected,
    /// The daemon went away; the runtime retries after `retry_in_ms`.
    Disconnected { error: String, retry_in_ms: u64 },
    /// A daemon event.
    Event(Box<TimedEvent>),
    /// `listSessions`.
    Sessions(Vec<SessionInfo>),
    /// `fetchApprovals`.
    Approvals(Vec<Approval>),
    /// `getConversation` of an opened session (its chain), and the approvals its calls decided.
    Conversation {
        session_id: String,
        events: Vec<ConversationEvent>,
        approvals: Vec<Approval>,
    },
    /// A session was launched or continued: open it.
    Opened(String),
    /// A command finished; `text` says what happened.
    Done(String),
    /// A command failed.
    Failed(String),
}

/// What the runtime does for `update`.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    LoadSessions,
    LoadApprovals,
    LoadConversation(String),
    Launch(LaunchSessionParams),
    Continue(ContinueSessionParams),
    Interrupt(String),
    Decide(SendDecisionParams),
    Archive {
        session_id: String,
        archived: bool,
    },
    Rename {
        session_id: String,
        title: String,
    },
    Settings(UpdateSessionSettingsParams),
    /// Put text on the clipboard (OSC 52).
    Copy(String),
    /// Ring the terminal bell.
    Bell,
    Quit,
}

/// The daemon link, shown in the title bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    Connecting,
    Connected,
    Reconnecting { error: String, retry_in_ms: u64 },
}

/// The main screens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Sessions,
    Conversation,
    Approvals,
}

/// Which sessions the list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Filter {
    #[default]
    All,
    Active,
    Waiting,
    Completed,
    Interrupted,
    Failed,
}

impl Filter {
    const ORDER: [Filter; 6] = [
        Filter::All,
        Filter::Active,
        Filter::Waiting,
        Filter::Completed,
        Filter::Interrupted,
        Filter::Failed,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Filter::All => "all",
            Filter::Active => "active",
            Filter::Waiting => "waiting",
            Filter::Completed => "completed",
            Filter::Interrupted => "interrupted",
            Filter::Failed => "failed",
        }
    }

    fn next(self) -> Filter {
        let i = Filter::ORDER.iter().position(|f| *f == self).unwrap_or(0);
        Filter::ORDER[(i + 1) % Filter::ORDER.len()]
    }

    fn admits(self, s: &SessionInfo) -> bool {
        match self {
            Filter::All => true,
            Filter::Active => s.status.is_active(),
            Filter::Waiting => s.status == SessionStatus::WaitingInput,
            Filter::Completed => s.status == SessionStatus::Completed && !s.interrupted,
            Filter::Interrupted => s.interrupted,
            Filter::Failed => s.status == SessionStatus::Failed,
        }
    }
}

/// The session list's own state.
#[derive(Debug, Default)]
pub struct SessionList {
    pub selected: usize,
    pub filter: Filter,
    /// The search text; `Some` while `/` is open or a search applies.
    pub search: Option<String>,
    /// Whether keys go to the search box.
    pub searching: bool,
    /// Leaves whose chain of ancestors is shown.
    pub expanded: HashSet<String>,
    /// Shows the archived chains instead of the others.
    pub archived: bool,
}

/// One row of the session list: a chain's leaf, or one of its ancestors under it.
#[derive(Debug)]
pub struct Row<'a> {
    pub session: &'a SessionInfo,
    /// 0 for a leaf; 1.. for its ancestors, nearest first.
    pub depth: usize,
    /// Sessions in the chain this row belongs to.
    pub chain: usize,
    pub expanded: bool,
}

/// An open conversation.
#[derive(Debug)]
pub struct Conversation {
    pub session_id: String,
    /// The session and its ancestors, whose events make up the conversation.
    pub chain: HashSet<String>,
    pub loaded: bool,
    /// Events ordered by id (the order they were stored).
    pub events: Vec<ConversationEvent>,
    /// Each event's lines at the current width, in step with `events`.
    pub blocks: Vec<Vec<Line<'static>>>,
    /// Follows the tail; `scroll` is the top line when not following.
    pub follow: bool,
    pub scroll: usize,
    pub options: Options,
    /// The reply box, while open.
    pub reply: Option<TextArea<'static>>,
}

impl Conversation {
    /// Lines of the whole conversation.
    pub fn total_lines(&self) -> usize {
        self.blocks.iter().map(Vec::len).sum()
    }
}

/// The launch form.
#[derive(Debug)]
pub struct LaunchForm {
    pub query: TextArea<'static>,
    pub working_dir: TextArea<'static>,
    pub model: usize,
    pub approvals: ApprovalMode,
    pub field: Field,
    /// Which recent directory ↑/↓ picked last.
    pub recent: Option<usize>,
}

/// How a launched session's tool calls are approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Each asks here (the daemon's approvals server).
    Ask,
    /// Edits are approved at once; the rest asks.
    AutoAcceptEdits,
    /// Nothing asks: no approvals server.
    Off,
}

impl ApprovalMode {
    const ORDER: [ApprovalMode; 3] = [
        ApprovalMode::Ask,
        ApprovalMode::AutoAcceptEdits,
        ApprovalMode::Off,
    ];

    /// How the form shows it.
    pub fn label(self) -> &'static str {
        match self {
            ApprovalMode::Ask => "ask here (hld approvals)",
            ApprovalMode::AutoAcceptEdits => "auto-accept edits, ask the rest",
            ApprovalMode::Off => "none: tools run unasked",
        }
    }

    fn step(self, forward: bool) -> ApprovalMode {
        let i = Self::ORDER.iter().position(|m| *m == self).unwrap_or(0);
        let n = Self::ORDER.len();
        Self::ORDER[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }]
    }
}

/// A field of the launch form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Query,
    WorkingDir,
    Model,
    Approvals,
}

impl Field {
    const ORDER: [Field; 4] = [
        Field::Query,
        Field::WorkingDir,
        Field::Model,
        Field::Approvals,
    ];

    fn step(self, forward: bool) -> Field {
        let i = Field::ORDER.iter().position(|f| *f == self).unwrap_or(0);
        let n = Field::ORDER.len();
        Field::ORDER[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }]
    }
}

/// A dialog over the screen.
#[derive(Debug)]
pub enum Modal {
    Help,
    /// A denial's comment, or the answer to a question.
    Decide {
        approval_id: String,
        kind: ApprovalType,
        input: Box<TextArea<'static>>,
    },
    ConfirmInterrupt {
        session_id: String,
    },
    Launch(Box<LaunchForm>),
    /// A new title.
    Rename {
        session_id: String,
        input: Box<TextArea<'static>>,
    },
    /// How long to bypass permissions for.
    Bypass {
        session_id: String,
        input: Box<TextArea<'static>>,
    },
}

/// A one-line message in the key-help line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    pub text: String,
    pub error: bool,
}

/// Everything the dashboard shows.
#[derive(Debug)]
pub struct State {
    pub now: DateTime<Utc>,
    pub width: u16,
    pub height: u16,
    pub link: Link,
    /// Every session, newest activity first.
    pub sessions: Vec<SessionInfo>,
    /// Pending approvals, oldest first.
    pub approvals: Vec<Approval>,
    /// Approval states by the tool call they gate, for the conversation's marks.
    pub marks: HashMap<String, Mark>,
    pub screen: Screen,
    pub list: SessionList,
    pub conversation: Option<Conversation>,
    pub approval_selected: usize,
    pub modal: Option<Modal>,
    pub flash: Option<Flash>,
    pub bell: bool,
    /// Advances with each tick while something runs (the spinner).
    pub frame: u64,
    /// A `g` waiting for its second key.
    pub chord: bool,
    /// Each session's latest events seen streaming, for the preview pane.
    pub activity: crate::preview::Activity,
}

impl State {
    pub fn new(now: DateTime<Utc>, width: u16, height: u16, bell: bool) -> State {
        State {
            now,
            width,
            height,
            link: Link::Connecting,
            sessions: Vec::new(),
            approvals: Vec::new(),
            marks: HashMap::new(),
            screen: Screen::Sessions,
            list: SessionList::default(),
            conversation: None,
            approval_selected: 0,
            modal: None,
            flash: None,
            bell,
            frame: 0,
            activity: Default::default(),
            chord: false,
        }
    }

    /// Whether any session is running (the spinner animates only then).
    pub fn animating(&self) -> bool {
        self.sessions.iter().any(|s| s.status.is_active())
    }

    /// The session list's rows, as shown: one per chain leaf that the filter and search
    /// admit, followed by its ancestors when expanded.
    pub fn rows(&self) -> Vec<Row<'_>> {
        let by_id: HashMap<&str, &SessionInfo> =
            self.sessions.iter().map(|s| (s.id.as_str(), s)).collect();
        let parents: HashSet<&str> = self
            .sessions
            .iter()
            .filter_map(|s| s.parent_session_id.as_deref())
            .collect();
        let search = self.list.search.as_deref().map(str::to_lowercase);
        let mut rows = Vec::new();
        for leaf in self
            .sessions
            .iter()
            .filter(|s| !parents.contains(s.id.as_str()))
        {
            if leaf.control.archived != self.list.archived
                || !self.list.filter.admits(leaf)
                || !search.as_deref().is_none_or(|q| matches(leaf, q))
            {
                continue;
            }
            let mut ancestors = Vec::new();
            let mut next = leaf.parent_session_id.as_deref();
            while let Some(parent) = next.and_then(|id| by_id.get(id)) {
                // A cycle cannot come from the daemon, but the list must not hang on one.
                if ancestors.len() > self.sessions.len() {
                    break;
                }
                ancestors.push(*parent);
                next = parent.parent_session_id.as_deref();
            }
            let expanded = self.list.expanded.contains(&leaf.id);
            let chain = ancestors.len() + 1;
            rows.push(Row {
                session: leaf,
                depth: 0,
                chain,
                expanded,
            });
            if expanded {
                for (i, session) in ancestors.into_iter().enumerate() {
                    rows.push(Row {
                        session,
                        depth: i + 1,
                        chain,
                        expanded,
                    });
                }
            }
        }
        rows
    }

    /// Pending approvals of `session_id`.
    pub fn pending_of(&self, session_id: &str) -> usize {
        self.approvals
            .iter()
            .filter(|a| a.session_id == session_id)
            .count()
    }

    /// Rows of the conversation body.
    pub fn conversation_height(&self) -> usize {
        let reply = self
            .conversation
            .as_ref()
            .is_some_and(|c| c.reply.is_some());
        let chrome = CHROME_ROWS + if reply { REPLY_ROWS } else { 0 };
        usize::from(self.height.saturating_sub(chrome))
    }

    /// The first line shown of the open conversation.
    pub fn conversation_top(&self) -> usize {
        let Some(c) = &self.conversation else {
            return 0;
        };
        let last_top = c.total_lines().saturating_sub(self.conversation_height());
        if c.follow {
            last_top
        } else {
            c.scroll.min(last_top)
        }
    }

    fn selected_session(&self) -> Option<&SessionInfo> {
        match self.screen {
            Screen::Sessions => self.rows().get(self.list.selected).map(|r| r.session),
            Screen::Conversation => {
                let id = &self.conversation.as_ref()?.session_id;
                self.sessions.iter().find(|s| &s.id == id)
            }
            Screen::Approvals => {
                let a = self.approvals.get(self.approval_selected)?;
                self.sessions.iter().find(|s| s.id == a.session_id)
            }
        }
    }

    fn mark_for(&self, event: &ConversationEvent) -> Option<Mark> {
        if event.event_type != ConversationEventType::ToolCall {
            return None;
        }
        if let Some(mark) = event.tool_id.as_deref().and_then(|id| self.marks.get(id)) {
            return Some(mark.clone());
        }
        let status = event.approval_status.as_deref()?;
        let status = serde_json::from_value(serde_json::Value::String(status.to_owned())).ok()?;
        Some(Mark {
            status,
            comment: None,
        })
    }

    fn render_block(&self, event: &ConversationEvent, options: Options) -> Vec<Line<'static>> {
        render::event_lines(event, self.mark_for(event).as_ref(), options, self.width)
    }

    /// Renders the open conversation again (after a resize or a change of options).
    fn rerender(&mut self) {
        if let Some(mut c) = self.conversation.take() {
            c.blocks = c
                .events
                .iter()
                .map(|e| self.render_block(e, c.options))
                .collect();
            self.conversation = Some(c);
        }
    }

    /// Renders again the open conversation's tool call that `tool_use_id` names.
    fn rerender_tool(&mut self, tool_use_id: &str) {
        let Some(mut c) = self.conversation.take() else {
            return;
        };
        for i in 0..c.events.len() {
            if c.events[i].tool_id.as_deref() == Some(tool_use_id) {
                c.blocks[i] = self.render_block(&c.events[i], c.options);
            }
        }
        self.conversation = Some(c);
    }

    /// Adds events to the open conversation in id order; one it has already (a tool call
    /// whose approval state changed, a result completed) replaces the one shown.
    fn add_events(&mut self, events: Vec<ConversationEvent>) {
        let Some(mut c) = self.conversation.take() else {
            return;
        };
        for event in events {
            let block = self.render_block(&event, c.options);
            match c.events.binary_search_by_key(&event.id, |e| e.id) {
                Ok(i) => {
                    c.events[i] = event;
                    c.blocks[i] = block;
                }
                Err(at) => {
                    c.events.insert(at, event);
                    c.blocks.insert(at, block);
                }
            }
        }
        self.conversation = Some(c);
    }

    fn flash(&mut self, text: impl Into<String>, error: bool) {
        self.flash = Some(Flash {
            text: text.into(),
            error,
        });
    }

    fn set_mark(&mut self, approval: &Approval, status: ApprovalStatus, comment: Option<String>) {
        if let Some(tool) = approval.tool_use_id.clone() {
            self.marks.insert(tool.clone(), Mark { status, comment });
            self.rerender_tool(&tool);
        }
    }
}

fn matches(s: &SessionInfo, query: &str) -> bool {
    [
        Some(&s.summary),
        Some(&s.query),
        Some(&s.id),
        s.model.as_ref(),
        s.working_dir.as_ref(),
    ]
    .into_iter()
    .flatten()
    .any(|field| field.to_lowercase().contains(query))
}

/// Applies `msg` to `state`; returns what the runtime must do.
pub fn update(state: &mut State, msg: Msg) -> Vec<Command> {
    match msg {
        Msg::Key(key) => {
            if !matches!(key.code, KeyCode::Modifier(_)) {
                state.flash = None;
            }
            on_key(state, key)
        }
        Msg::Resize(width, height) => {
            let changed = width != state.width;
            state.width = width;
            state.height = height;
            if changed {
                state.rerender();
            }
            Vec::new()
        }
        Msg::Tick(now) => {
            state.now = now;
            if state.animating() {
                state.frame += 1;
            }
            Vec::new()
        }
        Msg::Connected => {
            state.link = Link::Connected;
            reload(state)
        }
        Msg::Disconnected { error, retry_in_ms } => {
            state.link = Link::Reconnecting { error, retry_in_ms };
            Vec::new()
        }
        Msg::Event(event) => on_event(state, *event),
        Msg::Sessions(sessions) => {
            state.set_sessions(sessions);
            clamp_selection(state);
            Vec::new()
        }
        Msg::Approvals(mut approvals) => {
            approvals.sort_by(|a, b| a.requested_at.cmp(&b.requested_at));
            state
                .marks
                .retain(|_, m| m.status != ApprovalStatus::Pending);
            for a in &approvals {
                state.set_mark(a, ApprovalStatus::Pending, None);
            }
            state.approvals = approvals;
            clamp_selection(state);
            state.rerender();
            Vec::new()
        }
        Msg::Conversation {
            session_id,
            events,
            approvals,
        } => {
            for a in approvals {
                state.set_mark(&a, a.status, a.comment.clone());
            }
            if let Some(c) = state
                .conversation
                .as_mut()
                .filter(|c| c.session_id == session_id)
            {
                // Joins the events that streamed in since the load was sent (`reload`, `open`).
                c.loaded = true;
                state.add_events(events);
            }
            Vec::new()
        }
        Msg::Opened(session_id) => {
            state.list.search = None;
            open(state, &session_id)
        }
        Msg::Done(text) => {
            state.flash(text, false);
            Vec::new()
        }
        Msg::Failed(text) => {
            state.flash(text, true);
            // What was shown at once may not have happened: show what the daemon has.
            vec![Command::LoadApprovals, Command::LoadSessions]
        }
    }
}

fn on_event(state: &mut State, timed: TimedEvent) -> Vec<Command> {
    let at = timed.timestamp;
    match timed.event {
        Event::SessionStatusChanged {
            session_id,
            new_status,
            ..
        } => {
            let known = state.sessions.iter_mut().find(|s| s.id == session_id);
            if let Some(s) = known {
                s.status = new_status;
            }
            state.touch(&session_id, &at);
            // Cost, turns and errors arrive with the row; a new session needs its row.
            vec![Command::LoadSessions]
        }
        Event::ConversationUpdated {
            session_id, event, ..
        } => {
            state.touch(&session_id, &at);
            state.activity.record(&session_id, &event);
            if state
                .conversation
                .as_ref()
                .is_some_and(|c| c.chain.contains(&session_id))
            {
                state.add_events(vec![*event]);
            }
            Vec::new()
        }
        Event::NewApproval { approval, .. } => {
            if state.approvals.iter().any(|a| a.id == approval.id) {
                return Vec::new();
            }
            state.set_mark(&approval, ApprovalStatus::Pending, None);
            let at = state
                .approvals
                .partition_point(|a| a.requested_at <= approval.requested_at);
            state.approvals.insert(at, *approval);
            // A list fetched before this approval existed may still be on its way: a newer
            // load overtakes it (the runtime drops the older answer).
            let mut commands = vec![Command::LoadApprovals];
            if state.bell {
                commands.push(Command::Bell);
            }
            commands
        }
        Event::ApprovalResolved {
            approval_id,
            decision,
            comment,
            ..
        } => {
            resolve(state, &approval_id, decision, comment);
            vec![Command::LoadApprovals]
        }
        Event::SessionSettingsChanged {
            session_id,
            control,
            ..
        } => match state.sessions.iter_mut().find(|s| s.id == session_id) {
            Some(session) => {
                session.control = control;
                clamp_selection(state);
                Vec::new()
            }
            None => vec![Command::LoadSessions],
        },
        Event::Lagged { .. } => reload(state),
        // An event this version does not know: nothing here depends on it.
        _ => Vec::new(),
    }
}

/// Loads again everything shown: after a reconnect, or events missed. The conversation's
/// events are dropped now, so that those streaming in before the load's answer are kept.
fn reload(state: &mut State) -> Vec<Command> {
    let mut commands = vec![Command::LoadSessions, Command::LoadApprovals];
    if let Some(c) = &mut state.conversation {
        c.loaded = false;
        c.events.clear();
        c.blocks.clear();
        commands.push(Command::LoadConversation(c.session_id.clone()));
    }
    commands
}

/// Takes a decided approval off the pending list and marks its tool call.
fn resolve(state: &mut State, approval_id: &str, status: ApprovalStatus, comment: Option<String>) {
    if let Some(i) = state.approvals.iter().position(|a| a.id == approval_id) {
        let approval = state.approvals.remove(i);
        state.set_mark(&approval, status, comment);
        clamp_selection(state);
    }
}

fn clamp_selection(state: &mut State) {
    let rows = state.rows().len();
    state.list.selected = state.list.selected.min(rows.saturating_sub(1));
    state.approval_selected = state
        .approval_selected
        .min(state.approvals.len().saturating_sub(1));
}

/// Opens `session_id`'s conversation, with its chain of ancestors.
fn open(state: &mut State, session_id: &str) -> Vec<Command> {
    // The session and its ancestors, up to one already seen (a cycle) or missing.
    let mut chain = HashSet::new();
    let mut next = Some(session_id.to_owned());
    while let Some(id) = next.filter(|id| chain.insert(id.clone())) {
        next = state
            .sessions
            .iter()
            .find(|s| s.id == id)
            .and_then(|s| s.parent_session_id.clone());
    }
    state.conversation = Some(Conversation {
        session_id: session_id.to_owned(),
        chain,
        loaded: false,
        events: Vec::new(),
        blocks: Vec::new(),
        follow: true,
        scroll: 0,
        options: Options {
            thinking: false,
            expanded: false,
        },
        reply: None,
    });
    state.screen = Screen::Conversation;
    vec![Command::LoadConversation(session_id.to_owned())]
}

fn on_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    if ctrl && key.code == KeyCode::Char('c') {
        return vec![Command::Quit];
    }
    if state.modal.is_some() {
        return modal_key(state, key);
    }
    if state.list.searching {
        return search_key(state, key);
    }
    if state
        .conversation
        .as_ref()
        .is_some_and(|c| c.reply.is_some())
        && state.screen == Screen::Conversation
    {
        return reply_key(state, key);
    }
    if std::mem::take(&mut state.chord) {
        match key.code {
            KeyCode::Char('g') => return first(state),
            KeyCode::Char('s') => state.screen = Screen::Sessions,
            KeyCode::Char('a') => state.screen = Screen::Approvals,
            _ => {}
        }
        return Vec::new();
    }
    match key.code {
        KeyCode::Char(c) if ctrl && c == JUMP_TO_APPROVAL => {
            if state.approvals.is_empty() {
                state.flash("no pending approvals", false);
            } else {
                state.screen = Screen::Approvals;
                state.approval_selected = 0;
            }
            return Vec::new();
        }
        KeyCode::Char('x') if ctrl => {
            if let Some(s) = state.selected_session() {
                if s.status.is_active() {
                    let session_id = s.id.clone();
                    state.modal = Some(Modal::ConfirmInterrupt { session_id });
                } else {
                    state.flash(format!("the session is {}, not running", s.status), true);
                }
            }
            return Vec::new();
        }
        _ if ctrl => return screen_key(state, key),
        KeyCode::Char('?') => state.modal = Some(Modal::Help),
        KeyCode::Char('q') => {
            if state.screen == Screen::Sessions {
                return vec![Command::Quit];
            }
            state.screen = Screen::Sessions;
        }
        KeyCode::Char('1') => state.screen = Screen::Sessions,
        KeyCode::Char('2') => state.screen = Screen::Approvals,
        KeyCode::Char('g') => state.chord = true,
        KeyCode::Char('c') => state.modal = Some(Modal::Launch(Box::new(launch_form(state)))),
        KeyCode::Char('B') => {
            state.bell = !state.bell;
            let on = if state.bell { "on" } else { "off" };
            state.flash(format!("bell for new approvals {on}"), false);
        }
        KeyCode::Char('Y') => {
            let id = match state.screen {
                Screen::Approvals => state
                    .approvals
                    .get(state.approval_selected)
                    .map(|a| a.id.clone()),
                _ => state.selected_session().map(|s| s.id.clone()),
            };
            if let Some(id) = id {
                state.flash(format!("copied {id}"), false);
                return vec![Command::Copy(id)];
            }
        }
        KeyCode::Char('e') if state.screen != Screen::Approvals => {
            if let Some(s) = state.selected_session() {
                let archived = !s.control.archived;
                let session_id = s.id.clone();
                state.flash(if archived { "archived" } else { "unarchived" }, false);
                return vec![Command::Archive {
                    session_id,
                    archived,
                }];
            }
        }
        KeyCode::Char('R') if state.screen != Screen::Approvals => {
            if let Some(s) = state.selected_session() {
                let mut input = TextArea::default();
                input.insert_str(&s.control.title);
                let session_id = s.id.clone();
                state.modal = Some(Modal::Rename {
                    session_id,
                    input: Box::new(input),
                });
            }
        }
        KeyCode::Char('a') if alt && state.screen != Screen::Approvals => {
            if let Some(s) = state.selected_session() {
                let on = !s.control.auto_accept_edits;
                let session_id = s.id.clone();
                let mode = if on { "on" } else { "off" };
                state.flash(format!("auto-accept edits {mode}"), false);
                return vec![Command::Settings(UpdateSessionSettingsParams {
                    session_id,
                    auto_accept_edits: Some(on),
                    ..Default::default()
                })];
            }
        }
        KeyCode::Char('y') if alt && state.screen != Screen::Approvals => {
            if let Some(s) = state.selected_session() {
                let session_id = s.id.clone();
                if bypass_left(s, state.now).is_some() {
                    state.flash("bypass off", false);
                    return vec![Command::Settings(UpdateSessionSettingsParams {
                        session_id,
                        dangerously_skip_permissions: Some(false),
                        ..Default::default()
                    })];
                }
                let mut input = TextArea::default();
                input.insert_str("15m");
                state.modal = Some(Modal::Bypass {
                    session_id,
                    input: Box::new(input),
                });
            }
        }
        KeyCode::Char('p') if state.screen != Screen::Approvals => {
            let parent = state
                .selected_session()
                .map(|s| s.parent_session_id.clone());
            match parent {
                Some(Some(parent)) => return open(state, &parent),
                Some(None) => state.flash("this session has no parent", false),
                None => {}
            }
        }
        _ => return screen_key(state, key),
    }
    Vec::new()
}

fn first(state: &mut State) -> Vec<Command> {
    match state.screen {
        Screen::Sessions => state.list.selected = 0,
        Screen::Approvals => state.approval_selected = 0,
        Screen::Conversation => {
            if let Some(c) = state.conversation.as_mut() {
                c.follow = false;
                c.scroll = 0;
            }
        }
    }
    Vec::new()
}

fn screen_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    match state.screen {
        Screen::Sessions => sessions_key(state, key),
        Screen::Conversation => conversation_key(state, key),
        Screen::Approvals => approvals_key(state, key),
    }
}

/// j/k/arrows/G over a list of `len` rows.
fn move_in(selected: &mut usize, len: usize, key: KeyEvent) -> bool {
    match key.code {
        KeyCode::Char('j') | KeyCode::Down => {
            *selected = (*selected + 1).min(len.saturating_sub(1))
        }
        KeyCode::Char('k') | KeyCode::Up => *selected = selected.saturating_sub(1),
        KeyCode::Char('G') | KeyCode::End => *selected = len.saturating_sub(1),
        KeyCode::Home => *selected = 0,
        KeyCode::PageDown => *selected = (*selected + 10).min(len.saturating_sub(1)),
        KeyCode::PageUp => *selected = selected.saturating_sub(10),
        _ => return false,
    }
    true
}

fn sessions_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    let len = state.rows().len();
    if move_in(&mut state.list.selected, len, key) {
        return Vec::new();
    }
    match key.code {
        KeyCode::Enter => {
            if let Some(id) = state
                .rows()
                .get(state.list.selected)
                .map(|r| r.session.id.clone())
            {
                return open(state, &id);
            }
        }
        KeyCode::Char(' ') | KeyCode::Right | KeyCode::Char('l') => {
            let row = state
                .rows()
                .get(state.list.selected)
                .map(|r| (r.session.id.clone(), r.depth, r.chain));
            match row {
                Some((id, 0, chain)) if chain > 1 && !state.list.expanded.remove(&id) => {
                    state.list.expanded.insert(id);
                }
                Some((_, 0, chain)) if chain > 1 => {}
                Some((_, 0, _)) => state.flash("this session has no earlier sessions", false),
                _ => {}
            }
        }
        KeyCode::Char('/') => {
            state.list.searching = true;
            state.list.search.get_or_insert_with(String::new);
        }
        KeyCode::Char('f') => {
            state.list.filter = state.list.filter.next();
            state.list.selected = 0;
        }
        KeyCode::Tab => {
            state.list.archived = !state.list.archived;
            state.list.selected = 0;
        }
        KeyCode::Esc => {
            state.list.search = None;
            state.list.filter = Filter::All;
            state.list.archived = false;
        }
        _ => {}
    }
    Vec::new()
}

fn search_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    let search = state.list.search.get_or_insert_with(String::new);
    match key.code {
        KeyCode::Esc => {
            state.list.search = None;
            state.list.searching = false;
        }
        KeyCode::Enter => {
            state.list.searching = false;
            if search.is_empty() {
                state.list.search = None;
            }
        }
        KeyCode::Backspace => {
            search.pop();
        }
        KeyCode::Down | KeyCode::Up => {
            let len = state.rows().len();
            move_in(&mut state.list.selected, len, key);
            return Vec::new();
        }
        KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => search.push(c),
        _ => {}
    }
    state.list.selected = 0;
    Vec::new()
}

fn conversation_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    let height = state.conversation_height();
    let top = state.conversation_top();
    let Some(c) = state.conversation.as_mut() else {
        state.screen = Screen::Sessions;
        return Vec::new();
    };
    let last_top = c.total_lines().saturating_sub(height);
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let scroll_to = |c: &mut Conversation, to: usize| {
        c.scroll = to.min(last_top);
        c.follow = c.scroll >= last_top;
    };
    match key.code {
        KeyCode::Char('j') | KeyCode::Down => scroll_to(c, top + 1),
        KeyCode::Char('k') | KeyCode::Up => scroll_to(c, top.saturating_sub(1)),
        KeyCode::Char('d') if ctrl => scroll_to(c, top + height / 2),
        KeyCode::Char('u') if ctrl => scroll_to(c, top.saturating_sub(height / 2)),
        KeyCode::PageDown => scroll_to(c, top + height),
        KeyCode::PageUp => scroll_to(c, top.saturating_sub(height)),
        KeyCode::Char('G') | KeyCode::End => c.follow = true,
        KeyCode::Home => scroll_to(c, 0),
        KeyCode::Char('t') => {
            c.options.thinking = !c.options.thinking;
            state.rerender();
        }
        KeyCode::Char('i') => {
            c.options.expanded = !c.options.expanded;
            state.rerender();
        }
        KeyCode::Char('r') | KeyCode::Enter => {
            let status = state
                .sessions
                .iter()
                .find(|s| s.id == c.session_id)
                .map(|s| &s.status);
            if status.is_some_and(SessionStatus::is_active) {
                state.flash(
                    "the session is still running: wait for it, or interrupt it (Ctrl+X)",
                    true,
                );
            } else {
                let mut reply = TextArea::default();
                reply.set_placeholder_text("Continue the conversation… (Enter sends, Esc cancels)");
                c.reply = Some(reply);
            }
        }
        KeyCode::Char('a') | KeyCode::Char('d') => {
            let id = c.session_id.clone();
            let Some(i) = state.approvals.iter().position(|a| a.session_id == id) else {
                state.flash("this session has no pending approval", false);
                return Vec::new();
            };
            return decide(state, i, key.code == KeyCode::Char('a'));
        }
        KeyCode::Esc => state.screen = Screen::Sessions,
        _ => {}
    }
    Vec::new()
}

fn reply_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    let Some(c) = state.conversation.as_mut() else {
        return Vec::new();
    };
    let Some(reply) = c.reply.as_mut() else {
        return Vec::new();
    };
    match key.code {
        KeyCode::Esc => c.reply = None,
        KeyCode::Enter if !key.modifiers.contains(KeyModifiers::ALT) => {
            let query = reply.lines().join("\n");
            if query.trim().is_empty() {
                return Vec::new();
            }
            let session_id = c.session_id.clone();
            c.reply = None;
            state.flash("continuing…", false);
            return vec![Command::Continue(ContinueSessionParams {
                session_id,
                query,
                ..Default::default()
            })];
        }
        KeyCode::Enter => reply.insert_newline(),
        _ => {
            reply.input(key);
        }
    }
    Vec::new()
}

fn approvals_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    if move_in(&mut state.approval_selected, state.approvals.len(), key) {
        return Vec::new();
    }
    let i = state.approval_selected;
    let Some(approval) = state.approvals.get(i) else {
        if key.code == KeyCode::Esc {
            state.screen = Screen::Sessions;
        }
        return Vec::new();
    };
    match key.code {
        KeyCode::Char('a' | 'y') => return decide(state, i, true),
        KeyCode::Char('d' | 'n') => return decide(state, i, false),
        KeyCode::Char('r') | KeyCode::Enter if approval.kind == ApprovalType::HumanContact => {
            return decide(state, i, false)
        }
        KeyCode::Enter => {
            let id = approval.session_id.clone();
            return open(state, &id);
        }
        KeyCode::Esc => state.screen = Screen::Sessions,
        _ => {}
    }
    Vec::new()
}

/// Approves the `i`th pending approval at once, or opens the box for a denial's comment (or a
/// question's answer).
fn decide(state: &mut State, i: usize, approve: bool) -> Vec<Command> {
    let approval = &state.approvals[i];
    if approval.kind == ApprovalType::HumanContact || !approve {
        state.modal = Some(Modal::Decide {
            approval_id: approval.id.clone(),
            kind: approval.kind,
            input: Box::default(),
        });
        return Vec::new();
    }
    let id = approval.id.clone();
    state.flash(
        format!(
            "approved {}",
            approval.function_name.as_deref().unwrap_or("the call")
        ),
        false,
    );
    resolve(state, &id, ApprovalStatus::Approved, None);
    vec![Command::Decide(SendDecisionParams {
        call_id: Some(id),
        kind: Some("function_call".into()),
        decision: Some("approve".into()),
        comment: None,
    })]
}

fn modal_key(state: &mut State, key: KeyEvent) -> Vec<Command> {
    let Some(modal) = state.modal.take() else {
        return Vec::new();
    };
    match modal {
        Modal::Help => {
            if !matches!(
                key.code,
                KeyCode::Char('?') | KeyCode::Esc | KeyCode::Char('q')
            ) {
                state.modal = Some(Modal::Help);
            }
            Vec::new()
        }
        Modal::ConfirmInterrupt { session_id } => match key.code {
            KeyCode::Char('y') | KeyCode::Enter => {
                state.flash("interrupting…", false);
                vec![Command::Interrupt(session_id)]
            }
            KeyCode::Char('n') | KeyCode::Esc => Vec::new(),
            _ => {
                state.modal = Some(Modal::ConfirmInterrupt { session_id });
                Vec::new()
            }
        },
        Modal::Decide {
            approval_id,
            kind,
            mut input,
        } => match key.code {
            KeyCode::Esc => Vec::new(),
            KeyCode::Enter if !key.modifiers.contains(KeyModifiers::ALT) => {
                let text = input.lines().join("\n").trim().to_owned();
                if kind == ApprovalType::HumanContact && text.is_empty() {
                    state.modal = Some(Modal::Decide {
                        approval_id,
                        kind,
                        input,
                    });
                    return Vec::new();
                }
                let (decision, status, kind_name, comment) = match kind {
                    ApprovalType::HumanContact => {
                        ("respond", ApprovalStatus::Responded, "human_contact", text)
                    }
                    // A tool call, or a kind this version does not know: the daemon refuses
                    // a denial that does not fit.
                    _ if text.is_empty() => (
                        "deny",
                        ApprovalStatus::Denied,
                        "function_call",
                        DEFAULT_DENIAL.to_owned(),
                    ),
                    _ => ("deny", ApprovalStatus::Denied, "function_call", text),
                };
                state.flash(
                    if decision == "respond" {
                        "answered"
                    } else {
                        "denied"
                    },
                    false,
                );
                resolve(state, &approval_id, status, Some(comment.clone()));
                vec![Command::Decide(SendDecisionParams {
                    call_id: Some(approval_id),
                    kind: Some(kind_name.into()),
                    decision: Some(decision.into()),
                    comment: Some(comment),
                })]
            }
            KeyCode::Enter => {
                input.insert_newline();
                state.modal = Some(Modal::Decide {
                    approval_id,
                    kind,
                    input,
                });
                Vec::new()
            }
            _ => {
                input.input(key);
                state.modal = Some(Modal::Decide {
                    approval_id,
                    kind,
                    input,
                });
                Vec::new()
            }
        },
        Modal::Rename {
            session_id,
            mut input,
        } => match key.code {
            KeyCode::Esc => Vec::new(),
            KeyCode::Enter => {
                let title = input.lines().join(" ").trim().to_owned();
                state.flash("renamed", false);
                vec![Command::Rename { session_id, title }]
            }
            _ => {
                input.input(key);
                state.modal = Some(Modal::Rename { session_id, input });
                Vec::new()
            }
        },
        Modal::Bypass {
            session_id,
            mut input,
        } => match key.code {
            KeyCode::Esc => Vec::new(),
            KeyCode::Enter => match parse_duration(&input.lines().join("")) {
                Ok(timeout) => {
                    state.flash("bypassing permissions", false);
                    vec![Command::Settings(UpdateSessionSettingsParams {
                        session_id,
                        dangerously_skip_permissions: Some(true),
                        dangerously_skip_permissions_timeout_ms: timeout,
                        ..Default::default()
                    })]
                }
                Err(e) => {
                    state.flash(e, true);
                    state.modal = Some(Modal::Bypass { session_id, input });
                    Vec::new()
                }
            },
            _ => {
                input.input(key);
                state.modal = Some(Modal::Bypass { session_id, input });
                Vec::new()
            }
        },
        Modal::Launch(mut form) => launch_key(state, &mut form, key).unwrap_or_else(|| {
            state.modal = Some(Modal::Launch(form));
            Vec::new()
        }),
    }
}

/// Working directories of recent sessions, most recent first, each once.
pub fn recent_dirs(state: &State) -> Vec<String> {
    let mut seen = HashSet::new();
    state
        .sessions
        .iter()
        .filter_map(|s| s.working_dir.clone())
        .filter(|d| !d.is_empty() && seen.insert(d.clone()))
        .collect()
}

fn launch_form(state: &State) -> LaunchForm {
    let mut query = TextArea::default();
    query.set_placeholder_text("What should Claude do? (Enter: new line, Ctrl+S: launch)");
    let mut working_dir = TextArea::default();
    if let Some(dir) = recent_dirs(state).into_iter().next() {
        working_dir.insert_str(dir);
    }
    LaunchForm {
        query,
        working_dir,
        model: 0,
        approvals: ApprovalMode::Ask,
        field: Field::Query,
        recent: None,
    }
}

/// A key in the launch form: `Some(commands)` closes it.
fn launch_key(state: &mut State, form: &mut LaunchForm, key: KeyEvent) -> Option<Vec<Command>> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let submit = (ctrl && key.code == KeyCode::Char('s'))
        || (key.code == KeyCode::Enter && form.field != Field::Query);
    if submit {
        let query = form.query.lines().join("\n");
        if query.trim().is_empty() {
            state.flash("the query is empty", true);
            form.field = Field::Query;
            return None;
        }
        let dir = form.working_dir.lines().join("");
        let params = LaunchSessionParams {
            query,
            model: MODELS[form.model].map(str::to_owned),
            working_dir: Some(dir.trim().to_owned()).filter(|d| !d.is_empty()),
            no_approvals: (form.approvals == ApprovalMode::Off).then_some(true),
            auto_accept_edits: (form.approvals == ApprovalMode::AutoAcceptEdits).then_some(true),
            ..Default::default()
        };
        state.flash("launching…", false);
        return Some(vec![Command::Launch(params)]);
    }
    match key.code {
        KeyCode::Esc => return Some(Vec::new()),
        KeyCode::Tab => form.field = form.field.step(true),
        KeyCode::BackTab => form.field = form.field.step(false),
        KeyCode::Left | KeyCode::Right if matches!(form.field, Field::Model | Field::Approvals) => {
            let forward = key.code == KeyCode::Right;
            if form.field == Field::Model {
                let n = MODELS.len();
                form.model = if forward {
                    (form.model + 1) % n
                } else {
                    (form.model + n - 1) % n
                };
            } else {
                form.approvals = form.approvals.step(forward);
            }
        }
        KeyCode::Up | KeyCode::Down if form.field == Field::WorkingDir => {
            let dirs = recent_dirs(state);
            if !dirs.is_empty() {
                let next = match (form.recent, key.code == KeyCode::Down) {
                    (None, _) => 0,
                    (Some(i), true) => (i + 1) % dirs.len(),
                    (Some(i), false) => (i + dirs.len() - 1) % dirs.len(),
                };
                form.recent = Some(next);
                form.working_dir = TextArea::default();
                form.working_dir.insert_str(&dirs[next]);
            }
        }
        _ => match form.field {
            Field::Query => {
                form.query.input(key);
            }
            Field::WorkingDir => {
                form.working_dir.input(key);
            }
            Field::Model | Field::Approvals => {}
        },
    }
    None
}

/// A bypass duration as typed: `30s`, `15m`, `2h` (a bare number is minutes), or empty,
/// `0` or `until off` for none. Milliseconds, or `None` for no expiry.
pub fn parse_duration(text: &str) -> Result<Option<i64>, String> {
    let text = text.trim().to_lowercase();
    if text.is_empty() || text == "0" || text == "until off" {
        return Ok(None);
    }
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text.as_str(), "m"),
    };
    let scale = match unit.trim() {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(format!("not a duration: {text} (try 30s, 15m, 2h)")),
    };
    match number.parse::<i64>() {
        Ok(n) if n > 0 => Ok(Some(n * scale)),
        _ => Err(format!("not a duration: {text} (try 30s, 15m, 2h)")),
    }
}

/// How long a session's bypass lasts from `now`: `Some(None)` when it has no expiry, `None`
/// when it is off (or over).
pub fn bypass_left(s: &SessionInfo, now: DateTime<Utc>) -> Option<Option<chrono::Duration>> {
    if !s.control.dangerously_skip_permissions {
        return None;
    }
    let Some(expiry) = &s.control.dangerously_skip_permissions_expires_at else {
        return Some(None);
    };
    let expiry = DateTime::parse_from_rfc3339(expiry)
        .ok()?
        .with_timezone(&Utc);
    (expiry > now).then(|| Some(expiry - now))
}
