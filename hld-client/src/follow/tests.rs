//! Unit tests of `follow`.

use serde_json::json;

use super::ledger::*;
use super::*;
use crate::protocol::{ApprovalType, Event, QueuedMessage};

mod turns;

const SESSION: &str = "4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13";

fn state(status: &str) -> SessionState {
    serde_json::from_value(json!({
        "id": SESSION, "run_id": "r", "status": status, "query": "q", "summary": "q",
        "created_at": "2025-06-12T09:14:03.512Z", "last_activity_at": "2025-06-12T09:14:03.512Z",
    }))
    .unwrap()
}

fn ledger() -> Ledger {
    Ledger::new(SESSION, state("running"))
}

fn message(id: i64, sequence: i64) -> ConversationEvent {
    serde_json::from_value(json!({
        "id": id, "session_id": SESSION, "claude_session_id": "c", "sequence": sequence,
        "event_type": "message", "created_at": "2025-06-12T09:14:05.118Z",
        "role": "assistant", "content": format!("line {sequence}"), "is_completed": false,
    }))
    .unwrap()
}

fn tool_call(id: i64, sequence: i64, approval_status: Option<&str>) -> ConversationEvent {
    serde_json::from_value(json!({
        "id": id, "session_id": SESSION, "claude_session_id": "c", "sequence": sequence,
        "event_type": "tool_call", "created_at": "2025-06-12T09:14:09.730Z",
        "tool_id": "toolu_1", "tool_name": "Write", "is_completed": false,
        "approval_status": approval_status,
        "approval_id": approval_status.map(|_| "local-1"),
    }))
    .unwrap()
}

fn tool_result(id: i64, sequence: i64) -> ConversationEvent {
    serde_json::from_value(json!({
        "id": id, "session_id": SESSION, "claude_session_id": "c", "sequence": sequence,
        "event_type": "tool_result", "created_at": "2025-06-12T09:14:12.000Z",
        "tool_result_for_id": "toolu_1", "tool_result_content": "ok", "is_completed": false,
    }))
    .unwrap()
}

fn approval(id: &str, status: &str) -> Approval {
    serde_json::from_value(json!({
        "id": id, "call_id": id, "run_id": "r", "session_id": SESSION,
        "type": "function_call", "status": status, "function_name": "Write",
        "tool_use_id": "toolu_1", "requested_at": "2025-06-12T09:14:09.802Z",
    }))
    .unwrap()
}

fn live(event: ConversationEvent) -> Event {
    Event::ConversationUpdated {
        session_id: SESSION.into(),
        run_id: "r".into(),
        claude_session_id: "c".into(),
        event: Box::new(event),
    }
}

fn status(old: &str, new: &str) -> Event {
    Event::SessionStatusChanged {
        session_id: SESSION.into(),
        run_id: "r".into(),
        old_status: old.into(),
        new_status: new.into(),
        parent_session_id: None,
        error: None,
        usage_limit: None,
        turn: None,
    }
}

fn drain(ledger: &mut Ledger) -> Vec<FollowItem> {
    ledger.queue.drain(..).collect()
}

/// The sequences of the conversation events among `items`.
fn sequences(items: &[FollowItem]) -> Vec<i64> {
    items
        .iter()
        .filter_map(|item| match item {
            FollowItem::Conversation(e) => Some(e.sequence),
            _ => None,
        })
        .collect()
}

#[test]
fn an_event_in_both_the_store_and_the_live_stream_comes_once() {
    let mut l = ledger();
    assert_eq!(l.stored(vec![message(11, 1), message(12, 2)]), Some(2));
    for event in [
        message(12, 2),
        message(13, 3),
        message(11, 1),
        message(13, 3),
    ] {
        assert_eq!(l.event(live(event)), Next::Listen);
    }
    assert_eq!(sequences(&drain(&mut l)), [1, 2, 3]);
}

#[test]
fn a_live_event_that_overtook_stored_ones_comes_after_them() {
    let mut l = ledger();
    l.stored(vec![message(11, 1)]);
    // The tool call, linked to its approval, is published before the messages of its
    // burst: it waits while the two stored before it are read, and no more.
    assert_eq!(l.event(live(tool_call(14, 4, Some("pending")))), Next::Fill);
    assert_eq!(l.gap(), Some((Some(1), 2)));
    assert_eq!(sequences(&drain(&mut l)), [1]);
    assert!(!l.fill(vec![message(12, 2), message(13, 3)], 2), "filled");
    l.filled();
    // Then the approval published with it, the burst as published, and what follows.
    l.requested(approval("local-1", "pending"));
    for event in [
        message(12, 2),
        message(13, 3),
        tool_call(14, 4, None),
        message(15, 5),
    ] {
        assert_eq!(l.event(live(event)), Next::Listen);
    }
    let items = drain(&mut l);
    assert_eq!(items.len(), 5, "nothing twice, no older version: {items:?}");
    assert_eq!(sequences(&items[..3]), [2, 3, 4]);
    assert!(
        matches!(&items[2], FollowItem::Conversation(e) if e.approval_status.as_deref() == Some("pending")),
        "the call as published, linked: {items:?}"
    );
    assert!(matches!(&items[3], FollowItem::ApprovalRequested(_)));
    assert_eq!(sequences(&items[4..]), [5]);
}

#[test]
fn a_long_gap_is_read_a_page_at_a_time_and_a_hole_in_it_ends_it() {
    let mut l = ledger();
    l.stored(Vec::new());
    assert_eq!(l.event(live(message(11, 1))), Next::Listen, "the first");
    assert_eq!(l.event(live(message(9000, PAGE as i64 + 9))), Next::Fill);
    assert_eq!(l.gap(), Some((Some(1), PAGE)));
    let page: Vec<ConversationEvent> = (2..PAGE as i64 + 2)
        .map(|sequence| message(sequence + 10, sequence))
        .collect();
    assert!(l.fill(page, PAGE), "more to read");
    assert_eq!(l.gap(), Some((Some(PAGE as i64 + 1), 7)));
    // Sequences 2 + PAGE.. are missing from the store: a page past them ends the gap.
    assert!(!l.fill(vec![message(9000, PAGE as i64 + 9)], 7));
    l.filled();
    let got = sequences(&drain(&mut l));
    assert_eq!(got.len(), PAGE + 2);
    assert_eq!(got.last(), Some(&(PAGE as i64 + 9)));
    assert!(got.windows(2).all(|w| w[0] < w[1]), "in order");
    assert_eq!(l.event(live(message(9001, PAGE as i64 + 10))), Next::Listen);
}

#[test]
fn a_tool_call_that_got_further_is_changed_and_an_older_version_is_not() {
    let mut l = ledger();
    l.stored(vec![tool_call(11, 1, None)]);
    l.event(live(tool_call(11, 1, Some("pending"))));
    // The version before the link, published late, and the same version again.
    l.event(live(tool_call(11, 1, None)));
    l.event(live(tool_call(11, 1, Some("pending"))));
    l.event(live(tool_call(11, 1, Some("approved"))));
    l.event(live(tool_call(11, 1, Some("pending"))));
    let changed: Vec<Option<String>> = drain(&mut l)
        .into_iter()
        .filter_map(|item| match item {
            FollowItem::ConversationChanged(e) => Some(e.approval_status),
            _ => None,
        })
        .collect();
    assert_eq!(
        changed,
        [Some("pending".to_owned()), Some("approved".to_owned())]
    );
}

#[test]
fn a_catch_up_starts_after_the_store_read_or_before_an_open_tool_call() {
    let mut l = ledger();
    assert_eq!(l.catch_up_after(), None, "nothing read yet: from the start");
    l.stored(vec![message(11, 1), tool_call(12, 2, Some("pending"))]);
    l.stored(vec![message(13, 3), message(14, 4)]);
    assert_eq!(
        l.catch_up_after(),
        Some(1),
        "the tool call may still change"
    );
    l.event(live(tool_call(12, 2, Some("approved"))));
    assert_eq!(l.catch_up_after(), Some(4), "decided: after the last read");

    let mut l = ledger();
    l.stored(vec![tool_call(12, 2, None), message(13, 3)]);
    assert_eq!(l.catch_up_after(), Some(1));
    l.event(live(tool_result(14, 4)));
    assert_eq!(
        l.catch_up_after(),
        Some(4),
        "its result came: it will not change; the result came in its place"
    );
}

#[test]
fn a_lag_is_told_and_asks_for_a_catch_up() {
    let mut l = ledger();
    assert_eq!(l.event(Event::Lagged { missed: 7 }), Next::CatchUp);
    assert_eq!(drain(&mut l), [FollowItem::Lagged { missed: 7 }]);
}

#[test]
fn approvals_are_asked_once_and_decided_once() {
    let mut l = ledger();
    l.requested(approval("local-1", "pending"));
    l.requested(approval("local-1", "pending"));
    assert!(l.undecided(&[approval("local-1", "pending")]).is_empty());
    assert_eq!(l.undecided(&[]), ["local-1"]);
    for _ in 0..2 {
        l.resolved("local-1".into(), ApprovalStatus::Approved, None, None);
    }
    assert!(l.undecided(&[]).is_empty());
    // A rule's decision on an approval never announced is told too, once.
    l.resolved(
        "local-2".into(),
        ApprovalStatus::Approved,
        None,
        Some("auto_accept_edits".into()),
    );
    l.requested(approval("local-2", "approved"));
    let items = drain(&mut l);
    assert_eq!(items.len(), 3, "{items:?}");
    assert!(matches!(&items[0], FollowItem::ApprovalRequested(a) if a.id == "local-1"));
    assert!(
        matches!(&items[1], FollowItem::ApprovalResolved { approval_id, .. } if approval_id == "local-1")
    );
    assert!(matches!(
        &items[2],
        FollowItem::ApprovalResolved {
            decided_by: Some(_),
            ..
        }
    ));
}

#[test]
fn the_end_is_a_status_then_a_catch_up_then_ended() {
    let mut l = ledger();
    assert_eq!(l.event(status("starting", "running")), Next::Listen);
    assert_eq!(l.event(status("running", "completed")), Next::CatchUp);
    // The store is read again once the state tells the end, and then the end is told.
    assert_eq!(l.state(state("completed")), Settled::ReadAgain);
    assert_eq!(l.state(state("completed")), Settled::Ended);
    let items = drain(&mut l);
    assert_eq!(items.len(), 2, "the status once, then the end: {items:?}");
    assert!(matches!(
        &items[0],
        FollowItem::Status {
            new_status: SessionStatus::Completed,
            ..
        }
    ));
    assert!(matches!(&items[1], FollowItem::Ended(s) if s.status == SessionStatus::Completed));
}

#[test]
fn an_end_found_only_in_the_state_asks_for_the_store_again_before_ended() {
    let mut l = ledger();
    l.stored(vec![message(1, 1)]);
    // It ended after that read, before the state was: what it stored meanwhile is
    // still to read, and nothing ends yet.
    assert_eq!(l.state(state("completed")), Settled::ReadAgain);
    assert_eq!(sequences(&drain(&mut l)), [1]);
    l.stored(vec![message(2, 2), message(3, 3)]);
    assert_eq!(l.state(state("completed")), Settled::Ended);
    let items = drain(&mut l);
    assert_eq!(sequences(&items), [2, 3]);
    assert!(matches!(items.last(), Some(FollowItem::Ended(_))));
    // A session that had ended when following began is read once.
    let mut l = Ledger::new(SESSION, state("completed"));
    l.stored(vec![message(1, 1)]);
    assert_eq!(l.state(state("completed")), Settled::Ended);
    assert!(!drain(&mut l)
        .iter()
        .any(|item| matches!(item, FollowItem::TurnEnded { .. })));
}

#[test]
fn a_status_missed_in_a_lag_is_found_in_the_state() {
    let mut l = ledger();
    assert_eq!(l.state(state("waiting_input")), Settled::Live);
    assert_eq!(l.state(state("waiting_input")), Settled::Live);
    let items = drain(&mut l);
    assert_eq!(
        items,
        [FollowItem::Status {
            old_status: SessionStatus::Running,
            new_status: SessionStatus::WaitingInput,
            error: None,
        }]
    );
}

#[test]
fn an_unknown_status_is_not_an_end() {
    let mut l = ledger();
    assert_eq!(l.event(status("running", "paused")), Next::Listen);
    assert_eq!(l.state(state("paused")), Settled::Live);
    assert!(drain(&mut l)
        .iter()
        .all(|item| !matches!(item, FollowItem::Ended(_))));
}

#[test]
fn a_notification_about_the_session_is_yielded() {
    let mut l = ledger();
    let notification: crate::protocol::Notification = serde_json::from_value(json!({
        "id": "n1", "kind": "approval", "session_id": SESSION, "run_id": "r",
        "title": "Fix the tests", "text": "Bash: cargo test", "answer": "hlyr approve local-1",
        "approval_id": "local-1",
    }))
    .unwrap();
    assert_eq!(
        l.event(Event::Notification(notification.clone())),
        Next::Listen
    );
    assert_eq!(
        drain(&mut l),
        [FollowItem::Notification(Box::new(notification))]
    );
}

#[test]
fn an_event_of_an_unknown_type_is_skipped() {
    let mut l = ledger();
    let event = Event::Unknown {
        type_name: "session_forked".into(),
        data: json!({"session_id": SESSION}),
    };
    assert_eq!(l.event(event), Next::Listen);
    assert!(l.queue.is_empty());
}

fn live_state(status: &str) -> SessionState {
    SessionState {
        live: true,
        ..state(status)
    }
}

fn queued_message(id: &str, status: &str) -> QueuedMessage {
    serde_json::from_value(json!({
        "id": id, "session_id": SESSION, "text": "and the tests", "mode": "queue",
        "status": status, "created_at": "2025-06-12T09:15:00Z",
    }))
    .unwrap()
}

fn message_event(id: &str, status: &str) -> Event {
    let message = queued_message(id, status);
    match status {
        "queued" => Event::MessageQueued {
            session_id: SESSION.into(),
            run_id: "r".into(),
            message,
        },
        "delivered" => Event::MessageDelivered {
            session_id: SESSION.into(),
            run_id: "r".into(),
            message,
        },
        _ => Event::MessageCancelled {
            session_id: SESSION.into(),
            run_id: "r".into(),
            message,
        },
    }
}

/// What the items are, in order, in a word each.
fn kinds(items: &[FollowItem]) -> Vec<String> {
    items
        .iter()
        .map(|item| match item {
            FollowItem::Status { new_status, .. } => format!("status {new_status}"),
            FollowItem::TurnEnded { status, .. } => format!("turn {status}"),
            FollowItem::Message(m) => format!("message {} {}", m.id, m.status.as_str()),
            FollowItem::Ended(s) => format!("ended {}", s.status),
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn a_turn_whose_process_stays_ends_with_turn_ended_then_ended() {
    let mut l = ledger();
    assert_eq!(l.event(status("running", "completed")), Next::CatchUp);
    l.queue_read(Vec::new());
    assert_eq!(l.state(live_state("completed")), Settled::ReadAgain);
    assert_eq!(l.state(live_state("completed")), Settled::Ended);
    let items = drain(&mut l);
    assert_eq!(
        kinds(&items),
        ["status completed", "turn completed", "ended completed"]
    );
    assert!(matches!(&items[1], FollowItem::TurnEnded { state, .. } if state.live));
}

#[test]
fn following_after_a_turn_that_ran_whole_before_the_follow_tells_its_end() {
    // The next turn started and ended before the follow read anything: no status event.
    let mut l = Ledger::new(SESSION, live_state("completed"));
    l.read_to = Some(2);
    l.turn_from = Some(2);
    l.queue_read(Vec::new());
    l.stored(vec![message(3, 3), message(4, 4)]);
    assert_eq!(l.state(live_state("completed")), Settled::Ended);
    assert_eq!(
        kinds(&drain(&mut l))[2..],
        ["turn completed", "ended completed"]
    );
    // Nothing stored past the point followed from: no turn ended.
    let mut l = Ledger::new(SESSION, live_state("completed"));
    l.read_to = Some(2);
    l.turn_from = Some(2);
    l.queue_read(Vec::new());
    assert_eq!(l.state(live_state("completed")), Settled::Ended);
    assert_eq!(kinds(&drain(&mut l)), ["ended completed"]);
}

#[test]
fn a_queued_message_carries_the_follow_into_the_next_turn() {
    let mut l = ledger();
    assert_eq!(l.event(message_event("m1", "queued")), Next::Listen);
    assert_eq!(l.event(status("running", "completed")), Next::CatchUp);
    // Read before the daemon delivered it: it still waits, so the follow goes on.
    l.queue_read(vec![queued_message("m1", "queued")]);
    assert_eq!(l.state(state("completed")), Settled::ReadAgain);
    assert_eq!(l.state(state("completed")), Settled::Live);
    assert_eq!(l.event(message_event("m1", "delivered")), Next::Listen);
    assert_eq!(l.event(status("completed", "running")), Next::Listen);
    assert_eq!(l.event(status("running", "failed")), Next::CatchUp);
    l.queue_read(Vec::new());
    assert_eq!(l.state(live_state("failed")), Settled::ReadAgain);
    assert_eq!(l.state(live_state("failed")), Settled::Ended);
    assert_eq!(
        kinds(&drain(&mut l)),
        [
            "message m1 queued",
            "status completed",
            "turn completed",
            "message m1 delivered",
            "status running",
            "status failed",
            "turn failed",
            "ended failed"
        ]
    );
}

/// The daemon delivers a queued message as the turn ends: the next turn may have begun by
/// the time the state is read, and the turn's end is told all the same.
#[test]
fn a_turn_end_overtaken_by_the_next_turn_is_still_told() {
    let mut l = ledger();
    assert_eq!(l.event(status("running", "completed")), Next::CatchUp);
    l.queue_read(Vec::new());
    assert_eq!(l.state(live_state("running")), Settled::Live);
    assert_eq!(
        kinds(&drain(&mut l)),
        ["status completed", "turn completed", "status running"]
    );
    assert_eq!(l.event(status("running", "completed")), Next::CatchUp);
    l.queue_read(Vec::new());
    assert_eq!(l.state(state("completed")), Settled::ReadAgain);
    assert_eq!(l.state(state("completed")), Settled::Ended);
    assert_eq!(
        kinds(&drain(&mut l)),
        ["status completed", "ended completed"]
    );
}

#[test]
fn each_message_status_comes_once_and_one_that_left_the_queue_no_longer_waits() {
    let mut l = Ledger::new(SESSION, state("completed"));
    l.queue_read(vec![queued_message("m1", "queued")]);
    assert_eq!(l.event(message_event("m1", "queued")), Next::Listen);
    assert_eq!(l.state(state("completed")), Settled::Live);
    assert_eq!(kinds(&drain(&mut l)), ["message m1 queued"]);
    // Cancelled while events were dropped: the queue read shows it gone.
    l.queue_read(Vec::new());
    assert_eq!(l.state(state("completed")), Settled::Ended);

    assert_eq!(kinds(&drain(&mut l)), ["ended completed"]);
}

/// A steer: the interrupted turn's end is published, and the steered turn runs and ends while
/// the store is read. The state read then tells the second end: the store is read again, for
/// the second turn's conversation, before the end is told.
#[test]
fn an_end_read_in_the_state_is_told_after_the_store_is_read_again() {
    // No live event told the end (a catch-up after a lag, or a follow that began after it).
    let mut l = ledger();
    l.stored(vec![message(1, 1)]);
    let second = SessionState {
        num_turns: Some(2),
        ..live_state("completed")
    };
    assert_eq!(l.state(second.clone()), Settled::ReadAgain);
    l.stored(vec![message(2, 2)]);
    // Another turn ran meanwhile: its state differs, and the store is read once more.
    let third = SessionState {
        num_turns: Some(3),
        ..second
    };
    assert_eq!(l.state(third.clone()), Settled::ReadAgain);
    l.stored(vec![message(3, 3)]);
    assert_eq!(l.state(third), Settled::Ended);
    let items = drain(&mut l);
    assert_eq!(sequences(&items), [1, 2, 3]);
    assert!(matches!(items.last(), Some(FollowItem::Ended(s)) if s.num_turns == Some(3)));
}

/// A session rule decided an approval whose event was not taken in (the turn ended while the
/// store was read): the decision read for the tool call naming it comes right after the call,
/// once.
#[test]
fn a_decision_named_by_a_stored_tool_call_comes_after_it_once() {
    let mut l = ledger();
    l.stored(vec![tool_call(1, 1, Some("approved")), message(2, 2)]);
    assert_eq!(l.untold, ["local-1"]);
    let decided = Approval {
        decided_by: Some("auto_accept_edits".into()),
        ..approval("local-1", "approved")
    };
    l.told(decided.clone());
    assert!(l.untold.is_empty());
    let items = drain(&mut l);
    assert!(matches!(&items[0], FollowItem::Conversation(e) if e.id == 1));
    assert!(matches!(
        &items[1],
        FollowItem::ApprovalResolved { approval_id, decided_by: Some(rule), .. }
            if approval_id == "local-1" && rule == "auto_accept_edits"
    ));
    assert!(matches!(&items[2], FollowItem::Conversation(e) if e.id == 2));
    // Told once: neither the read again nor its live event repeat it.
    l.told(decided);
    l.stored(vec![tool_call(1, 1, Some("approved"))]);
    assert!(l.untold.is_empty());
    assert_eq!(
        l.event(Event::ApprovalResolved {
            approval_id: "local-1".into(),
            decision: ApprovalStatus::Approved,
            comment: None,
            decided_by: Some("auto_accept_edits".into()),
            settled_on_request: true,
            session_id: SESSION.into(),
            run_id: "r".into(),
            call_id: "local-1".into(),
            kind: ApprovalType::FunctionCall,
            total: 0,
        }),
        Next::Listen
    );
    assert!(l.queue.is_empty());
}
