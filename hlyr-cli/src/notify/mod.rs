//! `--notify` (`launch`, `continue`, `watch`): telling the user when an agent needs them.
//!
//! A daemon with a notifier (it reports `health.notifications`) decides when: each of its
//! `notification` events rings the terminal once per id (the bell and an OSC notification,
//! see [`terminal`]), and shows on the desktop through hlyr's own notifier ([`desktop`]) only
//! when the daemon does not show desktop notifications itself. An older daemon decides
//! nothing: hlyr then rings on its own triggers, an approval that waits and the end of a
//! followed session.

mod desktop;
mod terminal;

use std::collections::HashSet;

use hld_client::protocol::{Approval, Notification, NotificationChannels, NotificationKind};
use hld_client::view::alert::{one_line, waiting_line, Alert};
use hld_client::Client;

use crate::error::CliError;

/// Rings and notifies, when `--notify` was given.
#[derive(Debug)]
pub struct Notify {
    enabled: bool,
    /// The daemon's channels; `None` when it has no notifier (an older daemon).
    channels: Option<NotificationChannels>,
    /// hlyr's desktop notifier, used when the daemon shows none.
    desktop: Option<desktop::Notifier>,
    /// How the terminal is told.
    terminal: Alert,
    /// The ids of the daemon's notifications rung already.
    rung: HashSet<String>,
    /// The approvals rung for: by a notification of one, or found waiting (see
    /// [`Notify::waiting`]).
    approvals: HashSet<String>,
}

impl Notify {
    /// No notifications (no `--notify`).
    pub fn off() -> Notify {
        Notify::with(false, None)
    }

    /// Notifications when `enabled`, as the daemon behind `client` allows.
    pub async fn new(client: &Client, enabled: bool) -> Result<Notify, CliError> {
        if !enabled {
            return Ok(Notify::off());
        }
        let channels = client.health().await?.notifications;
        Ok(Notify::with(true, channels))
    }

    fn with(enabled: bool, channels: Option<NotificationChannels>) -> Notify {
        let daemon_desktop = channels.as_ref().is_some_and(|c| c.desktop);
        Notify {
            enabled,
            desktop: (enabled && !daemon_desktop).then(desktop::find).flatten(),
            channels,
            terminal: Alert::from_env(),
            rung: HashSet::new(),
            approvals: HashSet::new(),
        }
    }

    /// Whether the daemon decides when to notify (it has a notifier).
    pub fn by_daemon(&self) -> bool {
        self.channels.is_some()
    }

    /// Takes in a daemon's notification: rings for it, once per id, unless it is about one
    /// approval only, rung for already. Returns whether it rang.
    pub fn notification(&mut self, notification: &Notification) -> bool {
        if !self.enabled || !self.rung.insert(notification.id.clone()) {
            return false;
        }
        let approval = notification.approval_id.clone();
        if approval.is_some_and(|id| !self.approvals.insert(id)) && notification.folded == 0 {
            return false;
        }
        self.alert(&notification.title, &notification.text);
        true
    }

    /// Whether approvals found waiting are rung for ([`Notify::waiting`]): a daemon's
    /// notifier tells them, and with `--notify` one told before hlyr subscribed was missed.
    pub fn rings_waiting(&self) -> bool {
        self.enabled && self.by_daemon()
    }

    /// An approval found waiting just after subscribing: it may have been asked, and its
    /// notification sent, before. Rings for it once, in the daemon's words, unless a
    /// notification of it rang; one that comes later does not ring again. (Without a notifier, hlyr's own trigger rings for
    /// each approval as it is shown.)
    pub fn waiting(&mut self, title: &str, approval: &Approval) {
        if self.rings_waiting() && self.approvals.insert(approval.id.clone()) {
            self.alert(title, &waiting_line(approval).1);
        }
    }

    /// One of hlyr's own triggers: rings only when the daemon has no notifier.
    pub fn own(&self, title: &str, text: &str) {
        if !self.by_daemon() {
            self.alert(title, text);
        }
    }

    /// Rings the terminal and, unless the daemon shows desktop notifications, shows one.
    pub fn alert(&self, title: &str, text: &str) {
        if !self.enabled {
            return;
        }
        let title = one_line(title);
        let text = one_line(text);
        terminal::ring(self.terminal, &title, &text);
        if let Some(desktop) = &self.desktop {
            desktop.show(&format!("{title}: {text}"));
        }
    }
}

/// Whether `notification` tells the end of its session's turn.
pub fn is_end(notification: &Notification) -> bool {
    matches!(
        notification.kind,
        NotificationKind::Completed | NotificationKind::Failed | NotificationKind::UsageLimit
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notification(id: &str) -> Notification {
        serde_json::from_value(serde_json::json!({
            "id": id, "kind": "approval", "session_id": "s", "run_id": "r",
            "title": "t", "text": "Bash: ls",
        }))
        .unwrap()
    }

    #[test]
    fn each_notification_rings_once_and_only_when_asked() {
        let mut notify = Notify::with(true, Some(NotificationChannels::default()));
        assert!(notify.by_daemon());
        assert!(notify.notification(&notification("a")));
        assert!(!notify.notification(&notification("a")));
        assert!(notify.notification(&notification("b")));
        let mut off = Notify::off();
        assert!(!off.notification(&notification("a")));
        assert!(!Notify::with(true, None).by_daemon());
    }

    #[test]
    fn an_approval_found_waiting_rings_once_with_its_notification() {
        let approval: Approval = serde_json::from_value(serde_json::json!({
            "id": "local-1", "call_id": "local-1", "run_id": "r", "session_id": "s",
            "type": "function_call", "status": "pending", "function_name": "Bash",
            "requested_at": "2025-01-01T00:00:00Z",
        }))
        .unwrap();
        let about = |id: &str, folded: u64| {
            let mut n = notification(id);
            n.approval_id = Some("local-1".into());
            n.folded = folded;
            n
        };
        let mut notify = Notify::with(true, Some(NotificationChannels::default()));
        // Found waiting first: its notification, coming after, does not ring again; one that
        // folds more events does.
        notify.waiting("t", &approval);
        assert!(!notify.notification(&about("a", 0)));
        assert!(notify.notification(&about("b", 1)));
        // Its notification first: it is known rung for, and found waiting after, not again.
        let mut notify = Notify::with(true, Some(NotificationChannels::default()));
        assert!(notify.notification(&about("a", 0)));
        assert!(notify.approvals.contains("local-1"));
        // Without a notifier, hlyr's own trigger rings for it as it is shown.
        assert!(!Notify::with(true, None).rings_waiting());
        assert!(!Notify::off().rings_waiting());
    }

    #[test]
    fn the_desktop_is_left_to_a_daemon_that_shows_it() {
        let channels = NotificationChannels {
            desktop: true,
            webhook: false,
        };
        assert!(Notify::with(true, Some(channels)).desktop.is_none());
    }

    #[test]
    fn daemon_text_becomes_one_clean_line() {
        assert_eq!(
            one_line("Fix\x1b]0;x\x07 the\n tests"),
            "Fix�]0;x� the tests"
        );
    }
}
