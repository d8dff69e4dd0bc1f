//! Forward compatibility: what a newer daemon may send (a new status, event type, kind or
//! field) is read, not refused, and what was read is written back as it came.

use serde_json::{json, Value};

use super::*;

fn session_info(status: &str) -> Value {
    json!({
        "id": "4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13", "run_id": "r", "status": status,
        "start_time": "2025-06-12T09:14:03.512Z", "last_activity_at": "2025-06-12T09:15:41.207Z",
        "query": "q", "summary": "q",
    })
}

#[test]
fn an_unknown_session_status_is_kept_and_counts_as_active() {
    let listed: ListSessionsResult = serde_json::from_value(json!({
        "sessions": [session_info("running"), session_info("paused")]
    }))
    .unwrap();
    assert_eq!(listed.sessions[0].status, SessionStatus::Running);
    let paused = &listed.sessions[1].status;
    assert_eq!(paused, &SessionStatus::Unknown("paused".into()));
    assert_eq!(paused.as_str(), "paused");
    assert_eq!(paused.to_string(), "paused");
    assert!(paused.is_active());
    assert_eq!(serde_json::to_value(paused).unwrap(), json!("paused"));
    assert!(!SessionStatus::Failed.is_active());
}

#[test]
fn known_statuses_read_as_their_variants_and_parse_knows_only_them() {
    for (status, name) in SessionStatus::KNOWN.iter().zip(SessionStatus::NAMES) {
        assert_eq!(SessionStatus::from(name), *status);
        assert_eq!(serde_json::to_value(status).unwrap(), json!(name));
        assert_eq!(
            serde_json::from_value::<SessionStatus>(json!(name)).unwrap(),
            *status
        );
    }
    assert_eq!(SessionStatus::parse("paused"), None);
    assert_eq!(SessionStatus::from("paused").as_str(), "paused");
}

#[test]
fn event_types_are_the_events_names_and_an_unknown_one_is_kept() {
    assert_eq!(EVENT_TYPES, EventType::KNOWN.map(|t| t.to_string()));
    let params: SubscribeParams = serde_json::from_value(json!({
        "event_types": ["lagged", "session_forked"]
    }))
    .unwrap();
    assert_eq!(
        params.event_types.unwrap(),
        [
            EventType::Lagged,
            EventType::Unknown("session_forked".into())
        ]
    );
    let lagged = Event::Lagged { missed: 1 };
    assert_eq!(lagged.event_type(), EventType::Lagged);
    assert_eq!(lagged.type_name(), "lagged");
}

#[test]
fn subscribe_params_are_built_from_types_and_filters() {
    let params = SubscribeParams::types([EventType::ConversationUpdated])
        .session("s")
        .run("r");
    assert_eq!(
        serde_json::to_value(&params).unwrap(),
        json!({"event_types": ["conversation_updated"], "session_id": "s", "run_id": "r"})
    );
    assert_eq!(
        serde_json::to_value(SubscribeParams::default().session("s")).unwrap(),
        json!({"session_id": "s"})
    );
}

#[test]
fn an_event_of_an_unknown_type_reads_as_unknown_and_is_written_back_whole() {
    let line = json!({
        "event": {
            "type": "session_forked",
            "data": {"session_id": "s", "fork_id": "f"},
            "timestamp": "2025-06-12T09:14:09.803Z"
        }
    });
    let message: SubscriptionMessage = serde_json::from_value(line.clone()).unwrap();
    let SubscriptionMessage::Event { event } = message else {
        panic!("an event, not a heartbeat: {message:?}");
    };
    assert_eq!(
        event.event,
        Event::Unknown {
            type_name: "session_forked".into(),
            data: json!({"session_id": "s", "fork_id": "f"}),
        }
    );
    assert_eq!(event.event.type_name(), "session_forked");
    assert_eq!(
        event.event.event_type(),
        EventType::Unknown("session_forked".into())
    );
    assert_eq!(event.event.session_id(), None);
    assert_eq!(serde_json::to_value(&event).unwrap(), line["event"]);
}

#[test]
fn a_known_event_still_reads_as_its_variant_with_unknown_fields_ignored() {
    let timed: TimedEvent = serde_json::from_value(json!({
        "type": "session_status_changed",
        "data": {
            "session_id": "s", "run_id": "r", "old_status": "running",
            "new_status": "hibernating", "reason_code": 7
        },
        "timestamp": "2025-06-12T09:14:09.803Z"
    }))
    .unwrap();
    let Event::SessionStatusChanged { new_status, .. } = &timed.event else {
        panic!("a status change: {timed:?}");
    };
    assert_eq!(new_status, &SessionStatus::Unknown("hibernating".into()));
}

#[test]
fn unknown_kinds_of_conversation_events_and_approvals_read_as_unknown() {
    let event: ConversationEvent = serde_json::from_value(json!({
        "id": 1, "session_id": "s", "claude_session_id": "c", "sequence": 1,
        "event_type": "image", "created_at": "2025-06-12T09:14:05.118Z", "is_completed": false,
        "image_url": "file:///tmp/x.png"
    }))
    .unwrap();
    assert_eq!(event.event_type, ConversationEventType::Unknown);

    let approval: Approval = serde_json::from_value(json!({
        "id": "a", "call_id": "a", "run_id": "r", "session_id": "s",
        "type": "file_upload", "status": "expired", "source": "slack",
        "requested_at": "2025-06-12T09:14:09.802Z", "priority": "high"
    }))
    .unwrap();
    assert_eq!(approval.kind, ApprovalType::Unknown);
    assert_eq!(approval.status, ApprovalStatus::Unknown);
    assert_eq!(approval.source, ApprovalSource::Unknown);

    let refused: SendDecisionResult = serde_json::from_value(json!({
        "success": false, "error": "slow down", "reason": "rate_limited"
    }))
    .unwrap();
    assert_eq!(refused.reason, Some(RefusalReason::Unknown));
}

/// Every record a client reads takes fields it does not know: none denies them.
#[test]
fn unknown_fields_are_ignored_in_what_clients_read() {
    let extra = |mut value: Value| {
        value["added_in_a_newer_daemon"] = json!({"any": ["shape"]});
        value
    };
    let info: SessionInfo = serde_json::from_value(extra(session_info("completed"))).unwrap();
    assert_eq!(info.status, SessionStatus::Completed);
    let state: GetSessionStateResult = serde_json::from_value(extra(json!({
        "session": extra(json!({
            "id": "s", "run_id": "r", "status": "running", "query": "q", "summary": "q",
            "created_at": "2025-06-12T09:14:03.512Z", "last_activity_at": "2025-06-12T09:14:03.512Z"
        }))
    })))
    .unwrap();
    assert_eq!(state.session.id, "s");
    let health: HealthResult =
        serde_json::from_value(extra(json!({"status": "ok", "version": "9.9.9"}))).unwrap();
    assert_eq!(health.version, "9.9.9");
    let reply: SendDecisionResult =
        serde_json::from_value(extra(json!({"success": true}))).unwrap();
    assert!(reply.success);
    let confirmed: SubscribeResult = serde_json::from_value(extra(json!({
        "subscription_id": "sub_1", "message": SUBSCRIPTION_ESTABLISHED
    })))
    .unwrap();
    assert_eq!(confirmed.subscription_id, "sub_1");
    let response: Response = serde_json::from_value(extra(json!({
        "jsonrpc": "2.0", "result": {}, "id": 1
    })))
    .unwrap();
    assert!(response.result.is_some());
}
