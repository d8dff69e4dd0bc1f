//! The notifier: one task fed by the bus decides what needs the user (an approval or question
//! that waits, a session completed, failed or stopped at a usage limit, a bypass about to
//! end), folds each session's bursts, and sends each notification to the bus (`notification`,
//! so terminals ring once per id), the desktop and the webhook. Sending never holds the task.

pub mod config;
mod decide;
mod desktop;
mod webhook;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use hld_client::protocol::{ApprovalStatus, Event, EventType, Notification, NotificationChannels};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::bus::{Bus, Filter, Received, Subscriber};
use crate::store::{read, Store};
pub use config::{NotifyArgs, NotifyConfig};
use decide::{Folder, Item};

/// How long before a bypass of permissions ends its notification goes out.
const BYPASS_WARNING: Duration = Duration::from_secs(60);

/// Where notifications go, connected: built at start-up, then run as the notifier task.
#[derive(Debug)]
pub struct Notifier {
    config: NotifyConfig,
    desktop: Option<desktop::Desktop>,
    webhook: Option<Arc<webhook::Poster>>,
}

impl Notifier {
    /// Connects the desktop (within a bounded wait; off when unreachable) and prepares the
    /// webhook's client.
    pub async fn connect(config: &NotifyConfig) -> Result<Notifier, String> {
        let webhook = match &config.webhook {
            Some(hook) => Some(Arc::new(webhook::Poster::new(hook.clone())?)),
            None => None,
        };
        Ok(Notifier {
            desktop: desktop::Desktop::connect(config.desktop).await,
            webhook,
            config: config.clone(),
        })
    }

    /// Where notifications go, as `health` reports it.
    pub fn channels(&self) -> NotificationChannels {
        NotificationChannels {
            desktop: self.desktop.is_some(),
            webhook: self.webhook.is_some(),
        }
    }

    /// The subscription the notifier reads: taken before the daemon serves, so it sees
    /// everything from then on.
    pub fn subscribe(bus: &Bus) -> Subscriber {
        bus.subscribe_internal(Filter {
            types: vec![
                EventType::NewApproval,
                EventType::ApprovalResolved,
                EventType::SessionStatusChanged,
                EventType::SessionSettingsChanged,
            ],
            ..Filter::default()
        })
    }

    /// Runs until `shutdown` or the bus closes.
    pub async fn run(
        self,
        mut events: Subscriber,
        bus: Bus,
        store: Store,
        shutdown: CancellationToken,
    ) {
        let mut task = Task {
            folder: Folder::new(self.config.quiet),
            bypasses: HashMap::new(),
            notifier: self,
            bus,
            store,
        };
        // Bypasses set before a restart are warned of too.
        match task.store.read(read::bypass_expiries).await {
            Ok(bypasses) => {
                for (session_id, run_id, expires_at) in bypasses {
                    task.schedule_bypass(&session_id, &run_id, Some(&expires_at));
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot read the bypasses to warn of"),
        }
        loop {
            let wake = task.next_wake();
            tokio::select! {
                () = shutdown.cancelled() => return,
                received = events.next() => match received {
                    Some(Received::Event(published)) => task.on_event(&published.event.event).await,
                    Some(Received::Lagged(missed)) => {
                        tracing::warn!(missed, "the notifier fell behind: some events were not notified");
                    }
                    None => return,
                },
                () = sleep_until(wake) => task.on_time(Instant::now()).await,
            }
        }
    }
}

/// Sleeps until `at`, or forever when there is nothing to wait for.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// A bypass with an expiry: when to warn (`None` once warned), and what to say.
#[derive(Debug)]
struct Bypass {
    warn_at: Option<Instant>,
    run_id: String,
    expires_at: String,
}

/// The notifier's running state.
struct Task {
    notifier: Notifier,
    folder: Folder,
    /// Sessions whose bypass of permissions is on with an expiry.
    bypasses: HashMap<String, Bypass>,
    bus: Bus,
    store: Store,
}

impl Task {
    fn next_wake(&self) -> Option<Instant> {
        let bypass = self.bypasses.values().filter_map(|b| b.warn_at).min();
        [self.folder.next_end(), bypass].into_iter().flatten().min()
    }

    async fn on_event(&mut self, event: &Event) {
        match event {
            Event::ApprovalResolved { approval_id, .. } => self.folder.answered(approval_id),
            Event::SessionSettingsChanged {
                session_id,
                run_id,
                control,
                ..
            } => {
                let expiry = control
                    .dangerously_skip_permissions_expires_at
                    .as_deref()
                    .filter(|_| control.dangerously_skip_permissions);
                self.schedule_bypass(session_id, run_id, expiry);
            }
            _ => {
                if let Some(item) = decide::item(event) {
                    self.offer(item).await;
                }
            }
        }
    }

    /// Warns [`BYPASS_WARNING`] before `expires_at` (at once if that is sooner), once per
    /// expiry: other settings changes repeat it. `None` (or a time past) cancels the warning.
    fn schedule_bypass(&mut self, session_id: &str, run_id: &str, expires_at: Option<&str>) {
        let known = self.bypasses.get(session_id).map(|b| b.expires_at.as_str());
        if known.is_some() && known == expires_at {
            return;
        }
        let left = expires_at.and_then(|at| {
            let at = chrono::DateTime::parse_from_rfc3339(at).ok()?;
            (at.with_timezone(&chrono::Utc) - chrono::Utc::now())
                .to_std()
                .ok()
        });
        match (expires_at, left) {
            (Some(expires_at), Some(left)) if !left.is_zero() => {
                let bypass = Bypass {
                    warn_at: Some(Instant::now() + left.saturating_sub(BYPASS_WARNING)),
                    run_id: run_id.to_owned(),
                    expires_at: expires_at.to_owned(),
                };
                self.bypasses.insert(session_id.to_owned(), bypass);
            }
            _ => {
                self.bypasses.remove(session_id);
            }
        }
    }

    /// Sends the bypass warnings and the folds that are due.
    async fn on_time(&mut self, now: Instant) {
        let due: Vec<Item> = self
            .bypasses
            .iter()
            .filter(|(_, b)| b.warn_at.is_some_and(|at| at <= now))
            .map(|(session, b)| decide::bypass_item(session, &b.run_id, &b.expires_at))
            .collect();
        for item in due {
            if let Some(b) = self.bypasses.get_mut(&item.session_id) {
                b.warn_at = None;
            }
            self.offer(item).await;
        }
        for fold in self.folder.due(now) {
            let mut notification = self.notification(fold.latest).await;
            notification.text = fold.text;
            notification.folded = fold.count;
            self.send(notification);
        }
    }

    /// Takes an item of a kind that is on and, if an approval, still waits: sent at once or
    /// held for its session's quiet period.
    async fn offer(&mut self, item: Item) {
        if !self.notifier.config.wants(&item.kind) {
            return;
        }
        if let Some(id) = item.approval_id.clone() {
            // A rule may have decided it, or a person answered, since it was published.
            let status = self.store.read(move |c| read::approval(c, &id)).await;
            match status {
                Ok(Some(a)) if a.status == ApprovalStatus::Pending => {}
                Ok(_) => return,
                Err(e) => tracing::warn!(error = %e, "cannot read an approval to notify"),
            }
        }
        if let Some(item) = self.folder.offer(item, Instant::now()) {
            let notification = self.notification(item).await;
            self.send(notification);
        }
    }

    /// The notification of `item`, titled with its session's title.
    async fn notification(&self, item: Item) -> Notification {
        let id = item.session_id.clone();
        let title = match self.store.read(move |c| read::session(c, &id)).await {
            Ok(Some(session)) => session.title(),
            Ok(None) => String::new(),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read a session to notify");
                String::new()
            }
        };
        Notification {
            id: uuid::Uuid::new_v4().to_string(),
            kind: item.kind,
            session_id: item.session_id,
            run_id: item.run_id,
            title,
            text: item.text,
            answer: item.answer,
            approval_id: item.approval_id,
            folded: 0,
        }
    }

    /// Publishes `notification` and hands it to the desktop and the webhook, each in its own
    /// task so that a slow one holds no other session's.
    fn send(&self, notification: Notification) {
        tracing::info!(
            id = %notification.id,
            kind = %notification.kind.as_str(),
            session = %notification.session_id,
            folded = notification.folded,
            "notification"
        );
        if let Some(desktop) = &self.notifier.desktop {
            let (desktop, n) = (desktop.clone(), notification.clone());
            tokio::spawn(async move { desktop.show(&n).await });
        }
        if let Some(webhook) = &self.notifier.webhook {
            let (webhook, n) = (Arc::clone(webhook), notification.clone());
            tokio::spawn(async move { webhook.post(&n).await });
        }
        self.bus.publish(Event::Notification(notification));
    }
}

#[cfg(test)]
mod tests;
