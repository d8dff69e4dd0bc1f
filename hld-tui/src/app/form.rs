//! The launch form's fields and choices: the query, the directory, the model, how tool calls
//! are approved, and the worktree.

use tui_textarea::TextArea;

/// The launch form.
#[derive(Debug)]
pub struct LaunchForm {
    pub query: TextArea<'static>,
    pub working_dir: TextArea<'static>,
    pub model: usize,
    pub approvals: ApprovalMode,
    /// Runs the session in a git worktree of its own.
    pub worktree: bool,
    /// The worktree's branch; empty: the daemon names it.
    pub branch: TextArea<'static>,
    pub field: Field,
    /// Which recent directory ↑/↓ picked last.
    pub recent: Option<usize>,
    /// The draft the form edits, if any: launching launches it.
    pub draft: Option<String>,
    /// In a fleet, the daemon the session is launched on (a draft's: the one that keeps it).
    pub daemon: usize,
}

/// How a launched session's tool calls are approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Each asks here (the daemon's approvals server).
    Ask,
    /// Edits are approved at once; the rest asks.
    AutoAcceptEdits,
    /// Plan mode: the plan asks first, then each call as in `Ask`.
    Plan,
    /// Nobody is asked (no approvals server): Claude Code refuses what needs permission.
    Off,
}

impl ApprovalMode {
    const ORDER: [ApprovalMode; 4] = [
        ApprovalMode::Ask,
        ApprovalMode::AutoAcceptEdits,
        ApprovalMode::Plan,
        ApprovalMode::Off,
    ];

    /// How the form shows it.
    pub fn label(self) -> &'static str {
        match self {
            ApprovalMode::Ask => "ask here (hld approvals)",
            ApprovalMode::AutoAcceptEdits => "auto-accept edits, ask the rest",
            ApprovalMode::Plan => "plan mode: approve a plan first, then ask",
            ApprovalMode::Off => "none: a call that needs permission is refused",
        }
    }

    pub(super) fn step(self, forward: bool) -> ApprovalMode {
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
    Worktree,
    Branch,
}

impl Field {
    const ORDER: [Field; 6] = [
        Field::Query,
        Field::WorkingDir,
        Field::Model,
        Field::Approvals,
        Field::Worktree,
        Field::Branch,
    ];

    pub(super) fn step(self, forward: bool) -> Field {
        let i = Field::ORDER.iter().position(|f| *f == self).unwrap_or(0);
        let n = Field::ORDER.len();
        Field::ORDER[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }]
    }
}
