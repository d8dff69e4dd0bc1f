//! The launch form's fields and choices: the query, the directory, the model, how tool calls
//! are approved, and the worktree; and the launch it sent, which it waits for: it closes
//! once the session is launched, and shows why when the daemon refused, keeping what was
//! typed.

use tui_textarea::TextArea;

use super::{update, Command, Modal, Msg, State};

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
    /// A launch of what the form holds was sent and not yet answered: the form changes no
    /// more, so that what it shows is what was sent, and a second Ctrl+S sends nothing.
    pub launching: bool,
    /// Why the last launch failed.
    pub error: Option<FormError>,
    /// Keeping it as a draft failed: Esc now closes it without trying again.
    pub unsaved: bool,
}

/// Why a launch failed, in the form's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormError {
    /// The field the daemon refused, when it named one the form has.
    pub field: Option<Field>,
    pub text: String,
}

/// The launch the form sent failed with the daemon's `message`, about its parameter `param`
/// when it named one. The form waiting for it shows why, at that field; with none waiting
/// (Esc hid it), the footer does.
pub(super) fn failed(state: &mut State, message: String, param: Option<&str>) -> Vec<Command> {
    let Some(Modal::Launch(form)) = state.modal.as_mut().filter(|m| waiting(m)) else {
        return update(state, Msg::Failed(message));
    };
    let named = param.and_then(|p| Some((p, Field::of_param(p)?)));
    form.launching = false;
    form.error = Some(FormError {
        field: named.map(|(_, (field, _))| field),
        text: worded(&message, named.map(|(p, (_, words))| (p, words))),
    });
    if let Some((_, (field, _))) = named {
        form.field = field;
    }
    state.flash = None;
    // A draft's launch set it aside from the list at once.
    vec![Command::LoadSessions, Command::LoadDrafts]
}

/// A session was launched: the form waiting for it closes.
pub(super) fn launched(state: &mut State) {
    if waits(state) {
        state.modal = None;
    }
}

/// Whether a form waits for the answer to its launch.
pub(super) fn waits(state: &State) -> bool {
    state.modal.as_ref().is_some_and(waiting)
}

fn waiting(modal: &Modal) -> bool {
    matches!(modal, Modal::Launch(form) if form.launching)
}

/// The daemon's `message`, naming the parameter `(param, words)` by the form's words for it,
/// and starting with a capital.
fn worded(message: &str, param: Option<(&str, &str)>) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '.';
    let text = match param {
        Some((param, words)) => match message.match_indices(param).find(|(at, _)| {
            !message[..*at].ends_with(word) && !message[at + param.len()..].starts_with(word)
        }) {
            Some((at, _)) => format!("{}{words}{}", &message[..at], &message[at + param.len()..]),
            None => message.to_owned(),
        },
        None => message.to_owned(),
    };
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
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

    /// The field that sets the launch's parameter `param` (as the daemon names it), and the
    /// form's words for that parameter.
    fn of_param(param: &str) -> Option<(Field, &'static str)> {
        Some(match param {
            "query" => (Field::Query, "query"),
            "working_dir" => (Field::WorkingDir, "working directory"),
            "model" => (Field::Model, "model"),
            "permission_mode" => (Field::Approvals, "approvals"),
            // The worktree git could not make: most often for its branch's name.
            "worktree" => (Field::Branch, "worktree"),
            _ => return None,
        })
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daemons_name_of_a_parameter_gives_way_to_the_forms() {
        let dir = Some(("working_dir", "working directory"));
        assert_eq!(
            worded("working_dir does not exist: /tmp/x_working_dir", dir),
            "Working directory does not exist: /tmp/x_working_dir"
        );
        let mode = Some(("permission_mode", "approvals"));
        assert_eq!(
            worded("invalid permission_mode: x", mode),
            "Invalid approvals: x"
        );
        let worktree = Some(("worktree", "worktree"));
        assert_eq!(
            worded("worktree_setup failed", worktree),
            "Worktree_setup failed"
        );
        assert_eq!(worded("not connected", None), "Not connected");
    }
}
