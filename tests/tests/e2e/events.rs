//! Live events end to end: each event type from a real session, filters, ordering, slow
//! subscribers and fan-out to many subscribers.

use std::collections::HashSet;
use std::time::Duration;

use hld_client::protocol::{
    ConversationEvent, Event, Health, NoParams, SessionStatus, SubscribeParams,
};
use hld_e2e::{ended, launch_params, DaemonOptions, Subscription, TestDaemon};

/// A subscription to `event_types` (all when empty), of one session or run.
fn subscribe(
    d: &TestDaemon,
    event_types: &[&str],
    session_id: Option<&str>,
    run_id: Option<&str>,
) -> Subscription {
    d.subscribe(SubscribeParams {
        event_types: (!event_types.is_empty())
            .then(|| event_types.iter().map(|&t| t.into()).collect()),
        session_id: session_id.map(str::to_owned),
        run_id: run_id.map(str::to_owned),
    })
}

/// The stored event a `conversation_updated` carries.
fn stored(event: &Event) -> Option<&ConversationEvent> {
    match event {
        Event::ConversationUpdated { event, .. } => Some(event),
        _ => None,
    }
}

#[test]
fn a_session_produces_status_and_conversation_events_in_order() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let mut all = subscribe(&d, &[], None, None);
    let id = d.launch(launch_params("hello there", "/tmp"));
    let events = all.until(|e| ended(e, &id));
    let summary: Vec<String> = events
        .iter()
        .map(|e| match &e.event {
            Event::SessionStatusChanged {
                old_status,
                new_status,
                ..
            } => format!("status {old_status}->{new_status}"),
            Event::ConversationUpdated { event, .. } => format!(
                "conversation {} {}",
                event.event_type.as_str(),
                event.role.as_deref().unwrap_or("-")
            ),
            other => other.type_name().to_owned(),
        })
        .collect();
    assert_eq!(
        summary,
        [
            "status starting->running",
            "conversation message user",
            "conversation message assistant",
            "status running->completed",
        ]
    );
    let state = d.state(&id);
    for e in &events {
        assert_eq!(e.event.session_id(), Some(id.as_str()));
        assert_eq!(e.event.run_id(), Some(state.run_id.as_str()));
        // RFC 3339 in UTC: 2026-11-25T21:47:00.123Z
        assert!(
            chrono::DateTime::parse_from_rfc3339(&e.timestamp).is_ok()
                && e.timestamp.ends_with('Z'),
            "{}",
            e.timestamp
        );
    }
    let stored_events = d.conversation(&id);
    let published: Vec<&ConversationEvent> =
        events.iter().filter_map(|e| stored(&e.event)).collect();
    assert_eq!(published.len(), stored_events.len());
    for (p, s) in published.iter().zip(&stored_events) {
        assert_eq!(*p, s, "the published event is the stored one");
    }
    // (That a status change carries no claude_session_id is pinned by the golden file of the
    // events.)
    match &events[2].event {
        Event::ConversationUpdated {
            claude_session_id, ..
        } => assert_eq!(Some(claude_session_id), state.claude_session_id.as_ref()),
        other => panic!("not a conversation event: {other:?}"),
    }
}

#[test]
fn failures_are_published_too() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let mut sub = subscribe(&d, &["session_status_changed"], None, None);
    let id = d.launch(launch_params("scenario:error", "/tmp"));
    let events = sub.until(|e| ended(e, &id));
    match &events.last().unwrap().event {
        Event::SessionStatusChanged {
            new_status, error, ..
        } => {
            assert_eq!(*new_status, SessionStatus::Failed);
            assert!(
                error.as_deref().unwrap().contains("Not logged in"),
                "{error:?}"
            );
        }
        other => panic!("not a status change: {other:?}"),
    }
}

#[test]
fn filters_work_alone_and_combined() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "100")
            .env("FAKE_CLAUDE_COUNT", "6"),
    );
    let a = d.launch(launch_params("scenario:slow a", "/tmp"));
    let b = d.launch(launch_params("scenario:slow b", "/tmp"));
    let run_b = d.state(&b).run_id;

    let mut by_session = subscribe(&d, &[], Some(&a), None);
    let mut by_run = subscribe(&d, &[], None, Some(&run_b));
    let mut by_type = subscribe(&d, &["session_status_changed"], None, None);
    let mut combined = subscribe(&d, &["conversation_updated"], Some(&a), None);
    let mut nothing = subscribe(&d, &[], Some(&a), Some(&run_b));

    d.wait_ended(&a);
    d.wait_ended(&b);

    let got = by_session.until(|e| ended(e, &a));
    assert!(got.len() >= 2, "{got:?}");
    assert!(got.iter().all(|e| e.event.session_id() == Some(a.as_str())));

    let got = by_run.until(|e| ended(e, &b));
    assert!(got.iter().all(|e| e.event.run_id() == Some(run_b.as_str())));

    let mut left = HashSet::from([a.as_str(), b.as_str()]);
    let got = by_type.until(|e| {
        left.retain(|id| !ended(e, id));
        left.is_empty()
    });
    let sessions: HashSet<&str> = got.iter().filter_map(|e| e.event.session_id()).collect();
    assert_eq!(sessions, HashSet::from([a.as_str(), b.as_str()]));
    assert!(got
        .iter()
        .all(|e| e.event.type_name() == "session_status_changed"));

    // Up to the last event stored for `a`: nothing else may come before it.
    let last = d.conversation(&a).last().unwrap().id;
    let got = combined.until(|e| stored(e).is_some_and(|s| s.id == last));
    assert!(got
        .iter()
        .all(|e| stored(&e.event).is_some() && e.event.session_id() == Some(a.as_str())));

    // Every other subscriber has had everything; this one may get nothing in the meantime.
    // The wait is an observation window, not a wait for something to happen.
    assert_eq!(nothing.next_within(Duration::from_millis(300)), None);
}

#[test]
fn per_session_events_arrive_in_stored_order() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "2")
            .env("FAKE_CLAUDE_COUNT", "300"),
    );
    let mut sub = subscribe(
        &d,
        &["conversation_updated", "session_status_changed"],
        None,
        None,
    );
    let id = d.launch(launch_params("scenario:slow", "/tmp"));
    let events = sub.until(|e| ended(e, &id));
    let seqs: Vec<i64> = events
        .iter()
        .filter_map(|e| stored(&e.event))
        .map(|e| e.sequence)
        .collect();
    let stored_seqs: Vec<i64> = d.conversation(&id).iter().map(|e| e.sequence).collect();
    assert_eq!(seqs, stored_seqs);
    assert_eq!(seqs.len(), 301);
}

#[test]
fn a_subscriber_that_never_reads_delays_nobody_and_is_told_what_it_lost() {
    // A buffer small enough that the stuck subscriber falls out of it.
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .arg("--subscriber-buffer=100")
            .env("FAKE_CLAUDE_DELAY_MS", "1")
            .env("FAKE_CLAUDE_COUNT", "3000"),
    );
    let mut stuck = subscribe(&d, &["conversation_updated"], None, None);
    let mut fast = subscribe(
        &d,
        &["conversation_updated", "session_status_changed"],
        None,
        None,
    );
    let id = d.launch(launch_params("scenario:slow", "/tmp"));
    let events = fast.until(|e| ended(e, &id));
    let conversation = events.iter().filter(|e| stored(&e.event).is_some()).count();
    assert_eq!(conversation, 3001, "the fast subscriber lost nothing");
    assert!(events.iter().all(|e| e.event.type_name() != "lagged"));

    // Now the stuck subscriber reads: it was told how much it lost, until the counts add up
    // to everything stored.
    let (mut missed, mut seqs) = (0, Vec::new());
    while missed + (seqs.len() as u64) < 3001 {
        match stuck.next_event().event {
            Event::Lagged { missed: n } => missed += n,
            Event::ConversationUpdated { event, .. } => seqs.push(event.sequence),
            other => panic!("not subscribed to {other:?}"),
        }
    }
    assert_eq!(missed + seqs.len() as u64, 3001);
    assert!(missed > 0, "the stuck subscriber lost events and was told");
    // What it got is whole lines (each parsed), in stored order, none twice: lines the
    // daemon began writing directly and finished from the queue included.
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
}

#[test]
fn a_thousand_subscribers_all_receive_an_event() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let mut subs: Vec<Subscription> = (0..1000)
        .map(|_| subscribe(&d, &["session_status_changed"], None, None))
        .collect();
    assert_eq!(d.request::<Health>(NoParams {}).subscribers, 1000);
    let id = d.launch(launch_params("fan out", "/tmp"));
    for (i, s) in subs.iter_mut().enumerate() {
        let events = s.until(|e| ended(e, &id));
        assert_eq!(events.len(), 2, "subscriber {i}");
    }
}
