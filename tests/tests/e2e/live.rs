//! Live sessions with the real `claude` CLI (2.1.197) and the Messages API stand-in: messages
//! queued during a turn, a steer, a follow-up that resumes the same session after the idle
//! window, approvals over the control channel with their rules, and a queued message that
//! outlives the daemon.

use std::time::Duration;

use hld_client::protocol::{
    ApprovalStatus, CancelQueuedMessage, CancelQueuedMessageParams, ConversationEvent,
    DeleteSession, Event, Health, LaunchSessionParams, ListQueuedMessages, MessageMode,
    MessageStatus, NoParams, SendMessage, SendMessageParams, SendMessageResult, SessionIdParams,
    SessionStatus, SubscribeParams,
};
use hld_e2e::anthropic::{AnthropicStandIn, Reply, INPUT_TOKENS, OUTPUT_TOKENS};
use hld_e2e::{launch_params, wait_for, DaemonOptions, TestDaemon, WAIT};
use serde_json::Value;

use crate::real_claude::{
    decide, kinds, message_texts, options, recorded, scratch, wait_pending_approval, workdir,
    write_hello,
};

/// What the stand-in answers: a slow count for a prompt with `Count`, else `Noted: <the last
/// user text>`, so that each turn's answer names the message it answers.
fn noted_or_counting(request: &Value) -> Reply {
    let last = message_texts(request)
        .into_iter()
        .filter_map(|t| t.strip_prefix("user: ").map(str::to_owned))
        .next_back()
        .unwrap_or_default();
    if last.starts_with("Count") {
        let count: String = (1..=60).map(|n| format!("{n} ")).collect();
        Reply::text(&count).slow(Duration::from_millis(100))
    } else {
        Reply::text(&format!("Noted: {last}"))
    }
}

fn send(d: &TestDaemon, id: &str, text: &str, mode: Option<MessageMode>) -> SendMessageResult {
    d.request::<SendMessage>(SendMessageParams {
        session_id: id.to_owned(),
        text: text.to_owned(),
        mode,
        images: None,
    })
}

/// The `content` of each message event, in order.
fn texts(events: &[ConversationEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| {
            let role = e.role.as_deref()?;
            Some(format!("{role}: {}", e.content.as_deref()?))
        })
        .collect()
}

/// Waits until the session's conversation ends with the assistant's `answer`.
fn wait_answer(d: &TestDaemon, id: &str, answer: &str) -> Vec<ConversationEvent> {
    wait_for(WAIT, || {
        let events = d.conversation(id);
        (events.last()?.content.as_deref() == Some(answer)).then_some(events)
    })
    .unwrap_or_else(|| {
        panic!(
            "no answer {answer:?}: {:#?}\nlog:\n{}",
            texts(&d.conversation(id)),
            d.log_text()
        )
    })
}

#[test]
fn two_messages_queued_during_a_turn_are_answered_in_order_in_one_session() {
    let api = AnthropicStandIn::start(noted_or_counting);
    let d = TestDaemon::start_with(options(Some(&api)));
    let mut events = d.subscribe(SubscribeParams::default());
    let id = d.launch(launch_params("Count to sixty", workdir(&d)));
    api.wait_deltas(2);
    let first = send(&d, &id, "First follow-up", None);
    let second = send(&d, &id, "Second follow-up", Some(MessageMode::Queue));
    assert!(first.queued && second.queued, "{first:?} {second:?}");
    let queued = d.request::<ListQueuedMessages>(SessionIdParams {
        session_id: id.clone(),
    });
    let ids: Vec<&str> = queued.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, [&first.message_id, &second.message_id]);

    let conversation = wait_answer(&d, &id, "Noted: Second follow-up");
    let count = texts(&conversation)[1].clone();
    assert_eq!(
        texts(&conversation),
        [
            "user: Count to sixty".to_owned(),
            count,
            "user: First follow-up".to_owned(),
            "assistant: Noted: First follow-up".to_owned(),
            "user: Second follow-up".to_owned(),
            "assistant: Noted: Second follow-up".to_owned(),
        ]
    );
    let s = d.wait_session(&id, |s| s.status == SessionStatus::Completed);
    assert!(s.live && s.live_until.is_some(), "{s:?}");
    let claude_id = s.claude_session_id.clone().unwrap();
    assert!(conversation
        .iter()
        .all(|e| e.claude_session_id == claude_id));
    // One process: each turn's request carries the turns before it.
    let turns = api.wait_model_turns(3);
    let last = message_texts(&turns[2]);
    assert!(
        last.contains(&"user: First follow-up".to_owned()),
        "{last:?}"
    );
    assert!(d
        .request::<ListQueuedMessages>(SessionIdParams {
            session_id: id.clone()
        })
        .messages
        .is_empty());
    // Each turn's own figures are added once (the CLI reports cost since its start): three
    // model calls of the stand-in's tokens, priced $5/$25 per million.
    let one_call = (INPUT_TOKENS * 5 + OUTPUT_TOKENS * 25) as f64 / 1e6;
    let cost = s.cost_usd.unwrap();
    assert!(
        (cost - 3.0 * one_call).abs() < 1e-9,
        "{cost} vs 3 × {one_call}"
    );
    assert_eq!(s.input_tokens, Some(3 * INPUT_TOKENS as i64));
    assert_eq!(s.num_turns, Some(3));

    // Queued, then delivered, each message in order; the session went back to running.
    let seen = events.until(
        |e| matches!(e, Event::MessageDelivered { message, .. } if message.id == second.message_id),
    );
    let order: Vec<(String, MessageStatus)> = seen
        .iter()
        .filter_map(|t| match &t.event {
            Event::MessageQueued { message, .. } | Event::MessageDelivered { message, .. } => {
                Some((message.id.clone(), message.status.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        order,
        [
            (first.message_id.clone(), MessageStatus::Queued),
            (second.message_id.clone(), MessageStatus::Queued),
            (first.message_id.clone(), MessageStatus::Delivered),
            (second.message_id.clone(), MessageStatus::Delivered),
        ]
    );
}

#[test]
fn a_cancelled_message_is_not_delivered() {
    let api = AnthropicStandIn::start(noted_or_counting);
    let d = TestDaemon::start_with(options(Some(&api)));
    let id = d.launch(launch_params("Count to sixty", workdir(&d)));
    api.wait_deltas(2);
    let dropped = send(&d, &id, "Never mind", None);
    let kept = send(&d, &id, "Kept", None);
    let cancel = |message_id: &str| {
        d.try_request::<CancelQueuedMessage>(CancelQueuedMessageParams {
            message_id: message_id.to_owned(),
        })
    };
    assert!(cancel(&dropped.message_id).unwrap().success);
    let again = cancel(&dropped.message_id).unwrap_err();
    assert_eq!(again.code, -32602, "{again:?}");
    wait_answer(&d, &id, "Noted: Kept");
    let all = texts(&d.conversation(&id));
    assert!(!all.iter().any(|t| t.contains("Never mind")), "{all:?}");
    assert_eq!(cancel(&kept.message_id).unwrap_err().code, -32602);
}

#[test]
fn a_steer_interrupts_the_turn_and_its_text_reaches_the_next_request() {
    let api = AnthropicStandIn::start(noted_or_counting);
    let d = TestDaemon::start_with(options(Some(&api)));
    let id = d.launch(launch_params("Count to sixty", workdir(&d)));
    api.wait_deltas(3);
    let steer = send(&d, &id, "Stop and say hi", Some(MessageMode::Steer));
    assert!(!steer.queued, "{steer:?}");
    let conversation = wait_answer(&d, &id, "Noted: Stop and say hi");
    let all = texts(&conversation);
    assert!(
        all.contains(&"user: [Request interrupted by user]".to_owned()),
        "the running turn was interrupted: {all:?}"
    );
    let turns = api.wait_model_turns(2);
    assert!(
        message_texts(&turns[1]).contains(&"user: Stop and say hi".to_owned()),
        "{:?}",
        message_texts(&turns[1])
    );
    let s = d.wait_session(&id, |s| s.status == SessionStatus::Completed);
    assert!(!s.interrupted, "the steered turn completed: {s:?}");
    assert!(s.live, "{s:?}");
}

#[test]
fn a_follow_up_after_the_idle_window_resumes_the_same_session() {
    let api = AnthropicStandIn::start(noted_or_counting);
    let d = TestDaemon::start_with(options(Some(&api)).arg("--live-idle-ms").arg("300"));
    let id = d.launch(launch_params("Remember PAPAYA", workdir(&d)));
    wait_answer(&d, &id, "Noted: Remember PAPAYA");
    let first = d.wait_session(&id, |s| !s.live);
    assert_eq!(first.status, SessionStatus::Completed, "{first:?}");
    assert_eq!(first.live_until, None);

    let sent = send(&d, &id, "Which word?", None);
    assert!(!sent.queued, "{sent:?}");
    let conversation = wait_answer(&d, &id, "Noted: Which word?");
    assert_eq!(
        kinds(&conversation),
        [
            "message/user",
            "message/assistant",
            "message/user",
            "message/assistant"
        ]
    );
    let s = d.wait_session(&id, |s| s.status == SessionStatus::Completed);
    // `--resume` without a fork: the same Claude session, one conversation.
    assert_eq!(s.claude_session_id, first.claude_session_id);
    assert!(conversation
        .iter()
        .all(|e| Some(&e.claude_session_id) == first.claude_session_id.as_ref()));
    let turns = api.wait_model_turns(2);
    let resumed = message_texts(&turns[1]);
    assert!(
        resumed.contains(&"user: Remember PAPAYA".to_owned()),
        "the model sees the earlier turn: {resumed:?}"
    );
    assert!(s.cost_usd.unwrap() > first.cost_usd.unwrap(), "{s:?}");
}

#[test]
fn approvals_over_the_control_channel_follow_every_rule() {
    let wd = scratch();
    let hello = wd.path().join("hello.txt");
    let api = AnthropicStandIn::start(write_hello(wd.path().to_path_buf()));
    let d = TestDaemon::start_with(options(Some(&api)));

    // Denied by a human: the model reads the comment, nothing is written.
    let denied = d.launch(launch_params("Create hello.txt", wd.path()));
    let approval = wait_pending_approval(&d, &denied);
    assert_eq!(decide(&d, &approval, "deny", Some("Not now")), recorded());
    let s = d.wait_session(&denied, |s| s.status == SessionStatus::Completed);
    assert!(!hello.exists());
    let result = d
        .conversation(&denied)
        .into_iter()
        .find(|e| e.tool_result_for_id.is_some())
        .expect("a tool result");
    assert_eq!(result.tool_result_content.as_deref(), Some("Not now"));
    assert!(s.live, "{s:?}");

    // Approved by a human: the tool runs.
    let approved = d.launch(launch_params("Create hello.txt", wd.path()));
    let approval = wait_pending_approval(&d, &approved);
    assert_eq!(decide(&d, &approval, "approve", None), recorded());
    d.wait_session(&approved, |s| s.status == SessionStatus::Completed);
    assert_eq!(std::fs::read_to_string(&hello).unwrap(), "Hello, world!\n");
    std::fs::remove_file(&hello).unwrap();

    // Auto-accept, then the bypass: each approves as the request is stored.
    for (rule, params) in [
        (
            "auto_accept_edits",
            LaunchSessionParams {
                auto_accept_edits: Some(true),
                ..launch_params("Create hello.txt", wd.path())
            },
        ),
        (
            "dangerously_skip_permissions",
            LaunchSessionParams {
                dangerously_skip_permissions: Some(true),
                dangerously_skip_permissions_timeout: Some(600_000),
                ..launch_params("Create hello.txt", wd.path())
            },
        ),
    ] {
        let id = d.launch(params);
        let s = d.wait_session(&id, |s| s.status == SessionStatus::Completed);
        assert!(hello.exists(), "{rule}: {s:?}\nlog:\n{}", d.log_text());
        std::fs::remove_file(&hello).unwrap();
        let call = d
            .conversation(&id)
            .into_iter()
            .find(|e| e.tool_id.is_some())
            .expect("the tool call");
        assert_eq!(call.approval_status.as_deref(), Some("approved"), "{rule}");
        let approval_id = call.approval_id.expect("its approval");
        let approval = d.request::<hld_client::protocol::GetApproval>(
            hld_client::protocol::GetApprovalParams { approval_id },
        );
        assert_eq!(approval.approval.status, ApprovalStatus::Approved);
        assert_eq!(approval.approval.decided_by.as_deref(), Some(rule));
    }
    // No approvals server runs: the model has no tool of it.
    let tools: Vec<String> = api.model_turns()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    assert!(!tools.iter().any(|t| t.starts_with("mcp__")), "{tools:?}");
}

#[test]
fn a_message_queued_when_the_daemon_dies_is_delivered_after_the_restart() {
    let api = AnthropicStandIn::start(noted_or_counting);
    let base = hld_e2e::short_tempdir();
    let restartable = || DaemonOptions {
        dir: Some(base.path().to_path_buf()),
        ..options(Some(&api))
    };
    let mut d = TestDaemon::start_with(restartable());
    let id = d.launch(launch_params("Count to sixty", workdir(&d)));
    api.wait_deltas(2);
    let queued = send(&d, &id, "After the restart", None);
    assert!(queued.queued);
    d.kill9();
    drop(d);

    let d = TestDaemon::start_with(restartable());
    let conversation = wait_answer(&d, &id, "Noted: After the restart");
    assert!(texts(&conversation).contains(&"user: After the restart".to_owned()));
    let s = d.wait_session(&id, |s| s.status == SessionStatus::Completed);
    assert!(s.live, "{s:?}");
    assert!(d
        .request::<ListQueuedMessages>(SessionIdParams {
            session_id: id.clone()
        })
        .messages
        .is_empty());
}

#[test]
fn a_queued_message_that_cannot_be_resumed_after_a_restart_is_reported_undelivered() {
    let base = hld_e2e::short_tempdir();
    let slow = DaemonOptions {
        dir: Some(base.path().to_path_buf()),
        ..DaemonOptions::fake_claude()
    };
    let mut d = TestDaemon::start_with(
        slow.env("FAKE_CLAUDE_COUNT", "400")
            .env("FAKE_CLAUDE_DELAY_MS", "25"),
    );
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    d.wait_session(&id, |s| s.claude_session_id.is_some());
    assert!(send(&d, &id, "Never delivered", None).queued);
    d.kill9();
    drop(d);

    // The restarted daemon finds no `claude`: the session cannot be resumed.
    let d = TestDaemon::start_with(DaemonOptions {
        dir: Some(base.path().to_path_buf()),
        args: vec!["--claude-path".into(), "/nonexistent/claude".into()],
        ..DaemonOptions::default()
    });
    assert!(d
        .request::<ListQueuedMessages>(SessionIdParams {
            session_id: id.clone()
        })
        .messages
        .is_empty());
    let db = rusqlite::Connection::open(base.path().join("hld.db")).unwrap();
    let (status, error): (String, Option<String>) = db
        .query_row("SELECT status, error FROM queued_messages", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(status, "undelivered");
    assert!(
        error.is_some_and(|e| e.contains("claude")),
        "the reason is kept"
    );
    assert!(d.log_text().contains("queued messages undelivered"));
    assert_eq!(d.state(&id).status, SessionStatus::Failed);
}

#[test]
fn past_max_live_warm_processes_the_least_recently_used_closes() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude().arg("--max-live").arg("1"));
    let first = d.launch(launch_params("scenario:plain first", workdir(&d)));
    let warm = d.wait_session(&first, |s| s.status == SessionStatus::Completed);
    assert!(warm.live && warm.live_until.is_some(), "{warm:?}");
    let second = d.launch(launch_params("scenario:plain second", workdir(&d)));
    d.wait_session(&second, |s| s.status == SessionStatus::Completed);
    let closed = d.wait_session(&first, |s| !s.live);
    assert_eq!(closed.status, SessionStatus::Completed, "{closed:?}");
    assert_eq!(closed.exit_code, Some(0));
    assert!(d.state(&second).live);
    // The closed one still takes a message: it is resumed, and the other closes.
    assert!(!send(&d, &first, "scenario:plain again", None).queued);
    d.wait_session(&first, |s| s.live && s.num_turns == Some(2));
    d.wait_session(&second, |s| !s.live);
}

/// Turns ending together close as many processes as are warm past `--max-live`, not one.
#[test]
fn turns_ending_together_leave_no_more_warm_than_max_live() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude().arg("--max-live").arg("2"));
    let wd = workdir(&d);
    let launches: Vec<_> = (0..8)
        .map(|i| {
            let socket = d.socket.clone();
            let params = launch_params(&format!("scenario:plain {i}"), &wd);
            std::thread::spawn(move || {
                let mut conn = hld_e2e::LineConn::connect(&socket).unwrap();
                conn.try_request::<hld_client::protocol::LaunchSession>(params)
                    .unwrap()
                    .session_id
            })
        })
        .collect();
    let ids: Vec<String> = launches.into_iter().map(|t| t.join().unwrap()).collect();
    for id in &ids {
        d.wait_session(id, |s| s.status == SessionStatus::Completed);
    }
    let active = || d.request::<Health>(NoParams {}).active_sessions;
    assert!(
        wait_for(WAIT, || (active() <= 2).then_some(())).is_some(),
        "{} processes warm past --max-live 2",
        active()
    );
}

#[test]
fn deleting_a_warm_session_closes_its_process() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let id = d.launch(launch_params("scenario:plain", workdir(&d)));
    assert!(
        d.wait_session(&id, |s| s.status == SessionStatus::Completed)
            .live
    );
    let active = || d.request::<Health>(NoParams {}).active_sessions;
    assert_eq!(active(), 1, "the warm process is the daemon's");
    d.request::<DeleteSession>(SessionIdParams { session_id: id });
    // Without the close it would stay for the whole idle window (five minutes by default).
    assert!(
        wait_for(WAIT, || (active() == 0).then_some(())).is_some(),
        "the deleted session's process is still there"
    );
    // Its exit is no error: a deleted session has nothing to resume.
    d.request::<Health>(NoParams {});
    assert!(!d.log_text().contains("ERROR"), "{}", d.log_text());
}

#[test]
fn continuing_a_running_session_waits_for_its_turn_not_its_process() {
    // A grace longer than a request may take: only the turn's end can answer in time.
    let fake = hld_e2e::fake_claude().display().to_string();
    let options = DaemonOptions::default()
        .arg("--claude-path")
        .arg(&fake)
        .arg("--interrupt-grace-ms")
        .arg("60000");
    let d = TestDaemon::start_with(
        options
            .env("FAKE_CLAUDE_COUNT", "400")
            .env("FAKE_CLAUDE_DELAY_MS", "25"),
    );
    let parent = d.launch(launch_params("scenario:slow", workdir(&d)));
    d.wait_session(&parent, |s| s.claude_session_id.is_some());
    let child = d.request::<hld_client::protocol::ContinueSession>(
        hld_client::protocol::ContinueSessionParams {
            session_id: parent.clone(),
            query: "scenario:plain go on".into(),
            ..Default::default()
        },
    );
    let s = d.wait_session(&child.session_id, |s| s.status == SessionStatus::Completed);
    assert_eq!(s.parent_session_id.as_ref(), Some(&parent));
    let p = d.state(&parent);
    assert!(
        p.interrupted && p.status == SessionStatus::Completed,
        "{p:?}"
    );
}
