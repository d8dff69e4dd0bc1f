//! `Subscribe` on the Unix socket: confirmation, filters validation, heartbeats, disconnect
//! detection and shutdown.

use std::time::{Duration, Instant};

use hld_client::protocol::{Health, NoParams, Subscribe, SubscribeParams};
use hld_e2e::{launch_params, wait_for, DaemonOptions, TestDaemon};
use serde_json::{json, Value};

fn subscribers(d: &TestDaemon) -> u64 {
    d.request::<Health>(NoParams {}).subscribers
}

#[test]
fn the_first_reply_confirms_the_subscription() {
    let d = TestDaemon::start();
    let mut c = d.conn();
    let reply = c.request(
        "Subscribe",
        json!({"event_types": ["new_approval"]}),
        json!(5),
    );
    let result = &reply["result"];
    let id = result["subscription_id"].as_str().unwrap();
    assert!(id.starts_with("sub_") && id.len() == 40, "{id}");
    assert_eq!(
        result["message"],
        "Subscription established. Waiting for events..."
    );
    assert_eq!(reply["id"], 5);
    assert_eq!(subscribers(&d), 1);
}

#[test]
fn an_unknown_event_type_is_refused_with_the_accepted_list() {
    let d = TestDaemon::start();
    let e = d
        .try_request::<Subscribe>(SubscribeParams {
            event_types: Some(vec![
                "session_status_changed".into(),
                "approval_requested".into(),
            ]),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.code, -32602);
    let data = e.data.unwrap();
    assert_eq!(data["param"], "event_types[1]");
    assert_eq!(data["received"], "approval_requested");
    let accepted: Vec<Value> = data["accepted"].as_array().unwrap().clone();
    for t in [
        "new_approval",
        "approval_resolved",
        "session_status_changed",
        "conversation_updated",
    ] {
        assert!(accepted.contains(&json!(t)), "{t} accepted");
    }
    assert_eq!(subscribers(&d), 0);
}

#[test]
fn heartbeats_arrive_at_the_configured_interval_and_input_is_ignored() {
    let d = TestDaemon::start_with(DaemonOptions {
        args: vec!["--heartbeat-interval-ms".into(), "100".into()],
        ..Default::default()
    });
    let mut sub = d.subscribe(SubscribeParams::default());
    let c = sub.conn();
    let started = Instant::now();
    for i in 0..3 {
        // Anything sent after Subscribe is read and dropped.
        c.send(r#"{"jsonrpc":"2.0","method":"health","id":99}"#);
        let line = c.recv();
        assert_eq!(
            line,
            json!({"jsonrpc":"2.0","result":{"type":"heartbeat","message":"Connection alive"},"id":null}),
            "heartbeat {i}"
        );
    }
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(290),
        "three heartbeats took {took:?}"
    );
    assert!(
        took < Duration::from_millis(2000),
        "three heartbeats took {took:?}"
    );
}

#[test]
fn a_closed_subscriber_is_freed_promptly() {
    let d = TestDaemon::start();
    let sub = d.subscribe(SubscribeParams::default());
    assert_eq!(subscribers(&d), 1);
    drop(sub);
    let dropped = Instant::now();
    wait_for(Duration::from_secs(2), || {
        (subscribers(&d) == 0).then_some(())
    })
    .expect("the subscriber count went back to 0");
    let took = dropped.elapsed();
    assert!(took < Duration::from_millis(500), "freed after {took:?}");
}

#[test]
fn shutdown_ends_subscriptions_cleanly() {
    let mut d = TestDaemon::start();
    let mut subs: Vec<_> = (0..5)
        .map(|_| d.subscribe(SubscribeParams::default()))
        .collect();
    d.signal(nix::sys::signal::Signal::SIGTERM);
    let (status, took) = d.wait_exit(Duration::from_secs(3)).expect("exits");
    assert!(status.success());
    assert!(took < Duration::from_secs(2));
    for sub in &mut subs {
        assert_eq!(
            sub.conn().recv_line(),
            None,
            "the subscription ends with EOF"
        );
    }
}

#[tokio::test]
async fn the_client_stream_is_confirmed_and_consumes_heartbeats() {
    let d = TestDaemon::start_with(DaemonOptions {
        args: vec!["--heartbeat-interval-ms".into(), "50".into()],
        ..Default::default()
    });
    let client = d.client().await;
    let sub = client
        .subscribe(Default::default(), Default::default())
        .await
        .unwrap();
    assert!(sub.subscription_id.starts_with("sub_"));
    // Heartbeats are consumed inside the stream: nothing is yielded while only they arrive.
    // The timeout is the observation window (eight heartbeat intervals), not a wait.
    let mut sub = sub;
    let next = tokio::time::timeout(
        Duration::from_millis(400),
        futures::StreamExt::next(&mut sub),
    )
    .await;
    assert!(next.is_err(), "no item from heartbeats alone: {next:?}");
    assert_eq!(client.health().await.unwrap().subscribers, 1);
}

#[tokio::test]
async fn a_bad_filter_fails_the_client_subscribe() {
    let d = TestDaemon::start();
    let client = d.client().await;
    let err = client
        .subscribe(
            SubscribeParams {
                event_types: Some(vec!["nope".into()]),
                ..Default::default()
            },
            Default::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.rpc().unwrap().code, -32602);
}

#[tokio::test]
async fn a_reconnecting_subscription_reports_the_gap_and_resumes() {
    let base = hld_e2e::short_tempdir();
    let options = || DaemonOptions {
        dir: Some(base.path().to_path_buf()),
        ..DaemonOptions::fake_claude()
    };
    let mut first = TestDaemon::start_with(options());
    let client = first.client().await;
    let mut sub = client
        .subscribe(
            Default::default(),
            hld_client::SubscribeOptions { reconnect: true },
        )
        .await
        .unwrap();
    first.stop();
    let second = TestDaemon::start_with(options());
    let next = tokio::time::timeout(Duration::from_secs(10), futures::StreamExt::next(&mut sub))
        .await
        .expect("an item after the restart")
        .expect("the stream goes on")
        .expect("no error");
    match next {
        hld_client::SubscriptionItem::Reconnected { gap } => assert!(gap > Duration::ZERO),
        other => panic!("expected Reconnected, got {other:?}"),
    }
    second.launch(launch_params("after the gap", "/tmp"));
    let event = tokio::time::timeout(Duration::from_secs(10), futures::StreamExt::next(&mut sub))
        .await
        .expect("an event")
        .expect("the stream goes on")
        .expect("no error");
    assert!(
        matches!(event, hld_client::SubscriptionItem::Event(ref e) if e.event.type_name() == "session_status_changed"),
        "{event:?}"
    );
}

#[test]
fn requests_pipelined_before_subscribe_are_answered_first() {
    let d = TestDaemon::start();
    let mut c = d.conn();
    c.send_raw(
        concat!(
            r#"{"jsonrpc":"2.0","method":"version","id":1}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"version","id":2}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"Subscribe","id":3}"#,
            "\n"
        )
        .as_bytes(),
    );
    assert_eq!(c.recv()["id"], 1);
    assert_eq!(c.recv()["id"], 2);
    let confirmation = c.recv();
    assert_eq!(confirmation["id"], 3);
    assert!(confirmation["result"]["subscription_id"].is_string());
}
