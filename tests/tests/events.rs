//! Live events end to end: each event type from a real session, filters, ordering, slow
//! subscribers and fan-out to many subscribers.

use std::collections::HashSet;
use std::time::Duration;

use hld_e2e::{DaemonOptions, LineConn, TestDaemon};
use serde_json::{json, Value};

fn subscribe(d: &TestDaemon, filter: Value) -> LineConn {
    let mut c = d.conn();
    let reply = c.request("Subscribe", filter, json!("sub"));
    assert!(reply["result"]["subscription_id"].is_string(), "{reply}");
    c
}

/// Reads events until `until` matches one (inclusive); heartbeats are skipped.
fn read_until(c: &mut LineConn, until: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut events = Vec::new();
    loop {
        let line = c.recv();
        let event = line["result"]["event"].clone();
        if event.is_null() {
            continue;
        }
        let stop = until(&event);
        events.push(event);
        if stop {
            return events;
        }
    }
}

/// Everything that arrives within `quiet` of silence.
fn drain(c: &mut LineConn, quiet: Duration) -> Vec<Value> {
    let mut events = Vec::new();
    while let Some(line) = c.try_recv(quiet) {
        if !line["result"]["event"].is_null() {
            events.push(line["result"]["event"].clone());
        }
    }
    events
}

fn ended(session: &str) -> impl Fn(&Value) -> bool + '_ {
    move |e| {
        e["type"] == "session_status_changed"
            && e["data"]["session_id"] == session
            && matches!(
                e["data"]["new_status"].as_str(),
                Some("completed" | "failed")
            )
    }
}

#[test]
fn a_session_produces_status_and_conversation_events_in_order() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let mut all = subscribe(&d, json!({}));
    let id = d.launch(json!({"query": "hello there", "working_dir": "/tmp"}));
    let events = read_until(&mut all, ended(&id));
    let summary: Vec<String> = events
        .iter()
        .map(|e| match e["type"].as_str().unwrap() {
            "session_status_changed" => format!(
                "status {}->{}",
                e["data"]["old_status"].as_str().unwrap(),
                e["data"]["new_status"].as_str().unwrap()
            ),
            "conversation_updated" => format!(
                "conversation {} {}",
                e["data"]["event"]["event_type"].as_str().unwrap(),
                e["data"]["event"]["role"].as_str().unwrap_or("-")
            ),
            other => other.to_owned(),
        })
        .collect();
    assert_eq!(
        summary,
        [
            "status starting->running",
            "conversation message user",
            "conversation message assistant",
            "status running->completed",
        ]
    );
    let state = d.result("getSessionState", json!({"session_id": id}))["session"].clone();
    for e in &events {
        assert_eq!(e["data"]["session_id"], id);
        assert_eq!(e["data"]["run_id"], state["run_id"]);
        assert!(
            chrono_like(e["timestamp"].as_str().unwrap()),
            "{}",
            e["timestamp"]
        );
    }
    let stored = d.conversation(&id);
    let published: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "conversation_updated")
        .map(|e| &e["data"]["event"])
        .collect();
    assert_eq!(published.len(), stored.len());
    for (p, s) in published.iter().zip(&stored) {
        assert_eq!(*p, s, "the published event is the stored one");
    }
    assert_eq!(events[3]["data"]["claude_session_id"], Value::Null);
    assert_eq!(
        events[2]["data"]["claude_session_id"],
        state["claude_session_id"]
    );
}

fn chrono_like(ts: &str) -> bool {
    // RFC 3339: 2026-11-25T21:47:00.123Z
    ts.len() >= 20 && ts.as_bytes()[4] == b'-' && ts.as_bytes()[10] == b'T' && ts.ends_with('Z')
}

#[test]
fn failures_are_published_too() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let mut sub = subscribe(&d, json!({"event_types": ["session_status_changed"]}));
    let id = d.launch(json!({"query": "scenario:error", "working_dir": "/tmp"}));
    let events = read_until(&mut sub, ended(&id));
    let last = events.last().unwrap();
    assert_eq!(last["data"]["new_status"], "failed");
    assert!(last["data"]["error"]
        .as_str()
        .unwrap()
        .contains("Not logged in"));
}

#[test]
fn filters_work_alone_and_combined() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "100")
            .env("FAKE_CLAUDE_COUNT", "6"),
    );
    let a = d.launch(json!({"query": "scenario:slow a", "working_dir": "/tmp"}));
    let b = d.launch(json!({"query": "scenario:slow b", "working_dir": "/tmp"}));
    let run_b = d.result("getSessionState", json!({"session_id": b}))["session"]["run_id"].clone();

    let mut by_session = subscribe(&d, json!({"session_id": a}));
    let mut by_run = subscribe(&d, json!({"run_id": run_b}));
    let mut by_type = subscribe(&d, json!({"event_types": ["session_status_changed"]}));
    let mut combined = subscribe(
        &d,
        json!({"session_id": a, "event_types": ["conversation_updated"]}),
    );
    let mut nothing = subscribe(&d, json!({"session_id": a, "run_id": run_b}));

    d.wait_ended(&a);
    d.wait_ended(&b);
    let quiet = Duration::from_millis(300);

    let got = drain(&mut by_session, quiet);
    assert!(got.len() >= 2, "{got:?}");
    assert!(got.iter().all(|e| e["data"]["session_id"] == a));
    assert!(got.iter().any(|e| e["type"] == "session_status_changed"));

    let got = drain(&mut by_run, quiet);
    assert!(!got.is_empty());
    assert!(got.iter().all(|e| e["data"]["run_id"] == run_b));

    let got = drain(&mut by_type, quiet);
    let sessions: HashSet<&str> = got
        .iter()
        .map(|e| e["data"]["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(sessions, HashSet::from([a.as_str(), b.as_str()]));
    assert!(got.iter().all(|e| e["type"] == "session_status_changed"));

    let got = drain(&mut combined, quiet);
    assert!(!got.is_empty());
    assert!(got
        .iter()
        .all(|e| e["type"] == "conversation_updated" && e["data"]["session_id"] == a));

    assert_eq!(drain(&mut nothing, quiet), Vec::<Value>::new());
}

#[test]
fn per_session_events_arrive_in_stored_order() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "2")
            .env("FAKE_CLAUDE_COUNT", "300"),
    );
    let mut sub = subscribe(
        &d,
        json!({"event_types": ["conversation_updated", "session_status_changed"]}),
    );
    let id = d.launch(json!({"query": "scenario:slow", "working_dir": "/tmp"}));
    let events = read_until(&mut sub, ended(&id));
    let seqs: Vec<i64> = events
        .iter()
        .filter(|e| e["type"] == "conversation_updated")
        .map(|e| e["data"]["event"]["sequence"].as_i64().unwrap())
        .collect();
    let stored: Vec<i64> = d
        .conversation(&id)
        .iter()
        .map(|e| e["sequence"].as_i64().unwrap())
        .collect();
    assert_eq!(seqs, stored);
    assert_eq!(seqs.len(), 301);
}

#[test]
fn a_subscriber_that_never_reads_delays_nobody_and_is_told_what_it_lost() {
    // A buffer small enough that the stuck subscriber falls out of it.
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .arg("--subscriber-buffer=100")
            .env("FAKE_CLAUDE_DELAY_MS", "1")
            .env("FAKE_CLAUDE_COUNT", "3000"),
    );
    let mut stuck = subscribe(&d, json!({"event_types": ["conversation_updated"]}));
    let mut fast = subscribe(
        &d,
        json!({"event_types": ["conversation_updated", "session_status_changed"]}),
    );
    let id = d.launch(json!({"query": "scenario:slow", "working_dir": "/tmp"}));
    let events = read_until(&mut fast, ended(&id));
    let conversation = events
        .iter()
        .filter(|e| e["type"] == "conversation_updated")
        .count();
    assert_eq!(conversation, 3001, "the fast subscriber lost nothing");
    assert!(events.iter().all(|e| e["type"] != "lagged"));

    // Now the stuck subscriber reads: it was told how much it lost, and the counts add up.
    let got = drain(&mut stuck, Duration::from_millis(500));
    let missed: u64 = got
        .iter()
        .filter(|e| e["type"] == "lagged")
        .map(|e| e["data"]["missed"].as_u64().unwrap())
        .sum();
    let delivered = got
        .iter()
        .filter(|e| e["type"] == "conversation_updated")
        .count() as u64;
    assert!(missed > 0, "the stuck subscriber lost events and was told");
    assert_eq!(delivered + missed, 3001);
    // What it got is whole lines (each parsed), in stored order, none twice: lines the
    // daemon began writing directly and finished from the queue included.
    let seqs: Vec<i64> = got
        .iter()
        .filter(|e| e["type"] == "conversation_updated")
        .map(|e| e["data"]["event"]["sequence"].as_i64().unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
}

#[test]
fn a_thousand_subscribers_all_receive_an_event() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let mut subs: Vec<LineConn> = (0..1000)
        .map(|_| subscribe(&d, json!({"event_types": ["session_status_changed"]})))
        .collect();
    assert_eq!(d.result("health", json!({}))["subscribers"], 1000);
    let id = d.launch(json!({"query": "fan out", "working_dir": "/tmp"}));
    for (i, s) in subs.iter_mut().enumerate() {
        let events = read_until(s, ended(&id));
        assert_eq!(events.len(), 2, "subscriber {i}");
    }
}
