//! The `hld-client` SDK against a real daemon running `fake-claude`: its three examples as a
//! user runs them, following a session (history, live events, approvals, the end, a follower
//! that fell behind, a daemon that went away), and typed decisions with their refusals.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use futures::StreamExt;
use hld_client::protocol::{
    ApprovalStatus, ConversationEventType, CreateApprovalParams, RefusalReason, SessionStatus,
};
use hld_client::{Error, Follow, FollowItem};
use hld_e2e::{launch_params, workspace_bin, DaemonOptions, TestDaemon};
use serde_json::{json, Value};

use crate::hlyr::{run_command, workdir, Running};

/// An example of `hld-client`, built by `cargo build --workspace --all-targets`.
fn example(name: &str) -> Command {
    let mut cmd = Command::new(workspace_bin(&format!("examples/{name}")));
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// `example` run against `d`, from its working directory.
fn example_against(d: &TestDaemon, name: &str) -> Command {
    let mut cmd = example(name);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &d.socket)
        .env("HOME", &d.dir)
        .env("XDG_CONFIG_HOME", d.dir.join("config"))
        .current_dir(workdir(d));
    cmd
}

/// Everything a follow yields, to its end (which must come within a minute).
async fn collect(mut follow: Follow) -> Vec<FollowItem> {
    let mut items = Vec::new();
    let within = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(item) = follow.next().await {
            items.push(item.expect("a followed item"));
        }
    })
    .await;
    assert!(within.is_ok(), "the follow never ended; so far: {items:#?}");
    items
}

/// The ids of the conversation events among `items`, in the order they came.
fn conversation_ids(items: &[FollowItem]) -> Vec<i64> {
    items
        .iter()
        .filter_map(|item| match item {
            FollowItem::Conversation(event) => Some(event.id),
            _ => None,
        })
        .collect()
}

/// The ids of `session_id`'s stored conversation, in order.
fn stored_ids(d: &TestDaemon, session_id: &str) -> Vec<i64> {
    d.conversation(session_id).iter().map(|e| e.id).collect()
}

/// Asserts that `items` end with their one `Ended`, of `status`.
#[track_caller]
fn assert_ended(items: &[FollowItem], status: SessionStatus) {
    let ends = items
        .iter()
        .filter(|item| matches!(item, FollowItem::Ended(_)))
        .count();
    assert_eq!(ends, 1, "one end: {items:#?}");
    match items.last() {
        Some(FollowItem::Ended(state)) => assert_eq!(state.status, status, "{state:#?}"),
        other => panic!("the last item is not the end: {other:#?}"),
    }
}

#[test]
fn the_launch_and_follow_example_prints_a_session_from_its_start_to_its_end() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_COUNT", "5")
            .env("FAKE_CLAUDE_DELAY_MS", "50"),
    );
    let mut cmd = example_against(&d, "launch_and_follow");
    cmd.arg("scenario:slow");
    let run = run_command(cmd);
    run.assert_code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let id = lines[0]
        .strip_prefix("session ")
        .expect("the session first");
    let chunks: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("assistant: chunk"))
        .copied()
        .collect();
    assert_eq!(
        chunks,
        (1..=5)
            .map(|i| format!("assistant: chunk {i}"))
            .collect::<Vec<_>>()
    );
    assert!(run.stdout.contains("user: scenario:slow"), "{}", run.stdout);
    assert_eq!(lines.last(), Some(&"ended: completed"), "{}", run.stdout);
    assert_eq!(d.state(id).status, SessionStatus::Completed);

    let mut cmd = example_against(&d, "launch_and_follow");
    cmd.arg("scenario:error");
    let failed = run_command(cmd);
    failed.assert_code(1);
    assert!(
        failed.stdout.ends_with("ended: failed\n"),
        "{}",
        failed.stdout
    );
}

#[test]
fn the_approve_all_writes_example_approves_writes_and_leaves_the_rest() {
    let mut d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let work = PathBuf::from(workdir(&d));
    // A Bash call already waits when the example starts.
    let bash = d.launch(launch_params("scenario:bash", &work));
    let asked = d.wait_approvals(Some(&bash), |a| a.len() == 1);
    let running = Running::spawn(example_against(&d, "approve_all_writes"));
    running.wait_for("watching for writes", 1);
    assert!(
        running
            .stdout()
            .contains(&format!("left {} (Bash) for a person", asked[0].id)),
        "{}",
        running.stdout()
    );

    let write = d.launch(launch_params("scenario:tool", &work));
    let state = d.wait_ended(&write);
    assert_eq!(state.status, SessionStatus::Completed, "{state:#?}");
    assert_eq!(
        std::fs::read_to_string(work.join("hello.txt")).unwrap(),
        "Hello, world!\n"
    );
    running.wait_for("approved local-", 1);
    let approved = running.stdout();
    assert!(
        approved.contains(&format!("(Write {})", work.join("hello.txt").display())),
        "{approved}"
    );

    // The Bash call was left alone: it still waits, for a person.
    assert_eq!(d.approvals(Some(&bash)).len(), 1);
    assert_eq!(d.state(&bash).status, SessionStatus::WaitingInput);

    // The example runs until the daemon stops.
    d.stop();
    let run = running.finish();
    run.assert_code(0);
    assert_eq!(run.stdout.matches("approved ").count(), 1, "{}", run.stdout);
}

#[test]
fn the_list_json_example_prints_the_sessions_as_one_json_array() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let work = workdir(&d);
    let done = d.launch(launch_params("scenario:plain hello", &work));
    d.wait_ended(&done);
    let failed = d.launch(launch_params("scenario:error", &work));
    d.wait_ended(&failed);

    let run = run_command(example_against(&d, "list_json"));
    run.assert_code(0);
    let listed: Value = serde_json::from_str(&run.stdout).expect("one JSON document");
    let ids: Vec<&str> = listed
        .as_array()
        .expect("an array")
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [failed.as_str(), done.as_str()], "newest first");
    assert_eq!(listed[0]["status"], "failed");
    assert_eq!(listed[1]["status"], "completed");

    let mut cmd = example_against(&d, "list_json");
    cmd.arg("failed");
    let only = run_command(cmd);
    only.assert_code(0);
    let only: Value = serde_json::from_str(&only.stdout).unwrap();
    assert_eq!(only, json!([listed[0].clone()]));
}

#[test]
fn the_examples_say_when_no_daemon_runs() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("none.sock");
    let mut cmd = example("list_json");
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &socket);
    let run = run_command(cmd);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("DaemonNotRunning") && run.stderr.contains(&*socket.to_string_lossy()),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn follow_yields_the_history_then_live_events_each_once_then_the_end() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_COUNT", "30")
            .env("FAKE_CLAUDE_DELAY_MS", "30"),
    );
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    // Some of it is history by the time the follow starts.
    hld_e2e::wait_for(hld_e2e::WAIT, || {
        (d.conversation(&id).len() >= 5).then_some(())
    })
    .expect("events stored");
    let client = d.client().await;
    let follow = client.follow(&id).await.unwrap();
    assert_eq!(follow.session_id(), id);
    assert_eq!(follow.initial_state().id, id);
    assert_eq!(follow.initial_state().run_id, d.state(&id).run_id);
    let items = collect(follow).await;

    assert_eq!(conversation_ids(&items), stored_ids(&d, &id));
    assert_ended(&items, SessionStatus::Completed);
    let statuses: Vec<&SessionStatus> = items
        .iter()
        .filter_map(|item| match item {
            FollowItem::Status { new_status, .. } => Some(new_status),
            _ => None,
        })
        .collect();
    assert_eq!(statuses, [&SessionStatus::Completed], "{items:#?}");

    // An ended session: its history, then its end.
    let again = collect(client.follow(&id).await.unwrap()).await;
    assert_eq!(conversation_ids(&again), stored_ids(&d, &id));
    assert_eq!(again.len(), stored_ids(&d, &id).len() + 1, "{again:#?}");
    assert_ended(&again, SessionStatus::Completed);
}

/// What `launch_and_follow` does when the launch's turn ends before it has subscribed (a fast
/// turn, a slow client): following from before the first event, a warm session's turn ended.
#[tokio::test]
async fn a_turn_that_ended_before_the_follow_from_its_start_is_told_as_a_turn_end() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let id = d.launch(launch_params("hello", workdir(&d)));
    d.wait_session(&id, |s| s.status == SessionStatus::Completed && s.live);
    let client = d.client().await;
    let items = collect(client.follow_after(&id, Some(0)).await.unwrap()).await;
    assert_eq!(conversation_ids(&items), stored_ids(&d, &id));
    let ends: Vec<_> = items
        .iter()
        .filter(|i| matches!(i, FollowItem::TurnEnded { .. } | FollowItem::Ended(_)))
        .collect();
    assert!(
        matches!(
            ends[..],
            [
                FollowItem::TurnEnded {
                    status: SessionStatus::Completed,
                    ..
                },
                FollowItem::Ended(_)
            ]
        ),
        "{items:#?}"
    );
}

#[tokio::test]
async fn launch_and_follow_tells_an_approval_its_decision_and_the_tool_calls_change() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let client = d.client().await;
    let mut follow = client
        .launch_and_follow(launch_params("scenario:tool", workdir(&d)))
        .await
        .unwrap();
    let id = follow.session_id().to_owned();
    let mut items = Vec::new();
    while let Some(item) = follow.next().await {
        let item = item.unwrap();
        if let FollowItem::ApprovalRequested(approval) = &item {
            client.approve(&approval.id).await.unwrap();
        }
        items.push(item);
    }

    assert_eq!(conversation_ids(&items), stored_ids(&d, &id));
    assert_ended(&items, SessionStatus::Completed);
    let requested: Vec<&str> = items
        .iter()
        .filter_map(|item| match item {
            FollowItem::ApprovalRequested(a) => Some(a.function_name.as_deref().unwrap()),
            _ => None,
        })
        .collect();
    assert_eq!(requested, ["Write"], "asked once: {items:#?}");
    let decided: Vec<&ApprovalStatus> = items
        .iter()
        .filter_map(|item| match item {
            FollowItem::ApprovalResolved { decision, .. } => Some(decision),
            _ => None,
        })
        .collect();
    assert_eq!(
        decided,
        [&ApprovalStatus::Approved],
        "decided once: {items:#?}"
    );
    // The tool call came once, and then as it got further (linked, then approved), unless
    // the follower first read it from the store when it had got there already.
    let call = d
        .conversation(&id)
        .into_iter()
        .find(|e| e.event_type == ConversationEventType::ToolCall)
        .expect("a tool call");
    let states: Vec<Option<&str>> = items
        .iter()
        .filter_map(|item| match item {
            FollowItem::Conversation(e) | FollowItem::ConversationChanged(e) if e.id == call.id => {
                Some(e.approval_status.as_deref())
            }
            _ => None,
        })
        .collect();
    assert_eq!(states.last(), Some(&Some("approved")), "{items:#?}");
    assert!((1..=3).contains(&states.len()), "{states:?}");
    let first = items
        .iter()
        .filter(|item| matches!(item, FollowItem::Conversation(e) if e.id == call.id))
        .count();
    assert_eq!(first, 1, "the tool call came once: {items:#?}");
}

/// The daemon drops events for a follower that does not read; it catches up from the store,
/// paged by `sequence`. A session run before makes event ids run ahead of sequences, so a
/// catch-up that paged by id would skip events.
#[tokio::test]
async fn a_follower_that_fell_behind_loses_nothing() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .arg("--subscriber-buffer=4")
            .env("FAKE_CLAUDE_COUNT", "5000")
            .env("FAKE_CLAUDE_DELAY_MS", "1"),
    );
    let work = workdir(&d);
    let before = d.launch(launch_params("scenario:plain hello", &work));
    d.wait_ended(&before);
    assert!(!d.conversation(&before).is_empty());

    let client = d.client().await;
    let id = d.launch(launch_params("scenario:slow", &work));
    let mut follow = client.follow(&id).await.unwrap();
    let mut items = vec![follow.next().await.unwrap().unwrap()];
    // Stop reading until the daemon has stored far more events than the subscriber buffer
    // and the sockets hold, read a little, then stop until the session is over.
    let socket = d.socket.clone();
    let session = id.clone();
    let stored = tokio::task::spawn_blocking(move || {
        hld_e2e::wait_for(Duration::from_secs(120), || {
            let mut conn = hld_e2e::LineConn::connect(&socket).ok()?;
            let conversation = conn
                .try_request::<hld_client::protocol::GetConversation>(
                    hld_client::protocol::GetConversationParams {
                        session_id: Some(session.clone()),
                        after_sequence: Some(2500),
                        limit: Some(1),
                        ..Default::default()
                    },
                )
                .ok()?;
            (!conversation.events.is_empty()).then_some(())
        })
    })
    .await
    .unwrap();
    assert!(stored.is_some(), "the session stored too few events");
    for _ in 0..500 {
        items.push(follow.next().await.unwrap().unwrap());
    }
    let socket = d.socket.clone();
    let ended = tokio::task::spawn_blocking(move || {
        hld_e2e::wait_for(Duration::from_secs(120), || {
            let mut conn = hld_e2e::LineConn::connect(&socket).ok()?;
            let state = conn
                .try_request::<hld_client::protocol::GetSessionState>(
                    hld_client::protocol::SessionIdParams {
                        session_id: id.clone(),
                    },
                )
                .ok()?;
            (!state.session.status.is_active()).then_some(state.session.id)
        })
    })
    .await
    .unwrap()
    .expect("the session ends");
    items.extend(collect(follow).await);

    let lags = items
        .iter()
        .filter(|item| matches!(item, FollowItem::Lagged { .. }))
        .count();
    assert!(lags >= 1, "the follower fell behind");
    let got = conversation_ids(&items);
    let stored = stored_ids(&d, &ended);
    assert_eq!(stored.len(), 5001);
    assert_eq!(got.len(), stored.len(), "every event, once");
    assert_eq!(got, stored, "in order");
    assert_ended(&items, SessionStatus::Completed);
}

#[tokio::test]
async fn following_ends_with_an_error_when_the_daemon_goes_away() {
    let mut d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_COUNT", "1000")
            .env("FAKE_CLAUDE_DELAY_MS", "50"),
    );
    let client = d.client().await;
    let mut follow = client
        .launch_and_follow(launch_params("scenario:slow", workdir(&d)))
        .await
        .unwrap();
    assert!(matches!(
        follow.next().await,
        Some(Ok(FollowItem::Conversation(_)))
    ));
    d.kill9();
    let rest = tokio::time::timeout(Duration::from_secs(20), async {
        let mut rest = Vec::new();
        while let Some(item) = follow.next().await {
            rest.push(item);
        }
        rest
    })
    .await
    .expect("the stream ends");
    assert!(
        matches!(rest.last(), Some(Err(Error::Disconnected))),
        "{rest:#?}"
    );
    assert!(rest.iter().rev().skip(1).all(Result::is_ok), "{rest:#?}");
}

#[tokio::test]
async fn following_an_unknown_session_is_the_daemons_error() {
    let d = TestDaemon::start();
    let client = d.client().await;
    let err = client
        .follow("0f0e0d0c-0b0a-4908-8706-050403020100")
        .await
        .unwrap_err();
    let rpc = err.rpc().expect("an RPC error");
    assert!(rpc.message.contains("session not found"), "{rpc:?}");
}

#[tokio::test]
async fn decisions_are_typed_and_a_refusal_says_why() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let work = workdir(&d);
    let session = d.launch(launch_params("scenario:plain hello", &work));
    d.wait_ended(&session);
    let client = d.client().await;
    let create = |kind: &str| CreateApprovalParams {
        session_id: Some(session.clone()),
        kind: Some(kind.to_owned()),
        tool_name: Some("Bash".into()),
        tool_input: Some(json!({"command": "ls"})),
        message: Some("Which database?".into()),
        ..Default::default()
    };
    let call = client
        .create_approval(create("function_call"))
        .await
        .unwrap()
        .approval_id;
    let other = client
        .create_approval(create("function_call"))
        .await
        .unwrap()
        .approval_id;
    let question = client
        .create_approval(create("human_contact"))
        .await
        .unwrap()
        .approval_id;

    client.approve(&call).await.unwrap();
    assert_eq!(
        client.get_approval(&call).await.unwrap().status,
        ApprovalStatus::Approved
    );
    for again in [
        client.approve(&call).await,
        client.deny(&call, Some("no")).await,
    ] {
        let err = again.unwrap_err();
        assert_eq!(
            err.refusal(),
            Some(RefusalReason::AlreadyDecided),
            "{err:?}"
        );
        let Error::Refused {
            approval_id,
            message,
            ..
        } = &err
        else {
            panic!("a refusal: {err:?}");
        };
        assert_eq!(approval_id, &call);
        assert!(message.contains("already decided"), "{message}");
    }

    client
        .deny(&other, Some("Run only the parser tests"))
        .await
        .unwrap();
    let denied = client.get_approval(&other).await.unwrap();
    assert_eq!(denied.status, ApprovalStatus::Denied);
    assert_eq!(denied.comment.as_deref(), Some("Run only the parser tests"));
    // No reason (or a blank one): Claude is told the SDK's, as the daemon wants one.
    for reason in [None, Some(" ")] {
        let third = client.create_approval(create("function_call")).await;
        let third = third.unwrap().approval_id;
        client.deny(&third, reason).await.unwrap();
        let denied = client.get_approval(&third).await.unwrap();
        assert_eq!(
            denied.comment.as_deref(),
            Some(hld_client::protocol::NO_REASON)
        );
    }

    let wrong = client.approve(&question).await.unwrap_err();
    assert_eq!(wrong.refusal(), Some(RefusalReason::WrongType), "{wrong:?}");
    client.respond(&question, "staging").await.unwrap();
    let answered = client.get_approval(&question).await.unwrap();
    assert_eq!(answered.status, ApprovalStatus::Responded);
    assert_eq!(answered.comment.as_deref(), Some("staging"));

    let missing = client.approve("local-nope").await.unwrap_err();
    assert_eq!(
        missing.refusal(),
        Some(RefusalReason::NotFound),
        "{missing:?}"
    );

    // An approval whose session ended before anyone decided it was resolved by that end.
    let waiting = d.launch(launch_params("scenario:tool", &work));
    let pending = d.wait_approvals(Some(&waiting), |a| a.len() == 1);
    client.interrupt_session(&waiting).await.unwrap();
    d.wait_ended(&waiting);
    let late = client.approve(&pending[0].id).await.unwrap_err();
    assert_eq!(late.refusal(), Some(RefusalReason::Resolved), "{late:?}");
}

/// The `conversation` example: launched with the first prompt, it follows the session to the
/// end of its turn, sends the next prompt into the same session and follows that turn.
#[test]
fn the_conversation_example_holds_a_conversation_in_one_session() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let mut cmd = example_against(&d, "conversation");
    cmd.args(["first question", "second question"]);
    let run = run_command(cmd);
    run.assert_code(0);
    let id = run
        .stdout
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("session "))
        .expect("the session first")
        .to_owned();
    crate::hlyr::assert_in_order(
        &run.stdout,
        &[
            "assistant: Hello! You asked: first question\n",
            "turn ended: completed\n",
            "user: second question\n",
            "assistant: Continuing our conversation (turn 2). You said: second question",
            "turn ended: completed\n",
        ],
    );
    let sessions = d.request::<hld_client::protocol::ListSessions>(Default::default());
    assert_eq!(sessions.sessions.len(), 1, "one session: {sessions:#?}");
    assert_eq!(sessions.sessions[0].id, id);
}
