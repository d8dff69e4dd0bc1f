//! Tests of usage limits in the store, against a real SQLite file.

use hld_client::protocol::{
    MessageMode, RateLimitKind, RateLimitStatus, RateLimitWindow, SessionStatus, UsageLimit,
};

use super::{limit_resets, rate_limits};
use crate::model::{Happening, Modes, SessionOptions};
use crate::store::messages::Outgoing;
use crate::store::{read, Change, Ingest, NewSession, SessionUpdate, Store, TurnEnd};

fn window(status: RateLimitStatus, utilization: Option<f64>) -> RateLimitWindow {
    RateLimitWindow {
        kind: RateLimitKind::FiveHour,
        status,
        utilization,
        resets_at: Some("2026-11-29T12:00:00Z".into()),
        updated_at: crate::time::now(),
    }
}

async fn running(store: &Store, id: &str, resume_on_reset: bool) {
    let new = NewSession {
        id: id.into(),
        run_id: format!("run-{id}"),
        parent_session_id: None,
        query: "q".into(),
        summary: "q".into(),
        options: SessionOptions::default(),
        created_at: crate::time::now(),
        title: None,
        modes: Modes {
            resume_on_reset,
            ..Modes::default()
        },
    };
    let id = id.to_owned();
    store
        .write(move |w, out| {
            w.create_session(&new)?;
            let update = SessionUpdate {
                claude_session_id: Some(format!("claude-{id}")),
                ..SessionUpdate::default()
            };
            w.advance(&id, Happening::Started, &update, out)
        })
        .await
        .unwrap();
}

/// Stores `batch` for session `id`; returns the windows it published.
async fn ingest(store: &Store, id: &str, batch: Ingest) -> Vec<RateLimitWindow> {
    let id = id.to_owned();
    let changes = store
        .write(move |w, out| {
            w.ingest(&id, batch, out)?;
            Ok(std::mem::take(out))
        })
        .await
        .unwrap();
    changes
        .into_iter()
        .filter_map(|c| match c {
            Change::RateLimit { window, .. } => Some(*window),
            _ => None,
        })
        .collect()
}

fn reported(windows: Vec<RateLimitWindow>) -> Ingest {
    Ingest {
        rate_limits: windows,
        ..Ingest::default()
    }
}

/// A failed turn stopped by a five-hour limit without a reset time of its own.
fn refused() -> Ingest {
    Ingest {
        turn_end: Some(TurnEnd {
            error: Some("You've hit your session limit".into()),
            live_until: Some("2099-01-01T00:00:00.000Z".into()),
            usage_limit: Some(UsageLimit {
                kind: RateLimitKind::FiveHour,
                resets_at: None,
            }),
        }),
        ..Ingest::default()
    }
}

#[tokio::test]
async fn a_window_is_a_change_only_when_it_differs_from_the_stored_one() {
    let (_dir, store) = Store::open_temp();
    running(&store, "s1", false).await;
    let warning = window(RateLimitStatus::AllowedWarning, Some(0.91));
    let first = ingest(&store, "s1", reported(vec![warning.clone()])).await;
    assert_eq!(first.len(), 1);
    assert_eq!(first[0], warning);
    let again = RateLimitWindow {
        updated_at: crate::time::now(),
        ..warning.clone()
    };
    assert!(ingest(&store, "s1", reported(vec![again])).await.is_empty());
    let fuller = window(RateLimitStatus::AllowedWarning, Some(0.95));
    let second = ingest(&store, "s1", reported(vec![fuller.clone()])).await;
    assert_eq!(second.len(), 1);
    assert_eq!(second[0], fuller);
    assert_eq!(store.read(rate_limits).await.unwrap(), [fuller]);
}

#[tokio::test]
async fn a_limit_takes_the_windows_reset_and_a_new_turn_clears_it() {
    let (_dir, store) = Store::open_temp();
    running(&store, "on", true).await;
    running(&store, "off", false).await;
    let rejected = window(RateLimitStatus::Rejected, None);
    ingest(&store, "on", reported(vec![rejected])).await;
    ingest(&store, "on", refused()).await;
    ingest(&store, "off", refused()).await;
    let on = store
        .read(|c| read::session(c, "on"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(on.status, SessionStatus::Failed);
    let limit = UsageLimit {
        kind: RateLimitKind::FiveHour,
        resets_at: Some("2026-11-29T12:00:00Z".into()),
    };
    assert_eq!(on.usage_limit, Some(limit));
    let due = store.read(limit_resets).await.unwrap();
    assert_eq!(due, [("on".into(), "2026-11-29T12:00:00Z".into())]);

    let sent = Outgoing {
        text: "go on",
        images: &[],
        mode: MessageMode::Queue,
    };
    store
        .write(move |w, out| w.deliver("on", sent, "claude-on", out))
        .await
        .unwrap();
    let on = store
        .read(|c| read::session(c, "on"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(on.status, SessionStatus::Running);
    assert_eq!(on.usage_limit, None);
    assert!(store.read(limit_resets).await.unwrap().is_empty());
}
