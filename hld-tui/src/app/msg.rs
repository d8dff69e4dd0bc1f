//! What `update` takes ([`Msg`]: a key, a daemon event, a command's result, a tick) and what
//! it gives the runtime to run ([`Command`]).

use chrono::{DateTime, Utc};
use crossterm::event::KeyEvent;
use hld_client::protocol::{
    Approval, ConversationEvent, DraftFields, GetSessionDiffResult, GetUsageResult,
    LaunchSessionParams, MergeSessionResult, MergeStrategy, QueuedMessage, RateLimitWindow,
    SendDecisionParams, SessionInfo, SlashCommand, TimedEvent, UpdateSessionSettingsParams,
};

use super::{DiffStat, UsageTable};

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
    /// `getSessionLeaves` of the drafts.
    Drafts(Vec<SessionInfo>),
    /// `fetchApprovals`.
    Approvals(Vec<Approval>),
    /// `getConversation` of an opened session (its chain), and the approvals its calls decided.
    Conversation {
        session_id: String,
        events: Vec<ConversationEvent>,
        approvals: Vec<Approval>,
    },
    /// `listQueuedMessages` of an opened session.
    Queue {
        session_id: String,
        messages: Vec<QueuedMessage>,
    },
    /// `listSlashCommands` of the open conversation's session.
    Commands {
        session_id: String,
        commands: Vec<SlashCommand>,
    },
    /// `suggestFiles` of a session for what followed an `@`.
    Files {
        session_id: String,
        query: String,
        files: Vec<String>,
    },
    /// `getSessionDiff`'s totals for an isolated session's row; `None` when git could not
    /// tell (the row then shows the branch alone, and the load is not retried at once).
    DiffStat {
        session_id: String,
        stat: Option<DiffStat>,
    },
    /// A page of `getSessionDiff`, from file `offset`, for the review screen.
    Diff {
        session_id: String,
        offset: u64,
        diff: GetSessionDiffResult,
    },
    /// `getSessionDiff` refused (a worktree removed by hand): the daemon's reason, which the
    /// review screen shows.
    DiffRefused { session_id: String, reason: String },
    /// What `mergeSession` answered.
    Merged {
        session_id: String,
        strategy: MergeStrategy,
        result: MergeSessionResult,
    },
    /// The worktree and branch were discarded.
    Discarded(String),
    /// `discardSession` refused (work never merged, a turn running): the daemon's reason.
    DiscardRefused { session_id: String, reason: String },
    /// `getRateLimits`, or nothing when it could not be read (the windows are an aside).
    RateLimits(Vec<RateLimitWindow>),
    /// A `getUsage` of the usage view; the daemon's reason when it refused.
    Usage {
        table: UsageTable,
        result: Result<GetUsageResult, String>,
    },
    /// A session was launched: open it (which also clears "launching…", and closes the form
    /// that launched it).
    Opened(String),
    /// A launch failed: the daemon's message, and the parameter it refused when it named one.
    LaunchFailed {
        message: String,
        param: Option<String>,
    },
    /// A command finished; `text` says what happened.
    Done(String),
    /// A draft was kept or discarded; `text` says which. The drafts are loaded again.
    Drafted(String),
    /// A command failed.
    Failed(String),
    /// `sendMessage` of `text` failed: it goes back into the reply box.
    Unsent {
        session_id: String,
        text: String,
        error: String,
    },
    /// `updateSessionTitle` refused `title`: it goes back into the rename box.
    Unrenamed {
        session_id: String,
        title: String,
        error: String,
    },
    /// Keeping a launch form as a draft failed (`session_id`: the draft it edited, on daemon
    /// `daemon`): the form opens again with what it held, and says why.
    Unsaved {
        daemon: usize,
        session_id: Option<String>,
        fields: Box<DraftFields>,
        error: String,
    },
    /// What daemon `daemon` of the fleet reported or answered (the runtime tags all of it).
    From { daemon: usize, msg: Box<Msg> },
}

/// What the runtime does for `update`.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    LoadSessions,
    LoadDrafts,
    /// Keeps a launch form as a draft: `createDraft`, or `updateDraft` of `session_id`.
    SaveDraft {
        session_id: Option<String>,
        fields: Box<DraftFields>,
    },
    /// Launches a draft: its fields updated then `launchDraft`; or, when `params` hold what a
    /// draft cannot (plan mode, no approvals, a worktree), `launchSession` and the draft set
    /// aside.
    LaunchDraft {
        session_id: String,
        fields: Box<DraftFields>,
        params: Box<LaunchSessionParams>,
    },
    DiscardDraft(String),
    LoadApprovals,
    LoadConversation(String),
    LoadQueue(String),
    /// The session's slash commands, for `/` in the reply box.
    LoadCommands(String),
    /// Files for an `@` mention in the reply box.
    SuggestFiles {
        session_id: String,
        query: String,
    },
    Launch(Box<LaunchSessionParams>),
    /// The totals of an isolated session's diff, for its row.
    LoadDiffStat(String),
    /// A page of an isolated session's diff, for the review screen.
    LoadDiff {
        session_id: String,
        offset: u64,
    },
    Merge {
        session_id: String,
        strategy: MergeStrategy,
    },
    Discard {
        session_id: String,
        force: bool,
    },
    /// A message into the session (`sendMessage`, queued while the agent works).
    Send {
        session_id: String,
        text: String,
    },
    CancelMessage(String),
    Interrupt(String),
    Decide(SendDecisionParams),
    /// Approves, then turns the session's auto-accept of edits on (in this order: approving a
    /// plan leaves plan mode).
    ApproveAcceptingEdits {
        decision: SendDecisionParams,
        session_id: String,
    },
    Archive {
        session_id: String,
        archived: bool,
    },
    Rename {
        session_id: String,
        title: String,
    },
    Settings(UpdateSessionSettingsParams),
    /// The usage-limit windows, for the title bar.
    LoadRateLimits,
    /// A table of the usage view (`getUsage`).
    LoadUsage {
        table: UsageTable,
        since: Option<String>,
    },
    /// Put text on the clipboard (OSC 52).
    Copy(String),
    /// Tell the terminal the daemon notified: the bell, and a notification escape (OSC 9 or
    /// 777) that the terminal shows where it knows it.
    Notify {
        title: String,
        text: String,
    },
    Quit,
    /// `command`, to the fleet's daemon `daemon` (a launch on the one the form chose).
    On {
        daemon: usize,
        command: Box<Command>,
    },
}
