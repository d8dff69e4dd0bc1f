//! The dashboard's state and `update`: a pure function from the state and one [`Msg`] (a key,
//! a daemon event, a command's result, a tick) to the [`Command`]s the runtime must run. It
//! draws nothing and does no I/O, so every behaviour is tested without a terminal.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use hld_client::protocol::{
    Approval, ApprovalStatus, ApprovalType, ConversationEvent, ConversationEventType, Event,
    LaunchSessionParams, MergeStrategy, MessageStatus, QueuedMessage, RateLimitWindow,
    SendDecisionParams, SessionInfo, SessionStatus, SlashCommand, TimedEvent,
    UpdateSessionSettingsParams,
};
use ratatui::text::Line;
use tui_textarea::TextArea;

use crate::keys::{self, Action, Key, Scope};
use crate::render::{self, Mark, Options};

mod complete;
mod drafts;
mod events;
mod fleet;
mod form;
mod input;
mod modal;
mod msg;
mod queue;
mod review;
mod settings;
mod state;
mod usage;

pub use complete::{Choice, Completer, Completion, Trigger};
pub use drafts::holds as draft_holds;
use events::*;
pub use fleet::{away, route, Daemon, Fleet, Route};
pub use form::{ApprovalMode, Field, FormError, LaunchForm};
use input::*;
pub use input::{QUIT_AGAIN, QUIT_WINDOW};
use modal::*;
pub use modal::{bypass_left, parse_duration, recent_dirs};
pub use msg::{Command, Msg};
pub use queue::{working, QUEUE_LINES};
pub use review::{shown_lines, DiffStat, Review, REVIEW_PAGE};
pub use settings::{recent_models, ModelPicker};
pub use state::{Filter, Flash};
pub use usage::{
    daily_costs, standing, total, Loaded, Missing, Shown, Total, UsageTable, UsageView, USAGE_DAYS,
};

/// Rows taken by the title bar and the key-help line around every screen.
pub const CHROME_ROWS: u16 = 2;
/// Rows the reply box takes at the bottom of a conversation.
pub const REPLY_ROWS: u16 = 3;
/// The models the launch form offers (`None`: claude's default).
pub const MODELS: [Option<&str>; 4] = [None, Some("opus"), Some("sonnet"), Some("haiku")];
/// What a denial says when the reviewer gave no comment (the daemon needs one).
pub const DEFAULT_DENIAL: &str = "Denied by the reviewer.";

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
    /// An isolated session's changes.
    Review,
    /// What the sessions cost, by day and by model.
    Usage,
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
    pub view: ListView,
}

/// The session list's views, in the order Tab goes through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListView {
    #[default]
    Sessions,
    Archived,
    Drafts,
}

impl ListView {
    fn next(self) -> ListView {
        match self {
            ListView::Sessions => ListView::Archived,
            ListView::Archived => ListView::Drafts,
            ListView::Drafts => ListView::Sessions,
        }
    }
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
    /// The session's messages waiting for its turn to end, oldest first.
    pub queue: Vec<QueuedMessage>,
    /// Completion of `/` commands and `@` files in the reply box.
    pub complete: Completer,
}

impl Conversation {
    /// Lines of the whole conversation.
    pub fn total_lines(&self) -> usize {
        self.blocks.iter().map(Vec::len).sum()
    }
}

/// A dialog over the screen.
#[derive(Debug)]
pub enum Modal {
    /// The keys, scrolled to row `top`.
    Help {
        top: usize,
    },
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
    /// The session's next model.
    Model(Box<ModelPicker>),
    /// How to merge the reviewed branch, and the confirmation.
    Merge {
        session_id: String,
        strategy: MergeStrategy,
    },
    /// Confirms a discard; `refused` holds the daemon's reason a first try was refused for,
    /// and then confirming forces it.
    ConfirmDiscard {
        session_id: String,
        refused: Option<String>,
    },
}

/// Everything the dashboard shows.
#[derive(Debug)]
pub struct State {
    pub now: DateTime<Utc>,
    pub width: u16,
    pub height: u16,
    pub link: Link,
    /// The context the daemon was reached by, shown in the title bar (`None` for `local`).
    pub context: Option<String>,
    /// The directory the dashboard was started in: a new session's, by default.
    pub here: Option<String>,
    /// Every session, newest activity first.
    pub sessions: Vec<SessionInfo>,
    /// The drafts, newest first.
    pub drafts: Vec<SessionInfo>,
    /// Pending approvals, oldest first.
    pub approvals: Vec<Approval>,
    /// Approval states by the tool call they gate, for the conversation's marks.
    pub marks: HashMap<String, Mark>,
    /// Approval states by approval id, of those decided with none listed pending here (a
    /// session rule decided them as they were made): their tool call names its approval.
    pub ruled: HashMap<String, Mark>,
    pub screen: Screen,
    pub list: SessionList,
    pub conversation: Option<Conversation>,
    /// What was typed in a session's reply box and not sent, by session: the box opens with
    /// it again.
    pub unsent: HashMap<String, String>,
    pub approval_selected: usize,
    /// Rows of the selected approval's detail scrolled past.
    pub approval_scroll: u16,
    pub modal: Option<Modal>,
    pub flash: Option<Flash>,
    pub bell: bool,
    /// Advances with each tick while something runs (the spinner).
    pub frame: u64,
    /// A `g` waiting for its second key.
    pub chord: bool,
    /// When Ctrl+C was pressed: another press within [`QUIT_WINDOW`] quits.
    pub quit_asked: Option<DateTime<Utc>>,
    /// Each session's latest events seen streaming, for the preview pane.
    pub activity: crate::preview::Activity,
    /// Isolated sessions' diff totals, by session (`None`: could not be read).
    pub stats: HashMap<String, Option<DiffStat>>,
    /// The review screen's diff.
    pub review: Option<Review>,
    /// The usage-limit windows, as last reported, for the title bar.
    pub windows: Vec<RateLimitWindow>,
    /// The usage view, once opened.
    pub usage: Option<UsageView>,
    /// The notifications already rung, by id: each rings once.
    pub notified: HashSet<String>,
    /// The daemons shown, when more than one: their links, and where each row came from.
    pub fleet: Fleet,
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
            quit_lapsed(state);
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
            let stale = review::stale_stats(state, &sessions);
            state.set_sessions(sessions);
            clamp_selection(state);
            stale
        }
        Msg::Drafts(drafts) => {
            drafts::loaded(state, drafts);
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
        Msg::Queue {
            session_id,
            messages,
        } => {
            queue::loaded(state, &session_id, messages);
            Vec::new()
        }
        Msg::Commands {
            session_id,
            commands,
        } => {
            complete::commands(state, &session_id, commands);
            Vec::new()
        }
        Msg::Files {
            session_id,
            query,
            files,
        } => {
            complete::files(state, &session_id, &query, files);
            Vec::new()
        }
        msg @ (Msg::DiffStat { .. }
        | Msg::Diff { .. }
        | Msg::DiffRefused { .. }
        | Msg::Merged { .. }
        | Msg::Discarded(_)
        | Msg::DiscardRefused { .. }) => review::on_msg(state, msg),
        Msg::RateLimits(windows) => {
            usage::merge_windows(state, windows);
            Vec::new()
        }
        Msg::Usage { table, result } => {
            usage::loaded(state, None, table, result);
            Vec::new()
        }
        Msg::Opened(session_id) => {
            (state.list.search, state.flash) = (None, None);
            form::launched(state);
            open(state, &session_id)
        }
        Msg::LaunchFailed { message, param } => form::failed(state, message, param.as_deref()),
        Msg::Done(text) => {
            state.flash(text, false);
            Vec::new()
        }
        Msg::Drafted(text) => {
            state.flash(text, false);
            vec![Command::LoadDrafts]
        }
        Msg::From { daemon, msg } => fleet::on_msg(state, daemon, *msg),
        Msg::Unsent {
            session_id,
            text,
            error,
        } => queue::unsent(state, &session_id, &text, &error),
        Msg::Unrenamed {
            session_id,
            title,
            error,
        } => modal::unrenamed(state, session_id, &title, &error),
        Msg::Unsaved {
            daemon,
            session_id,
            fields,
            error,
        } => drafts::unsaved(state, daemon, session_id, &fields, &error),
        Msg::Failed(text) => {
            state.flash(text, true);
            review::failed(state);
            // What was shown at once may not have happened: show what the daemon has.
            vec![
                Command::LoadApprovals,
                Command::LoadSessions,
                Command::LoadDrafts,
            ]
        }
    }
}
