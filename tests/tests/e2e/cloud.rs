//! Cloud approvals end to end: the real daemon polling a loopback stand-in for the HumanLayer
//! API — the key on the wire and nowhere else, backoff and its reset, correlation of a cloud
//! function call with a real session's tool call, decisions sent to the API (409 and other
//! errors included), and approvals resolved elsewhere.

use std::time::Duration;

use hld_client::protocol::{
    Approval, ApprovalSource, ApprovalStatus, ApprovalType, ConversationEvent,
    ConversationEventType, Event, GetApproval, GetApprovalParams, LaunchSessionParams,
    RefusalReason, SendDecision, SendDecisionParams, SendDecisionResult, SessionStatus,
    SubscribeParams, ANSWERED_ELSEWHERE,
};
use hld_e2e::cloud::{CloudStandIn, Recorded};
use hld_e2e::{launch_params, wait_for, DaemonOptions, Subscription, TestDaemon, WAIT};
use serde_json::{json, Value};

pub(crate) const KEY: &str = "hl-test-key-5f1c0e9a7d";

pub(crate) const FUNCTION_CALLS: &str = "/agent/function_calls/pending";

/// Options for a daemon on `fake-claude` that polls `api` every `interval_ms`.
pub(crate) fn cloud_options(
    api: &CloudStandIn,
    interval_ms: u64,
    max_backoff_ms: u64,
) -> DaemonOptions {
    DaemonOptions::fake_claude()
        .arg("--api-base-url")
        .arg(&api.base_url())
        .arg("--approval-poll-interval-ms")
        .arg(&interval_ms.to_string())
        .arg("--approval-max-backoff-ms")
        .arg(&max_backoff_ms.to_string())
}

/// A daemon polling `api` every 50 ms, with the key in `HUMANLAYER_API_KEY`.
pub(crate) fn cloud_daemon(api: &CloudStandIn) -> TestDaemon {
    TestDaemon::start_with(cloud_options(api, 50, 400).env("HUMANLAYER_API_KEY", KEY))
}

fn workdir(d: &TestDaemon) -> String {
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    dir.display().to_string()
}

/// An MCP server that completes the handshake, offers `request_permission`, and never
/// answers a `tools/call`: Claude's permission step waits, so its tool call stays open.
fn silent_permission_server(d: &TestDaemon) -> String {
    let path = d.dir.join("silent-mcp.sh");
    std::fs::write(
        &path,
        r#"#!/bin/sh
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"silent","version":"1.0.0"}}}\n' "$id" ;;
    *'"method":"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"request_permission","inputSchema":{"type":"object"}}]}}\n' "$id" ;;
  esac
done
"#,
    )
    .unwrap();
    path.display().to_string()
}

/// A session whose `Write` tool call waits for permission. Returns (session id, run id,
/// the tool call event).
pub(crate) fn waiting_session(d: &TestDaemon) -> (String, String, ConversationEvent) {
    let script = silent_permission_server(d);
    let id = d.launch(LaunchSessionParams {
        mcp_config: Some(
            serde_json::from_value(
                json!({"mcpServers": {"perm": {"command": "/bin/sh", "args": [script]}}}),
            )
            .unwrap(),
        ),
        permission_prompt_tool: Some("mcp__perm__request_permission".into()),
        ..launch_params("scenario:tool make a file", workdir(d))
    });
    let call = wait_for(WAIT, || {
        d.conversation(&id).into_iter().find(|e| {
            e.event_type == ConversationEventType::ToolCall
                && e.tool_name.as_deref() == Some("Write")
        })
    })
    .unwrap_or_else(|| panic!("no tool call; log:\n{}", d.log_text()));
    assert!(!call.is_completed);
    let session = d.wait_session(&id, |s| s.status == SessionStatus::Running);
    (id, session.run_id, call)
}

/// A session that ran to completion. Returns (session id, run id).
pub(crate) fn finished_session(d: &TestDaemon) -> (String, String) {
    let id = d.launch(launch_params("hello", workdir(d)));
    (id.clone(), d.wait_ended(&id).run_id)
}

pub(crate) fn ids(approvals: &[Approval]) -> Vec<&str> {
    approvals.iter().map(|a| a.id.as_str()).collect()
}

pub(crate) fn get_approval(d: &TestDaemon, id: &str) -> Approval {
    d.request::<GetApproval>(GetApprovalParams {
        approval_id: id.to_owned(),
    })
    .approval
}

pub(crate) fn decide(
    d: &TestDaemon,
    call_id: &str,
    kind: &str,
    decision: &str,
    comment: Option<&str>,
) -> SendDecisionResult {
    d.request::<SendDecision>(SendDecisionParams {
        call_id: Some(call_id.to_owned()),
        kind: Some(kind.to_owned()),
        decision: Some(decision.to_owned()),
        comment: comment.map(str::to_owned),
    })
}

pub(crate) fn function_call(run_id: &str, call_id: &str, tool: &str, kwargs: Value) -> Value {
    json!({
        "run_id": run_id,
        "call_id": call_id,
        "spec": {"fn": tool, "kwargs": kwargs, "channel": {"slack": {"channel_or_user_id": "C1"}}},
        "status": {"requested_at": "2026-03-01T10:20:30.123456"}
    })
}

pub(crate) fn subscribe(d: &TestDaemon, session_id: &str) -> Subscription {
    d.subscribe(SubscribeParams {
        session_id: Some(session_id.to_owned()),
        event_types: Some(vec!["new_approval".into(), "approval_resolved".into()]),
        ..Default::default()
    })
}

/// The approval status of the tool call `call` in its session's conversation now.
pub(crate) fn approval_status_of(d: &TestDaemon, call: &ConversationEvent) -> Option<String> {
    d.conversation(&call.session_id)
        .into_iter()
        .find(|e| e.event_type == ConversationEventType::ToolCall && e.tool_id == call.tool_id)
        .expect("the tool call")
        .approval_status
}

fn millis(requests: &[Recorded]) -> Vec<u128> {
    requests
        .windows(2)
        .map(|w| (w[1].at - w[0].at).as_millis())
        .collect()
}

#[test]
fn the_daemon_polls_with_the_bearer_key_and_reveals_it_nowhere() {
    let api = CloudStandIn::start();
    api.fail_polls(1);
    let mut d = TestDaemon::start_with(cloud_options(&api, 50, 400).arg("--api-key").arg(KEY));
    api.wait_until("three polls of each list", |r| {
        let count = |p: &str| r.iter().filter(|r| r.path == p).count();
        count(FUNCTION_CALLS) >= 3 && count("/agent/human_contacts/pending") >= 3
    });
    for request in api.requests() {
        assert_eq!(request.method, "GET");
        assert_eq!(
            request.authorization.as_deref(),
            Some(format!("Bearer {KEY}").as_str()),
            "{request:?}"
        );
    }
    // Nowhere on the wire either: the raw replies.
    let health = d.call("health", Value::Null).to_string();
    assert!(!health.contains(KEY), "{health}");
    let methods = d.call("describeMethods", Value::Null).to_string();
    assert!(!methods.contains(KEY));

    // Shutdown stops the poller promptly: the daemon exits while it polls every 50 ms.
    d.signal(nix::sys::signal::Signal::SIGTERM);
    let (status, _) = d.wait_exit(Duration::from_secs(5)).expect("daemon exits");
    assert!(status.success(), "{status:?}");

    let log = d.log_text();
    assert!(log.contains("cloud approvals enabled"), "{log}");
    assert!(log.contains("cannot fetch pending function calls"), "{log}");
    assert!(!log.contains(KEY), "the key is in the log:\n{log}");
}

#[test]
fn without_an_api_key_nothing_is_polled() {
    let api = CloudStandIn::start();
    let d = TestDaemon::start_with(cloud_options(&api, 20, 400));
    // A daemon with a key, started after this one, polls at once: once it has, this one
    // would have too.
    let control_api = CloudStandIn::start();
    let _control = TestDaemon::start_with(
        cloud_options(&control_api, 20, 400)
            .arg("--api-key")
            .arg(KEY),
    );
    control_api.wait_until("a poll of the daemon with a key", |r| !r.is_empty());
    assert!(api.requests().is_empty());
    assert!(!d.log_text().contains("cloud approvals enabled"));
}

#[test]
fn failed_polls_back_off_up_to_the_cap_and_a_good_poll_resets_the_interval() {
    let api = CloudStandIn::start();
    // Polls 1–5 fail: waits of 100, 200, 400, 400 (capped, not 800), 400 (not 1600) ms;
    // poll 6 succeeds: waits of 50 ms again.
    api.fail_polls(5);
    let _d = cloud_daemon(&api);
    let requests = api.wait_until("nine polls", |r| {
        r.iter().filter(|r| r.path == FUNCTION_CALLS).count() >= 9
    });
    let polls: Vec<Recorded> = requests
        .into_iter()
        .filter(|r| r.path == FUNCTION_CALLS)
        .collect();
    let gaps = millis(&polls[..9]);
    let at_least = [100, 200, 400, 400, 400];
    for (i, min) in at_least.iter().enumerate() {
        assert!(gaps[i] >= *min, "gap {i} below {min} ms: {gaps:?}");
    }
    assert!(
        gaps[3] < 790 && gaps[4] < 790,
        "the wait is capped at 400 ms: {gaps:?}"
    );
    assert!(
        gaps[5..].iter().all(|g| *g < 390),
        "a good poll resets the wait to the interval: {gaps:?}"
    );
}

#[test]
fn a_cloud_function_call_is_correlated_listed_and_approved_through_the_api() {
    let api = CloudStandIn::start();
    let d = cloud_daemon(&api);
    let (session_id, run_id, call) = waiting_session(&d);
    let mut sub = subscribe(&d, &session_id);
    let kwargs: Value = serde_json::from_str(call.tool_input_json.as_deref().unwrap()).unwrap();
    api.add_function_call(function_call(&run_id, "fc-1", "Write", kwargs.clone()));
    api.add_function_call(function_call(
        "someone-else",
        "fc-other",
        "Write",
        json!({}),
    ));

    let approvals = d.wait_approvals(Some(&session_id), |a| !a.is_empty());
    let a = &approvals[0];
    assert_eq!(a.id, "fc-1");
    assert_eq!(a.call_id, "fc-1");
    assert_eq!(a.kind, ApprovalType::FunctionCall);
    assert_eq!(a.source, ApprovalSource::Cloud);
    assert_eq!(a.status, ApprovalStatus::Pending);
    assert_eq!(a.run_id, run_id);
    assert_eq!(a.function_name.as_deref(), Some("Write"));
    assert_eq!(a.function_args.as_ref(), Some(&kwargs));
    assert_eq!(a.tool_use_id, call.tool_id);
    assert_eq!(a.requested_at, "2026-03-01T10:20:30.123Z");
    let nested = a.function_call.as_ref().unwrap();
    assert_eq!(nested.call_id, "fc-1");
    assert_eq!(nested.run_id, run_id);
    assert_eq!(nested.spec.function, "Write");
    assert_eq!(nested.spec.kwargs, kwargs);
    // The approval of another run is not ours.
    assert_eq!(ids(&d.approvals(None)), ["fc-1"]);

    let linked = d
        .conversation(&session_id)
        .into_iter()
        .find(|e| e.tool_id == call.tool_id && e.event_type == ConversationEventType::ToolCall)
        .unwrap();
    assert_eq!(linked.approval_status.as_deref(), Some("pending"));
    assert_eq!(linked.approval_id.as_deref(), Some("fc-1"));
    d.wait_session(&session_id, |s| s.status == SessionStatus::WaitingInput);
    match sub.next_event().event {
        Event::NewApproval { approval, .. } => assert_eq!(approval.id, "fc-1"),
        other => panic!("expected new_approval, got {other:?}"),
    }

    let reply = decide(&d, "fc-1", "function_call", "approve", Some("go ahead"));
    assert!(reply.success, "{reply:?}");
    let posts = api.requests_to("/agent/function_calls/fc-1/respond");
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].method, "POST");
    assert_eq!(
        posts[0].body,
        json!({"approved": true, "comment": "go ahead"})
    );
    assert_eq!(
        posts[0].authorization.as_deref(),
        Some(format!("Bearer {KEY}").as_str())
    );
    match sub.next_event().event {
        Event::ApprovalResolved {
            call_id, decision, ..
        } => {
            assert_eq!(call_id, "fc-1");
            assert_eq!(decision, ApprovalStatus::Approved);
        }
        other => panic!("expected approval_resolved, got {other:?}"),
    }

    let stored = get_approval(&d, "fc-1");
    assert_eq!(stored.status, ApprovalStatus::Approved);
    assert_eq!(stored.comment.as_deref(), Some("go ahead"));
    assert_eq!(approval_status_of(&d, &call).as_deref(), Some("approved"));
    d.wait_session(&session_id, |s| s.status == SessionStatus::Running);

    // Later polls (the item has left the pending list) leave the decision alone.
    let seen = api.requests_to(FUNCTION_CALLS).len();
    api.wait_until("two more polls", |r| {
        r.iter().filter(|r| r.path == FUNCTION_CALLS).count() >= seen + 2
    });
    assert_eq!(get_approval(&d, "fc-1").status, ApprovalStatus::Approved);
    assert_eq!(
        api.requests_to("/agent/function_calls/fc-1/respond").len(),
        1
    );
}

#[test]
fn an_approval_gone_from_the_pending_list_was_resolved_elsewhere() {
    let api = CloudStandIn::start();
    let d = cloud_daemon(&api);
    let (session_id, run_id, call) = waiting_session(&d);
    api.add_function_call(function_call(&run_id, "fc-gone", "Write", json!({})));
    d.wait_approvals(Some(&session_id), |a| ids(a) == ["fc-gone"]);
    d.wait_session(&session_id, |s| s.status == SessionStatus::WaitingInput);
    let mut sub = subscribe(&d, &session_id);

    api.remove("fc-gone");
    d.wait_approvals(Some(&session_id), <[Approval]>::is_empty);
    let stored = get_approval(&d, "fc-gone");
    assert_eq!(stored.status, ApprovalStatus::Resolved);
    // Told apart from one whose session ended.
    assert_eq!(stored.comment.as_deref(), Some(ANSWERED_ELSEWHERE));
    assert!(stored.responded_at.is_some());
    assert_eq!(approval_status_of(&d, &call).as_deref(), Some("resolved"));
    match sub.next_event().event {
        Event::ApprovalResolved {
            call_id, decision, ..
        } => {
            assert_eq!(call_id, "fc-gone");
            assert_eq!(decision, ApprovalStatus::Resolved);
        }
        other => panic!("expected approval_resolved, got {other:?}"),
    }
    d.wait_session(&session_id, |s| s.status == SessionStatus::Running);
    // Nothing was sent to the API for it.
    assert!(api.requests().iter().all(|r| r.method == "GET"));
}

#[test]
fn a_409_means_answered_elsewhere_and_other_api_errors_keep_the_approval_pending() {
    let api = CloudStandIn::start();
    let d = cloud_daemon(&api);
    let (session_id, run_id, _) = waiting_session(&d);
    api.add_function_call(function_call(
        &run_id,
        "fc-409",
        "Bash",
        json!({"command": "ls"}),
    ));
    api.add_function_call(function_call(
        &run_id,
        "fc-500",
        "Bash",
        json!({"command": "rm"}),
    ));
    api.respond_with("fc-409", 409);
    api.respond_with("fc-500", 500);
    d.wait_approvals(Some(&session_id), |a| a.len() == 2);

    let reply = decide(&d, "fc-500", "function_call", "deny", Some("not that"));
    assert_eq!(
        reply,
        SendDecisionResult {
            success: false,
            error: Some("failed to deny function call: API error (status 500)".into()),
            reason: Some(RefusalReason::Failed),
        }
    );
    let posts = api.requests_to("/agent/function_calls/fc-500/respond");
    assert_eq!(
        posts[0].body,
        json!({"approved": false, "comment": "not that"})
    );
    assert_eq!(get_approval(&d, "fc-500").status, ApprovalStatus::Pending);

    let reply = decide(&d, "fc-409", "function_call", "approve", None);
    assert_eq!(
        reply,
        SendDecisionResult {
            success: false,
            error: Some("this approval has already been responded to".into()),
            reason: Some(RefusalReason::Resolved),
        }
    );
    let posts = api.requests_to("/agent/function_calls/fc-409/respond");
    assert_eq!(posts[0].body, json!({"approved": true}));
    let answered = get_approval(&d, "fc-409");
    assert_eq!(answered.status, ApprovalStatus::Resolved);
    assert_eq!(answered.comment.as_deref(), Some(ANSWERED_ELSEWHERE));
    assert_eq!(ids(&d.approvals(Some(&session_id))), ["fc-500"]);

    // Deciding it again is refused locally, without asking the API.
    let reply = decide(&d, "fc-409", "function_call", "approve", None);
    assert!(!reply.success);
    assert_eq!(
        api.requests_to("/agent/function_calls/fc-409/respond")
            .len(),
        1
    );
}

#[test]
fn a_cloud_human_contact_is_listed_and_answered_through_the_api() {
    let api = CloudStandIn::start();
    let d = cloud_daemon(&api);
    let (session_id, run_id, _) = waiting_session(&d);
    api.add_human_contact(json!({
        "run_id": run_id,
        "call_id": "hc-1",
        "spec": {"msg": "Which colour?", "subject": "Button"},
        "status": {"requested_at": "2026-03-01T10:20:30+02:00"}
    }));
    let approvals = d.wait_approvals(Some(&session_id), |a| !a.is_empty());
    let a = &approvals[0];
    assert_eq!(a.id, "hc-1");
    assert_eq!(a.kind, ApprovalType::HumanContact);
    assert_eq!(a.source, ApprovalSource::Cloud);
    assert_eq!(a.message.as_deref(), Some("Which colour?"));
    assert_eq!(a.requested_at, "2026-03-01T08:20:30.000Z");
    let spec = &a.human_contact.as_ref().unwrap().spec;
    assert_eq!(spec.msg, "Which colour?");
    assert_eq!(spec.subject.as_deref(), Some("Button"));

    let reply = decide(&d, "hc-1", "human_contact", "respond", Some("blue"));
    assert!(reply.success, "{reply:?}");
    let posts = api.requests_to("/agent/human_contacts/hc-1/respond");
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].body, json!({"response": "blue"}));
    let stored = get_approval(&d, "hc-1");
    assert_eq!(stored.status, ApprovalStatus::Responded);
    assert_eq!(
        stored
            .human_contact
            .unwrap()
            .status
            .unwrap()
            .response
            .as_deref(),
        Some("blue")
    );
}
