//! Sessions end to end: the real daemon supervising `fake-claude`, every method's results and
//! errors, status transitions, stored conversations, continuation, interrupts, restarts and
//! process clean-up.

use std::time::{Duration, Instant};

use hld_e2e::anchor::{WuiGetSessionState, WuiListSessions, WuiSessionStatus};
use hld_e2e::{DaemonOptions, LineConn, TestDaemon};
use serde_json::{json, Value};

fn fake() -> TestDaemon {
    TestDaemon::start_with(DaemonOptions::fake_claude())
}

fn tmp_workdir(d: &TestDaemon) -> String {
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    dir.display().to_string()
}

fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            let role = e["role"].as_str().unwrap_or("-");
            format!("{}/{}", e["event_type"].as_str().unwrap(), role)
        })
        .collect()
}

fn assert_increasing(events: &[Value]) {
    let seqs: Vec<i64> = events
        .iter()
        .map(|e| e["sequence"].as_i64().unwrap())
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "sequences increase: {seqs:?}"
    );
}

/// Reads `session_status_changed` events from a subscription until `session_id` ends.
fn status_changes(sub: &mut LineConn, session_id: &str) -> Vec<(String, String)> {
    let mut changes = Vec::new();
    loop {
        let line = sub.recv();
        let event = &line["result"]["event"];
        if event["type"] != "session_status_changed" || event["data"]["session_id"] != session_id {
            continue;
        }
        let data = &event["data"];
        let change = (
            data["old_status"].as_str().unwrap().to_owned(),
            data["new_status"].as_str().unwrap().to_owned(),
        );
        let end = matches!(change.1.as_str(), "completed" | "failed");
        changes.push(change);
        if end {
            return changes;
        }
    }
}

fn subscribe(d: &TestDaemon, types: &[&str]) -> LineConn {
    let mut c = d.conn();
    let reply = c.request("Subscribe", json!({"event_types": types}), json!(1));
    assert!(reply["result"]["subscription_id"].is_string());
    c
}

#[test]
fn a_plain_session_runs_to_completion_and_its_conversation_is_stored() {
    let d = fake();
    let mut sub = subscribe(&d, &["session_status_changed"]);
    let wd = tmp_workdir(&d);
    let r = d.result(
        "launchSession",
        json!({"query": "What is 2+2?", "model": "sonnet", "working_dir": wd}),
    );
    let id = r["session_id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 36);
    assert_eq!(r["run_id"].as_str().unwrap().len(), 36);

    assert_eq!(
        status_changes(&mut sub, &id),
        [
            ("starting".to_owned(), "running".to_owned()),
            ("running".to_owned(), "completed".to_owned())
        ]
    );
    let s = d.wait_ended(&id);
    assert_eq!(s["status"], "completed");
    assert_eq!(s["query"], "What is 2+2?");
    assert_eq!(s["summary"], "What is 2+2?");
    assert_eq!(s["working_dir"], wd);
    assert!(s["claude_session_id"].as_str().unwrap().len() == 36);
    assert!(s["num_turns"].as_i64().unwrap() >= 1);
    assert!(s["cost_usd"].as_f64().is_some());
    assert!(s["completed_at"].is_string());
    assert_eq!(s["exit_code"], 0);

    let events = d.conversation(&id);
    assert_eq!(types(&events), ["message/user", "message/assistant"]);
    assert_eq!(events[0]["content"], "What is 2+2?");
    assert_eq!(events[0]["sequence"], 1);
    assert!(events[1]["content"]
        .as_str()
        .unwrap()
        .contains("What is 2+2?"));
    assert_increasing(&events);
    for e in &events {
        assert_eq!(e["session_id"], id);
        assert_eq!(e["claude_session_id"], s["claude_session_id"]);
    }

    // listSessions: newest activity first, Go-compatible fields.
    let second = d.launch(json!({"query": "second", "working_dir": wd}));
    d.wait_ended(&second);
    let list = d.result("listSessions", json!({}));
    let sessions = list["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[0]["id"], second);
    assert_eq!(sessions[1]["id"], id);
    for key in [
        "id",
        "run_id",
        "status",
        "start_time",
        "last_activity_at",
        "query",
        "summary",
    ] {
        assert!(!sessions[1][key].is_null(), "{key} present");
    }
    assert_eq!(sessions[1]["result"]["is_error"], false);
}

#[test]
fn list_sessions_is_an_empty_array_on_a_fresh_daemon() {
    let d = fake();
    assert_eq!(
        d.result("listSessions", Value::Null),
        json!({"sessions": []})
    );
}

#[test]
fn a_tool_use_without_a_permission_tool_is_denied_and_stored() {
    let d = fake();
    let wd = tmp_workdir(&d);
    let id = d.launch(
        json!({"query": "scenario:tool make a file", "working_dir": wd, "no_approvals": true}),
    );
    let s = d.wait_ended(&id);
    assert_eq!(s["status"], "completed");
    let events = d.conversation(&id);
    let call = events
        .iter()
        .find(|e| e["event_type"] == "tool_call")
        .expect("a tool call");
    assert_eq!(call["tool_name"], "Write");
    let input: Value = serde_json::from_str(call["tool_input_json"].as_str().unwrap()).unwrap();
    assert!(input["file_path"].as_str().unwrap().ends_with("hello.txt"));
    assert_eq!(call["is_completed"], true, "its result marks it completed");
    let result = events
        .iter()
        .find(|e| e["event_type"] == "tool_result")
        .expect("a tool result");
    assert_eq!(result["tool_result_for_id"], call["tool_id"]);
    assert_eq!(result["is_error"], true);
    assert!(result["tool_result_content"]
        .as_str()
        .unwrap()
        .contains("haven't granted"));
    assert!(!std::path::Path::new(&wd).join("hello.txt").exists());
}

#[test]
fn an_error_result_fails_the_session_with_its_message() {
    let d = fake();
    let mut sub = subscribe(&d, &["session_status_changed"]);
    let id = d.launch(json!({"query": "scenario:error hi", "working_dir": tmp_workdir(&d)}));
    let changes = status_changes(&mut sub, &id);
    assert_eq!(
        changes.last().unwrap(),
        &("running".to_owned(), "failed".to_owned())
    );
    let s = d.wait_ended(&id);
    assert_eq!(s["status"], "failed");
    assert!(s["error_message"]
        .as_str()
        .unwrap()
        .contains("Not logged in"));
    assert_eq!(s["exit_code"], 1);
}

#[test]
fn a_crash_without_a_result_fails_the_session() {
    let d = fake();
    let id = d.launch(json!({"query": "scenario:crash", "working_dir": tmp_workdir(&d)}));
    let s = d.wait_ended(&id);
    assert_eq!(s["status"], "failed");
    let err = s["error_message"].as_str().unwrap();
    assert!(err.contains("before reporting a result"), "{err}");
    // What arrived before the crash is kept.
    let events = d.conversation(&id);
    assert!(events.iter().any(|e| e["role"] == "assistant"));
}

#[test]
fn malformed_and_unknown_lines_are_not_fatal() {
    let d = fake();
    let id = d.launch(json!({"query": "scenario:malformed", "working_dir": tmp_workdir(&d)}));
    let s = d.wait_ended(&id);
    assert_eq!(s["status"], "completed");
    let events = d.conversation(&id);
    assert_eq!(types(&events), ["message/user", "message/assistant"]);
    assert!(d.log_text().contains("malformed") || d.log_text().contains("unknown"));
}

#[test]
fn a_tool_output_of_several_megabytes_is_stored_whole() {
    let d = fake();
    let id = d.launch(json!({"query": "scenario:big", "working_dir": tmp_workdir(&d)}));
    let s = d.wait_ended(&id);
    assert_eq!(s["status"], "completed", "{s}");
    let events = d.conversation(&id);
    let result = events
        .iter()
        .find(|e| e["event_type"] == "tool_result")
        .expect("tool result");
    assert_eq!(
        result["tool_result_content"].as_str().unwrap().len(),
        5_000_000
    );
}

#[test]
fn custom_instructions_and_every_flag_reach_claude() {
    let d = fake();
    let wd = tmp_workdir(&d);
    let id = d.launch(json!({
        "query": "-starts with a dash",
        "model": "opus",
        "working_dir": wd,
        "max_turns": 3,
        "system_prompt": "SYSTEM",
        "append_system_prompt": "APPEND",
        "custom_instructions": "CUSTOM",
        "allowed_tools": ["Read", "Bash(ls:*)"],
        "disallowed_tools": ["WebFetch"],
        "mcp_config": {"mcpServers": {"extra": {"command": "true", "args": ["x"], "env": {"KEEP": "1"}}}},
        "no_approvals": true
    }));
    let s = d.wait_ended(&id);
    let inv = d.fake_invocation(s["claude_session_id"].as_str().unwrap());
    let argv: Vec<String> = serde_json::from_value(inv["argv"].clone()).unwrap();
    let after = |flag: &str| -> String {
        let i = argv
            .iter()
            .position(|a| a == flag)
            .unwrap_or_else(|| panic!("{flag} in {argv:?}"));
        argv[i + 1].clone()
    };
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
    assert!(argv.contains(&"--verbose".to_owned()) && argv.contains(&"--print".to_owned()));
    assert_eq!(argv[argv.len() - 2], "--");
    assert_eq!(argv[argv.len() - 1], "-starts with a dash");
    assert_eq!(inv["cwd"], wd);
    assert_eq!(inv["prompt"], "-starts with a dash");

    // The MCP config file is private and every server carries the session's identity.
    let config_path = after("--mcp-config");
    let server = &inv["mcp_config"]["mcpServers"]["extra"];
    assert_eq!(server["env"]["KEEP"], "1");
    assert_eq!(server["env"]["HUMANLAYER_SESSION_ID"], id);
    assert_eq!(server["env"]["HUMANLAYER_RUN_ID"], s["run_id"]);
    assert_eq!(
        server["env"]["HUMANLAYER_DAEMON_SOCKET"],
        d.socket.display().to_string()
    );
    assert!(
        !std::path::Path::new(&config_path).exists(),
        "the MCP config file is removed when the session ends"
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
    assert_eq!(d.result("listSessions", json!({}))["sessions"], json!([]));
}

#[test]
fn state_and_conversation_errors() {
    let d = fake();
    let mut c = d.conn();
    let e = c.request("getSessionState", json!({"session_id": "nope"}), json!(1));
    assert_eq!(e["error"]["code"], -32602);
    assert!(e["error"]["message"]
        .as_str()
        .unwrap()
        .contains("session not found: nope"));
    let e = c.request("getSessionState", json!({}), json!(2));
    assert_eq!(e["error"]["message"], "session_id is required");
    let e = c.request("getConversation", json!({"session_id": "nope"}), json!(3));
    assert_eq!(e["error"]["code"], -32602);
    assert!(e["error"]["message"]
        .as_str()
        .unwrap()
        .contains("not found"));
    let e = c.request("getConversation", json!({}), json!(4));
    assert_eq!(e["error"]["code"], -32602);
    // An unknown Claude session id is simply empty.
    let r = c.request(
        "getConversation",
        json!({"claude_session_id": "nope"}),
        json!(5),
    );
    assert_eq!(r["result"]["events"], json!([]));
    let e = c.request("interruptSession", json!({"session_id": "nope"}), json!(6));
    assert_eq!(e["error"]["code"], -32602);
    let e = c.request(
        "continueSession",
        json!({"session_id": "nope", "query": "x"}),
        json!(7),
    );
    assert_eq!(e["error"]["code"], -32602);
    let e = c.request("continueSession", json!({"session_id": "nope"}), json!(8));
    assert_eq!(e["error"]["message"], "query is required");
}

#[test]
fn conversation_by_claude_session_id_and_paging() {
    let d = fake();
    let id = d.launch(json!({"query": "scenario:slow", "working_dir": tmp_workdir(&d)}));
    std::env::set_var("UNUSED", "1");
    let s = d.wait_ended(&id);
    let all = d.conversation(&id);
    assert_eq!(all.len(), 21, "query + 20 chunks");
    let by_claude = d.result(
        "getConversation",
        json!({"claude_session_id": s["claude_session_id"]}),
    )["events"]
        .clone();
    assert_eq!(by_claude.as_array().unwrap().len(), 21);
    let page = d.result(
        "getConversation",
        json!({"session_id": id, "after_sequence": 5, "limit": 4}),
    )["events"]
        .clone();
    let seqs: Vec<i64> = page
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["sequence"].as_i64().unwrap())
        .collect();
    assert_eq!(seqs, [6, 7, 8, 9]);
}

/// While an interrupt winds down, lists report the session as `running` with
/// `interrupting: true`, so that the anchor's desktop client (a closed status enum) can decode
/// them; `getSessionState` and the events say `completing`.
#[test]
fn lists_stay_decodable_by_strict_clients_during_an_interrupt() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "100")
            .env("FAKE_CLAUDE_INTERRUPT_DELAY_MS", "1500"),
    );
    let wd = tmp_workdir(&d);
    let id = d.launch(json!({"query": "scenario:slow count", "working_dir": wd}));
    d.wait_session(&id, |s| s["claude_session_id"].is_string());
    d.result("interruptSession", json!({"session_id": id}));
    let state: WuiGetSessionState =
        serde_json::from_value(d.result("getSessionState", json!({"session_id": id}))).unwrap();
    assert_eq!(state.session.status, "completing");

    let listed = d.result("listSessions", json!({}));
    let strict: WuiListSessions = serde_json::from_value(listed.clone())
        .unwrap_or_else(|e| panic!("a strict client cannot decode {listed}: {e}"));
    assert_eq!(strict.sessions[0].id, id);
    assert_eq!(strict.sessions[0].status, WuiSessionStatus::Running);
    assert_eq!(listed["sessions"][0]["interrupting"], true);
    // Still winding down: the list was read during the interrupt, not after it.
    let state = d.result("getSessionState", json!({"session_id": id}));
    assert_eq!(state["session"]["status"], "completing", "{state}");

    let ended = d.wait_ended(&id);
    assert_eq!(ended["status"], "completed");
    let listed = d.result("listSessions", json!({}));
    let strict: WuiListSessions = serde_json::from_value(listed.clone()).unwrap();
    assert_eq!(strict.sessions[0].status, WuiSessionStatus::Completed);
    assert_eq!(listed["sessions"][0]["interrupting"], false);
}

#[test]
fn interrupt_then_continue() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude().env("FAKE_CLAUDE_DELAY_MS", "300"));
    let mut sub = subscribe(&d, &["session_status_changed"]);
    let wd = tmp_workdir(&d);
    let id = d.launch(json!({"query": "scenario:slow count", "working_dir": wd, "model": "haiku"}));
    d.wait_session(&id, |s| s["claude_session_id"].is_string());
    let r = d.result("interruptSession", json!({"session_id": id}));
    assert_eq!(r["success"], true);
    assert_eq!(r["session_id"], id);
    assert_eq!(r["status"], "completing");
    assert!(r["message"].is_string());
    assert_eq!(
        status_changes(&mut sub, &id),
        [
            ("starting".to_owned(), "running".to_owned()),
            ("running".to_owned(), "completing".to_owned()),
            ("completing".to_owned(), "completed".to_owned()),
        ]
    );
    let s = d.wait_ended(&id);
    assert_eq!(s["status"], "completed");
    assert_eq!(s["interrupted"], true);
    assert!(
        s["error_message"].is_null(),
        "an interrupt is not an error: {s}"
    );
    let events = d.conversation(&id);
    assert!(
        events
            .iter()
            .any(|e| e["content"] == "[Request interrupted by user]"),
        "the interrupt marker is stored"
    );
    // An ended session cannot be interrupted again.
    let e = d.call("interruptSession", json!({"session_id": id}));
    assert_eq!(e["error"]["code"], -32602);

    // It can be continued: new ids, resumed Claude session, inherited settings.
    let c = d.result(
        "continueSession",
        json!({"session_id": id, "query": "go on", "max_turns": 2}),
    );
    assert_eq!(c["parent_session_id"], id);
    assert_eq!(c["claude_session_id"], "");
    let child = c["session_id"].as_str().unwrap().to_owned();
    assert_ne!(child, id);
    assert_ne!(c["run_id"], s["run_id"]);
    let cs = d.wait_ended(&child);
    assert_eq!(cs["status"], "completed");
    assert_eq!(cs["parent_session_id"], id);
    assert_eq!(cs["model"], "haiku", "the model is inherited");
    assert_eq!(cs["working_dir"], wd);
    let inv = d.fake_invocation(cs["claude_session_id"].as_str().unwrap());
    let argv: Vec<String> = serde_json::from_value(inv["argv"].clone()).unwrap();
    let resume = argv.iter().position(|a| a == "--resume").expect("--resume");
    assert_eq!(argv[resume + 1], s["claude_session_id"].as_str().unwrap());

    // The child's conversation is the whole chain, oldest first.
    let chain = d.conversation(&child);
    assert_eq!(chain[0]["content"], "scenario:slow count");
    assert!(chain.iter().any(|e| e["content"] == "go on"));
    assert!(chain.iter().any(|e| e["content"]
        .as_str()
        .is_some_and(|c| c.contains("Continuing"))));
    assert_increasing(&chain);
    assert_eq!(chain.last().unwrap()["session_id"], child);
}

#[test]
fn continue_inherits_everything_but_max_turns_and_request_fields_override() {
    let d = fake();
    let wd = tmp_workdir(&d);
    let parent = d.launch(json!({
        "query": "first",
        "working_dir": wd,
        "model": "opus",
        "max_turns": 7,
        "system_prompt": "SYS",
        "append_system_prompt": "APP",
        "custom_instructions": "CUSTOM",
        "allowed_tools": ["Read"],
        "disallowed_tools": ["Bash"],
        "permission_prompt_tool": "mcp__perm__ask",
        "mcp_config": {"mcpServers": {"perm": {"command": "true"}}}
    }));
    let ps = d.wait_ended(&parent);
    let child = d.result(
        "continueSession",
        json!({"session_id": parent, "query": "second", "system_prompt": "NEW-SYS",
               "mcp_config": "{\"mcpServers\":{\"other\":{\"command\":\"true\"}}}"}),
    )["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let cs = d.wait_ended(&child);
    let parent_claude = ps["claude_session_id"].as_str().unwrap();
    let child_claude = cs["claude_session_id"].as_str().unwrap();
    let inv = d.fake_invocation(child_claude);
    let argv: Vec<String> = serde_json::from_value(inv["argv"].clone()).unwrap();
    let after = |flag: &str| {
        argv.iter()
            .position(|a| a == flag)
            .map(|i| argv[i + 1].clone())
    };
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
    assert_eq!(after("--resume").as_deref(), Some(parent_claude));
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
    let id = d.launch(json!({"query": "scenario:slow", "working_dir": tmp_workdir(&d)}));
    d.wait_session(&id, |s| s["claude_session_id"].is_string());
    let child = d.result(
        "continueSession",
        json!({"session_id": id, "query": "next"}),
    )["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let parent = d.wait_ended(&id);
    assert_eq!(parent["status"], "completed");
    assert_eq!(parent["interrupted"], true);
    assert_eq!(d.wait_ended(&child)["status"], "completed");
}

#[test]
fn a_missing_claude_is_reported_and_launch_fails_cleanly() {
    let d = TestDaemon::start_with(
        DaemonOptions::default()
            .arg("--claude-path")
            .arg("/nonexistent/claude")
            .env("PATH", "/usr/bin:/bin"),
    );
    let health = d.result("health", json!({}));
    assert_eq!(health["status"], "ok");
    assert_eq!(health["claude"]["available"], false);
    let e = d.call(
        "launchSession",
        json!({"query": "hi", "working_dir": "/tmp"}),
    );
    assert_eq!(e["error"]["code"], -32603);
    assert!(e["error"]["message"]
        .as_str()
        .unwrap()
        .contains("claude CLI not found"));
    assert_eq!(d.result("listSessions", json!({}))["sessions"], json!([]));
}

#[test]
fn health_reports_the_claude_version() {
    let d = fake();
    let health = d.result("health", json!({}));
    assert_eq!(health["claude"]["available"], true);
    assert_eq!(health["claude"]["version"], "2.1.197 (Claude Code)");
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

#[test]
fn no_claude_process_outlives_the_daemon() {
    let mut d = fake();
    let marker = format!("FAKE_CLAUDE_HOME={}", d.dir.join("fake-claude").display());
    let ids: Vec<String> = (0..3)
        .map(|_| d.launch(json!({"query": "scenario:slow", "working_dir": tmp_workdir(&d)})))
        .collect();
    for id in &ids {
        d.wait_session(id, |s| s["claude_session_id"].is_string());
    }
    assert!(
        !pids_of(&marker).is_empty(),
        "fake-claude processes are running"
    );
    d.signal(nix::sys::signal::Signal::SIGTERM);
    let (status, _) = d.wait_exit(Duration::from_secs(6)).expect("daemon exits");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(2);
    while !pids_of(&marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(pids_of(&marker), Vec::<i32>::new(), "no fake-claude left");
}

#[test]
fn a_restart_marks_orphans_and_loses_no_acknowledged_event() {
    let base = tempfile::Builder::new()
        .prefix("hld-")
        .tempdir_in("/tmp")
        .unwrap();
    let dir = base.path().to_path_buf();
    let options = || DaemonOptions {
        dir: Some(dir.clone()),
        ..DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "20")
            .env("FAKE_CLAUDE_COUNT", "100000")
    };
    let mut d = TestDaemon::start_with(options());
    let mut sub = subscribe(&d, &["conversation_updated"]);
    let id = d.launch(json!({"query": "scenario:slow", "working_dir": "/tmp"}));
    // Every event published was stored first: collect what we were told about.
    let mut seen = Vec::new();
    while seen.len() < 30 {
        let line = sub.recv();
        seen.push(
            line["result"]["event"]["data"]["event"]["id"]
                .as_i64()
                .unwrap(),
        );
    }
    d.kill9();
    drop(d);
    let d = TestDaemon::start_with(options());
    let s = d.wait_ended(&id);
    assert_eq!(s["status"], "failed");
    assert_eq!(s["error_message"], "daemon restarted");
    let stored: Vec<i64> = d
        .conversation(&id)
        .iter()
        .map(|e| e["id"].as_i64().unwrap())
        .collect();
    for id in &seen {
        assert!(
            stored.contains(id),
            "acknowledged event {id} survived the kill"
        );
    }
}

#[test]
fn a_claude_that_cannot_start_fails_the_session_with_a_sanitised_error() {
    let base = tempfile::Builder::new()
        .prefix("hld-")
        .tempdir_in("/tmp")
        .unwrap();
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
    let e = d.call(
        "launchSession",
        json!({"query": "hi", "working_dir": "/tmp"}),
    );
    assert_eq!(e["error"]["code"], -32603);
    let message = e["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("failed to launch Claude session"),
        "{message}"
    );
    assert!(
        !message.contains('/'),
        "no paths in a fault message: {message}"
    );
    let sessions = d.result("listSessions", json!({}))["sessions"].clone();
    let id = sessions[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(sessions[0]["status"], "failed");
    assert_eq!(
        status_changes(&mut sub, &id),
        [("starting".to_owned(), "failed".to_owned())]
    );
}

#[test]
fn a_killed_daemon_takes_its_claude_processes_with_it() {
    let mut d = fake();
    let marker = format!("FAKE_CLAUDE_HOME={}", d.dir.join("fake-claude").display());
    for _ in 0..2 {
        let id = d.launch(json!({"query": "scenario:slow", "working_dir": tmp_workdir(&d)}));
        d.wait_session(&id, |s| s["claude_session_id"].is_string());
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
    let deadline = Instant::now() + Duration::from_secs(3);
    while !pids_of(&marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        pids_of(&marker),
        Vec::<i32>::new(),
        "no Claude runs unsupervised"
    );
}
