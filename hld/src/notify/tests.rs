//! The notifier over a real bus and store: events published by hand in, `notification`
//! events out (the usage-limit event is the `limits` work's; here it is published by hand).

use std::time::Duration;

use hld_client::protocol::{
    Event, EventType, NotificationKind, RateLimitKind, SessionStatus, UsageLimit,
};
use tokio_util::sync::CancellationToken;

use super::{Notifier, NotifyConfig};
use crate::bus::{Bus, Filter, Received, Subscriber};
use crate::store::Store;

/// A running notifier with `off` kinds turned off; returns the bus, a subscriber to its
/// notifications, and what keeps it running.
async fn running(
    off: Vec<NotificationKind>,
) -> (Bus, Subscriber, CancellationToken, tempfile::TempDir) {
    let (dir, store) = Store::open_temp();
    let config = NotifyConfig {
        desktop: Some(false),
        webhook: None,
        off,
        quiet: Duration::from_secs(10),
    };
    let notifier = Notifier::connect(&config).await.unwrap();
    let bus = Bus::new(64);
    let events = Notifier::subscribe(&bus);
    let out = bus.subscribe(Filter {
        types: vec![EventType::Notification],
        ..Filter::default()
    });
    let shutdown = CancellationToken::new();
    tokio::spawn(notifier.run(events, bus.clone(), store, shutdown.clone()));
    (bus, out, shutdown, dir)
}

fn ended(session_id: &str, new_status: SessionStatus, limit: Option<UsageLimit>) -> Event {
    Event::SessionStatusChanged {
        session_id: session_id.into(),
        run_id: format!("run-{session_id}"),
        old_status: SessionStatus::Running,
        new_status,
        parent_session_id: None,
        error: Some("You've hit your limit".into()),
        usage_limit: limit,
        turn: None,
    }
}

fn five_hours() -> UsageLimit {
    let resets = chrono::Utc::now() + chrono::Duration::hours(2);
    UsageLimit {
        kind: RateLimitKind::FiveHour,
        resets_at: Some(resets.to_rfc3339()),
    }
}

async fn next(out: &mut Subscriber) -> hld_client::protocol::Notification {
    match tokio::time::timeout(Duration::from_secs(10), out.next()).await {
        Ok(Some(Received::Event(published))) => match &published.event.event {
            Event::Notification(n) => n.clone(),
            other => panic!("not a notification: {other:?}"),
        },
        other => panic!("no notification: {other:?}"),
    }
}

#[tokio::test]
async fn a_session_stopped_by_a_usage_limit_notifies_as_a_limit() {
    let (bus, mut out, shutdown, _dir) = running(Vec::new()).await;
    bus.publish(ended("s1", SessionStatus::Failed, Some(five_hours())));
    let n = next(&mut out).await;
    assert_eq!(n.kind, NotificationKind::UsageLimit);
    assert_eq!(n.session_id, "s1");
    assert!(
        n.text.starts_with("Usage limit (5h) · resets in 1h 59m"),
        "{n:?}"
    );
    assert_eq!(n.answer.as_deref(), Some("hlyr send s1 \"…\""));
    shutdown.cancel();
}

#[tokio::test]
async fn a_kind_turned_off_is_not_published() {
    let (bus, mut out, shutdown, _dir) = running(vec![NotificationKind::UsageLimit]).await;
    bus.publish(ended("s1", SessionStatus::Failed, Some(five_hours())));
    bus.publish(ended("s2", SessionStatus::Completed, None));
    let n = next(&mut out).await;
    assert_eq!(
        (n.kind, n.session_id.as_str()),
        (NotificationKind::Completed, "s2")
    );
    shutdown.cancel();
}
