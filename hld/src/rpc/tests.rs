//! The connection loop over an in-memory duplex pair: the NDJSON transport, and a test
//! transport that sends events beside the replies, as stdio and WebSocket do.

use std::time::Duration;

use bytes::{BufMut, BytesMut};
use clap::Parser;
use hld_client::protocol::{Event, SessionStatus};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio_util::codec::{Decoder, Encoder, Framed};

use super::events::COALESCE;
use super::*;
use crate::config::{Args, Config};
use crate::logging::LogControl;
use crate::store::Store;
use crate::transport::ndjson::NdjsonCodec;

/// A daemon over a fresh database, and the directory that holds it.
fn daemon() -> (tempfile::TempDir, Arc<Daemon>) {
    let dir = tempfile::tempdir().unwrap();
    let args = Args::try_parse_from([
        "hld",
        "--socket",
        &dir.path().join("hld.sock").display().to_string(),
        "--database",
        &dir.path().join("hld.db").display().to_string(),
        "--heartbeat-interval-ms",
        "100",
    ])
    .unwrap();
    let config = Config::from_args(args).unwrap();
    let store = Store::open(&config.database).unwrap();
    let daemon = Daemon::new(
        config,
        store,
        LogControl::detached(),
        CancellationToken::new(),
    )
    .unwrap();
    (dir, daemon)
}

/// Serves one end of a duplex pair (whose buffers hold `capacity` bytes) with `codec`;
/// returns the client's end, read line by line. At most two server-initiated requests wait
/// for a reply, and none is a heartbeat.
fn connect<C>(
    daemon: &Arc<Daemon>,
    codec: C,
    delivery: Delivery,
    capacity: usize,
) -> (BufReader<DuplexStream>, CancellationToken)
where
    C: Decoder<Item = Frame, Error = io::Error>
        + Encoder<Outgoing, Error = io::Error>
        + Send
        + 'static,
{
    let heartbeat = match delivery {
        Delivery::Requests => Duration::from_secs(3600),
        _ => daemon.config.heartbeat_interval,
    };
    let settings = Settings {
        delivery,
        heartbeat,
        max_pending: 2,
        stale_after: Duration::from_secs(30),
        ..Settings::ndjson(&daemon.config)
    };
    connect_with(daemon, codec, settings, capacity)
}

/// [`connect`] with the given settings.
fn connect_with<C>(
    daemon: &Arc<Daemon>,
    codec: C,
    settings: Settings,
    capacity: usize,
) -> (BufReader<DuplexStream>, CancellationToken)
where
    C: Decoder<Item = Frame, Error = io::Error>
        + Encoder<Outgoing, Error = io::Error>
        + Send
        + 'static,
{
    let (client, server) = tokio::io::duplex(capacity);
    let shutdown = CancellationToken::new();
    tokio::spawn(serve(
        Framed::new(server, codec),
        Arc::clone(daemon),
        settings,
        shutdown.clone(),
    ));
    (BufReader::new(client), shutdown)
}

async fn line(client: &mut BufReader<DuplexStream>) -> Value {
    let mut text = String::new();
    tokio::time::timeout(Duration::from_secs(5), client.read_line(&mut text))
        .await
        .expect("a line within 5 s")
        .unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

async fn send(client: &mut BufReader<DuplexStream>, text: &str) {
    client.get_mut().write_all(text.as_bytes()).await.unwrap();
}

fn status_event(session: &str) -> Event {
    Event::SessionStatusChanged {
        session_id: session.into(),
        run_id: "r".into(),
        old_status: SessionStatus::Running,
        new_status: SessionStatus::Completed,
        parent_session_id: None,
        error: None,
    }
}

/// Publishes `event` once the connection has subscribed (the loop subscribes before it
/// confirms, so the confirmation is the signal).
async fn publish_when_subscribed(daemon: &Daemon, event: Event) {
    while daemon.bus.subscriber_count() == 0 {
        tokio::task::yield_now().await;
    }
    daemon.bus.publish(event);
}

#[tokio::test]
async fn replies_come_in_request_order_with_ids_echoed_and_notifications_unanswered() {
    let (_dir, daemon) = daemon();
    let codec = NdjsonCodec::new(1024);
    let (mut client, _stop) = connect(&daemon, codec, Delivery::TakeOver, 64 * 1024);
    send(
        &mut client,
        concat!(
            r#"{"jsonrpc":"2.0","method":"version","id":"a"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"version"}"#,
            "\n",
            "not json\n",
            r#"{"jsonrpc":"2.0","method":"nope","id":2.5}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"getSessionState","params":{},"id":[1]}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"health","params":null,"id":7}"#,
            "\n",
        ),
    )
    .await;
    assert_eq!(line(&mut client).await["id"], "a");
    let parse = line(&mut client).await;
    assert_eq!(
        (parse["error"]["code"].clone(), parse["id"].clone()),
        (json!(-32700), Value::Null)
    );
    let unknown = line(&mut client).await;
    assert_eq!(unknown["error"]["code"], -32601);
    assert_eq!(unknown["id"], 2.5);
    assert_eq!(line(&mut client).await["error"]["code"], -32600);
    let health = line(&mut client).await;
    assert_eq!(health["id"], 7);
    assert_eq!(health["result"]["status"], "ok");
}

#[tokio::test]
async fn subscribe_takes_an_ndjson_connection_over() {
    let (_dir, daemon) = daemon();
    let (mut client, _stop) = connect(
        &daemon,
        NdjsonCodec::new(1024),
        Delivery::TakeOver,
        64 * 1024,
    );
    send(
        &mut client,
        "{\"jsonrpc\":\"2.0\",\"method\":\"Subscribe\",\"params\":{\"session_id\":\"s1\"},\"id\":1}\n",
    )
    .await;
    let confirmed = line(&mut client).await;
    assert!(confirmed["result"]["subscription_id"].is_string());
    assert_eq!(confirmed["id"], 1);
    // Requests are read and dropped from now on; the filter holds.
    send(
        &mut client,
        "{\"jsonrpc\":\"2.0\",\"method\":\"version\",\"id\":2}\n",
    )
    .await;
    daemon.bus.publish(status_event("other"));
    daemon.bus.publish(status_event("s1"));
    let event = line(&mut client).await;
    assert_eq!(event["id"], Value::Null);
    assert_eq!(event["result"]["event"]["data"]["session_id"], "s1");
    // Quiet for the heartbeat interval: a heartbeat.
    let heartbeat = line(&mut client).await;
    assert_eq!(heartbeat["result"]["type"], "heartbeat");
    assert_eq!(heartbeat["id"], Value::Null);
    // The bus closes (at shutdown): the events published before it go out, then the
    // connection ends.
    daemon.bus.publish(status_event("s1"));
    daemon.bus.close();
    let last = line(&mut client).await;
    assert_eq!(last["result"]["event"]["data"]["session_id"], "s1");
    let mut rest = String::new();
    let read = tokio::time::timeout(Duration::from_secs(5), client.read_line(&mut rest))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read, 0, "closed");
}

#[tokio::test]
async fn a_backlog_larger_than_one_write_reaches_the_subscriber_whole_and_in_order() {
    let (_dir, daemon) = daemon();
    let (mut client, _stop) = connect(
        &daemon,
        NdjsonCodec::new(1024),
        Delivery::TakeOver,
        64 * 1024,
    );
    send(
        &mut client,
        "{\"jsonrpc\":\"2.0\",\"method\":\"Subscribe\",\"params\":{},\"id\":1}\n",
    )
    .await;
    assert_eq!(line(&mut client).await["id"], 1);
    // Published at once, these queue up as several writes' worth (COALESCE) of events.
    let count = 2 * COALESCE / 150;
    for i in 0..count {
        daemon.bus.publish(status_event(&i.to_string()));
    }
    for i in 0..count {
        let event = line(&mut client).await;
        assert_eq!(
            event["result"]["event"]["data"]["session_id"],
            i.to_string(),
            "event {i} of {count}"
        );
    }
}

/// A transport that keeps serving requests beside the events: NDJSON lines, events as
/// messages of their own (as stdio and WebSocket frame them).
struct Alongside(NdjsonCodec);

impl Decoder for Alongside {
    type Item = Frame;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Frame>> {
        self.0.decode(buf)
    }
}

impl Encoder<Outgoing> for Alongside {
    type Error = io::Error;

    fn encode(&mut self, item: Outgoing, dst: &mut BytesMut) -> io::Result<()> {
        match item {
            Outgoing::Event { event, request } => {
                dst.put_slice(&event_message(&event, request));
                dst.put_u8(b'\n');
                Ok(())
            }
            other => self.0.encode(other, dst),
        }
    }
}

#[tokio::test]
async fn beside_requests_events_go_out_as_notifications() {
    let (_dir, daemon) = daemon();
    let codec = Alongside(NdjsonCodec::new(1024));
    let (mut client, _stop) = connect(&daemon, codec, Delivery::Notifications, 64 * 1024);
    send(
        &mut client,
        "{\"jsonrpc\":\"2.0\",\"method\":\"Subscribe\",\"id\":1}\n",
    )
    .await;
    assert!(line(&mut client).await["result"]["subscription_id"].is_string());
    publish_when_subscribed(&daemon, status_event("s1")).await;
    let event = line(&mut client).await;
    assert_eq!(event["method"], "event");
    assert!(event.get("id").is_none(), "a notification: {event}");
    assert_eq!(event["params"]["event"]["type"], "session_status_changed");
    // Requests keep working on the same connection.
    send(
        &mut client,
        "{\"jsonrpc\":\"2.0\",\"method\":\"version\",\"id\":2}\n",
    )
    .await;
    assert_eq!(line(&mut client).await["id"], 2);
}

#[tokio::test]
async fn events_as_server_requests_are_numbered_bounded_and_their_replies_matched() {
    let (_dir, daemon) = daemon();
    let codec = Alongside(NdjsonCodec::new(1024));
    let (mut client, _stop) = connect(&daemon, codec, Delivery::Requests, 64 * 1024);
    send(
        &mut client,
        "{\"jsonrpc\":\"2.0\",\"method\":\"Subscribe\",\"id\":\"1\"}\n",
    )
    .await;
    assert!(line(&mut client).await["result"]["subscription_id"].is_string());
    // At most two wait for a reply (`max_pending`): the third and fourth are dropped.
    for s in ["a", "b", "c", "d"] {
        publish_when_subscribed(&daemon, status_event(s)).await;
    }
    let first = line(&mut client).await;
    assert_eq!(first["id"], "s1");
    assert_eq!(first["params"]["event"]["data"]["session_id"], "a");
    assert_eq!(line(&mut client).await["id"], "s2");
    // A reply frees a place; an unknown reply is ignored; what was lost is told at once.
    send(
        &mut client,
        concat!(
            r#"{"jsonrpc":"2.0","result":{},"id":"s1"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","result":{},"id":"s99"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"version","id":"v"}"#,
            "\n",
        ),
    )
    .await;
    assert_eq!(line(&mut client).await["id"], "v");
    let lagged = line(&mut client).await;
    assert_eq!(lagged["id"], "s3");
    assert_eq!(lagged["params"]["event"]["type"], "lagged");
    assert_eq!(lagged["params"]["event"]["data"]["missed"], 2);
    send(
        &mut client,
        "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":1,\"message\":\"x\"},\"id\":\"s2\"}\n",
    )
    .await;
    daemon.bus.publish(status_event("e"));
    let next = line(&mut client).await;
    assert_eq!(next["id"], "s4");
    assert_eq!(next["params"]["event"]["data"]["session_id"], "e");
}

#[tokio::test]
async fn a_client_that_does_not_read_stops_being_read() {
    let (_dir, daemon) = daemon();
    let (mut client, _stop) = connect(
        &daemon,
        NdjsonCodec::new(1024),
        Delivery::TakeOver,
        16 * 1024,
    );
    // Far more replies than the pair's buffers and the transport's write buffer hold: the
    // loop stops reading, so the client's writes stall too.
    let request = "{\"jsonrpc\":\"2.0\",\"method\":\"describeMethods\",\"id\":1}\n";
    let flood = request.repeat(10_000);
    let stalled = tokio::time::timeout(
        Duration::from_millis(500),
        client.get_mut().write_all(flood.as_bytes()),
    )
    .await;
    assert!(stalled.is_err(), "the daemon kept reading");
    // Reading the replies lets it go on.
    for _ in 0..10 {
        assert_eq!(line(&mut client).await["id"], 1);
    }
}

#[tokio::test]
async fn shutdown_ends_a_waiting_connection() {
    let (_dir, daemon) = daemon();
    let (mut client, stop) = connect(&daemon, NdjsonCodec::new(1024), Delivery::TakeOver, 1024);
    stop.cancel();
    let mut rest = String::new();
    let read = tokio::time::timeout(Duration::from_secs(5), client.read_line(&mut rest))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read, 0, "closed");
}

/// Bytes a client might send: anything at all, or lines that look like JSON-RPC with random
/// methods, ids and params, in any order and with any line ends.
/// One JSON-RPC message as a hostile client might write it: known or random methods, ids
/// and params of every type, either version.
fn hostile_message() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let method = prop_oneof![
        Just("health".to_owned()),
        Just("Subscribe".to_owned()),
        Just("getConversation".to_owned()),
        Just("launchSession".to_owned()),
        Just("sendDecision".to_owned()),
        Just("createApproval".to_owned()),
        ".{0,12}",
    ];
    let json = prop_oneof![
        Just("null".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
        ".{0,8}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        Just("{}".to_owned()),
        Just("[1,{}]".to_owned()),
        Just(r#"{"session_id":"s","limit":-1}"#.to_owned()),
        Just(r#"{"query":"a\u0000b"}"#.to_owned()),
    ];
    (method, json.clone(), json, any::<bool>()).prop_map(|(m, id, params, v2)| {
        let version = if v2 { "2.0" } else { "1.0" };
        format!(
            r#"{{"jsonrpc":"{version}","method":{},"params":{params},"id":{id}}}"#,
            serde_json::to_string(&m).unwrap()
        )
        .into_bytes()
    })
}

fn hostile_input() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let line = hostile_message();
    let lines = proptest::collection::vec(
        (
            line,
            prop_oneof![Just(&b"\n"[..]), Just(&b"\r\n"[..]), Just(&b""[..])],
        ),
        0..8,
    )
    .prop_map(|lines| {
        lines
            .into_iter()
            .flat_map(|(line, end)| line.into_iter().chain(end.iter().copied()))
            .collect()
    });
    prop_oneof![proptest::collection::vec(any::<u8>(), 0..2048), lines]
}

#[test]
fn hostile_bytes_never_panic_or_stall_and_every_reply_is_well_formed() {
    use proptest::test_runner::{Config as Cases, TestRunner};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (_dir, daemon) = runtime.block_on(async { daemon() });
    let mut runner = TestRunner::new(Cases {
        cases: 300,
        ..Cases::default()
    });
    runner
        .run(&hostile_input(), |data| {
            let replies = runtime.block_on(exchange(&daemon, &data));
            for line in replies.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let reply: Value = serde_json::from_slice(line).unwrap();
                assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
                assert!(reply.get("id").is_some(), "{reply}");
                assert!(
                    reply.get("result").is_some() != reply.get("error").is_some(),
                    "{reply}"
                );
            }
            Ok(())
        })
        .unwrap();
}

/// Sends `data` on a fresh connection and closes it; returns all the daemon wrote back (it
/// must finish within 10 s: a stall fails).
async fn exchange(daemon: &Arc<Daemon>, data: &[u8]) -> Vec<u8> {
    let (client, _stop) = connect(
        daemon,
        NdjsonCodec::new(daemon.config.max_message_size),
        Delivery::TakeOver,
        64 * 1024,
    );
    let (mut read, mut write) = tokio::io::split(client);
    let send = async {
        write.write_all(data).await.unwrap();
        write.shutdown().await.unwrap();
    };
    let mut out = Vec::new();
    let exchange = async { tokio::join!(send, read.read_to_end(&mut out)) };
    let ((), read) = tokio::time::timeout(Duration::from_secs(10), exchange)
        .await
        .expect("the connection stalled");
    read.unwrap();
    out
}

/// Hostile Content-Length input: random bytes, or messages framed with right and wrong
/// lengths, header names in any case, good and bad content types, and bare newlines.
fn hostile_frames() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let framed = (hostile_message(), -3i64..3, 0..5usize, any::<bool>()).prop_map(
        |(body, skew, header, crlf)| {
            let length = (body.len() as i64 + skew).max(0);
            let end = if crlf { "\r\n" } else { "\n" };
            let headers = match header {
                0 => format!("Content-Length: {length}{end}"),
                1 => format!("content-length: {length}{end}X-Other: 1{end}"),
                2 => format!(
                    "Content-Type: application/vscode-jsonrpc; charset=UTF-8{end}\
                     Content-Length: {length}{end}"
                ),
                3 => format!("Content-Type: text/plain{end}Content-Length: {length}{end}"),
                _ => format!("Content-Length: {}{end}", length * 1_000_000),
            };
            let mut out = format!("{headers}{end}").into_bytes();
            out.extend_from_slice(&body);
            out
        },
    );
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..2048),
        proptest::collection::vec(framed, 0..6).prop_map(|f| f.concat()),
    ]
}

#[test]
fn hostile_content_length_bytes_write_only_frames_and_leave_the_connection_usable() {
    use crate::transport::content_length::{split_frames, ContentLengthConn};
    use proptest::test_runner::{Config as Cases, TestRunner};
    // The clock is paused: the read timeout passes as soon as the connection waits.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    let (_dir, daemon) = runtime.block_on(async { daemon() });
    let mut runner = TestRunner::new(Cases {
        cases: 200,
        ..Cases::default()
    });
    runner
        .run(&hostile_frames(), |data| {
            let out = runtime.block_on(async {
                let (client, server) = tokio::io::duplex(64 * 1024);
                let settings = Settings::content_length(&daemon.config);
                let timeout = Duration::from_millis(100);
                let conn = ContentLengthConn::new(server, 64 * 1024, timeout, BytesMut::new());
                let served = tokio::spawn(serve(
                    conn,
                    Arc::clone(&daemon),
                    settings,
                    CancellationToken::new(),
                ));
                let (mut read, mut write) = tokio::io::split(client);
                let send = async {
                    let _ = write.write_all(&data).await;
                    // Whatever half message is left times out, then a good one is answered.
                    tokio::time::sleep(timeout * 3).await;
                    let last = br#"{"jsonrpc":"2.0","method":"version","id":"last"}"#;
                    let _ = write
                        .write_all(format!("Content-Length: {}\r\n\r\n", last.len()).as_bytes())
                        .await;
                    let _ = write.write_all(last).await;
                    let _ = write.shutdown().await;
                };
                let mut out = Vec::new();
                let exchange = async { tokio::join!(send, read.read_to_end(&mut out)) };
                let ((), read) = tokio::time::timeout(Duration::from_secs(60), exchange)
                    .await
                    .expect("the connection stalled");
                read.expect("the daemon's replies");
                served.await.expect("the connection's task panicked");
                out
            });
            let frames: Vec<Value> = split_frames(&out)
                .unwrap()
                .into_iter()
                .map(|body| serde_json::from_slice(body).unwrap())
                .collect();
            for frame in &frames {
                assert_eq!(frame["jsonrpc"], "2.0", "{frame}");
                assert!(
                    frame.get("result").is_some() != frame.get("error").is_some(),
                    "{frame}"
                );
            }
            // Usable to the end, unless a `shutdown` in the input ended it cleanly.
            let shut = frames
                .iter()
                .any(|f| f["result"]["message"] == "Shutting down gracefully");
            let last = frames.last().map(|f| f["id"].clone());
            assert!(shut || last == Some(json!("last")), "{frames:?}");
            Ok(())
        })
        .unwrap();
}
