//! Approvals end to end: the real daemon launching `fake-claude`, which starts the real
//! `hld mcp claude_approvals` and calls its tools like Claude Code does; plus the MCP server
//! driven by hand over stdio, and every approval method's results and errors.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use hld_client::protocol::{ApprovalStatus, Event, SendDecisionParams, SubscribeParams};
use hld_client::{SubscribeOptions, SubscriptionItem};
use hld_e2e::{workspace_bin, DaemonOptions, LineConn, TestDaemon};
use serde_json::{json, Value};

const PERMISSION_TOOL: &str = "mcp__approvals__request_permission";

fn hld() -> PathBuf {
    workspace_bin("hld")
}

fn options() -> DaemonOptions {
    DaemonOptions::fake_claude()
}

fn daemon() -> TestDaemon {
    TestDaemon::start_with(options())
}

fn workdir(d: &TestDaemon) -> PathBuf {
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn launch(d: &TestDaemon, query: &str) -> String {
    d.launch(json!({"query": query, "working_dir": workdir(d)}))
}

/// A completed session to hang approvals on without any Claude asking.
fn finished_session(d: &TestDaemon) -> (String, String) {
    let id = launch(d, "scenario:plain hello");
    let s = d.wait_ended(&id);
    assert_eq!(s["status"], "completed", "{s}");
    (id, s["run_id"].as_str().unwrap().to_owned())
}

fn decide(d: &TestDaemon, params: Value) -> Value {
    d.result("sendDecision", params)
}

fn approve(d: &TestDaemon, id: &str) -> Value {
    decide(
        d,
        json!({"call_id": id, "type": "function_call", "decision": "approve"}),
    )
}

fn pending(d: &TestDaemon, session_id: &str) -> Vec<Value> {
    let r = d.result("fetchApprovals", json!({"session_id": session_id}));
    r["approvals"].as_array().expect("approvals array").clone()
}

/// Polls `fetchApprovals` until the session has `n` pending approvals (10 s at most).
fn wait_pending(d: &TestDaemon, session_id: &str, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let approvals = pending(d, session_id);
        if approvals.len() >= n {
            assert_eq!(approvals.len(), n, "{approvals:?}");
            return approvals;
        }
        assert!(
            Instant::now() < deadline,
            "no pending approval for {session_id}; log:\n{}",
            d.log_text()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn tool_call(d: &TestDaemon, session_id: &str) -> Value {
    d.conversation(session_id)
        .into_iter()
        .find(|e| e["event_type"] == "tool_call")
        .expect("a tool_call event")
}

fn last_assistant_text(d: &TestDaemon, session_id: &str) -> String {
    d.conversation(session_id)
        .iter()
        .rev()
        .find(|e| e["event_type"] == "message" && e["role"] == "assistant")
        .and_then(|e| e["content"].as_str())
        .expect("an assistant message")
        .to_owned()
}

/// Every event of a subscription, kept in order while the test waits for particular ones.
struct Events {
    sub: LineConn,
    seen: Vec<Value>,
}

impl Events {
    fn subscribe(d: &TestDaemon, filter: Value) -> Events {
        let mut sub = d.conn();
        let reply = sub.request("Subscribe", filter, json!("sub"));
        assert!(reply["result"]["subscription_id"].is_string(), "{reply}");
        Events {
            sub,
            seen: Vec::new(),
        }
    }

    /// Reads until an event of type `kind` whose data satisfies `matches`; returns its data.
    fn until(&mut self, kind: &str, matches: impl Fn(&Value) -> bool) -> Value {
        loop {
            let line = self.sub.recv();
            let event = line["result"]["event"].clone();
            if event.is_null() {
                continue;
            }
            self.seen.push(event.clone());
            if event["type"] == kind && matches(&event["data"]) {
                return event["data"].clone();
            }
        }
    }

    /// Reads until the session ends.
    fn until_ended(&mut self, session_id: &str) -> Value {
        self.until("session_status_changed", |e| {
            e["session_id"] == session_id
                && matches!(e["new_status"].as_str(), Some("completed" | "failed"))
        })
    }

    /// The session's status changes seen so far, as `old>new`.
    fn status_changes(&self, session_id: &str) -> Vec<String> {
        self.of("session_status_changed", session_id)
            .map(|e| format!("{}>{}", e["old_status"], e["new_status"]).replace('"', ""))
            .collect()
    }

    fn of<'a>(&'a self, kind: &'a str, session_id: &'a str) -> impl Iterator<Item = &'a Value> {
        self.seen
            .iter()
            .filter(move |e| e["type"] == kind && e["data"]["session_id"] == session_id)
            .map(|e| &e["data"])
    }
}

// ---- the fake agent calling the MCP tool for real ----

#[test]
fn approving_runs_the_tool_and_the_session_completes() {
    let d = daemon();
    let mut events = Events::subscribe(&d, json!({}));
    let id = launch(&d, "scenario:tool make a file");
    let new = events.until("new_approval", |e| e["session_id"] == id);
    let run_id = d.result("getSessionState", json!({"session_id": id}))["session"]["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(new["run_id"], run_id);
    let approval = &new["approval"];
    let approval_id = approval["id"].as_str().unwrap().to_owned();
    assert!(approval_id.starts_with("local-"), "{approval}");
    assert_eq!(approval["type"], "function_call");
    assert_eq!(approval["status"], "pending");
    assert_eq!(approval["function_name"], "Write");
    // What the Go daemon's `new_approval` carried, which the anchor's `hlyr alert` prints.
    assert_eq!(new["type"], "function_call");
    assert_eq!(new["count"], 1);
    assert_eq!(new["total"], 1);

    // While waiting: the session waits, the tool call is linked, nothing was written.
    let s = d.wait_session(&id, |s| s["status"] == "waiting_input");
    assert_eq!(s["status"], "waiting_input");
    let call = tool_call(&d, &id);
    assert_eq!(call["approval_status"], "pending");
    assert_eq!(call["approval_id"], approval_id.as_str());
    assert_eq!(approval["tool_use_id"], call["tool_id"]);
    let input: Value = serde_json::from_str(call["tool_input_json"].as_str().unwrap()).unwrap();
    assert_eq!(approval["function_args"], input);
    let hello = workdir(&d).join("hello.txt");
    assert!(!hello.exists());
    let listed = wait_pending(&d, &id, 1);
    assert_eq!(listed[0]["id"], approval_id.as_str());

    assert_eq!(approve(&d, &approval_id), json!({"success": true}));
    let resolved = events.until("approval_resolved", |e| e["approval_id"] == approval_id);
    assert_eq!(resolved["session_id"], id.as_str());
    assert_eq!(resolved["run_id"], run_id);
    assert_eq!(resolved["call_id"], approval_id.as_str());
    assert_eq!(resolved["decision"], "approved");
    assert_eq!(resolved["type"], "function_call");
    assert_eq!(resolved["total"], 0);
    events.until_ended(&id);

    assert_eq!(
        events.status_changes(&id),
        [
            "starting>running",
            "running>waiting_input",
            "waiting_input>running",
            "running>completed"
        ]
    );
    // The linked tool call was republished pending, then approved.
    let linked: Vec<&Value> = events
        .of("conversation_updated", &id)
        .filter(|e| e["event"]["approval_id"] == approval_id.as_str())
        .map(|e| &e["event"]["approval_status"])
        .collect();
    assert_eq!(linked.first().copied(), Some(&json!("pending")));
    assert_eq!(linked.last().copied(), Some(&json!("approved")));

    let s = d.wait_ended(&id);
    assert_eq!(s["status"], "completed", "{s}");
    assert_eq!(std::fs::read_to_string(&hello).unwrap(), "Hello, world!\n");
    let call = tool_call(&d, &id);
    assert_eq!(call["approval_status"], "approved");
    assert_eq!(call["is_completed"], true);
    let result = d
        .conversation(&id)
        .into_iter()
        .find(|e| e["event_type"] == "tool_result")
        .unwrap();
    assert_eq!(result["tool_result_for_id"], call["tool_id"]);
    assert_ne!(result["is_error"], true, "{result}");
    assert!(last_assistant_text(&d, &id).starts_with("Done"));
    assert!(pending(&d, &id).is_empty());
    let got = d.result("getApproval", json!({"approval_id": approval_id}));
    assert_eq!(got["approval"]["status"], "approved");
    assert!(got["approval"]["responded_at"].is_string());

    // Claude was handed the injected server and tool.
    let claude_id = s["claude_session_id"].as_str().unwrap();
    let invocation = d.fake_invocation(claude_id);
    assert_eq!(invocation["permission_prompt_tool"], PERMISSION_TOOL);
    let server = &invocation["mcp_config"]["mcpServers"]["approvals"];
    assert_eq!(server["command"], hld().display().to_string());
    assert_eq!(server["args"], json!(["mcp", "claude_approvals"]));
    assert_eq!(server["env"]["HUMANLAYER_SESSION_ID"], id.as_str());
    assert_eq!(server["env"]["HUMANLAYER_RUN_ID"], run_id);
    assert_eq!(
        server["env"]["HUMANLAYER_DAEMON_SOCKET"],
        d.socket.display().to_string()
    );
}

/// The agent asks before its tool call line reaches the daemon: the approval is stored and
/// announced first, and the tool call, stored later, is linked to it as it is stored.
#[test]
fn a_tool_call_stored_after_its_approval_is_linked_to_it() {
    let d = daemon();
    let mut events = Events::subscribe(&d, json!({}));
    let id = launch(&d, "scenario:asked_first make a file");
    let new = events.until("new_approval", |e| e["session_id"] == id);
    let approval_id = new["approval"]["id"].as_str().unwrap().to_owned();
    assert!(
        events
            .of("conversation_updated", &id)
            .all(|e| e["event"]["event_type"] != "tool_call"),
        "the approval came first"
    );
    let call = events.until("conversation_updated", |e| {
        e["session_id"] == id && e["event"]["event_type"] == "tool_call"
    });
    assert_eq!(call["event"]["tool_id"], new["approval"]["tool_use_id"]);
    assert_eq!(call["event"]["approval_id"], approval_id.as_str());
    assert_eq!(call["event"]["approval_status"], "pending");
    assert_eq!(approve(&d, &approval_id)["success"], true);
    assert_eq!(d.wait_ended(&id)["status"], "completed");
    assert_eq!(tool_call(&d, &id)["approval_status"], "approved");
}

#[test]
fn a_denial_with_a_comment_reaches_claude() {
    let d = daemon();
    let mut events = Events::subscribe(&d, json!({"event_types": ["approval_resolved"]}));
    let id = launch(&d, "scenario:tool make a file");
    let approval_id = wait_pending(&d, &id, 1)[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let reply = decide(
        &d,
        json!({"call_id": approval_id, "type": "function_call", "decision": "deny",
               "comment": "Use notes.txt instead"}),
    );
    assert_eq!(reply, json!({"success": true}));
    let resolved = events.until("approval_resolved", |e| e["approval_id"] == approval_id);
    assert_eq!(resolved["decision"], "denied");
    assert_eq!(resolved["comment"], "Use notes.txt instead");
    let s = d.wait_ended(&id);
    assert_eq!(s["status"], "completed", "{s}");
    let result = d
        .conversation(&id)
        .into_iter()
        .find(|e| e["event_type"] == "tool_result")
        .unwrap();
    assert_eq!(result["is_error"], true);
    assert_eq!(result["tool_result_content"], "Use notes.txt instead");
    assert_eq!(
        last_assistant_text(&d, &id),
        "I couldn't create hello.txt: Use notes.txt instead"
    );
    assert_eq!(tool_call(&d, &id)["approval_status"], "denied");
    assert!(!workdir(&d).join("hello.txt").exists());
}

#[test]
fn a_human_contact_is_answered_with_respond() {
    let d = daemon();
    let mut events = Events::subscribe(&d, json!({}));
    let id = launch(&d, "scenario:ask");
    let new = events.until("new_approval", |e| e["session_id"] == id);
    // Asking the human needs no permission from the human first.
    let approval = &new["approval"];
    assert_eq!(approval["type"], "human_contact");
    assert_eq!(new["type"], "human_contact");
    assert_eq!(approval["message"], "What colour should the button be?");
    d.wait_session(&id, |s| s["status"] == "waiting_input");
    let listed = wait_pending(&d, &id, 1);
    let contact = &listed[0]["human_contact"];
    assert_eq!(contact["spec"]["msg"], "What colour should the button be?");
    assert_eq!(contact["call_id"], approval["id"]);
    assert!(listed[0]["function_call"].is_null());

    let approval_id = approval["id"].as_str().unwrap();
    let reply = decide(
        &d,
        json!({"call_id": approval_id, "type": "human_contact", "decision": "respond",
               "comment": "Blue, like the sky"}),
    );
    assert_eq!(reply, json!({"success": true}));
    let resolved = events.until("approval_resolved", |e| e["approval_id"] == approval_id);
    assert_eq!(resolved["decision"], "responded");
    assert_eq!(resolved["comment"], "Blue, like the sky");
    events.until_ended(&id);
    assert_eq!(
        events.status_changes(&id),
        [
            "starting>running",
            "running>waiting_input",
            "waiting_input>running",
            "running>completed"
        ]
    );
    assert_eq!(
        last_assistant_text(&d, &id),
        "The human answered: Blue, like the sky"
    );
    assert_eq!(events.of("new_approval", &id).count(), 1);
}

/// After a restart, the approval of a session that died with the old daemon is resolved: no
/// `claude` waits for it, so it leaves the pending list, and a decision on it is refused with
/// `reason: resolved`. Both ways a daemon goes: SIGKILL (nothing cleaned up) and SIGTERM.
#[test]
fn an_approval_whose_session_died_with_the_daemon_is_resolved_after_a_restart() {
    for kill in [true, false] {
        let base = tempfile::Builder::new()
            .prefix("hld-")
            .tempdir_in("/tmp")
            .unwrap();
        let dir = base.path().to_path_buf();
        let restartable = || DaemonOptions {
            dir: Some(dir.clone()),
            ..options()
        };
        let mut d = TestDaemon::start_with(restartable());
        let id = launch(&d, "scenario:tool make a file");
        let approval_id = wait_pending(&d, &id, 1)[0]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let hello = workdir(&d).join("hello.txt");
        if kill {
            // No clean-up at all. Claude dies with its daemon (it is never left running
            // unsupervised), and the approval stays pending in the database.
            d.kill9();
        } else {
            d.stop();
        }
        drop(d);
        let d = TestDaemon::start_with(restartable());
        assert!(pending(&d, &id).is_empty(), "kill: {kill}");
        assert!(d.result("fetchApprovals", json!({}))["approvals"]
            .as_array()
            .unwrap()
            .is_empty());
        let approval =
            d.result("getApproval", json!({"approval_id": approval_id}))["approval"].clone();
        assert_eq!(approval["status"], "resolved", "kill: {kill}");
        assert_eq!(approval["comment"], "the session ended before a decision");
        let refused = approve(&d, &approval_id);
        assert_eq!(refused["success"], false, "{refused}");
        assert_eq!(refused["reason"], "resolved", "{refused}");
        assert!(
            refused["error"]
                .as_str()
                .unwrap()
                .contains("resolved without a decision: its session ended"),
            "{refused}"
        );
        let session = d.wait_ended(&id);
        assert_eq!(session["status"], if kill { "failed" } else { "completed" });
        // The tool call row carries the resolution.
        assert_eq!(tool_call(&d, &id)["approval_status"], "resolved");
        assert!(!hello.exists(), "no Claude acted after its daemon died");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_from_a_second_client_reaches_the_subscribed_first() {
    let d = daemon();
    let id = launch(&d, "scenario:tool make a file");
    let first = d.client().await;
    let mut subscription = first
        .subscribe(
            SubscribeParams {
                event_types: Some(vec!["approval_resolved".into()]),
                session_id: Some(id.clone()),
                run_id: None,
            },
            SubscribeOptions::default(),
        )
        .await
        .unwrap();
    let approval_id = wait_pending(&d, &id, 1)[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let second = d.client().await;
    let result = second
        .send_decision(SendDecisionParams {
            call_id: Some(approval_id.clone()),
            kind: Some("function_call".into()),
            decision: Some("approve".into()),
            comment: Some("go ahead".into()),
        })
        .await
        .unwrap();
    assert!(result.success, "{result:?}");
    let item = tokio::time::timeout(Duration::from_secs(10), subscription.next())
        .await
        .expect("an event within 10 s")
        .expect("the subscription is open")
        .unwrap();
    let SubscriptionItem::Event(event) = item else {
        panic!("unexpected {item:?}");
    };
    match event.event {
        Event::ApprovalResolved {
            approval_id: resolved_id,
            session_id,
            decision,
            comment,
            ..
        } => {
            assert_eq!(resolved_id, approval_id);
            assert_eq!(session_id, id);
            assert_eq!(decision, ApprovalStatus::Approved);
            assert_eq!(comment.as_deref(), Some("go ahead"));
        }
        other => panic!("unexpected {other:?}"),
    }
    let s = d.wait_ended(&id);
    assert_eq!(s["status"], "completed");
    assert!(workdir(&d).join("hello.txt").exists());
    let again = first.get_approval(&approval_id).await.unwrap();
    assert_eq!(again.status, ApprovalStatus::Approved);
    assert_eq!(again.comment.as_deref(), Some("go ahead"));
}

#[test]
fn racing_decisions_have_exactly_one_winner() {
    let d = daemon();
    let mut events = Events::subscribe(&d, json!({"event_types": ["approval_resolved"]}));
    let id = launch(&d, "scenario:tool make a file");
    let approval_id = wait_pending(&d, &id, 1)[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let racers = 8;
    let barrier = Arc::new(Barrier::new(racers));
    let socket = d.socket.clone();
    let handles: Vec<_> = (0..racers)
        .map(|i| {
            let (barrier, socket, approval_id) =
                (barrier.clone(), socket.clone(), approval_id.clone());
            std::thread::spawn(move || {
                let params = if i % 2 == 0 {
                    json!({"call_id": approval_id, "type": "function_call", "decision": "approve"})
                } else {
                    json!({"call_id": approval_id, "type": "function_call", "decision": "deny",
                           "comment": format!("racer {i} says no")})
                };
                let mut conn = LineConn::connect(&socket).unwrap();
                barrier.wait();
                let reply = conn.request("sendDecision", params, json!(i));
                (i, reply["result"].clone())
            })
        })
        .collect();
    let replies: Vec<(usize, Value)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let winners: Vec<usize> = replies
        .iter()
        .filter(|(_, r)| r["success"] == true)
        .map(|(i, _)| *i)
        .collect();
    assert_eq!(winners.len(), 1, "{replies:?}");
    for (_, reply) in replies.iter().filter(|(i, _)| *i != winners[0]) {
        assert_eq!(reply["success"], false);
        let error = reply["error"].as_str().unwrap();
        assert!(error.contains("already decided"), "{error}");
    }
    let winner = winners[0];
    let resolved = events.until("approval_resolved", |e| e["approval_id"] == approval_id);
    let s = d.wait_ended(&id);
    assert_eq!(s["status"], "completed");
    let call = tool_call(&d, &id);
    if winner.is_multiple_of(2) {
        assert_eq!(resolved["decision"], "approved");
        assert_eq!(call["approval_status"], "approved");
        assert!(workdir(&d).join("hello.txt").exists());
    } else {
        assert_eq!(resolved["decision"], "denied");
        assert_eq!(resolved["comment"], format!("racer {winner} says no"));
        assert_eq!(call["approval_status"], "denied");
        assert!(!workdir(&d).join("hello.txt").exists());
        assert_eq!(
            last_assistant_text(&d, &id),
            format!("I couldn't create hello.txt: racer {winner} says no")
        );
    }
    // Only the winner was published.
    assert!(
        events.sub.try_recv(Duration::from_millis(300)).is_none(),
        "a second approval_resolved"
    );
}

#[test]
fn no_approvals_or_an_own_permission_tool_skip_the_injection() {
    let d = daemon();
    let invocation = |params: Value| {
        let id = d.launch(params);
        let s = d.wait_ended(&id);
        d.fake_invocation(s["claude_session_id"].as_str().expect("claude session id"))
    };
    let wd = workdir(&d);

    let injected = invocation(json!({"query": "hello", "working_dir": wd}));
    assert_eq!(injected["permission_prompt_tool"], PERMISSION_TOOL);
    assert!(injected["mcp_config"]["mcpServers"]["approvals"].is_object());

    let opted_out = invocation(json!({"query": "hello", "working_dir": wd, "no_approvals": true}));
    assert!(opted_out["permission_prompt_tool"].is_null(), "{opted_out}");
    assert!(opted_out["mcp_config"].is_null(), "{opted_out}");

    let own = invocation(json!({
        "query": "hello", "working_dir": wd,
        "permission_prompt_tool": "mcp__mine__ask",
        "mcp_config": {"mcpServers": {"mine": {"command": "/bin/true"}}},
    }));
    assert_eq!(own["permission_prompt_tool"], "mcp__mine__ask");
    let servers = own["mcp_config"]["mcpServers"].as_object().unwrap();
    assert_eq!(servers.keys().collect::<Vec<_>>(), ["mine"]);

    // Without any permission tool, a tool call is refused outright.
    let id = d.launch(json!({"query": "scenario:tool", "working_dir": wd, "no_approvals": true}));
    d.wait_ended(&id);
    assert!(pending(&d, &id).is_empty());
    assert!(tool_call(&d, &id)["approval_status"].is_null());
}

// ---- approval methods ----

#[test]
fn fetch_approvals_lists_both_shapes_and_is_always_an_array() {
    let d = daemon();
    assert_eq!(
        d.result("fetchApprovals", json!({})),
        json!({"approvals": []})
    );
    let (session, run) = finished_session(&d);
    assert_eq!(
        d.result("fetchApprovals", json!({"session_id": session})),
        json!({"approvals": []})
    );
    let unknown = d.call("fetchApprovals", json!({"session_id": "nope"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    let call = d.result(
        "createApproval",
        json!({"session_id": session, "tool_name": "Bash", "tool_input": {"command": "ls"},
               "tool_use_id": "toolu_1"}),
    )["approval_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let contact = d.result(
        "createApproval",
        json!({"run_id": run, "type": "human_contact", "message": "Which branch?"}),
    )["approval_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let all = d.result("fetchApprovals", json!({}))["approvals"].clone();
    assert_eq!(all.as_array().unwrap().len(), 2);
    let listed = pending(&d, &session);
    let by_id = |id: &str| {
        listed
            .iter()
            .find(|a| a["id"] == id)
            .expect("listed")
            .clone()
    };

    let fc = by_id(&call);
    assert_eq!(fc["call_id"], call.as_str());
    assert_eq!(fc["session_id"], session.as_str());
    assert_eq!(fc["run_id"], run.as_str());
    assert_eq!(fc["type"], "function_call");
    assert_eq!(fc["status"], "pending");
    assert_eq!(fc["function_name"], "Bash");
    assert_eq!(fc["function_args"], json!({"command": "ls"}));
    assert_eq!(fc["tool_use_id"], "toolu_1");
    assert!(fc["requested_at"].is_string());
    assert_eq!(fc["function_call"]["call_id"], call.as_str());
    assert_eq!(fc["function_call"]["run_id"], run.as_str());
    assert_eq!(fc["function_call"]["spec"]["fn"], "Bash");
    assert_eq!(
        fc["function_call"]["spec"]["kwargs"],
        json!({"command": "ls"})
    );
    assert!(fc["human_contact"].is_null());

    let hc = by_id(&contact);
    assert_eq!(hc["type"], "human_contact");
    assert_eq!(hc["session_id"], session.as_str());
    assert_eq!(hc["message"], "Which branch?");
    assert_eq!(hc["human_contact"]["call_id"], contact.as_str());
    assert_eq!(hc["human_contact"]["run_id"], run.as_str());
    assert_eq!(hc["human_contact"]["spec"]["msg"], "Which branch?");
    assert!(hc["function_call"].is_null());
    assert!(hc["function_name"].is_null());

    // Decided approvals leave the list.
    approve(&d, &call);
    let left = pending(&d, &session);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["id"], contact.as_str());
}

#[test]
fn every_send_decision_violation_is_reported() {
    let d = daemon();
    let (session, _) = finished_session(&d);
    let create = |params: Value| {
        d.result("createApproval", params)["approval_id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let call = create(json!({"session_id": session, "tool_name": "Write", "tool_input": {}}));
    let contact = create(json!({"session_id": session, "type": "human_contact", "message": "?"}));

    let invalid = |params: Value, param: &str, message: &str| {
        let reply = d.call("sendDecision", params.clone());
        let error = &reply["error"];
        assert_eq!(error["code"], -32602, "{params} -> {reply}");
        assert_eq!(error["message"], message, "{params}");
        assert_eq!(error["data"]["param"], param, "{params}");
        error["data"].clone()
    };
    let fc =
        |decision: &str| json!({"call_id": call, "type": "function_call", "decision": decision});
    invalid(
        json!({"type": "function_call", "decision": "approve"}),
        "call_id",
        "call_id is required",
    );
    invalid(
        json!({"call_id": " ", "type": "function_call", "decision": "approve"}),
        "call_id",
        "call_id is required",
    );
    invalid(
        json!({"call_id": call, "decision": "approve"}),
        "type",
        "type is required",
    );
    invalid(
        json!({"call_id": call, "type": "function_call"}),
        "decision",
        "decision is required",
    );
    let data = invalid(
        json!({"call_id": call, "type": "tool", "decision": "approve"}),
        "type",
        "invalid type: tool",
    );
    assert_eq!(data["accepted"], json!(["function_call", "human_contact"]));
    let data = invalid(fc("respond"), "decision", "invalid decision: respond");
    assert_eq!(data["accepted"], json!(["approve", "deny"]));
    let data = invalid(
        json!({"call_id": contact, "type": "human_contact", "decision": "approve"}),
        "decision",
        "invalid decision: approve",
    );
    assert_eq!(data["accepted"], json!(["respond"]));
    invalid(fc("deny"), "comment", "comment is required for denial");
    invalid(
        json!({"call_id": call, "type": "function_call", "decision": "deny", "comment": "  "}),
        "comment",
        "comment is required for denial",
    );
    invalid(
        json!({"call_id": contact, "type": "human_contact", "decision": "respond"}),
        "comment",
        "comment is required for human contact response",
    );
    // The approval id may also be sent as approval_id.
    let wrong_kind = decide(
        &d,
        json!({"approval_id": call, "type": "human_contact", "decision": "respond",
               "comment": "hi"}),
    );
    assert_eq!(wrong_kind["success"], false);
    assert_eq!(
        wrong_kind["error"],
        format!("approval {call} is a function_call, not a human_contact")
    );
    assert_eq!(wrong_kind["reason"], "wrong_type");

    let unknown = decide(
        &d,
        json!({"call_id": "local-nope", "type": "function_call", "decision": "approve"}),
    );
    assert_eq!(
        unknown,
        json!({"success": false, "error": "approval not found: local-nope",
               "reason": "not_found"})
    );
    assert_eq!(decide(&d, fc("approve")), json!({"success": true}));
    assert_eq!(
        decide(&d, fc("approve")),
        json!({"success": false,
               "error": format!("approval {call} was already decided: approved"),
               "reason": "already_decided"})
    );
    // None of the violations touched the approvals.
    let got = d.result("getApproval", json!({"approval_id": contact}));
    assert_eq!(got["approval"]["status"], "pending");
}

#[test]
fn create_and_get_approval_errors() {
    let d = daemon();
    let (session, _) = finished_session(&d);
    let error = |method: &str, params: Value| {
        let reply = d.call(method, params);
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        reply["error"]["message"].as_str().unwrap().to_owned()
    };
    assert_eq!(
        error(
            "createApproval",
            json!({"tool_name": "Write", "tool_input": {}})
        ),
        "session_id or run_id is required"
    );
    assert_eq!(
        error(
            "createApproval",
            json!({"session_id": "nope", "tool_name": "Write", "tool_input": {}})
        ),
        "session not found: nope"
    );
    assert_eq!(
        error(
            "createApproval",
            json!({"run_id": "nope", "tool_name": "Write", "tool_input": {}})
        ),
        "session not found for run_id: nope"
    );
    assert_eq!(
        error(
            "createApproval",
            json!({"session_id": session, "tool_input": {}})
        ),
        "tool_name is required"
    );
    assert_eq!(
        error(
            "createApproval",
            json!({"session_id": session, "tool_name": "Write"})
        ),
        "tool_input is required"
    );
    // Claude's tool input is always an object; anything else would make every strict client's
    // `fetchApprovals` fail to decode once it is pending.
    for (input, kind) in [
        (json!("ls"), "string"),
        (json!([1]), "array"),
        (json!(3), "number"),
        (json!(true), "boolean"),
    ] {
        let reply = d.call(
            "createApproval",
            json!({"session_id": session, "tool_name": "Bash", "tool_input": input}),
        );
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        assert_eq!(
            reply["error"]["message"],
            "tool_input must be a JSON object"
        );
        assert_eq!(
            reply["error"]["data"],
            json!({"param": "tool_input", "expected": "object", "received": kind})
        );
    }
    assert!(pending(&d, &session).is_empty());
    assert_eq!(
        error(
            "createApproval",
            json!({"session_id": session, "type": "human_contact"})
        ),
        "message is required"
    );
    assert_eq!(
        error("getApproval", json!({"approval_id": "local-nope"})),
        "approval not found: local-nope"
    );
}

// ---- the MCP server driven by hand over stdio ----

/// `hld mcp claude_approvals` with piped stdio, spoken to line by line.
struct McpServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Responses read while waiting for another id.
    early: Vec<Value>,
    stderr: Arc<Mutex<String>>,
    next_id: u64,
}

impl McpServer {
    /// Starts the server with exactly these `HUMANLAYER_*` variables.
    fn start(env: &[(&str, &str)]) -> McpServer {
        Self::start_with(&[], env)
    }

    /// Starts the server with `hld` flags before `mcp claude_approvals`.
    fn start_with(flags: &[&str], env: &[(&str, &str)]) -> McpServer {
        let mut command = Command::new(hld());
        command
            .args(flags)
            .args(["mcp", "claude_approvals"])
            .env("HOME", "/nonexistent")
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, _) in std::env::vars() {
            if key.starts_with("HUMANLAYER_") {
                command.env_remove(key);
            }
        }
        command.envs(env.iter().copied());
        let mut child = command.spawn().expect("spawn hld");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let err = child.stderr.take().unwrap();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                let mut text = sink.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        McpServer {
            child,
            stdin,
            lines,
            early: Vec::new(),
            stderr,
            next_id: 0,
        }
    }

    /// Starts the server for `session` of daemon `d`, polling every `poll_ms`.
    fn for_session(d: &TestDaemon, session: &str, poll_ms: u64) -> McpServer {
        let socket = d.socket.display().to_string();
        Self::start(&[
            ("HUMANLAYER_DAEMON_SOCKET", &socket),
            ("HUMANLAYER_SESSION_ID", session),
            ("HUMANLAYER_APPROVAL_POLL_MS", &poll_ms.to_string()),
        ])
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns its id.
    fn send_request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The response to request `id` (15 s at most). Every stdout line must be JSON-RPC.
    fn response(&mut self, id: u64) -> Value {
        if let Some(i) = self.early.iter().position(|r| r["id"] == id) {
            return self.early.remove(i);
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "no response to {id}; stderr:\n{}",
                    self.stderr.lock().unwrap()
                )
            });
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            assert_eq!(message["jsonrpc"], "2.0", "{message}");
            if message["id"] == id {
                return message;
            }
            self.early.push(message);
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.response(id)
    }

    /// `initialize` as Claude Code sends it, then `notifications/initialized`.
    fn initialize(&mut self) -> Value {
        let reply = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"roots": {}, "elicitation": {}},
                "clientInfo": {"name": "claude-code", "title": "Claude Code", "version": "2.1.197"},
            }),
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        reply
    }

    /// Sends `tools/call` with the `_meta` Claude Code adds; returns the request id.
    fn start_call(&mut self, tool: &str, arguments: Value) -> u64 {
        let token = self.next_id + 1;
        let tool_use_id = arguments["tool_use_id"]
            .as_str()
            .unwrap_or("toolu_x")
            .to_owned();
        self.send_request(
            "tools/call",
            json!({"name": tool, "arguments": arguments,
                   "_meta": {"claudecode/toolUseId": tool_use_id, "progressToken": token}}),
        )
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let id = self.start_call(tool, arguments);
        self.response(id)
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }
}

impl Drop for McpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The one text item of a tool result.
fn only_text(response: &Value) -> String {
    let content = response["result"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("not a tool result: {response}"));
    assert_eq!(content.len(), 1, "{response}");
    assert_eq!(content[0]["type"], "text");
    content[0]["text"].as_str().unwrap().to_owned()
}

/// The permission reply inside a tool result.
fn permission(response: &Value) -> Value {
    let text = only_text(response);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn the_server_introduces_itself_and_lists_its_tools() {
    let mut mcp = McpServer::start(&[]);
    let init = mcp.initialize();
    let result = &init["result"];
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(result["serverInfo"]["name"], "hld-claude-approvals");
    assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(result["capabilities"]["tools"].is_object(), "{init}");
    let list = mcp.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["request_permission", "contact_human"]);
    let schema = &tools[0]["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["tool_name"]["type"], "string");
    assert_eq!(schema["properties"]["input"]["type"], "object");
    assert_eq!(schema["properties"]["tool_use_id"]["type"], "string");
    assert_eq!(schema["required"], json!(["tool_name", "input"]));
    let schema = &tools[1]["inputSchema"];
    assert_eq!(schema["properties"]["message"]["type"], "string");
    assert_eq!(schema["required"], json!(["message"]));
    mcp.close_stdin();
    let status = mcp.wait_exit(Duration::from_secs(5)).expect("exits on EOF");
    assert!(status.success(), "{status:?}");
}

#[test]
fn an_unreachable_daemon_is_a_clear_denial_not_a_hang() {
    let dir = tempfile::Builder::new()
        .prefix("hlyr-")
        .tempdir_in("/tmp")
        .unwrap();
    // A socket file nobody listens on (refused), and a path that does not exist.
    let dead = dir.path().join("dead.sock");
    drop(std::os::unix::net::UnixListener::bind(&dead).unwrap());
    let missing = dir.path().join("missing.sock");
    for socket in [&dead, &missing] {
        let path = socket.display().to_string();
        let mut mcp = McpServer::start(&[
            ("HUMANLAYER_DAEMON_SOCKET", &path),
            ("HUMANLAYER_SESSION_ID", "s-1"),
            ("HUMANLAYER_RUN_ID", "r-1"),
        ]);
        mcp.initialize();
        let started = Instant::now();
        let reply = mcp.call(
            "request_permission",
            json!({"tool_name": "Write", "input": {"file_path": "/tmp/x"}, "tool_use_id": "toolu_1"}),
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_ne!(reply["result"]["isError"], true, "{reply}");
        let answer = permission(&reply);
        assert_eq!(answer["behavior"], "deny", "{answer}");
        let message = answer["message"].as_str().unwrap();
        let expected = format!("Denied: the hld daemon could not be reached at {path} (");
        assert!(message.starts_with(&expected), "{message}");

        let reply = mcp.call("contact_human", json!({"message": "Anyone there?"}));
        assert_eq!(reply["result"]["isError"], true, "{reply}");
        let text = only_text(&reply);
        assert!(text.starts_with("No answer from a human: the hld daemon could not be reached"));

        // Logs went to stderr; stdout carried only the JSON-RPC replies checked above.
        mcp.close_stdin();
        mcp.wait_exit(Duration::from_secs(5)).expect("exits on EOF");
        let stderr = mcp.stderr.lock().unwrap().clone();
        assert!(stderr.contains("could not be reached"), "{stderr}");
    }
}

#[test]
fn the_socket_flag_wins_over_the_environment() {
    let mut mcp = McpServer::start_with(
        &["--socket", "/nonexistent/flag.sock"],
        &[
            ("HUMANLAYER_DAEMON_SOCKET", "/nonexistent/env.sock"),
            ("HUMANLAYER_SESSION_ID", "s-1"),
        ],
    );
    mcp.initialize();
    let answer = permission(&mcp.call(
        "request_permission",
        json!({"tool_name": "Bash", "input": {"command": "ls"}}),
    ));
    let message = answer["message"].as_str().unwrap();
    assert!(
        message
            .starts_with("Denied: the hld daemon could not be reached at /nonexistent/flag.sock"),
        "{message}"
    );
}

#[test]
fn without_a_session_identity_every_request_is_denied() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("x.sock").display().to_string();
    let mut mcp = McpServer::start(&[("HUMANLAYER_DAEMON_SOCKET", &socket)]);
    mcp.initialize();
    let answer = permission(&mcp.call(
        "request_permission",
        json!({"tool_name": "Bash", "input": {"command": "ls"}}),
    ));
    assert_eq!(answer["behavior"], "deny");
    assert!(answer["message"]
        .as_str()
        .unwrap()
        .starts_with("Denied: HUMANLAYER_SESSION_ID and HUMANLAYER_RUN_ID are not set"));
}

#[test]
fn bad_arguments_and_unknown_tools_are_invalid_params() {
    let mut mcp = McpServer::start(&[("HUMANLAYER_SESSION_ID", "s-1")]);
    mcp.initialize();
    let cases = [
        ("request_permission", json!({"input": {}}), "tool_name"),
        (
            "request_permission",
            json!({"tool_name": "", "input": {}}),
            "tool_name",
        ),
        ("request_permission", json!({"tool_name": "Write"}), "input"),
        (
            "request_permission",
            json!({"tool_name": "Write", "input": "x"}),
            "input",
        ),
        (
            "request_permission",
            json!({"tool_name": "Write", "input": {}, "tool_use_id": 7}),
            "tool_use_id",
        ),
        ("contact_human", json!({}), "message"),
    ];
    for (tool, arguments, field) in cases {
        let reply = mcp.call(tool, arguments.clone());
        assert_eq!(reply["error"]["code"], -32602, "{arguments} -> {reply}");
        assert_eq!(reply["error"]["data"]["field"], field, "{reply}");
    }
    let reply = mcp.call("nonexistent", json!({}));
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert_eq!(reply["error"]["message"], "unknown tool: nonexistent");
}

#[test]
fn permission_to_ask_the_human_is_granted_without_asking() {
    // No daemon at all: the answer does not depend on one.
    let mut mcp = McpServer::start(&[
        ("HUMANLAYER_DAEMON_SOCKET", "/nonexistent/hld.sock"),
        ("HUMANLAYER_SESSION_ID", "s-1"),
    ]);
    mcp.initialize();
    let input = json!({"message": "What colour?"});
    let answer = permission(&mcp.call(
        "request_permission",
        json!({"tool_name": "mcp__approvals__contact_human", "input": input, "tool_use_id": "t"}),
    ));
    assert_eq!(answer, json!({"behavior": "allow", "updatedInput": input}));
}

#[test]
fn decisions_over_stdio_reach_the_right_waiting_call_through_events() {
    let d = daemon();
    let (session, _) = finished_session(&d);
    // A poll far beyond the test's timeouts: every answer must come from an event.
    let mut mcp = McpServer::for_session(&d, &session, 600_000);
    mcp.initialize();
    let write = json!({"file_path": "/tmp/a.txt", "content": "A\n"});
    let bash = json!({"command": "rm -rf /tmp/b"});
    let first = mcp.start_call(
        "request_permission",
        json!({"tool_name": "Write", "input": write, "tool_use_id": "toolu_a"}),
    );
    let second = mcp.start_call(
        "request_permission",
        json!({"tool_name": "Bash", "input": bash, "tool_use_id": "toolu_b"}),
    );
    let listed = wait_pending(&d, &session, 2);
    let id_of = |tool_use_id: &str| {
        listed
            .iter()
            .find(|a| a["tool_use_id"] == tool_use_id)
            .expect("an approval per call")["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (a, b) = (id_of("toolu_a"), id_of("toolu_b"));
    let by_a = listed.iter().find(|x| x["id"] == a.as_str()).unwrap();
    assert_eq!(by_a["function_name"], "Write");
    assert_eq!(by_a["function_args"], write);
    // Decide the later call first.
    let reply = decide(
        &d,
        json!({"call_id": b, "type": "function_call", "decision": "deny", "comment": "Too dangerous"}),
    );
    assert_eq!(reply["success"], true);
    assert_eq!(
        permission(&mcp.response(second)),
        json!({"behavior": "deny", "message": "Too dangerous"})
    );
    assert_eq!(approve(&d, &a)["success"], true);
    assert_eq!(
        permission(&mcp.response(first)),
        json!({"behavior": "allow", "updatedInput": write})
    );

    // A question over stdio gets the human's words back.
    let asked = mcp.start_call("contact_human", json!({"message": "Deploy now?"}));
    let listed = wait_pending(&d, &session, 1);
    assert_eq!(listed[0]["type"], "human_contact");
    assert_eq!(listed[0]["message"], "Deploy now?");
    let reply = decide(
        &d,
        json!({"call_id": listed[0]["id"], "type": "human_contact", "decision": "respond",
               "comment": "After lunch"}),
    );
    assert_eq!(reply["success"], true);
    let answer = mcp.response(asked);
    assert_ne!(answer["result"]["isError"], true);
    assert_eq!(only_text(&answer), "After lunch");
}

#[test]
fn the_server_exits_at_once_when_stdin_closes_during_a_wait() {
    let d = daemon();
    let (session, _) = finished_session(&d);
    let mut mcp = McpServer::for_session(&d, &session, 600_000);
    mcp.initialize();
    mcp.start_call(
        "request_permission",
        json!({"tool_name": "Write", "input": {"file_path": "/tmp/z"}, "tool_use_id": "toolu_z"}),
    );
    wait_pending(&d, &session, 1);
    let closed = Instant::now();
    mcp.close_stdin();
    let status = mcp
        .wait_exit(Duration::from_secs(3))
        .expect("the server exits on EOF while a call waits");
    assert!(status.success(), "{status:?}");
    assert!(closed.elapsed() < Duration::from_secs(3));
}

#[test]
fn after_a_restart_the_poll_learns_that_the_approval_was_resolved() {
    // The new daemon resolves the approval as it starts, before the server can subscribe
    // again: only its poll can learn of it.
    let base = tempfile::Builder::new()
        .prefix("hld-")
        .tempdir_in("/tmp")
        .unwrap();
    let restartable = || DaemonOptions {
        dir: Some(base.path().to_path_buf()),
        ..options()
    };
    let mut d = TestDaemon::start_with(restartable());
    let (session, _) = finished_session(&d);
    let mut mcp = McpServer::for_session(&d, &session, 200);
    mcp.initialize();
    let input = json!({"command": "make"});
    let call = mcp.start_call(
        "request_permission",
        json!({"tool_name": "Bash", "input": input, "tool_use_id": "toolu_m"}),
    );
    wait_pending(&d, &session, 1);
    d.stop();
    drop(d);
    let d = TestDaemon::start_with(restartable());
    assert_eq!(
        permission(&mcp.response(call)),
        json!({"behavior": "deny", "message": "the session ended before a decision"})
    );
    drop(d);
}

#[test]
fn a_pending_approval_expires_when_its_session_ends() {
    let d = daemon();
    let mut sub = d.conn();
    sub.request(
        "Subscribe",
        json!({"event_types": ["approval_resolved"]}),
        json!(1),
    );
    let id = launch(&d, "scenario:tool make a file");
    let approval_id = wait_pending(&d, &id, 1)[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    d.result("interruptSession", json!({"session_id": id}));
    let event = sub.recv();
    let data = &event["result"]["event"]["data"];
    assert_eq!(data["approval_id"], approval_id.as_str());
    assert_eq!(data["decision"], "resolved");
    assert_eq!(data["comment"], "the session ended before a decision");
    assert_eq!(data["session_id"], id.as_str());
    assert_eq!(data["type"], "function_call");
    assert_eq!(data["total"], 0);
    assert!(pending(&d, &id).is_empty());
    let approval = d.result("getApproval", json!({"approval_id": approval_id}))["approval"].clone();
    assert_eq!(approval["status"], "resolved");
    // Too late to decide it now, and a program can tell why.
    let r = approve(&d, &approval_id);
    assert_eq!(r["success"], false);
    assert_eq!(r["reason"], "resolved");
}

/// `hld` serves the approvals server from its own binary: a daemon with nothing next to it
/// (no `hlyr`, as after `cargo run -p hld` on a fresh clone) still asks a human.
#[test]
fn a_daemon_alone_in_its_directory_asks_for_approval_through_its_own_binary() {
    let bin = tempfile::tempdir().unwrap();
    let alone = bin.path().join("hld");
    std::fs::copy(hld(), &alone).unwrap();
    let d = TestDaemon::start_with(DaemonOptions {
        binary: Some(alone.clone()),
        ..options()
    });
    let health = d.result("health", json!({}));
    assert_eq!(health["approvals"]["available"], true, "{health}");
    assert_eq!(health["approvals"]["configured"], false, "{health}");
    assert_eq!(health["approvals"]["command"], alone.display().to_string());
    let id = launch(&d, "scenario:tool make a file");
    let approval = wait_pending(&d, &id, 1)[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(approve(&d, &approval)["success"], true);
    let s = d.wait_ended(&id);
    assert_eq!(s["status"], "completed", "{s}");
    assert!(workdir(&d).join("hello.txt").exists());
}

/// `--approvals-command` still works, and `hlyr mcp claude_approvals` is an alias of hld's
/// server.
#[test]
fn a_configured_approvals_command_serves_the_sessions() {
    let hlyr = workspace_bin("hlyr");
    let d = TestDaemon::start_with(
        options()
            .arg("--approvals-command")
            .arg(&hlyr.display().to_string()),
    );
    let health = d.result("health", json!({}));
    assert_eq!(health["approvals"]["configured"], true, "{health}");
    assert_eq!(health["approvals"]["available"], true, "{health}");
    let id = launch(&d, "scenario:tool make a file");
    let approval = wait_pending(&d, &id, 1)[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(approve(&d, &approval)["success"], true);
    assert_eq!(d.wait_ended(&id)["status"], "completed");
    let claude_id = d.wait_ended(&id)["claude_session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let server = &d.fake_invocation(&claude_id)["mcp_config"]["mcpServers"]["approvals"];
    assert_eq!(server["command"], hlyr.display().to_string());
}

/// A configured approvals command that is not there is said at start-up and in `health`, and
/// a launch that needs it fails with a clear error: no session runs with its tool calls
/// silently refused. A launch without approvals still runs.
#[test]
fn a_missing_approvals_command_is_reported_and_refuses_the_launches_that_need_it() {
    let d = TestDaemon::start_with(
        options()
            .arg("--approvals-command")
            .arg("/nonexistent/hlyr"),
    );
    let health = d.result("health", json!({}));
    assert_eq!(health["approvals"]["available"], false, "{health}");
    assert_eq!(health["approvals"]["command"], "/nonexistent/hlyr");
    assert!(health["approvals"]["error"]
        .as_str()
        .unwrap()
        .contains("/nonexistent/hlyr is missing"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !d.log_text().contains("ERROR") {
        assert!(
            Instant::now() < deadline,
            "no error logged:\n{}",
            d.log_text()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let error_line = d
        .log_text()
        .lines()
        .find(|l| l.contains("ERROR"))
        .unwrap()
        .to_owned();
    assert!(error_line.contains("/nonexistent/hlyr"), "{error_line}");

    let refused = d.call(
        "launchSession",
        json!({"query": "scenario:tool make a file", "working_dir": workdir(&d)}),
    );
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("approvals MCP server cannot run"),
        "{message}"
    );
    assert!(d.result("listSessions", json!({}))["sessions"]
        .as_array()
        .unwrap()
        .is_empty());
    let id = d.launch(json!({
        "query": "scenario:plain hi",
        "working_dir": workdir(&d),
        "no_approvals": true,
    }));
    assert_eq!(d.wait_ended(&id)["status"], "completed");
}
