//! Cloud approvals end to end: the real daemon polling a loopback stand-in for the HumanLayer
//! API — the key on the wire and nowhere else, backoff and its reset, correlation of a cloud
//! function call with a real session's tool call, decisions sent to the API (409 and other
//! errors included), and approvals resolved elsewhere.

use std::time::{Duration, Instant};

use hld_e2e::cloud::{CloudStandIn, Recorded};
use hld_e2e::{DaemonOptions, LineConn, TestDaemon};
use serde_json::{json, Value};

const KEY: &str = "hl-test-key-5f1c0e9a7d";

const FUNCTION_CALLS: &str = "/agent/function_calls/pending";

/// Options for a daemon on `fake-claude` that polls `api` every `interval_ms`.
fn cloud_options(api: &CloudStandIn, interval_ms: u64, max_backoff_ms: u64) -> DaemonOptions {
    DaemonOptions::fake_claude()
        .arg("--api-base-url")
        .arg(&api.base_url())
        .arg("--approval-poll-interval-ms")
        .arg(&interval_ms.to_string())
        .arg("--approval-max-backoff-ms")
        .arg(&max_backoff_ms.to_string())
}

/// A daemon polling `api` every 50 ms, with the key in `HUMANLAYER_API_KEY`.
fn cloud_daemon(api: &CloudStandIn) -> TestDaemon {
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
fn waiting_session(d: &TestDaemon) -> (String, String, Value) {
    let script = silent_permission_server(d);
    let id = d.launch(json!({
        "query": "scenario:tool make a file",
        "working_dir": workdir(d),
        "mcp_config": {"mcpServers": {"perm": {"command": "/bin/sh", "args": [script]}}},
        "permission_prompt_tool": "mcp__perm__request_permission"
    }));
    let deadline = Instant::now() + Duration::from_secs(10);
    let call = loop {
        let call = d
            .conversation(&id)
            .into_iter()
            .find(|e| e["event_type"] == "tool_call" && e["tool_name"] == "Write");
        if let Some(call) = call {
            break call;
        }
        assert!(
            Instant::now() < deadline,
            "no tool call; log:\n{}",
            d.log_text()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(call["is_completed"], false);
    let session = d.wait_session(&id, |s| s["status"] == "running");
    (id, session["run_id"].as_str().unwrap().to_owned(), call)
}

/// A session that ran to completion. Returns (session id, run id).
fn finished_session(d: &TestDaemon) -> (String, String) {
    let id = d.launch(json!({"query": "hello", "working_dir": workdir(d)}));
    let session = d.wait_ended(&id);
    (id, session["run_id"].as_str().unwrap().to_owned())
}

/// Waits until `fetchApprovals` (with `params`) satisfies `done`; returns the approvals.
fn wait_approvals(d: &TestDaemon, params: Value, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let approvals = d.result("fetchApprovals", params.clone())["approvals"]
            .as_array()
            .unwrap()
            .clone();
        if done(&approvals) {
            return approvals;
        }
        assert!(
            Instant::now() < deadline,
            "approvals never as expected: {approvals:?}\nlog:\n{}",
            d.log_text()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn ids(approvals: &[Value]) -> Vec<&str> {
    approvals
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect()
}

fn function_call(run_id: &str, call_id: &str, tool: &str, kwargs: Value) -> Value {
    json!({
        "run_id": run_id,
        "call_id": call_id,
        "spec": {"fn": tool, "kwargs": kwargs, "channel": {"slack": {"channel_or_user_id": "C1"}}},
        "status": {"requested_at": "2026-03-01T10:20:30.123456"}
    })
}

fn subscribe(d: &TestDaemon, session_id: &str) -> LineConn {
    let mut c = d.conn();
    let reply = c.request(
        "Subscribe",
        json!({"session_id": session_id, "event_types": ["new_approval", "approval_resolved"]}),
        json!(1),
    );
    assert!(reply["result"]["subscription_id"].is_string(), "{reply}");
    c
}

/// The next event on a subscription (heartbeats skipped).
fn next_event(sub: &mut LineConn) -> Value {
    loop {
        let event = sub.recv()["result"]["event"].clone();
        if !event.is_null() {
            return event;
        }
    }
}

/// The tool call event `tool_id` of a session's conversation.
fn tool_call(d: &TestDaemon, session_id: &str, tool_id: &Value) -> Value {
    d.conversation(session_id)
        .into_iter()
        .find(|e| e["event_type"] == "tool_call" && &e["tool_id"] == tool_id)
        .expect("the tool call")
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
    let health = d.result("health", Value::Null).to_string();
    assert!(!health.contains(KEY), "{health}");
    let methods = d.result("describeMethods", Value::Null).to_string();
    assert!(!methods.contains(KEY));

    // Shutdown stops the poller promptly.
    d.signal(nix::sys::signal::Signal::SIGTERM);
    let (status, _) = d.wait_exit(Duration::from_secs(5)).expect("daemon exits");
    assert!(status.success(), "{status:?}");
    let after_exit = api.requests().len();
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(api.requests().len(), after_exit, "no poll after exit");

    let log = d.log_text();
    assert!(log.contains("cloud approvals enabled"), "{log}");
    assert!(log.contains("cannot fetch pending function calls"), "{log}");
    assert!(!log.contains(KEY), "the key is in the log:\n{log}");
}

#[test]
fn without_an_api_key_nothing_is_polled() {
    let api = CloudStandIn::start();
    let d = TestDaemon::start_with(cloud_options(&api, 20, 400));
    std::thread::sleep(Duration::from_millis(300));
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
    let kwargs: Value = serde_json::from_str(call["tool_input_json"].as_str().unwrap()).unwrap();
    api.add_function_call(function_call(&run_id, "fc-1", "Write", kwargs.clone()));
    api.add_function_call(function_call(
        "someone-else",
        "fc-other",
        "Write",
        json!({}),
    ));

    let approvals = wait_approvals(&d, json!({"session_id": session_id}), |a| !a.is_empty());
    let a = &approvals[0];
    assert_eq!(a["id"], "fc-1");
    assert_eq!(a["call_id"], "fc-1");
    assert_eq!(a["type"], "function_call");
    assert_eq!(a["source"], "cloud");
    assert_eq!(a["status"], "pending");
    assert_eq!(a["run_id"], run_id.as_str());
    assert_eq!(a["function_name"], "Write");
    assert_eq!(a["function_args"], kwargs);
    assert_eq!(a["tool_use_id"], call["tool_id"]);
    assert_eq!(a["requested_at"], "2026-03-01T10:20:30.123Z");
    let nested = &a["function_call"];
    assert_eq!(nested["call_id"], "fc-1");
    assert_eq!(nested["run_id"], run_id.as_str());
    assert_eq!(nested["spec"]["fn"], "Write");
    assert_eq!(nested["spec"]["kwargs"], kwargs);
    // The approval of another run is not ours.
    let all = d.result("fetchApprovals", json!({}))["approvals"].clone();
    assert_eq!(ids(all.as_array().unwrap()), ["fc-1"]);

    let linked = tool_call(&d, &session_id, &call["tool_id"]);
    assert_eq!(linked["approval_status"], "pending");
    assert_eq!(linked["approval_id"], "fc-1");
    d.wait_session(&session_id, |s| s["status"] == "waiting_input");
    let event = next_event(&mut sub);
    assert_eq!(event["type"], "new_approval");
    assert_eq!(event["data"]["approval"]["id"], "fc-1");

    let reply = d.result(
        "sendDecision",
        json!({"call_id": "fc-1", "type": "function_call", "decision": "approve",
               "comment": "go ahead"}),
    );
    assert_eq!(reply["success"], true, "{reply}");
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
    let event = next_event(&mut sub);
    assert_eq!(event["type"], "approval_resolved");
    assert_eq!(event["data"]["call_id"], "fc-1");
    assert_eq!(event["data"]["decision"], "approved");

    let stored = d.result("getApproval", json!({"approval_id": "fc-1"}))["approval"].clone();
    assert_eq!(stored["status"], "approved");
    assert_eq!(stored["comment"], "go ahead");
    assert_eq!(
        tool_call(&d, &session_id, &call["tool_id"])["approval_status"],
        "approved"
    );
    d.wait_session(&session_id, |s| s["status"] == "running");

    // Later polls (the item has left the pending list) leave the decision alone.
    let seen = api.requests_to(FUNCTION_CALLS).len();
    api.wait_until("two more polls", |r| {
        r.iter().filter(|r| r.path == FUNCTION_CALLS).count() >= seen + 2
    });
    let stored = d.result("getApproval", json!({"approval_id": "fc-1"}))["approval"].clone();
    assert_eq!(stored["status"], "approved");
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
    wait_approvals(&d, json!({"session_id": session_id}), |a| {
        ids(a) == ["fc-gone"]
    });
    d.wait_session(&session_id, |s| s["status"] == "waiting_input");
    let mut sub = subscribe(&d, &session_id);

    api.remove("fc-gone");
    wait_approvals(&d, json!({"session_id": session_id}), <[Value]>::is_empty);
    let stored = d.result("getApproval", json!({"approval_id": "fc-gone"}))["approval"].clone();
    assert_eq!(stored["status"], "resolved");
    assert!(stored["responded_at"].is_string());
    assert_eq!(
        tool_call(&d, &session_id, &call["tool_id"])["approval_status"],
        "resolved"
    );
    let event = next_event(&mut sub);
    assert_eq!(event["type"], "approval_resolved");
    assert_eq!(event["data"]["call_id"], "fc-gone");
    assert_eq!(event["data"]["decision"], "resolved");
    d.wait_session(&session_id, |s| s["status"] == "running");
    // Nothing was sent to the API for it.
    assert!(api.requests().iter().all(|r| r.method == "GET"));
}

#[test]
fn a_409_means_answered_elsewhere_and_other_api_errors_keep_the_approval_pending() {
    let api = CloudStandIn::start();
    let d = cloud_daemon(&api);
    let (session_id, run_id) = finished_session(&d);
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
    wait_approvals(&d, json!({"session_id": session_id}), |a| a.len() == 2);

    let reply = d.result(
        "sendDecision",
        json!({"call_id": "fc-500", "type": "function_call", "decision": "deny",
               "comment": "not that"}),
    );
    assert_eq!(
        reply,
        json!({"success": false, "error": "failed to deny function call: API error (status 500)",
               "reason": "failed"})
    );
    let posts = api.requests_to("/agent/function_calls/fc-500/respond");
    assert_eq!(
        posts[0].body,
        json!({"approved": false, "comment": "not that"})
    );
    let stored = d.result("getApproval", json!({"approval_id": "fc-500"}))["approval"].clone();
    assert_eq!(stored["status"], "pending");

    let reply = d.result(
        "sendDecision",
        json!({"call_id": "fc-409", "type": "function_call", "decision": "approve"}),
    );
    assert_eq!(
        reply,
        json!({"success": false, "error": "this approval has already been responded to",
               "reason": "resolved"})
    );
    let posts = api.requests_to("/agent/function_calls/fc-409/respond");
    assert_eq!(posts[0].body, json!({"approved": true}));
    let stored = d.result("getApproval", json!({"approval_id": "fc-409"}))["approval"].clone();
    assert_eq!(stored["status"], "resolved");
    let pending =
        d.result("fetchApprovals", json!({"session_id": session_id}))["approvals"].clone();
    assert_eq!(ids(pending.as_array().unwrap()), ["fc-500"]);

    // Deciding it again is refused locally, without asking the API.
    let reply = d.result(
        "sendDecision",
        json!({"call_id": "fc-409", "type": "function_call", "decision": "approve"}),
    );
    assert_eq!(reply["success"], false);
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
    let (session_id, run_id) = finished_session(&d);
    api.add_human_contact(json!({
        "run_id": run_id,
        "call_id": "hc-1",
        "spec": {"msg": "Which colour?", "subject": "Button"},
        "status": {"requested_at": "2026-03-01T10:20:30+02:00"}
    }));
    let approvals = wait_approvals(&d, json!({"session_id": session_id}), |a| !a.is_empty());
    let a = &approvals[0];
    assert_eq!(a["id"], "hc-1");
    assert_eq!(a["type"], "human_contact");
    assert_eq!(a["source"], "cloud");
    assert_eq!(a["message"], "Which colour?");
    assert_eq!(a["requested_at"], "2026-03-01T08:20:30.000Z");
    assert_eq!(a["human_contact"]["spec"]["msg"], "Which colour?");
    assert_eq!(a["human_contact"]["spec"]["subject"], "Button");

    let reply = d.result(
        "sendDecision",
        json!({"call_id": "hc-1", "type": "human_contact", "decision": "respond",
               "comment": "blue"}),
    );
    assert_eq!(reply["success"], true, "{reply}");
    let posts = api.requests_to("/agent/human_contacts/hc-1/respond");
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].body, json!({"response": "blue"}));
    let stored = d.result("getApproval", json!({"approval_id": "hc-1"}))["approval"].clone();
    assert_eq!(stored["status"], "responded");
    assert_eq!(stored["human_contact"]["status"]["response"], "blue");
}
