//! Notifications: what the daemon tells the user when an agent needs them, on the desktop, a
//! webhook and the open terminals (the `notification` bus event).

use serde::{Deserialize, Serialize};

open_enum!(
    /// What a notification is about.
    NotificationKind {
        /// A tool call waits for approval.
        Approval = "approval",
        /// The agent asks the human a question.
        Question = "question",
        /// A session completed its turn.
        Completed = "completed",
        /// A session failed.
        Failed = "failed",
        /// A session stopped at a usage limit.
        UsageLimit = "usage_limit",
        /// A session's bypass of permissions ends soon.
        BypassExpiring = "bypass_expiring",
    }
);

/// One notification. The webhook's body is this object; the `notification` event carries it
/// too, so that terminals ring once per `id`. It never holds a secret or a file's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    /// Unique per notification.
    pub id: String,
    /// What it is about. A folded notification has the kind of its latest event.
    pub kind: NotificationKind,
    /// The session.
    pub session_id: String,
    /// Its run.
    pub run_id: String,
    /// The session's title.
    pub title: String,
    /// What waits or happened, one line (`Bash: cargo test`, `Completed`, `3 more: 2
    /// approvals, completed`).
    pub text: String,
    /// How to answer, as a command (`hlyr approve 7c1e…`), when something waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The approval that waits, for `approval` and `question`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    /// How many events of the session's burst this one stands for beyond itself (0 for the
    /// first of a burst).
    #[serde(default)]
    pub folded: u64,
}

/// Where the daemon sends notifications (`health.notifications`). The webhook's URL is a
/// secret and is never shown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationChannels {
    /// Desktop notifications over D-Bus are on and a session bus was found.
    pub desktop: bool,
    /// A webhook is configured.
    pub webhook: bool,
}
