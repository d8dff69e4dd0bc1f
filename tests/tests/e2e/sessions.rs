//! Sessions end to end: the real daemon supervising `fake-claude`, every method's results and
//! errors, status transitions, stored conversations, continuation, interrupts, restarts and
//! process clean-up.

use std::time::Duration;

use hld_client::protocol::{
    ContinueSession, ContinueSessionParams, ConversationEvent, ConversationEventType,
    CreateApproval, CreateApprovalParams, Event, GetConversation, GetConversationParams,
    GetSessionState, Health, InterruptSession, LaunchSession, LaunchSessionParams, ListSessions,
    McpConfigParam, NoParams, SessionIdParams, SessionStatus, SubscribeParams,
};
use hld_e2e::anchor::{WuiGetSessionState, WuiListSessions, WuiSessionStatus};
use hld_e2e::{
    ended, launch_params, status_change, wait_for, DaemonOptions, Subscription, TestDaemon, WAIT,
};
use serde_json::{json, Value};

const STREAMING_TAIL: &str =
    "--input-format stream-json --output-format stream-json --verbose --print";

fn fake() -> TestDaemon {
    TestDaemon::start_with(DaemonOptions::fake_claude())
}

fn tmp_workdir(d: &TestDaemon) -> String {
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    dir.display().to_string()
}

fn types(events: &[ConversationEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            let role = e.role.as_deref().unwrap_or("-");
            format!("{}/{}", e.event_type.as_str(), role)
        })
        .collect()
}

fn assert_increasing(events: &[ConversationEvent]) {
    let seqs: Vec<i64> = events.iter().map(|e| e.sequence).collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "sequences increase: {seqs:?}"
    );
}

fn id_params(session_id: &str) -> SessionIdParams {
    SessionIdParams {
        session_id: session_id.to_owned(),
    }
}

/// The `old>new` status changes of `session_id` on a subscription, until it ends.
fn status_changes(sub: &mut Subscription, session_id: &str) -> Vec<String> {
    sub.until(|e| ended(e, session_id))
        .iter()
        .filter_map(|e| status_change(&e.event, session_id))
        .map(|(old, new)| format!("{old}>{new}"))
        .collect()
}

fn subscribe(d: &TestDaemon, types: &[&str]) -> Subscription {
    d.subscribe(SubscribeParams {
        event_types: Some(types.iter().map(|&t| t.into()).collect()),
        ..Default::default()
    })
}

/// The argument after `flag` on a command line.
fn after(argv: &[String], flag: &str) -> Option<String> {
    argv.iter()
        .position(|a| a == flag)
        .map(|i| argv[i + 1].clone())
}

fn argv(invocation: &Value) -> Vec<String> {
    serde_json::from_value(invocation["argv"].clone()).unwrap()
}

#[test]
fn a_plain_session_runs_to_completion_and_its_conversation_is_stored() {
    let d = fake();
    let mut sub = subscribe(&d, &["session_status_changed"]);
    let wd = tmp_workdir(&d);
    let r = d.request::<LaunchSession>(LaunchSessionParams {
        model: Some("sonnet".into()),
        ..launch_params("What is 2+2?", &wd)
    });
    let id = r.session_id;
    assert_eq!(id.len(), 36);
    assert_eq!(r.run_id.len(), 36);

    assert_eq!(
        status_changes(&mut sub, &id),
        ["starting>running", "running>completed"]
    );
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Completed);
    assert_eq!(s.query, "What is 2+2?");
    assert_eq!(s.summary, "What is 2+2?");
    assert_eq!(s.working_dir.as_deref(), Some(wd.as_str()));
    let claude_id = s.claude_session_id.clone().unwrap();
    assert_eq!(claude_id.len(), 36);
    assert!(s.num_turns.unwrap() >= 1);
    assert!(s.cost_usd.is_some());
    assert!(s.completed_at.is_some());
    assert!(
        s.live && s.live_until.is_some() && s.exit_code.is_none(),
        "warm: {s:?}"
    );

    let events = d.conversation(&id);
    assert_eq!(types(&events), ["message/user", "message/assistant"]);
    assert_eq!(events[0].content.as_deref(), Some("What is 2+2?"));
    assert_eq!(events[0].sequence, 1);
    assert!(events[1]
        .content
        .as_deref()
        .unwrap()
        .contains("What is 2+2?"));
    assert_increasing(&events);
    for e in &events {
        assert_eq!(e.session_id, id);
        assert_eq!(e.claude_session_id, claude_id);
    }

    // listSessions: newest activity first, Go-compatible fields (the typed decode requires
    // id, run_id, status, start_time, last_activity_at, query and summary).
    let second = d.launch(launch_params("second", &wd));
    d.wait_ended(&second);
    let sessions = d.request::<ListSessions>(NoParams {}).sessions;
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[0].id, second);
    assert_eq!(sessions[1].id, id);
    assert!(!sessions[1].result.as_ref().unwrap().is_error);
}

#[test]
fn list_sessions_is_an_empty_array_on_a_fresh_daemon() {
    let d = fake();
    // The exact reply to `"params": null`: an array, never null.
    assert_eq!(
        d.call("listSessions", Value::Null)["result"],
        json!({"sessions": []})
    );
}

#[test]
fn a_tool_use_without_a_permission_tool_is_denied_and_stored() {
    let d = fake();
    let wd = tmp_workdir(&d);
    let id = d.launch(LaunchSessionParams {
        no_approvals: Some(true),
        ..launch_params("scenario:tool make a file", &wd)
    });
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Completed);
    let events = d.conversation(&id);
    let call = events
        .iter()
        .find(|e| e.event_type == ConversationEventType::ToolCall)
        .expect("a tool call");
    assert_eq!(call.tool_name.as_deref(), Some("Write"));
    let input: Value = serde_json::from_str(call.tool_input_json.as_deref().unwrap()).unwrap();
    assert!(input["file_path"].as_str().unwrap().ends_with("hello.txt"));
    assert!(call.is_completed, "its result marks it completed");
    let result = events
        .iter()
        .find(|e| e.event_type == ConversationEventType::ToolResult)
        .expect("a tool result");
    assert_eq!(result.tool_result_for_id, call.tool_id);
    assert!(result.is_error);
    assert!(result
        .tool_result_content
        .as_deref()
        .unwrap()
        .contains("haven't granted"));
    assert!(!std::path::Path::new(&wd).join("hello.txt").exists());
}

#[test]
fn an_error_result_fails_the_session_with_its_message() {
    let d = fake();
    let mut sub = subscribe(&d, &["session_status_changed"]);
    let id = d.launch(launch_params("scenario:error hi", tmp_workdir(&d)));
    let changes = status_changes(&mut sub, &id);
    assert_eq!(changes.last().unwrap(), "running>failed");
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Failed);
    assert!(s
        .error_message
        .as_deref()
        .unwrap()
        .contains("Not logged in"));
    assert!(s.live, "a failed turn leaves the process warm: {s:?}");
}

#[test]
fn a_crash_without_a_result_fails_the_session() {
    let d = fake();
    let id = d.launch(launch_params("scenario:crash", tmp_workdir(&d)));
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Failed);
    let err = s.error_message.unwrap();
    assert!(err.contains("before reporting a result"), "{err}");
    // What arrived before the crash is kept.
    let events = d.conversation(&id);
    assert!(events
        .iter()
        .any(|e| e.role.as_deref() == Some("assistant")));
}

#[test]
fn malformed_and_unknown_lines_are_not_fatal() {
    let d = fake();
    let id = d.launch(launch_params("scenario:malformed", tmp_workdir(&d)));
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Completed);
    let events = d.conversation(&id);
    assert_eq!(types(&events), ["message/user", "message/assistant"]);
    assert!(d.log_text().contains("malformed") || d.log_text().contains("unknown"));
}

#[test]
fn a_tool_output_of_several_megabytes_is_stored_whole() {
    let d = fake();
    let id = d.launch(launch_params("scenario:big", tmp_workdir(&d)));
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Completed, "{s:?}");
    let events = d.conversation(&id);
    let result = events
        .iter()
        .find(|e| e.event_type == ConversationEventType::ToolResult)
        .expect("tool result");
    assert_eq!(
        result.tool_result_content.as_deref().unwrap().len(),
        5_000_000
    );
}

#[test]
fn custom_instructions_and_every_flag_reach_claude() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude().arg("--live-idle-ms").arg("9"));
    let wd = tmp_workdir(&d);
    let id = d.launch(LaunchSessionParams {
        model: Some("opus".into()),
        max_turns: Some(3),
        system_prompt: Some("SYSTEM".into()),
        append_system_prompt: Some("APPEND".into()),
        custom_instructions: Some("CUSTOM".into()),
        allowed_tools: Some(vec!["Read".into(), "Bash(ls:*)".into()]),
        disallowed_tools: Some(vec!["WebFetch".into()]),
        mcp_config: Some(
            serde_json::from_value(json!({"mcpServers": {"extra": {
                "command": "true", "args": ["x"], "env": {"KEEP": "1"}}}}))
            .unwrap(),
        ),
        no_approvals: Some(true),
        ..launch_params("-starts with a dash", &wd)
    });
    let s = d.wait_ended(&id);
    let inv = d.fake_invocation(s.claude_session_id.as_deref().unwrap());
    let argv = argv(&inv);
    let after = |flag: &str| after(&argv, flag).unwrap_or_else(|| panic!("{flag} in {argv:?}"));
    assert_eq!(after("--model"), "opus");
    assert_eq!(after("--max-turns"), "3");
    assert_eq!(after("--system-prompt"), "SYSTEM");
    let append = after("--append-system-prompt");
    assert!(
        append.contains("APPEND") && append.contains("CUSTOM"),
        "{append}"
    );
    assert_eq!(after("--allowedTools"), "Read,Bash(ls:*)");
    assert_eq!(after("--disallowedTools"), "WebFetch");
    assert_eq!(after("--output-format"), "stream-json");
    // No prompt on the command line: it is the first message on stdin.
    assert_eq!(argv[argv.len() - 6..].join(" "), STREAMING_TAIL, "{argv:?}");
    assert_eq!(inv["cwd"], wd);
    assert_eq!(inv["prompt"], "-starts with a dash");

    // The MCP config file is private and every server carries the session's identity.
    let config_path = after("--mcp-config");
    let server = &inv["mcp_config"]["mcpServers"]["extra"];
    assert_eq!(server["env"]["KEEP"], "1");
    assert_eq!(server["env"]["HUMANLAYER_SESSION_ID"], id);
    assert_eq!(server["env"]["HUMANLAYER_RUN_ID"], s.run_id);
    assert_eq!(
        server["env"]["HUMANLAYER_DAEMON_SOCKET"],
        d.socket.display().to_string()
    );
    d.wait_session(&id, |s| !s.live);
    assert!(
        !std::path::Path::new(&config_path).exists(),
        "the MCP config file is removed when the process ends"
    );
}

#[test]
fn launch_errors() {
    let d = fake();
    let mut c = d.conn();
    let e = c.request("launchSession", json!({}), json!(1));
    assert_eq!(e["error"]["code"], -32602);
    assert_eq!(e["error"]["message"], "query is required");
    let e = c.request("launchSession", json!({"query": "  "}), json!(2));
    assert_eq!(e["error"]["code"], -32602);
    assert_eq!(e["error"]["data"]["param"], "query");
    let e = c.request(
        "launchSession",
        json!({"query": "x", "working_dir": "/definitely/not/here"}),
        json!(3),
    );
    assert_eq!(e["error"]["code"], -32602);
    assert_eq!(e["error"]["data"]["param"], "working_dir");
    let e = c.request(
        "launchSession",
        json!({"query": "x", "max_turns": "many"}),
        json!(4),
    );
    assert_eq!(e["error"]["data"]["param"], "max_turns");
    let e = c.request(
        "launchSession",
        json!({"query": "x", "mcp_config": "{not json"}),
        json!(5),
    );
    assert_eq!(e["error"]["data"]["param"], "mcp_config");
    assert!(d.request::<ListSessions>(NoParams {}).sessions.is_empty());
}

#[test]
fn state_and_conversation_errors() {
    let d = fake();
    // Unknown ids: -32602 naming what was not found.
    let e = d
        .try_request::<GetSessionState>(id_params("nope"))
        .unwrap_err();
    assert_eq!(e.code, -32602);
    assert!(e.message.contains("session not found: nope"), "{e:?}");
    let e = d
        .try_request::<GetConversation>(GetConversationParams {
            session_id: Some("nope".into()),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.code, -32602);
    assert!(e.message.contains("not found"), "{e:?}");
    let e = d
        .try_request::<InterruptSession>(id_params("nope"))
        .unwrap_err();
    assert_eq!(e.code, -32602);
    let e = d
        .try_request::<ContinueSession>(ContinueSessionParams {
            session_id: "nope".into(),
            query: "x".into(),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.code, -32602);
    // An unknown Claude session id is simply empty.
    let events = d
        .request::<GetConversation>(GetConversationParams {
            claude_session_id: Some("nope".into()),
            ..Default::default()
        })
        .events;
    assert!(events.is_empty());

    // Missing params, on the wire.
    let mut c = d.conn();
    let e = c.request("getSessionState", json!({}), json!(1));
    assert_eq!(e["error"]["message"], "session_id is required");
    let e = c.request("getConversation", json!({}), json!(2));
    assert_eq!(e["error"]["code"], -32602);
    let e = c.request("continueSession", json!({"session_id": "nope"}), json!(3));
    assert_eq!(e["error"]["message"], "query is required");
}

#[test]
fn conversation_by_claude_session_id_and_paging() {
    let d = fake();
    let id = d.launch(launch_params("scenario:slow", tmp_workdir(&d)));
    let s = d.wait_ended(&id);
    let all = d.conversation(&id);
    assert_eq!(all.len(), 21, "query + 20 chunks");
    let by_claude = d
        .request::<GetConversation>(GetConversationParams {
            claude_session_id: s.claude_session_id,
            ..Default::default()
        })
        .events;
    assert_eq!(by_claude.len(), 21);
    let page = d
        .request::<GetConversation>(GetConversationParams {
            session_id: Some(id),
            after_sequence: Some(5),
            limit: Some(4),
            ..Default::default()
        })
        .events;
    let seqs: Vec<i64> = page.iter().map(|e| e.sequence).collect();
    assert_eq!(seqs, [6, 7, 8, 9]);
}

/// While an interrupt winds down, lists report the session as `running` with
/// `interrupting: true`, so that the anchor's desktop client (a closed status enum) can decode
/// them; `getSessionState` and the events say `completing`. The lists are decoded from the raw
/// replies with the strict mirror of that client.
#[test]
fn lists_stay_decodable_by_strict_clients_during_an_interrupt() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "100")
            .env("FAKE_CLAUDE_INTERRUPT_DELAY_MS", "1500"),
    );
    let wd = tmp_workdir(&d);
    let id = d.launch(launch_params("scenario:slow count", &wd));
    d.wait_session(&id, |s| s.claude_session_id.is_some());
    d.request::<InterruptSession>(id_params(&id));
    let state: WuiGetSessionState = serde_json::from_value(
        d.call("getSessionState", json!({"session_id": id}))["result"].clone(),
    )
    .unwrap();
    assert_eq!(state.session.status, "completing");

    let listed = d.call("listSessions", json!({}))["result"].clone();
    let strict: WuiListSessions = serde_json::from_value(listed.clone())
        .unwrap_or_else(|e| panic!("a strict client cannot decode {listed}: {e}"));
    assert_eq!(strict.sessions[0].id, id);
    assert_eq!(strict.sessions[0].status, WuiSessionStatus::Running);
    assert_eq!(listed["sessions"][0]["interrupting"], true);
    // Still winding down: the list was read during the interrupt, not after it.
    assert_eq!(d.state(&id).status, SessionStatus::Completing);

    let ended = d.wait_ended(&id);
    assert_eq!(ended.status, SessionStatus::Completed);
    let listed = d.call("listSessions", json!({}))["result"].clone();
    let strict: WuiListSessions = serde_json::from_value(listed.clone()).unwrap();
    assert_eq!(strict.sessions[0].status, WuiSessionStatus::Completed);
    assert_eq!(listed["sessions"][0]["interrupting"], false);
}

#[test]
fn interrupt_then_continue() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude().env("FAKE_CLAUDE_DELAY_MS", "300"));
    let mut sub = subscribe(&d, &["session_status_changed"]);
    let wd = tmp_workdir(&d);
    let id = d.launch(LaunchSessionParams {
        model: Some("haiku".into()),
        ..launch_params("scenario:slow count", &wd)
    });
    d.wait_session(&id, |s| s.claude_session_id.is_some());
    let r = d.request::<InterruptSession>(id_params(&id));
    assert!(r.success);
    assert_eq!(r.session_id, id);
    assert_eq!(r.status, "completing");
    assert!(!r.message.is_empty());
    assert_eq!(
        status_changes(&mut sub, &id),
        [
            "starting>running",
            "running>completing",
            "completing>completed"
        ]
    );
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Completed);
    assert!(s.interrupted);
    assert_eq!(s.error_message, None, "an interrupt is not an error: {s:?}");
    let events = d.conversation(&id);
    assert!(
        events
            .iter()
            .any(|e| e.content.as_deref() == Some("[Request interrupted by user]")),
        "the interrupt marker is stored"
    );
    // An ended session cannot be interrupted again.
    let e = d
        .try_request::<InterruptSession>(id_params(&id))
        .unwrap_err();
    assert_eq!(e.code, -32602);

    // It can be continued: new ids, resumed Claude session, inherited settings.
    let c = d.request::<ContinueSession>(ContinueSessionParams {
        session_id: id.clone(),
        query: "go on".into(),
        max_turns: Some(2),
        ..Default::default()
    });
    assert_eq!(c.parent_session_id, id);
    assert_eq!(c.claude_session_id, "");
    let child = c.session_id;
    assert_ne!(child, id);
    assert_ne!(c.run_id, s.run_id);
    let cs = d.wait_ended(&child);
    assert_eq!(cs.status, SessionStatus::Completed);
    assert_eq!(cs.parent_session_id.as_deref(), Some(id.as_str()));
    assert_eq!(cs.model.as_deref(), Some("haiku"), "the model is inherited");
    assert_eq!(cs.working_dir.as_deref(), Some(wd.as_str()));
    let inv = d.fake_invocation(cs.claude_session_id.as_deref().unwrap());
    assert_eq!(after(&argv(&inv), "--resume"), s.claude_session_id);

    // The child's conversation is the whole chain, oldest first.
    let chain = d.conversation(&child);
    assert_eq!(chain[0].content.as_deref(), Some("scenario:slow count"));
    assert!(chain.iter().any(|e| e.content.as_deref() == Some("go on")));
    assert!(chain.iter().any(|e| e
        .content
        .as_deref()
        .is_some_and(|c| c.contains("Continuing"))));
    assert_increasing(&chain);
    assert_eq!(chain.last().unwrap().session_id, child);
}

#[test]
fn continue_inherits_everything_but_max_turns_and_request_fields_override() {
    let d = fake();
    let wd = tmp_workdir(&d);
    let parent = d.launch(LaunchSessionParams {
        model: Some("opus".into()),
        max_turns: Some(7),
        system_prompt: Some("SYS".into()),
        append_system_prompt: Some("APP".into()),
        custom_instructions: Some("CUSTOM".into()),
        allowed_tools: Some(vec!["Read".into()]),
        disallowed_tools: Some(vec!["Bash".into()]),
        permission_prompt_tool: Some("mcp__perm__ask".into()),
        mcp_config: Some(
            serde_json::from_value(json!({"mcpServers": {"perm": {"command": "true"}}})).unwrap(),
        ),
        ..launch_params("first", &wd)
    });
    let ps = d.wait_ended(&parent);
    let child = d
        .request::<ContinueSession>(ContinueSessionParams {
            session_id: parent.clone(),
            query: "second".into(),
            system_prompt: Some("NEW-SYS".into()),
            // A string holding JSON, as the anchor's clients send it to continueSession.
            mcp_config: Some(McpConfigParam::Json(
                r#"{"mcpServers":{"other":{"command":"true"}}}"#.into(),
            )),
            ..Default::default()
        })
        .session_id;
    let cs = d.wait_ended(&child);
    let inv = d.fake_invocation(cs.claude_session_id.as_deref().unwrap());
    let argv = argv(&inv);
    let after = |flag: &str| after(&argv, flag);
    assert_eq!(after("--model").as_deref(), Some("opus"));
    assert_eq!(after("--system-prompt").as_deref(), Some("NEW-SYS"));
    let append = after("--append-system-prompt").unwrap();
    assert!(append.contains("APP") && append.contains("CUSTOM"));
    assert_eq!(after("--allowedTools").as_deref(), Some("Read"));
    assert_eq!(after("--disallowedTools").as_deref(), Some("Bash"));
    assert_eq!(
        after("--permission-prompt-tool").as_deref(),
        Some("mcp__perm__ask")
    );
    assert_eq!(after("--max-turns"), None, "max_turns is not inherited");
    assert_eq!(after("--resume"), ps.claude_session_id);
    assert!(
        inv["mcp_config"]["mcpServers"]["other"].is_object(),
        "override wins"
    );
    assert!(inv["mcp_config"]["mcpServers"]["perm"].is_null());
    assert_eq!(inv["cwd"], wd);
}

#[test]
fn continuing_a_running_session_interrupts_it_first() {
    let d = fake();
    let id = d.launch(launch_params("scenario:slow", tmp_workdir(&d)));
    d.wait_session(&id, |s| s.claude_session_id.is_some());
    let child = d
        .request::<ContinueSession>(ContinueSessionParams {
            session_id: id.clone(),
            query: "next".into(),
            ..Default::default()
        })
        .session_id;
    let parent = d.wait_ended(&id);
    assert_eq!(parent.status, SessionStatus::Completed);
    assert!(parent.interrupted);
    assert_eq!(d.wait_ended(&child).status, SessionStatus::Completed);
}

#[test]
fn a_missing_claude_is_reported_and_launch_fails_cleanly() {
    let d = TestDaemon::start_with(
        DaemonOptions::default()
            .arg("--claude-path")
            .arg("/nonexistent/claude")
            .env("PATH", "/usr/bin:/bin"),
    );
    let health = d.request::<Health>(NoParams {});
    assert_eq!(health.status, "ok");
    assert!(!health.claude.unwrap().available);
    let e = d
        .try_request::<LaunchSession>(launch_params("hi", "/tmp"))
        .unwrap_err();
    assert_eq!(e.code, -32603);
    assert!(e.message.contains("claude CLI not found"), "{e:?}");
    assert!(d.request::<ListSessions>(NoParams {}).sessions.is_empty());
}

#[test]
fn health_reports_the_claude_version() {
    let d = fake();
    let claude = d.request::<Health>(NoParams {}).claude.unwrap();
    assert!(claude.available);
    assert_eq!(claude.version.as_deref(), Some("2.1.197 (Claude Code)"));
}

/// `health` reports what the daemon found at start-up and at the last launch, which looks
/// again: a `claude` installed after start-up is found by the next launch, then reported.
#[test]
fn a_launch_looks_for_claude_again_and_health_reports_what_it_found() {
    let bin = tempfile::tempdir().unwrap();
    let claude = bin.path().join("claude");
    let d = TestDaemon::start_with(
        DaemonOptions::default()
            .arg("--claude-path")
            .arg(&claude.display().to_string())
            .env("PATH", "/usr/bin:/bin"),
    );
    assert!(!d.request::<Health>(NoParams {}).claude.unwrap().available);
    std::fs::copy(hld_e2e::fake_claude(), &claude).unwrap();
    let id = d.launch(launch_params("scenario:plain hi", tmp_workdir(&d)));
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
    let found = d.request::<Health>(NoParams {}).claude.unwrap();
    assert!(found.available, "{found:?}");
    assert_eq!(found.path, Some(claude.display().to_string()));
    assert_eq!(found.version.as_deref(), Some("2.1.197 (Claude Code)"));
}

fn pids_of(marker: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| String::from_utf8_lossy(&env).contains(marker))
                .unwrap_or(false)
        })
        .collect()
}

/// Waits until no process but `daemon` carries `marker` in its environment (`within` at
/// most); returns those left.
fn wait_no_process(marker: &str, daemon: Option<i32>, within: Duration) -> Vec<i32> {
    let mut left = Vec::new();
    wait_for(within, || {
        left = pids_of(marker);
        left.retain(|&p| Some(p) != daemon);
        left.is_empty().then_some(())
    });
    left
}

#[test]
fn no_claude_process_outlives_the_daemon() {
    let mut d = fake();
    let marker = format!("FAKE_CLAUDE_HOME={}", d.dir.join("fake-claude").display());
    let ids: Vec<String> = (0..3)
        .map(|_| d.launch(launch_params("scenario:slow", tmp_workdir(&d))))
        .collect();
    for id in &ids {
        d.wait_session(id, |s| s.claude_session_id.is_some());
    }
    assert!(
        !pids_of(&marker).is_empty(),
        "fake-claude processes are running"
    );
    d.signal(nix::sys::signal::Signal::SIGTERM);
    let (status, _) = d.wait_exit(Duration::from_secs(6)).expect("daemon exits");
    assert!(status.success());
    assert_eq!(
        wait_no_process(&marker, None, Duration::from_secs(2)),
        Vec::<i32>::new(),
        "no fake-claude left"
    );
}

#[test]
fn a_restart_marks_orphans_and_loses_no_acknowledged_event() {
    let base = hld_e2e::short_tempdir();
    let dir = base.path().to_path_buf();
    let options = || DaemonOptions {
        dir: Some(dir.clone()),
        ..DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "20")
            .env("FAKE_CLAUDE_COUNT", "100000")
    };
    let mut d = TestDaemon::start_with(options());
    let mut sub = subscribe(&d, &["conversation_updated"]);
    let id = d.launch(launch_params("scenario:slow", "/tmp"));
    // Every event published was stored first: collect what we were told about.
    let seen: Vec<i64> = std::iter::repeat_with(|| match sub.next_event().event {
        Event::ConversationUpdated { event, .. } => event.id,
        other => panic!("not subscribed to {other:?}"),
    })
    .take(30)
    .collect();
    d.kill9();
    drop(d);
    let d = TestDaemon::start_with(options());
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Failed);
    assert_eq!(s.error_message.as_deref(), Some("daemon restarted"));
    let stored: Vec<i64> = d.conversation(&id).iter().map(|e| e.id).collect();
    for id in &seen {
        assert!(
            stored.contains(id),
            "acknowledged event {id} survived the kill"
        );
    }
}

#[test]
fn a_claude_that_cannot_start_fails_the_session_with_a_sanitised_error() {
    let base = hld_e2e::short_tempdir();
    // An executable whose interpreter does not exist: exec fails.
    let broken = base.path().join("claude");
    std::fs::write(&broken, "#!/nonexistent/interpreter\n").unwrap();
    std::fs::set_permissions(&broken, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let d = TestDaemon::start_with(
        DaemonOptions::default()
            .arg("--claude-path")
            .arg(&broken.display().to_string()),
    );
    let mut sub = subscribe(&d, &["session_status_changed"]);
    let e = d
        .try_request::<LaunchSession>(launch_params("hi", "/tmp"))
        .unwrap_err();
    assert_eq!(e.code, -32603);
    assert!(
        e.message.starts_with("failed to launch Claude session"),
        "{e:?}"
    );
    assert!(
        !e.message.contains('/'),
        "no paths in a fault message: {e:?}"
    );
    let sessions = d.request::<ListSessions>(NoParams {}).sessions;
    let id = sessions[0].id.clone();
    assert_eq!(sessions[0].status, SessionStatus::Failed);
    assert_eq!(status_changes(&mut sub, &id), ["starting>failed"]);
}

#[test]
fn a_killed_daemon_takes_its_claude_processes_with_it() {
    let mut d = fake();
    let marker = format!("FAKE_CLAUDE_HOME={}", d.dir.join("fake-claude").display());
    for _ in 0..2 {
        let id = d.launch(launch_params("scenario:slow", tmp_workdir(&d)));
        d.wait_session(&id, |s| s.claude_session_id.is_some());
    }
    let daemon = d.pid() as i32;
    let children: Vec<i32> = pids_of(&marker)
        .into_iter()
        .filter(|p| *p != daemon)
        .collect();
    assert!(
        children.len() >= 2,
        "claude (and MCP servers) running: {children:?}"
    );
    d.kill9();
    assert_eq!(
        wait_no_process(&marker, None, Duration::from_secs(3)),
        Vec::<i32>::new(),
        "no Claude runs unsupervised"
    );
}

/// What a daemon restarted after a kill must find: an intact database, every session it had
/// running failed, every event it had published stored, no pending local approval, no
/// `claude` of the killed daemon alive, and no MCP config left behind.
fn check_recovered(d: &TestDaemon, published: &[(String, i64)], marker: &str) {
    let db = rusqlite::Connection::open(d.dir.join("hld.db")).unwrap();
    let integrity: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    for (session, event) in published {
        let s = d.wait_ended(session);
        assert!(
            matches!(s.status, SessionStatus::Failed | SessionStatus::Completed),
            "{s:?}"
        );
        let stored: Vec<i64> = d.conversation(session).iter().map(|e| e.id).collect();
        assert!(stored.contains(event), "published event {event} was stored");
    }
    assert!(d.approvals(None).is_empty(), "no approval left pending");
    assert_eq!(
        wait_no_process(marker, Some(d.pid() as i32), WAIT),
        Vec::<i32>::new()
    );
    let run = d.dir.join("run");
    let left: Vec<_> = std::fs::read_dir(&run)
        .map(|dir| dir.filter_map(Result::ok).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left in {}: {left:?}", run.display());
}

#[test]
fn twenty_kills_at_random_points_lose_nothing_and_leave_nothing_behind() {
    let base = hld_e2e::short_tempdir();
    let dir = base.path().to_path_buf();
    let options = || DaemonOptions {
        dir: Some(dir.clone()),
        ..DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "5")
            .env("FAKE_CLAUDE_COUNT", "100000")
    };
    let marker = format!("FAKE_CLAUDE_HOME={}", dir.join("fake-claude").display());
    let mut published = Vec::new();
    // The kill points: after a pseudo-random number (1–40) of published events.
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    for _ in 0..20 {
        let mut d = TestDaemon::start_with(options());
        check_recovered(&d, &published, &marker);
        let mut sub = subscribe(&d, &["conversation_updated"]);
        let id = d.launch(launch_params("scenario:slow", "/tmp"));
        d.request::<CreateApproval>(CreateApprovalParams {
            session_id: Some(id.clone()),
            tool_name: Some("Bash".into()),
            tool_input: Some(json!({"command": "ls"})),
            ..Default::default()
        });
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let events = 1 + (seed >> 16) % 40;
        for _ in 0..events {
            match sub.next_event().event {
                Event::ConversationUpdated { event, .. } => {
                    published.push((id.clone(), event.id));
                }
                other => panic!("not subscribed to {other:?}"),
            }
        }
        d.kill9();
    }
    let d = TestDaemon::start_with(options());
    check_recovered(&d, &published, &marker);
}

#[test]
fn a_killed_claude_fails_its_session_and_keeps_what_it_said() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "20")
            .env("FAKE_CLAUDE_COUNT", "100000"),
    );
    let marker = format!("FAKE_CLAUDE_HOME={}", d.dir.join("fake-claude").display());
    let id = d.launch(launch_params("scenario:slow", "/tmp"));
    wait_for(WAIT, || (d.conversation(&id).len() >= 5).then_some(())).expect("it streams");
    let daemon = d.pid() as i32;
    for pid in pids_of(&marker).into_iter().filter(|&p| p != daemon) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Failed);
    let error = s.error_message.unwrap_or_default();
    assert!(error.contains("claude exited with a signal"), "{error}");
    assert!(d.conversation(&id).len() >= 5);
    assert_eq!(
        wait_no_process(&marker, Some(daemon), WAIT),
        Vec::<i32>::new()
    );
}

#[test]
fn a_killed_approvals_server_ends_its_session_and_leaves_no_approval_pending() {
    let options = DaemonOptions::fake_claude_with_approvals_server().arg("--live-idle-ms");
    let d = TestDaemon::start_with(options.arg("0"));
    let marker = format!("FAKE_CLAUDE_HOME={}", d.dir.join("fake-claude").display());
    let id = d.launch(launch_params("scenario:tool", tmp_workdir(&d)));
    d.wait_approvals(Some(&id), |pending| pending.len() == 1);
    // The approvals MCP server that asked, waiting for the decision: killed mid-approval.
    let servers: Vec<i32> = pids_of(&marker)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmd| String::from_utf8_lossy(&cmd).contains("claude_approvals"))
        })
        .collect();
    assert_eq!(servers.len(), 1, "one approvals server: {servers:?}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(servers[0]),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    // The tool call is refused (no answer is no permission); the session ends and takes its
    // approval with it.
    let s = d.wait_ended(&id);
    assert!(
        matches!(s.status, SessionStatus::Completed | SessionStatus::Failed),
        "{s:?}"
    );
    assert!(
        d.approvals(Some(&id)).is_empty(),
        "no approval left pending"
    );
    assert!(
        !std::path::Path::new(&tmp_workdir(&d))
            .join("hello.txt")
            .exists(),
        "the unapproved write did not happen"
    );
    assert_eq!(
        wait_no_process(&marker, Some(d.pid() as i32), WAIT),
        Vec::<i32>::new()
    );
}
