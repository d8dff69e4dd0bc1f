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
use hld_client::protocol::{
    Approval, ApprovalStatus, ApprovalType, ConversationEvent, ConversationEventType,
    CreateApproval, CreateApprovalParams, Event, FetchApprovals, FetchApprovalsParams, GetApproval,
    GetApprovalParams, Health, InterruptSession, LaunchSession, LaunchSessionParams, ListSessions,
    NoParams, RefusalReason, SendDecision, SendDecisionParams, SendDecisionResult, SessionIdParams,
    SessionStatus, SubscribeParams,
};
use hld_client::{SubscribeOptions, SubscriptionItem};
use hld_e2e::{
    ended, launch_params, status_change, wait_for, workspace_bin, DaemonOptions, LineConn,
    Subscription, TestDaemon, WAIT,
};
use serde_json::{json, Value};

const PERMISSION_TOOL: &str = "mcp__approvals__request_permission";

fn hld() -> PathBuf {
    workspace_bin("hld")
}

/// These tests ask through the approvals MCP server (the keyed path); the control channel's
/// approvals are `live.rs`'s and `control.rs`'s.
fn options() -> DaemonOptions {
    DaemonOptions::fake_claude_with_approvals_server()
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
    d.launch(launch_params(query, workdir(d)))
}

/// A completed session to hang approvals on without any Claude asking.
fn finished_session(d: &TestDaemon) -> (String, String) {
    let id = launch(d, "scenario:plain hello");
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Completed, "{s:?}");
    (id, s.run_id)
}

/// `sendDecision` params.
fn decision(
    call_id: &str,
    kind: &str,
    decision: &str,
    comment: Option<&str>,
) -> SendDecisionParams {
    SendDecisionParams {
        call_id: Some(call_id.to_owned()),
        kind: Some(kind.to_owned()),
        decision: Some(decision.to_owned()),
        comment: comment.map(str::to_owned),
    }
}

fn decide(d: &TestDaemon, params: SendDecisionParams) -> SendDecisionResult {
    d.request::<SendDecision>(params)
}

fn approve(d: &TestDaemon, id: &str) -> SendDecisionResult {
    decide(d, decision(id, "function_call", "approve", None))
}

/// The reply to a decision that was recorded.
fn recorded() -> SendDecisionResult {
    SendDecisionResult {
        success: true,
        error: None,
        reason: None,
    }
}

fn create(d: &TestDaemon, params: CreateApprovalParams) -> String {
    d.request::<CreateApproval>(params).approval_id
}

fn get_approval(d: &TestDaemon, id: &str) -> Approval {
    d.request::<GetApproval>(GetApprovalParams {
        approval_id: id.to_owned(),
    })
    .approval
}

/// Polls `fetchApprovals` until the session has `n` pending approvals.
fn wait_pending(d: &TestDaemon, session_id: &str, n: usize) -> Vec<Approval> {
    let approvals = d.wait_approvals(Some(session_id), |a| a.len() >= n);
    assert_eq!(approvals.len(), n, "{approvals:?}");
    approvals
}

fn tool_result(d: &TestDaemon, session_id: &str) -> ConversationEvent {
    d.conversation(session_id)
        .into_iter()
        .find(|e| e.event_type == ConversationEventType::ToolResult)
        .expect("a tool_result event")
}

fn last_assistant_text(d: &TestDaemon, session_id: &str) -> String {
    d.conversation(session_id)
        .into_iter()
        .rev()
        .find(|e| {
            e.event_type == ConversationEventType::Message && e.role.as_deref() == Some("assistant")
        })
        .and_then(|e| e.content)
        .expect("an assistant message")
}

/// Whether `event` announces an approval of `session`.
fn new_approval_of(event: &Event, session: &str) -> bool {
    matches!(event, Event::NewApproval { session_id, .. } if session_id == session)
}

/// Whether `event` resolves approval `id`.
fn resolves(event: &Event, id: &str) -> bool {
    matches!(event, Event::ApprovalResolved { approval_id, .. } if approval_id == id)
}

/// Every event of a subscription, kept in order while the test waits for particular ones.
struct Events {
    sub: Subscription,
    seen: Vec<Event>,
}

impl Events {
    fn subscribe(d: &TestDaemon, params: SubscribeParams) -> Events {
        Events {
            sub: d.subscribe(params),
            seen: Vec::new(),
        }
    }

    /// Reads until an event for which `found` holds; returns it.
    fn until(&mut self, found: impl Fn(&Event) -> bool) -> Event {
        loop {
            let event = self.sub.next_event().event;
            self.seen.push(event.clone());
            if found(&event) {
                return event;
            }
        }
    }

    /// Reads until the session ends.
    fn until_ended(&mut self, session_id: &str) {
        self.until(|e| ended(e, session_id));
    }

    /// The session's status changes seen so far, as `old>new`.
    fn status_changes(&self, session_id: &str) -> Vec<String> {
        self.seen
            .iter()
            .filter_map(|e| status_change(e, session_id))
            .map(|(old, new)| format!("{old}>{new}"))
            .collect()
    }

    /// The stored events of the session published so far.
    fn conversation<'a>(&'a self, session: &'a str) -> impl Iterator<Item = &'a ConversationEvent> {
        self.seen.iter().filter_map(move |e| match e {
            Event::ConversationUpdated {
                session_id, event, ..
            } if session_id == session => Some(event.as_ref()),
            _ => None,
        })
    }
}

fn only_event_types(types: &[&str]) -> SubscribeParams {
    SubscribeParams {
        event_types: Some(types.iter().map(|&t| t.into()).collect()),
        ..Default::default()
    }
}

// ---- the fake agent calling the MCP tool for real ----

#[test]
fn approving_runs_the_tool_and_the_session_completes() {
    let d = daemon();
    let mut events = Events::subscribe(&d, SubscribeParams::default());
    let id = launch(&d, "scenario:tool make a file");
    let new = events.until(|e| new_approval_of(e, &id));
    let run_id = d.state(&id).run_id;
    let Event::NewApproval {
        approval,
        run_id: announced_run,
        kind,
        count,
        total,
        ..
    } = new
    else {
        unreachable!()
    };
    assert_eq!(announced_run, run_id);
    let approval_id = approval.id.clone();
    assert!(approval_id.starts_with("local-"), "{approval:?}");
    assert_eq!(approval.kind, ApprovalType::FunctionCall);
    assert_eq!(approval.status, ApprovalStatus::Pending);
    assert_eq!(approval.function_name.as_deref(), Some("Write"));
    // What the Go daemon's `new_approval` carried, which the anchor's `hlyr alert` prints.
    assert_eq!(kind, ApprovalType::FunctionCall);
    assert_eq!(count, 1);
    assert_eq!(total, 1);

    // While waiting: the session waits, the tool call is linked, nothing was written.
    d.wait_session(&id, |s| s.status == SessionStatus::WaitingInput);
    let call = d.wait_tool_call(&id);
    assert_eq!(call.approval_status.as_deref(), Some("pending"));
    assert_eq!(call.approval_id.as_deref(), Some(approval_id.as_str()));
    assert_eq!(approval.tool_use_id, call.tool_id);
    let input: Value = serde_json::from_str(call.tool_input_json.as_deref().unwrap()).unwrap();
    assert_eq!(approval.function_args, Some(input));
    let hello = workdir(&d).join("hello.txt");
    assert!(!hello.exists());
    let listed = wait_pending(&d, &id, 1);
    assert_eq!(listed[0].id, approval_id);

    assert_eq!(approve(&d, &approval_id), recorded());
    let Event::ApprovalResolved {
        session_id,
        run_id: resolved_run,
        call_id,
        decision,
        kind,
        total,
        ..
    } = events.until(|e| resolves(e, &approval_id))
    else {
        unreachable!()
    };
    assert_eq!(session_id, id);
    assert_eq!(resolved_run, run_id);
    assert_eq!(call_id, approval_id);
    assert_eq!(decision, ApprovalStatus::Approved);
    assert_eq!(kind, ApprovalType::FunctionCall);
    assert_eq!(total, 0);
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
    let linked: Vec<Option<&str>> = events
        .conversation(&id)
        .filter(|e| e.approval_id.as_deref() == Some(approval_id.as_str()))
        .map(|e| e.approval_status.as_deref())
        .collect();
    assert_eq!(linked.first(), Some(&Some("pending")));
    assert_eq!(linked.last(), Some(&Some("approved")));

    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Completed, "{s:?}");
    assert_eq!(std::fs::read_to_string(&hello).unwrap(), "Hello, world!\n");
    let call = d.wait_tool_call(&id);
    assert_eq!(call.approval_status.as_deref(), Some("approved"));
    assert!(call.is_completed);
    let result = tool_result(&d, &id);
    assert_eq!(result.tool_result_for_id, call.tool_id);
    assert!(!result.is_error, "{result:?}");
    assert!(last_assistant_text(&d, &id).starts_with("Done"));
    assert!(d.approvals(Some(&id)).is_empty());
    let got = get_approval(&d, &approval_id);
    assert_eq!(got.status, ApprovalStatus::Approved);
    assert!(got.responded_at.is_some());

    // Claude was handed the injected server and tool.
    let invocation = d.fake_invocation(s.claude_session_id.as_deref().unwrap());
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
    let mut events = Events::subscribe(&d, SubscribeParams::default());
    let id = launch(&d, "scenario:asked_first make a file");
    let Event::NewApproval { approval, .. } = events.until(|e| new_approval_of(e, &id)) else {
        unreachable!()
    };
    assert!(
        events
            .conversation(&id)
            .all(|e| e.event_type != ConversationEventType::ToolCall),
        "the approval came first"
    );
    let Event::ConversationUpdated { event: call, .. } = events.until(|e| {
        matches!(e, Event::ConversationUpdated { session_id, event, .. }
            if *session_id == id && event.event_type == ConversationEventType::ToolCall)
    }) else {
        unreachable!()
    };
    assert_eq!(call.tool_id, approval.tool_use_id);
    assert_eq!(call.approval_id.as_deref(), Some(approval.id.as_str()));
    assert_eq!(call.approval_status.as_deref(), Some("pending"));
    assert!(approve(&d, &approval.id).success);
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
    assert_eq!(
        d.wait_tool_call(&id).approval_status.as_deref(),
        Some("approved")
    );
}

#[test]
fn a_denial_with_a_comment_reaches_claude() {
    let d = daemon();
    let mut events = Events::subscribe(&d, only_event_types(&["approval_resolved"]));
    let id = launch(&d, "scenario:tool make a file");
    let approval_id = wait_pending(&d, &id, 1)[0].id.clone();
    let reply = decide(
        &d,
        decision(
            &approval_id,
            "function_call",
            "deny",
            Some("Use notes.txt instead"),
        ),
    );
    assert_eq!(reply, recorded());
    let Event::ApprovalResolved {
        decision, comment, ..
    } = events.until(|e| resolves(e, &approval_id))
    else {
        unreachable!()
    };
    assert_eq!(decision, ApprovalStatus::Denied);
    assert_eq!(comment.as_deref(), Some("Use notes.txt instead"));
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Completed, "{s:?}");
    let result = tool_result(&d, &id);
    assert!(result.is_error);
    assert_eq!(
        result.tool_result_content.as_deref(),
        Some("Use notes.txt instead")
    );
    assert_eq!(
        last_assistant_text(&d, &id),
        "I couldn't create hello.txt: Use notes.txt instead"
    );
    assert_eq!(
        d.wait_tool_call(&id).approval_status.as_deref(),
        Some("denied")
    );
    assert!(!workdir(&d).join("hello.txt").exists());
}

#[test]
fn a_human_contact_is_answered_with_respond() {
    let d = daemon();
    let mut events = Events::subscribe(&d, SubscribeParams::default());
    let id = launch(&d, "scenario:ask");
    let Event::NewApproval { approval, kind, .. } = events.until(|e| new_approval_of(e, &id))
    else {
        unreachable!()
    };
    // Asking the human needs no permission from the human first.
    assert_eq!(approval.kind, ApprovalType::HumanContact);
    assert_eq!(kind, ApprovalType::HumanContact);
    assert_eq!(
        approval.message.as_deref(),
        Some("What colour should the button be?")
    );
    d.wait_session(&id, |s| s.status == SessionStatus::WaitingInput);
    let listed = wait_pending(&d, &id, 1);
    let contact = listed[0].human_contact.as_ref().unwrap();
    assert_eq!(contact.spec.msg, "What colour should the button be?");
    assert_eq!(contact.call_id, approval.id);
    assert!(listed[0].function_call.is_none());

    let reply = decide(
        &d,
        decision(
            &approval.id,
            "human_contact",
            "respond",
            Some("Blue, like the sky"),
        ),
    );
    assert_eq!(reply, recorded());
    let Event::ApprovalResolved {
        decision, comment, ..
    } = events.until(|e| resolves(e, &approval.id))
    else {
        unreachable!()
    };
    assert_eq!(decision, ApprovalStatus::Responded);
    assert_eq!(comment.as_deref(), Some("Blue, like the sky"));
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
    assert_eq!(
        events
            .seen
            .iter()
            .filter(|e| new_approval_of(e, &id))
            .count(),
        1
    );
}

/// After a restart, the approval of a session that died with the old daemon is resolved: no
/// `claude` waits for it, so it leaves the pending list, and a decision on it is refused with
/// `reason: resolved`. Both ways a daemon goes: SIGKILL (nothing cleaned up) and SIGTERM.
#[test]
fn an_approval_whose_session_died_with_the_daemon_is_resolved_after_a_restart() {
    for kill in [true, false] {
        let base = hld_e2e::short_tempdir();
        let dir = base.path().to_path_buf();
        let restartable = || DaemonOptions {
            dir: Some(dir.clone()),
            ..options()
        };
        let mut d = TestDaemon::start_with(restartable());
        let id = launch(&d, "scenario:tool make a file");
        let approval_id = wait_pending(&d, &id, 1)[0].id.clone();
        // Stored too, or a kill could come between the approval and its call.
        d.wait_tool_call(&id);
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
        assert!(d.approvals(Some(&id)).is_empty(), "kill: {kill}");
        assert!(d.approvals(None).is_empty());
        let approval = get_approval(&d, &approval_id);
        assert_eq!(approval.status, ApprovalStatus::Resolved, "kill: {kill}");
        assert_eq!(
            approval.comment.as_deref(),
            Some("the session ended before a decision")
        );
        let refused = approve(&d, &approval_id);
        assert!(!refused.success, "{refused:?}");
        assert_eq!(refused.reason, Some(RefusalReason::Resolved), "{refused:?}");
        assert!(
            refused
                .error
                .as_deref()
                .unwrap()
                .contains("resolved without a decision: its session ended"),
            "{refused:?}"
        );
        let session = d.wait_ended(&id);
        let expected = if kill {
            SessionStatus::Failed
        } else {
            SessionStatus::Completed
        };
        assert_eq!(session.status, expected);
        // The tool call row carries the resolution.
        assert_eq!(
            d.wait_tool_call(&id).approval_status.as_deref(),
            Some("resolved")
        );
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
    let approval_id = wait_pending(&d, &id, 1)[0].id.clone();
    let second = d.client().await;
    let result = second
        .send_decision(decision(
            &approval_id,
            "function_call",
            "approve",
            Some("go ahead"),
        ))
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
    assert_eq!(s.status, SessionStatus::Completed);
    assert!(workdir(&d).join("hello.txt").exists());
    let again = first.get_approval(&approval_id).await.unwrap();
    assert_eq!(again.status, ApprovalStatus::Approved);
    assert_eq!(again.comment.as_deref(), Some("go ahead"));
}

#[test]
fn racing_decisions_have_exactly_one_winner() {
    let d = daemon();
    let mut events = Events::subscribe(&d, only_event_types(&["approval_resolved"]));
    let id = launch(&d, "scenario:tool make a file");
    let approval_id = wait_pending(&d, &id, 1)[0].id.clone();
    let racers = 8;
    let barrier = Arc::new(Barrier::new(racers));
    let socket = d.socket.clone();
    let handles: Vec<_> = (0..racers)
        .map(|i| {
            let (barrier, socket, approval_id) =
                (barrier.clone(), socket.clone(), approval_id.clone());
            std::thread::spawn(move || {
                let comment = format!("racer {i} says no");
                let params = if i % 2 == 0 {
                    decision(&approval_id, "function_call", "approve", None)
                } else {
                    decision(&approval_id, "function_call", "deny", Some(&comment))
                };
                let mut conn = LineConn::connect(&socket).unwrap();
                barrier.wait();
                (i, conn.try_request::<SendDecision>(params).unwrap())
            })
        })
        .collect();
    let replies: Vec<(usize, SendDecisionResult)> =
        handles.into_iter().map(|h| h.join().unwrap()).collect();
    let winners: Vec<usize> = replies
        .iter()
        .filter(|(_, r)| r.success)
        .map(|(i, _)| *i)
        .collect();
    assert_eq!(winners.len(), 1, "{replies:?}");
    for (_, reply) in replies.iter().filter(|(i, _)| *i != winners[0]) {
        assert!(!reply.success);
        let error = reply.error.as_deref().unwrap();
        assert!(error.contains("already decided"), "{error}");
    }
    let winner = winners[0];
    let Event::ApprovalResolved {
        decision, comment, ..
    } = events.until(|e| resolves(e, &approval_id))
    else {
        unreachable!()
    };
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Completed);
    let call = d.wait_tool_call(&id);
    if winner.is_multiple_of(2) {
        assert_eq!(decision, ApprovalStatus::Approved);
        assert_eq!(call.approval_status.as_deref(), Some("approved"));
        assert!(workdir(&d).join("hello.txt").exists());
    } else {
        assert_eq!(decision, ApprovalStatus::Denied);
        assert_eq!(comment, Some(format!("racer {winner} says no")));
        assert_eq!(call.approval_status.as_deref(), Some("denied"));
        assert!(!workdir(&d).join("hello.txt").exists());
        assert_eq!(
            last_assistant_text(&d, &id),
            format!("I couldn't create hello.txt: racer {winner} says no")
        );
    }
    // Only the winner was published: nothing more comes in an observation window.
    assert_eq!(
        events.sub.next_within(Duration::from_millis(300)),
        None,
        "a second approval_resolved"
    );
}

#[test]
fn no_approvals_or_an_own_permission_tool_skip_the_injection() {
    let d = daemon();
    let invocation = |params: LaunchSessionParams| {
        let id = d.launch(params);
        let s = d.wait_ended(&id);
        d.fake_invocation(s.claude_session_id.as_deref().expect("claude session id"))
    };
    let wd = workdir(&d);

    let injected = invocation(launch_params("hello", &wd));
    assert_eq!(injected["permission_prompt_tool"], PERMISSION_TOOL);
    assert!(injected["mcp_config"]["mcpServers"]["approvals"].is_object());

    let opted_out = invocation(LaunchSessionParams {
        no_approvals: Some(true),
        ..launch_params("hello", &wd)
    });
    assert!(opted_out["permission_prompt_tool"].is_null(), "{opted_out}");
    assert!(opted_out["mcp_config"].is_null(), "{opted_out}");

    let own = invocation(LaunchSessionParams {
        permission_prompt_tool: Some("mcp__mine__ask".into()),
        mcp_config: Some(
            serde_json::from_value(json!({"mcpServers": {"mine": {"command": "/bin/true"}}}))
                .unwrap(),
        ),
        ..launch_params("hello", &wd)
    });
    assert_eq!(own["permission_prompt_tool"], "mcp__mine__ask");
    let servers = own["mcp_config"]["mcpServers"].as_object().unwrap();
    assert_eq!(servers.keys().collect::<Vec<_>>(), ["mine"]);

    // Without any permission tool, a tool call is refused outright.
    let id = d.launch(LaunchSessionParams {
        no_approvals: Some(true),
        ..launch_params("scenario:tool", &wd)
    });
    d.wait_ended(&id);
    assert!(d.approvals(Some(&id)).is_empty());
    assert_eq!(d.wait_tool_call(&id).approval_status, None);
}

// ---- approval methods ----

#[test]
fn fetch_approvals_lists_both_shapes_and_is_always_an_array() {
    let d = daemon();
    // The exact replies when nothing is pending: an array, never null.
    assert_eq!(
        d.call("fetchApprovals", json!({}))["result"],
        json!({"approvals": []})
    );
    let (session, run) = finished_session(&d);
    assert_eq!(
        d.call("fetchApprovals", json!({"session_id": session}))["result"],
        json!({"approvals": []})
    );
    let unknown = d
        .try_request::<FetchApprovals>(FetchApprovalsParams {
            session_id: Some("nope".into()),
        })
        .unwrap_err();
    assert_eq!(unknown.code, -32602, "{unknown:?}");

    let call = create(
        &d,
        CreateApprovalParams {
            session_id: Some(session.clone()),
            tool_name: Some("Bash".into()),
            tool_input: Some(json!({"command": "ls"})),
            tool_use_id: Some("toolu_1".into()),
            ..Default::default()
        },
    );
    let contact = create(
        &d,
        CreateApprovalParams {
            run_id: Some(run.clone()),
            kind: Some("human_contact".into()),
            message: Some("Which branch?".into()),
            ..Default::default()
        },
    );
    assert_eq!(d.approvals(None).len(), 2);
    let listed = d.approvals(Some(&session));
    let by_id = |id: &str| listed.iter().find(|a| a.id == id).expect("listed").clone();

    let fc = by_id(&call);
    assert_eq!(fc.call_id, call);
    assert_eq!(fc.session_id, session);
    assert_eq!(fc.run_id, run);
    assert_eq!(fc.kind, ApprovalType::FunctionCall);
    assert_eq!(fc.status, ApprovalStatus::Pending);
    assert_eq!(fc.function_name.as_deref(), Some("Bash"));
    assert_eq!(fc.function_args, Some(json!({"command": "ls"})));
    assert_eq!(fc.tool_use_id.as_deref(), Some("toolu_1"));
    assert!(!fc.requested_at.is_empty());
    let nested = fc.function_call.as_ref().unwrap();
    assert_eq!(nested.call_id, call);
    assert_eq!(nested.run_id, run);
    assert_eq!(nested.spec.function, "Bash");
    assert_eq!(nested.spec.kwargs, json!({"command": "ls"}));
    assert!(fc.human_contact.is_none());

    let hc = by_id(&contact);
    assert_eq!(hc.kind, ApprovalType::HumanContact);
    assert_eq!(hc.session_id, session);
    assert_eq!(hc.message.as_deref(), Some("Which branch?"));
    let nested = hc.human_contact.as_ref().unwrap();
    assert_eq!(nested.call_id, contact);
    assert_eq!(nested.run_id, run);
    assert_eq!(nested.spec.msg, "Which branch?");
    assert!(hc.function_call.is_none());
    assert!(hc.function_name.is_none());

    // Decided approvals leave the list.
    approve(&d, &call);
    let left = d.approvals(Some(&session));
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id, contact);
}

#[test]
fn every_send_decision_violation_is_reported() {
    let d = daemon();
    let (session, _) = finished_session(&d);
    let call = create(
        &d,
        CreateApprovalParams {
            session_id: Some(session.clone()),
            tool_name: Some("Write".into()),
            tool_input: Some(json!({})),
            ..Default::default()
        },
    );
    let contact = create(
        &d,
        CreateApprovalParams {
            session_id: Some(session.clone()),
            kind: Some("human_contact".into()),
            message: Some("?".into()),
            ..Default::default()
        },
    );

    // Bad params, on the wire: -32602 naming the parameter.
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
    let reply = d.call(
        "sendDecision",
        json!({"approval_id": call, "type": "human_contact", "decision": "respond",
               "comment": "hi"}),
    );
    let wrong_kind: SendDecisionResult = serde_json::from_value(reply["result"].clone()).unwrap();
    assert!(!wrong_kind.success);
    assert_eq!(
        wrong_kind.error,
        Some(format!(
            "approval {call} is a function_call, not a human_contact"
        ))
    );
    assert_eq!(wrong_kind.reason, Some(RefusalReason::WrongType));

    let unknown = approve(&d, "local-nope");
    assert_eq!(
        unknown,
        SendDecisionResult {
            success: false,
            error: Some("approval not found: local-nope".into()),
            reason: Some(RefusalReason::NotFound),
        }
    );
    assert_eq!(approve(&d, &call), recorded());
    assert_eq!(
        approve(&d, &call),
        SendDecisionResult {
            success: false,
            error: Some(format!("approval {call} was already decided: approved")),
            reason: Some(RefusalReason::AlreadyDecided),
        }
    );
    // None of the violations touched the approvals.
    assert_eq!(get_approval(&d, &contact).status, ApprovalStatus::Pending);
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
    assert!(d.approvals(Some(&session)).is_empty());
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
        wait_for(timeout, || self.child.try_wait().unwrap())
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
    let by_tool_use = |tool_use_id: &str| {
        listed
            .iter()
            .find(|a| a.tool_use_id.as_deref() == Some(tool_use_id))
            .expect("an approval per call")
    };
    let (by_a, by_b) = (by_tool_use("toolu_a"), by_tool_use("toolu_b"));
    assert_eq!(by_a.function_name.as_deref(), Some("Write"));
    assert_eq!(by_a.function_args.as_ref(), Some(&write));
    // Decide the later call first.
    let reply = decide(
        &d,
        decision(&by_b.id, "function_call", "deny", Some("Too dangerous")),
    );
    assert!(reply.success);
    assert_eq!(
        permission(&mcp.response(second)),
        json!({"behavior": "deny", "message": "Too dangerous"})
    );
    assert!(approve(&d, &by_a.id).success);
    assert_eq!(
        permission(&mcp.response(first)),
        json!({"behavior": "allow", "updatedInput": write})
    );

    // A question over stdio gets the human's words back.
    let asked = mcp.start_call("contact_human", json!({"message": "Deploy now?"}));
    let listed = wait_pending(&d, &session, 1);
    assert_eq!(listed[0].kind, ApprovalType::HumanContact);
    assert_eq!(listed[0].message.as_deref(), Some("Deploy now?"));
    let reply = decide(
        &d,
        decision(
            &listed[0].id,
            "human_contact",
            "respond",
            Some("After lunch"),
        ),
    );
    assert!(reply.success);
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
    let base = hld_e2e::short_tempdir();
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
    let mut sub = d.subscribe(only_event_types(&["approval_resolved"]));
    let id = launch(&d, "scenario:tool make a file");
    let approval_id = wait_pending(&d, &id, 1)[0].id.clone();
    d.request::<InterruptSession>(SessionIdParams {
        session_id: id.clone(),
    });
    let Event::ApprovalResolved {
        approval_id: resolved,
        decision,
        comment,
        session_id,
        kind,
        total,
        ..
    } = sub.next_event().event
    else {
        panic!("not an approval_resolved event")
    };
    assert_eq!(resolved, approval_id);
    assert_eq!(decision, ApprovalStatus::Resolved);
    assert_eq!(
        comment.as_deref(),
        Some("the session ended before a decision")
    );
    assert_eq!(session_id, id);
    assert_eq!(kind, ApprovalType::FunctionCall);
    assert_eq!(total, 0);
    assert!(d.approvals(Some(&id)).is_empty());
    assert_eq!(
        get_approval(&d, &approval_id).status,
        ApprovalStatus::Resolved
    );
    // Too late to decide it now, and a program can tell why.
    let r = approve(&d, &approval_id);
    assert!(!r.success);
    assert_eq!(r.reason, Some(RefusalReason::Resolved));
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
    let approvals = d.request::<Health>(NoParams {}).approvals.unwrap();
    assert!(approvals.available, "{approvals:?}");
    assert!(!approvals.configured, "{approvals:?}");
    assert_eq!(approvals.command, alone.display().to_string());
    let id = launch(&d, "scenario:tool make a file");
    let approval = wait_pending(&d, &id, 1)[0].id.clone();
    assert!(approve(&d, &approval).success);
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Completed, "{s:?}");
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
    let approvals = d.request::<Health>(NoParams {}).approvals.unwrap();
    assert!(approvals.configured, "{approvals:?}");
    assert!(approvals.available, "{approvals:?}");
    let id = launch(&d, "scenario:tool make a file");
    let approval = wait_pending(&d, &id, 1)[0].id.clone();
    assert!(approve(&d, &approval).success);
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Completed);
    let server = &d.fake_invocation(s.claude_session_id.as_deref().unwrap())["mcp_config"]
        ["mcpServers"]["approvals"];
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
    let approvals = d.request::<Health>(NoParams {}).approvals.unwrap();
    assert!(!approvals.available, "{approvals:?}");
    assert_eq!(approvals.command, "/nonexistent/hlyr");
    assert!(approvals
        .error
        .as_deref()
        .unwrap()
        .contains("/nonexistent/hlyr is missing"));
    let error_line = wait_for(WAIT, || {
        d.log_text()
            .lines()
            .find(|l| l.contains("ERROR"))
            .map(str::to_owned)
    })
    .unwrap_or_else(|| panic!("no error logged:\n{}", d.log_text()));
    assert!(error_line.contains("/nonexistent/hlyr"), "{error_line}");

    let refused = d
        .try_request::<LaunchSession>(launch_params("scenario:tool make a file", workdir(&d)))
        .unwrap_err();
    assert_eq!(refused.code, -32603, "{refused:?}");
    assert!(
        refused.message.contains("approvals MCP server cannot run"),
        "{refused:?}"
    );
    assert!(d.request::<ListSessions>(NoParams {}).sessions.is_empty());
    let id = d.launch(LaunchSessionParams {
        no_approvals: Some(true),
        ..launch_params("scenario:plain hi", workdir(&d))
    });
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
}
