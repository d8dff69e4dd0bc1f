//! The REST transport's event stream (`GET /stream/events`, hld-rest.md section 6) over real
//! HTTP: each event type in the reference's shape (golden files `rest/event_*`, strict
//! mirrors), token updates, the filters, keepalives, a reader that falls behind, the connection limit, and
//! the stream's end at shutdown.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use hld_client::protocol::{
    Event, EventType, Health, LaunchSessionParams, NoParams, SessionStatus, SubscribeParams,
};
use hld_e2e::rest::{daemon, daemon_with};
use hld_e2e::rest_events::{
    became, ApprovalResolved, ConversationUpdated, EventStream, Lagged, Line, NewApproval,
    SettingsChanged, StatusChanged,
};
use hld_e2e::{launch_params, wait_for, DaemonOptions, TestDaemon};
use reqwest::Client;
use serde_json::{json, Value};

use super::golden::golden;

/// Opens the stream with `query` (after `?`).
async fn open(base: &str, query: &str) -> EventStream {
    let url = format!("{base}/api/v1/stream/events?{query}");
    EventStream::open(Client::new().get(url)).await
}

fn approve(d: &TestDaemon, session_id: &str) {
    let approval = d
        .wait_approvals(Some(session_id), |a| !a.is_empty())
        .remove(0);
    let params = json!({"call_id": approval.id, "type": "function_call", "decision": "approve",
                        "comment": "go ahead"});
    let reply = d.call("sendDecision", params);
    assert_eq!(reply["result"]["success"], true, "{reply}");
}

/// The first event of type `kind` (and `extra`) among `events`.
fn first<'a>(events: &'a [Value], kind: &str, extra: impl Fn(&Value) -> bool) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == kind && extra(&e["data"]))
        .unwrap_or_else(|| panic!("no {kind} among {events:#?}"))
}

#[tokio::test]
async fn each_event_type_comes_in_the_references_shape() {
    let (d, _address, base) = daemon(&["--http-allowed-origin", "http://ok.example"]);
    // As an EventSource asks: no filter of session, CORS for its origin, gzip accepted.
    let request = Client::new()
        .get(format!("{base}/api/v1/stream/events"))
        .header("origin", "http://ok.example")
        .header("accept-encoding", "gzip");
    let mut all = EventStream::open(request).await;
    assert_eq!(
        all.headers()["access-control-allow-origin"],
        "http://ok.example"
    );
    let work = d.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let id = d.launch(launch_params("scenario:tool make a file", &work));
    approve(&d, &id);
    let events = all.until(|e| became(e, &id, "completed")).await;

    let timestamp = events[0]["timestamp"].as_str().unwrap();
    assert!(
        chrono::DateTime::parse_from_rfc3339(timestamp).is_ok(),
        "{timestamp}"
    );
    let running = first(&events, "session_status_changed", |d| {
        d["new_status"] == "running" && d.get("reason").is_none()
    });
    let running: Line<StatusChanged> = golden(&d, "rest/event_session_status_changed", running);
    assert_eq!(running.data.session_id, id);
    assert_eq!(running.data.old_status, "starting");
    let asked = first(&events, "new_approval", |_| true);
    let asked: Line<NewApproval> = golden(&d, "rest/event_new_approval", asked);
    assert_eq!(asked.data.tool_name, "Write");
    let resolved = first(&events, "approval_resolved", |_| true);
    let resolved: Line<ApprovalResolved> = golden(&d, "rest/event_approval_resolved", resolved);
    assert_eq!(resolved.data.approval_id, asked.data.approval_id);
    assert!(resolved.data.approved);
    assert_eq!(resolved.data.response_text, "go ahead");
    let call = first(&events, "conversation_updated", |d| {
        d["event_type"] == "tool_call"
    });
    let call: Line<ConversationUpdated> = golden(&d, "rest/event_conversation_updated", call);
    assert_eq!(call.data.content_type, "tool_use");
    assert_eq!(call.data.tool_name.as_deref(), Some("Write"));
    let input = call.data.tool_input.expect("the tool input, an object");
    assert!(input["file_path"].as_str().unwrap().ends_with("hello.txt"));
    for event in &events {
        match event["type"].as_str().unwrap() {
            "conversation_updated" => {
                data_of::<ConversationUpdated>(event);
            }
            "session_status_changed" => {
                data_of::<StatusChanged>(event);
            }
            "new_approval" | "approval_resolved" => {}
            other => panic!("not a type of the reference: {other}"),
        }
    }

    // A change of `auto_accept_edits`; then a bypass that runs out.
    let update = |params: Value| {
        let reply = d.call("updateSessionSettings", params);
        assert!(reply.get("result").is_some(), "{reply}");
    };
    update(json!({"session_id": id, "auto_accept_edits": true}));
    let changed = all.until(|e| e["type"] == "session_settings_changed").await;
    let changed = changed.last().unwrap();
    let changed: Line<SettingsChanged> = golden(&d, "rest/event_session_settings_changed", changed);
    assert_eq!(changed.data.auto_accept_edits, Some(true));
    update(
        json!({"session_id": id, "dangerously_skip_permissions": true,
                  "dangerously_skip_permissions_timeout_ms": 100}),
    );
    let expired = all
        .until(|e| e["type"] == "session_settings_changed" && e["data"]["reason"] == "expired")
        .await;
    let expired: Line<SettingsChanged> = golden(
        &d,
        "rest/event_session_settings_expired",
        expired.last().unwrap(),
    );
    assert_eq!(expired.data.dangerously_skip_permissions, Some(false));
    assert!(expired.data.expired_at.is_some());

    // A continuation names its parent.
    let reply = d.call(
        "continueSession",
        json!({"session_id": id, "query": "and another"}),
    );
    let child = reply["result"]["session_id"].as_str().unwrap().to_owned();
    let events = all.until(|e| became(e, &child, "completed")).await;
    let started = first(&events, "session_status_changed", |d| {
        d["session_id"] == child.as_str() && d.get("reason").is_none()
    });
    let started = data_of::<StatusChanged>(started);
    assert_eq!(started.parent_session_id.as_deref(), Some(id.as_str()));
}

/// `event`'s data decoded by its strict mirror.
fn data_of<T: serde::de::DeserializeOwned>(event: &Value) -> T {
    let line: Line<T> =
        serde_json::from_value(event.clone()).unwrap_or_else(|e| panic!("{e}: {event}"));
    line.data
}

/// The next status change itself, token updates before it skipped.
async fn change(stream: &mut EventStream) -> Value {
    loop {
        let next = stream.next_event().await;
        if next["data"].get("reason").is_none() {
            return next;
        }
    }
}

#[tokio::test]
async fn an_interrupt_streams_interrupting_then_interrupted() {
    let (d, _address, base) = daemon(&[]);
    let mut status = open(&base, "eventTypes=session_status_changed").await;
    let id = d.launch(launch_params("scenario:slow", &d.dir));
    status.until(|e| became(e, &id, "running")).await;
    let reply = d.call("interruptSession", json!({"session_id": id}));
    assert!(reply.get("result").is_some(), "{reply}");
    let next = change(&mut status).await;
    assert!(became(&next, &id, "interrupting"), "{next}");
    let next = change(&mut status).await;
    assert!(became(&next, &id, "interrupted"), "{next}");
    assert_eq!(next["data"]["old_status"], "interrupting");
}

#[tokio::test]
async fn filters_choose_types_a_session_and_a_run() {
    let (d, _address, base) = daemon(&[]);
    let work = d.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    // Session `a` waits for its approval while the streams open.
    let a = d.launch(launch_params("scenario:tool make a file", &work));
    d.wait_approvals(Some(&a), |p| !p.is_empty());
    let run = d.state(&a).run_id;
    let mut of_a = open(&base, &format!("sessionId={a}")).await;
    let mut of_run = open(&base, &format!("runId={run}")).await;
    let mut status = open(
        &base,
        "eventTypes=session_status_changed&eventTypes=nonsense&eventTypes=new_approval%2Cx",
    )
    .await;
    let mut unknown_only = open(&base, "eventTypes=nonsense").await;
    // Session `b` runs to its end first: its events precede `a`'s in every stream.
    let b = d.launch(launch_params("hello", &work));
    d.wait_ended(&b);
    approve(&d, &a);
    let done = |e: &Value| became(e, &a, "completed");

    let events = of_a.until(done).await;
    assert!(events.iter().all(|e| e["data"]["session_id"] == a.as_str()));
    for kind in ["approval_resolved", "conversation_updated"] {
        assert!(events.iter().any(|e| e["type"] == kind), "{kind}");
    }
    // Only events whose data names the run: status changes, not the conversation.
    let events = of_run.until(done).await;
    assert!(events
        .iter()
        .all(|e| e["type"] == "session_status_changed" && e["data"]["run_id"] == run.as_str()));
    // Unknown names are dropped (a comma list is one unknown name).
    let events = status.until(done).await;
    assert!(events.iter().all(|e| e["type"] == "session_status_changed"));
    assert!(events.iter().any(|e| became(e, &b, "completed")));
    // None left: every type.
    let events = unknown_only.until(done).await;
    for kind in ["approval_resolved", "conversation_updated"] {
        assert!(events.iter().any(|e| e["type"] == kind), "{kind}");
    }
}

/// An approval a rule settles as it is requested comes as the reference sends every approval:
/// its `new_approval`, then its `approval_resolved`; a stream of `new_approval` alone gets it
/// too. On the daemon's own bus only the decision comes, marked as settled on request.
#[tokio::test]
async fn an_approval_a_rule_settles_comes_as_new_then_resolved() {
    let (d, _address, base) = daemon(&[]);
    let work = d.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut both = open(
        &base,
        "eventTypes=new_approval&eventTypes=approval_resolved",
    )
    .await;
    let mut asked = open(&base, "eventTypes=new_approval").await;
    let mut bus = d.subscribe(SubscribeParams::types([
        EventType::NewApproval,
        EventType::ApprovalResolved,
    ]));
    let id = d.launch(LaunchSessionParams {
        auto_accept_edits: Some(true),
        ..launch_params("scenario:tool make a file", &work)
    });
    let events = both.until(|e| e["type"] == "approval_resolved").await;
    assert_eq!(events.len(), 2, "{events:#?}");
    let new: NewApproval = data_of(&events[0]);
    let resolved: ApprovalResolved = data_of(&events[1]);
    assert_eq!(events[0]["type"], "new_approval");
    assert_eq!(
        (new.session_id.as_str(), new.tool_name.as_str()),
        (id.as_str(), "Write")
    );
    assert_eq!(resolved.approval_id, new.approval_id);
    assert!(resolved.approved);
    assert!(
        resolved.response_text.contains("auto-accept"),
        "{resolved:?}"
    );
    let only = asked.next_event().await;
    assert_eq!(only["type"], "new_approval");
    assert_eq!(data_of::<NewApproval>(&only).approval_id, new.approval_id);
    let decided = bus.next_event().event;
    assert!(
        matches!(&decided, Event::ApprovalResolved { approval_id, settled_on_request: true, .. }
                 if *approval_id == new.approval_id),
        "{decided:?}"
    );
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
}

#[tokio::test]
async fn a_reader_that_falls_behind_is_told_how_many_events_it_missed() {
    // One event larger than every buffer between the daemon and a reader that does not read,
    // then more events than the ring holds.
    let (d, _address, base) = daemon_with(
        DaemonOptions::fake_claude()
            .arg("--subscriber-buffer=50")
            .env("FAKE_CLAUDE_BIG_BYTES", "6000000")
            .env("FAKE_CLAUDE_COUNT", "2000"),
    );
    let mut stuck = open(&base, "eventTypes=conversation_updated").await;
    let big = d.launch(launch_params("scenario:big", &d.dir));
    d.wait_ended(&big);
    let many = d.launch(launch_params("scenario:many", &d.dir));
    d.wait_ended(&many);
    let stored: Vec<String> = d
        .conversation(&many)
        .into_iter()
        .map(|row| row.content.unwrap_or_default())
        .collect();

    let (mut missed, mut seen) = (0, Vec::new());
    while seen.last() != stored.last() {
        let event = stuck.next_event().await;
        match event["type"].as_str().unwrap() {
            "lagged" => {
                let lagged: Line<Lagged> = serde_json::from_value(event.clone()).unwrap();
                assert!(chrono::DateTime::parse_from_rfc3339(&lagged.timestamp).is_ok());
                missed += lagged.data.missed;
            }
            "conversation_updated" if event["data"]["session_id"] == many.as_str() => {
                let content = event["data"]["content"].as_str().unwrap_or_default();
                seen.push(content.to_owned());
            }
            _ => {}
        }
    }
    assert!(missed > 0, "the reader fell behind and was told");
    let mut rows = stored.iter();
    for content in &seen {
        assert!(
            rows.any(|r| r == content),
            "{content:?} not in stored order"
        );
    }
    assert!(
        missed + seen.len() as u64 >= stored.len() as u64,
        "missed {missed} and seen {} account for the {} stored",
        seen.len(),
        stored.len()
    );
}

#[tokio::test]
async fn keepalives_come_while_idle_and_shutdown_ends_the_stream() {
    let (mut d, _address, base) = daemon(&["--http-keepalive-ms", "100"]);
    let mut idle = open(&base, "").await;
    assert_eq!(idle.next_block().await.as_deref(), Some(": keepalive"));
    assert_eq!(idle.next_block().await.as_deref(), Some(": keepalive"));
    d.signal(nix::sys::signal::Signal::SIGTERM);
    while let Some(block) = idle.next_block().await {
        assert_eq!(block, ": keepalive");
    }
    let (status, _) = d
        .wait_exit(Duration::from_secs(10))
        .expect("the daemon exits");
    assert!(status.success(), "{status}");
    let log = d.log_text();
    assert!(
        !log.contains("did not finish within the drain timeout"),
        "{log}"
    );
}

// Other threads run the client's connection while this one waits on the daemon.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn an_open_stream_holds_a_connection_and_its_end_frees_it() {
    let (d, address, base) = daemon(&["--http-max-connections", "1", "--http-keepalive-ms", "100"]);
    let stream = open(&base, "").await;
    assert_eq!(d.request::<Health>(NoParams {}).subscribers, 1);
    let path = base.split_once(&address.to_string()).unwrap().1.to_owned();
    let health = move || {
        let mut tcp = TcpStream::connect(address).unwrap();
        let request = format!(
            "GET {path}/api/v1/health HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n"
        );
        tcp.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        tcp.read_to_string(&mut answer).unwrap();
        answer
    };
    let answer = health();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    drop(stream);
    let freed = wait_for(Duration::from_secs(10), || {
        (d.request::<Health>(NoParams {}).subscribers == 0).then_some(())
    });
    assert!(freed.is_some(), "the subscription ends with its reader");
    let served = wait_for(Duration::from_secs(10), || {
        health().starts_with("HTTP/1.1 200").then_some(())
    });
    assert!(served.is_some(), "the freed slot serves again");
}

#[tokio::test]
async fn saved_token_counts_come_as_a_token_update_of_the_current_status() {
    let (d, _address, base) = daemon(&[]);
    // As CodeLayer subscribes: no `conversation_updated`.
    let query = "eventTypes=session_status_changed&eventTypes=new_approval";
    let mut stream = open(&base, query).await;
    let work = d.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let id = d.launch(launch_params("hello", &work));
    let events = stream.until(|e| became(e, &id, "completed")).await;
    let updates: Vec<StatusChanged> = events
        .iter()
        .filter(|e| e["data"]["reason"] == "token_update")
        .map(data_of::<StatusChanged>)
        .collect();
    let [update, ..] = &updates[..] else {
        panic!("no token update among {events:#?}")
    };
    assert_eq!(update.session_id, id);
    // The status when the stream read it: the turn may have ended by then.
    assert_eq!(update.old_status, update.new_status);
    assert!(
        ["running", "completed"].contains(&update.new_status.as_str()),
        "{update:?}"
    );
    assert_eq!(update.run_id, None);
    assert!(
        events.iter().all(|e| e["type"] == "session_status_changed"),
        "only the types asked for: {events:#?}"
    );
}
