//! The key map, written once: each binding's keys and actions drive `update`, and its label
//! and description make the help screen; the key-help line of each screen sums them up.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Where a binding applies: everywhere, on one screen, in the reply box, or in a form (the
/// launch form, the model picker).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    Sessions,
    Conversation,
    Approvals,
    Reply,
    Review,
    Usage,
    Forms,
}

impl Scope {
    /// The help screen's heading.
    pub fn title(self) -> &'static str {
        match self {
            Scope::Global => "Global",
            Scope::Sessions => "Sessions",
            Scope::Conversation => "Conversation",
            Scope::Approvals => "Approvals",
            Scope::Reply => "Reply box",
            Scope::Review => "Review (isolated sessions)",
            Scope::Usage => "Usage",
            Scope::Forms => "Forms",
        }
    }
}

/// A key as the map names it. Shift is part of the character (`G`), not a modifier; `AfterG`
/// is a key pressed after `g` (`gg`, `gs`, `ga`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Plain(KeyCode),
    Ctrl(char),
    Alt(char),
    AfterG(char),
}

impl Key {
    /// `event` as the map names it; `after_g` when a `g` came just before it.
    pub fn of(event: KeyEvent, after_g: bool) -> Key {
        match event.code {
            KeyCode::Char(c) if event.modifiers.contains(KeyModifiers::CONTROL) => Key::Ctrl(c),
            KeyCode::Char(c) if event.modifiers.contains(KeyModifiers::ALT) => Key::Alt(c),
            KeyCode::Char(c) if after_g => Key::AfterG(c),
            code => Key::Plain(code),
        }
    }
}

/// What a key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Help,
    /// Quits when pressed again soon after (the first press says so).
    Quit,
    /// Quits from the sessions screen, else goes back to it.
    QuitOrBack,
    ShowSessions,
    ShowApprovals,
    /// Opens the usage view: cost per day and by model.
    ShowUsage,
    /// Waits for the key after `g`.
    G,
    JumpToApproval,
    NewSession,
    CopyId,
    ToggleBell,
    Down,
    Up,
    First,
    Last,
    PageDown,
    PageUp,
    /// The top, the end of the selected approval's detail.
    DetailTop,
    DetailEnd,
    HalfPageDown,
    HalfPageUp,
    Open,
    ToggleChain,
    Search,
    /// Clears the search, the filter and the archived view.
    Clear,
    Filter,
    ToggleArchived,
    Archive,
    Rename,
    AutoAccept,
    /// Toggles resuming the session when its usage limit resets.
    ResumeOnReset,
    Bypass,
    Parent,
    Interrupt,
    Approve,
    /// Approves, then turns auto-accept of edits on (a plan: leaves plan mode for it).
    ApproveAcceptEdits,
    Deny,
    /// Shift+Tab: the next mode of the cycle default → accept edits → plan.
    CycleMode,
    /// Opens the model picker.
    Model,
    /// Takes the completion chosen in the reply box.
    Complete,
    /// Replies to the session, or answers the question.
    Reply,
    /// Cancels the newest queued message.
    CancelQueued,
    Thinking,
    Expand,
    Back,
    NextField,
    PreviousField,
    /// The launch form's choices (model, approvals).
    PreviousChoice,
    NextChoice,
    Submit,
    /// In a fleet, the next daemon to launch on.
    NextDaemon,
    /// Opens the review screen of an isolated session's changes.
    Review,
    /// Moves the review's keys between the file list and the hunks.
    FocusHunks,
    NextFile,
    PreviousFile,
    /// Merges the reviewed branch (asks how, and to confirm).
    Merge,
    /// Discards the reviewed worktree and branch (asks to confirm).
    Discard,
}

/// One line of the help screen, and the keys it describes.
pub struct Binding {
    pub scope: Scope,
    /// The keys as the help screen shows them.
    pub label: &'static str,
    pub help: &'static str,
    /// Each key and what it does (arrows, paging keys and a few the screen's key-help line
    /// names ride along unlabelled).
    pub keys: &'static [(Key, Action)],
}

const fn bind(
    scope: Scope,
    label: &'static str,
    help: &'static str,
    keys: &'static [(Key, Action)],
) -> Binding {
    Binding {
        scope,
        label,
        help,
        keys,
    }
}

const fn key(c: char) -> Key {
    Key::Plain(KeyCode::Char(c))
}

use Action as A;
use Key::{AfterG, Alt, Ctrl, Plain};
use Scope::{Approvals, Conversation, Forms, Global, Reply, Review, Sessions, Usage};

/// The moves over a list: j k, arrows, Home/End, paging.
const MOVES: &[(Key, Action)] = &[
    (key('j'), A::Down),
    (Plain(KeyCode::Down), A::Down),
    (key('k'), A::Up),
    (Plain(KeyCode::Up), A::Up),
    (AfterG('g'), A::First),
    (Plain(KeyCode::Home), A::First),
    (key('G'), A::Last),
    (Plain(KeyCode::End), A::Last),
    (Plain(KeyCode::PageDown), A::PageDown),
    (Plain(KeyCode::PageUp), A::PageUp),
];

/// Every binding, in the help screen's order. The first that matches in the global scope,
/// then the screen's, is the key's action.
pub const BINDINGS: &[Binding] = &[
    bind(
        Global,
        "?  q",
        "help; back (list: quit)",
        &[(key('?'), A::Help), (key('q'), A::QuitOrBack)],
    ),
    bind(
        Global,
        "^C ^C",
        "quit (pressed twice)",
        &[(Ctrl('c'), A::Quit)],
    ),
    bind(
        Global,
        "1 2 gs ga",
        "sessions; approvals",
        &[
            (key('1'), A::ShowSessions),
            (key('2'), A::ShowApprovals),
            (key('g'), A::G),
            (AfterG('s'), A::ShowSessions),
            (AfterG('a'), A::ShowApprovals),
        ],
    ),
    // Ctrl+J is Enter to a terminal, so CodeLayer's ⌘⇧J becomes Ctrl+G ("go to approval").
    bind(
        Global,
        "Ctrl+G",
        "oldest pending approval",
        &[(Ctrl('g'), A::JumpToApproval)],
    ),
    bind(
        Global,
        "c  Y  B",
        "new; copy id; bell",
        &[
            (key('c'), A::NewSession),
            (key('Y'), A::CopyId),
            (key('B'), A::ToggleBell),
        ],
    ),
    bind(
        Global,
        "U",
        "usage: cost per day",
        &[(key('U'), A::ShowUsage)],
    ),
    bind(Sessions, "j k gg G", "move; first, last", MOVES),
    bind(
        Sessions,
        "Enter",
        "open conversation",
        &[(Plain(KeyCode::Enter), A::Open)],
    ),
    bind(
        Sessions,
        "Space  →",
        "show/hide the chain",
        &[
            (key(' '), A::ToggleChain),
            (Plain(KeyCode::Right), A::ToggleChain),
            (key('l'), A::ToggleChain),
        ],
    ),
    bind(
        Sessions,
        "/  f  Tab",
        "search, filter; views",
        // Esc, unlabelled, clears the search, the filter and the archived or drafts view.
        &[
            (key('/'), A::Search),
            (key('f'), A::Filter),
            (Plain(KeyCode::Tab), A::ToggleArchived),
            (Plain(KeyCode::Esc), A::Clear),
        ],
    ),
    bind(
        Sessions,
        "p  e  R",
        "parent; archive; rename",
        &[
            (key('p'), A::Parent),
            (key('e'), A::Archive),
            (key('R'), A::Rename),
        ],
    ),
    // Claude Code's Shift+Tab; CodeLayer's ⇧M.
    bind(
        Sessions,
        "S-Tab  M",
        "mode (edits…); model",
        &[
            (Plain(KeyCode::BackTab), A::CycleMode),
            (key('M'), A::Model),
        ],
    ),
    bind(
        Sessions,
        "Alt+A/Y/R",
        "auto-accept; bypass; ↻",
        &[
            (Alt('a'), A::AutoAccept),
            (Alt('y'), A::Bypass),
            (Alt('r'), A::ResumeOnReset),
        ],
    ),
    bind(Sessions, "◉ ✎ ⏸ ⚠15m", "warm; edits; plan; bypass", &[]),
    bind(Sessions, "⊘ ↻2h  CTX", "limit, resets in; context", &[]),
    bind(
        Sessions,
        "Ctrl+X  D",
        "interrupt (asks); review",
        &[(Ctrl('x'), A::Interrupt), (key('D'), A::Review)],
    ),
    bind(
        Sessions,
        "X",
        "discard (drafts view)",
        &[(key('X'), A::Discard)],
    ),
    bind(
        Conversation,
        "j k ^D ^U",
        "scroll; half a page",
        &[
            (key('j'), A::Down),
            (Plain(KeyCode::Down), A::Down),
            (key('k'), A::Up),
            (Plain(KeyCode::Up), A::Up),
            (Ctrl('d'), A::HalfPageDown),
            (Ctrl('u'), A::HalfPageUp),
            (Plain(KeyCode::PageDown), A::PageDown),
            (Plain(KeyCode::PageUp), A::PageUp),
        ],
    ),
    bind(
        Conversation,
        "g g  G",
        "top; bottom + follow",
        &[
            (AfterG('g'), A::First),
            (Plain(KeyCode::Home), A::First),
            (key('G'), A::Last),
            (Plain(KeyCode::End), A::Last),
        ],
    ),
    bind(
        Conversation,
        "a  A  d",
        "approve (A: +edits), deny",
        &[
            (key('a'), A::Approve),
            (key('A'), A::ApproveAcceptEdits),
            (key('d'), A::Deny),
        ],
    ),
    bind(
        Conversation,
        "r/Enter  x",
        "reply; cancel last queued",
        &[
            (key('r'), A::Reply),
            (Plain(KeyCode::Enter), A::Reply),
            (key('x'), A::CancelQueued),
        ],
    ),
    bind(
        Conversation,
        "t  i",
        "thinking; long output",
        &[(key('t'), A::Thinking), (key('i'), A::Expand)],
    ),
    bind(
        Conversation,
        "p  e  R",
        "parent; archive; rename",
        &[
            (key('p'), A::Parent),
            (key('e'), A::Archive),
            (key('R'), A::Rename),
        ],
    ),
    bind(
        Conversation,
        "S-Tab  M",
        "mode (edits…); model",
        &[
            (Plain(KeyCode::BackTab), A::CycleMode),
            (key('M'), A::Model),
        ],
    ),
    bind(
        Conversation,
        "Alt+A/Y/R",
        "auto-accept; bypass; ↻",
        &[
            (Alt('a'), A::AutoAccept),
            (Alt('y'), A::Bypass),
            (Alt('r'), A::ResumeOnReset),
        ],
    ),
    bind(
        Conversation,
        "^X D Esc",
        "interrupt; review; back",
        &[
            (Ctrl('x'), A::Interrupt),
            (key('D'), A::Review),
            (Plain(KeyCode::Esc), A::Back),
        ],
    ),
    // Enter and Alt+Enter are the box's own (the map has no Alt+Enter); listed for the help.
    bind(Reply, "⏎  Alt+⏎", "send; new line", &[]),
    bind(
        Reply,
        "/  @  Tab",
        "complete command, file",
        &[
            (Plain(KeyCode::Tab), A::Complete),
            (Plain(KeyCode::Up), A::Up),
            (Plain(KeyCode::Down), A::Down),
        ],
    ),
    bind(
        Reply,
        "S-Tab  Esc",
        "mode; close, keep text",
        &[
            (Plain(KeyCode::BackTab), A::CycleMode),
            (Plain(KeyCode::Esc), A::Back),
        ],
    ),
    bind(
        Approvals,
        "j k gg G",
        "move; first, last",
        &[
            (key('j'), A::Down),
            (Plain(KeyCode::Down), A::Down),
            (key('k'), A::Up),
            (Plain(KeyCode::Up), A::Up),
            (AfterG('g'), A::First),
            (key('G'), A::Last),
        ],
    ),
    bind(
        Approvals,
        "PgDn PgUp",
        "the detail; ^D ^U: half",
        &[
            (Ctrl('d'), A::HalfPageDown),
            (Ctrl('u'), A::HalfPageUp),
            (Plain(KeyCode::PageDown), A::PageDown),
            (Plain(KeyCode::PageUp), A::PageUp),
        ],
    ),
    bind(
        Approvals,
        "Home  End",
        "the detail's top, end",
        &[
            (Plain(KeyCode::Home), A::DetailTop),
            (Plain(KeyCode::End), A::DetailEnd),
        ],
    ),
    bind(
        Approvals,
        "a  y  A",
        "approve (A: +edits)",
        &[
            (key('a'), A::Approve),
            (key('y'), A::Approve),
            (key('A'), A::ApproveAcceptEdits),
        ],
    ),
    bind(
        Approvals,
        "d  n",
        "deny (comment optional)",
        &[(key('d'), A::Deny), (key('n'), A::Deny)],
    ),
    bind(
        Approvals,
        "r  Enter",
        "answer; open session",
        // Unlabelled, as on the key-help line: Esc back; Ctrl+X interrupts the session.
        &[
            (key('r'), A::Reply),
            (Plain(KeyCode::Enter), A::Open),
            (Plain(KeyCode::Esc), A::Back),
            (Ctrl('x'), A::Interrupt),
        ],
    ),
    bind(
        Review,
        "j k ] [ ⏎",
        "files; Enter/Tab: hunks",
        &[
            (key('j'), A::Down),
            (Plain(KeyCode::Down), A::Down),
            (key('k'), A::Up),
            (Plain(KeyCode::Up), A::Up),
            (AfterG('g'), A::First),
            (Plain(KeyCode::Home), A::First),
            (key('G'), A::Last),
            (Plain(KeyCode::End), A::Last),
            (Plain(KeyCode::PageDown), A::PageDown),
            (Plain(KeyCode::PageUp), A::PageUp),
            (Ctrl('d'), A::HalfPageDown),
            (Ctrl('u'), A::HalfPageUp),
            (key(']'), A::NextFile),
            (key('['), A::PreviousFile),
            (Plain(KeyCode::Enter), A::FocusHunks),
            (Plain(KeyCode::Tab), A::FocusHunks),
        ],
    ),
    bind(
        Review,
        "m  X  Esc",
        "merge; discard; back",
        &[
            (key('m'), A::Merge),
            (key('X'), A::Discard),
            (Plain(KeyCode::Esc), A::Back),
        ],
    ),
    bind(
        Usage,
        "Esc  Ctrl+O",
        "back; next daemon, total",
        &[(Plain(KeyCode::Esc), A::Back), (Ctrl('o'), A::NextDaemon)],
    ),
    bind(
        Forms,
        "Tab  S-Tab",
        "next, previous field",
        &[
            (Plain(KeyCode::Tab), A::NextField),
            (Plain(KeyCode::BackTab), A::PreviousField),
        ],
    ),
    bind(
        Forms,
        "← →  ↑ ↓",
        "choices; recent dirs",
        &[
            (Plain(KeyCode::Left), A::PreviousChoice),
            (Plain(KeyCode::Right), A::NextChoice),
            (Plain(KeyCode::Up), A::Up),
            (Plain(KeyCode::Down), A::Down),
        ],
    ),
    // Enter and Alt+Enter are the forms' own (the map has no Alt+Enter); listed for the help.
    bind(Forms, "⏎  Alt+⏎", "submit; new line", &[]),
    bind(
        Forms,
        "Ctrl+S  Esc",
        "submit; cancel",
        &[(Ctrl('s'), A::Submit), (Plain(KeyCode::Esc), A::Back)],
    ),
    bind(
        Forms,
        "Ctrl+O",
        "launch on next daemon",
        &[(Ctrl('o'), A::NextDaemon)],
    ),
];

/// What `key` does in `scopes`: the first binding that has it, in the order of [`BINDINGS`].
pub fn action(scopes: &[Scope], key: Key) -> Option<Action> {
    BINDINGS
        .iter()
        .filter(|b| scopes.contains(&b.scope))
        .flat_map(|b| b.keys)
        .find(|(k, _)| *k == key)
        .map(|(_, action)| *action)
}

mod hints;
#[cfg(test)]
mod tests;

pub use hints::{fit_hints, hints};
