//! `rpc::serve` over the transports, on in-memory duplex pairs, with a small method table over
//! a bus of its own: NDJSON (a subscription takes the connection over), Content-Length and
//! holon-rpc (events beside the replies), and hostile input on each.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::{SinkExt, StreamExt};
use hld_client::protocol::{self as p, Event, SessionStatus};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio_util::codec::{Framed, LinesCodec};
use tokio_util::sync::CancellationToken;

use super::content_length::{split_frames, ContentLengthConn};
use super::ndjson::NdjsonConn;
use super::websocket::holon::Holon;
use crate::budget::Budget;
use crate::bus::{Bus, Filter};
use crate::error::Error;
use crate::rpc::{serve, Router};

/// What the test table's handlers get.
struct State {
    budget: Budget,
    bus: Bus,
}

impl AsRef<Budget> for State {
    fn as_ref(&self) -> &Budget {
        &self.budget
    }
}

fn state() -> Arc<State> {
    Arc::new(State {
        budget: Budget::new(64 << 20),
        bus: Bus::new(1024),
    })
}

fn router() -> Arc<Router<State>> {
    let mut r = Router::default();
    r.add::<p::Version, _, _>(|_, _| async {
        Ok(p::VersionResult {
            version: "1.0".into(),
        })
    })
    .add::<p::GetSessionState, _, _>(|_, p: p::SessionIdParams| async move {
        Err(Error::not_found("session_id", "session", &p.session_id))
    })
    .describe::<p::DescribeMethods>()
    .close::<p::Shutdown>(&p::ShutdownResult {
        message: "Shutting down gracefully".into(),
    })
    .subscribe::<p::Subscribe, _>(|s: &State, params| Ok(s.bus.subscribe(Filter::from(params))));
    Arc::new(r)
}

/// Serves the far end of a duplex pair (whose buffers hold `capacity` bytes) as NDJSON, with
/// a heartbeat after 100 ms; returns the near end, read line by line.
fn ndjson(state: &Arc<State>, capacity: usize) -> (BufReader<DuplexStream>, CancellationToken) {
    let (client, server) = tokio::io::duplex(capacity);
    let shutdown = CancellationToken::new();
    let conn = NdjsonConn::new(server, BytesMut::new(), 1024, Duration::from_millis(100))
        .budget(state.budget.clone());
    let (state, stop) = (Arc::clone(state), shutdown.clone());
    tokio::spawn(async move { serve(conn, &router(), state, stop).await });
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

/// Publishes `event` once the connection has subscribed.
async fn publish_when_subscribed(state: &State, event: Event) {
    while state.bus.subscriber_count() == 0 {
        tokio::task::yield_now().await;
    }
    state.bus.publish(event);
}

#[tokio::test]
async fn replies_come_in_request_order_with_ids_echoed_and_notifications_unanswered() {
    let state = state();
    let (mut client, _stop) = ndjson(&state, 64 * 1024);
    let cases = [
        (
            r#"{"jsonrpc":"2.0","method":"version","id":"a"}"#,
            json!(["a", "1.0"]),
        ),
        (r#"{"jsonrpc":"2.0","method":"version"}"#, Value::Null),
        ("not json", json!([null, -32700])),
        (
            r#"{"jsonrpc":"2.0","method":"nope","id":2.5}"#,
            json!([2.5, -32601]),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"version","id":[1]}"#,
            json!([null, -32600]),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"getSessionState","id":3}"#,
            json!([3, -32602]),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"getSessionState","params":{"session_id":"x"},"id":4}"#,
            json!([4, -32602]),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"version","params":null,"id":7}"#,
            json!([7, "1.0"]),
        ),
    ];
    let requests: String = cases.iter().map(|(text, _)| format!("{text}\n")).collect();
    send(&mut client, &requests).await;
    for (text, expected) in cases.iter().filter(|(_, e)| !e.is_null()) {
        let reply = line(&mut client).await;
        let got = reply["result"]["version"].clone();
        let got = if got.is_null() {
            reply["error"]["code"].clone()
        } else {
            got
        };
        assert_eq!(json!([reply["id"], got]), *expected, "{text}");
    }
}

#[tokio::test]
async fn subscribe_takes_an_ndjson_connection_over() {
    let state = state();
    let (mut client, _stop) = ndjson(&state, 64 * 1024);
    let subscribe = r#"{"jsonrpc":"2.0","method":"Subscribe","params":{"session_id":"s1"},"id":1}"#;
    send(&mut client, &format!("{subscribe}\n")).await;
    let confirmed = line(&mut client).await;
    assert!(confirmed["result"]["subscription_id"].is_string());
    assert_eq!(confirmed["id"], 1);
    // Requests are read and dropped from now on; the filter holds.
    send(
        &mut client,
        "{\"jsonrpc\":\"2.0\",\"method\":\"version\",\"id\":2}\n",
    )
    .await;
    state.bus.publish(status_event("other"));
    state.bus.publish(status_event("s1"));
    let event = line(&mut client).await;
    assert_eq!(event["id"], Value::Null);
    assert_eq!(event["result"]["event"]["data"]["session_id"], "s1");
    // Quiet for the heartbeat interval: a heartbeat.
    let heartbeat = line(&mut client).await;
    assert_eq!(heartbeat["result"]["type"], "heartbeat");
    assert_eq!(heartbeat["id"], Value::Null);
    // The bus closes (at shutdown): the events published before it go out, then the
    // connection ends.
    state.bus.publish(status_event("s1"));
    state.bus.close();
    let last = line(&mut client).await;
    assert_eq!(last["result"]["event"]["data"]["session_id"], "s1");
    let mut rest = String::new();
    assert_eq!(client.read_line(&mut rest).await.unwrap(), 0, "closed");
}

#[tokio::test]
async fn a_backlog_larger_than_one_write_reaches_the_subscriber_whole_and_in_order() {
    let state = state();
    let (mut client, _stop) = ndjson(&state, 64 * 1024);
    send(
        &mut client,
        "{\"jsonrpc\":\"2.0\",\"method\":\"Subscribe\",\"id\":1}\n",
    )
    .await;
    assert_eq!(line(&mut client).await["id"], 1);
    // Published at once, these queue up as several writes' worth of events.
    let count = 1000;
    for i in 0..count {
        state.bus.publish(status_event(&i.to_string()));
    }
    for i in 0..count {
        let event = line(&mut client).await;
        let session = &event["result"]["event"]["data"]["session_id"];
        assert_eq!(*session, i.to_string(), "event {i} of {count}");
    }
}

#[tokio::test]
async fn a_client_that_does_not_read_stops_being_read() {
    let state = state();
    let (mut client, _stop) = ndjson(&state, 16 * 1024);
    // Far more replies than the pair's buffers and the transport's write buffer hold: the
    // loop stops reading, so the client's writes stall too.
    let flood = "{\"jsonrpc\":\"2.0\",\"method\":\"describeMethods\",\"id\":1}\n".repeat(10_000);
    let writing = client.get_mut().write_all(flood.as_bytes());
    let stalled = tokio::time::timeout(Duration::from_millis(500), writing).await;
    assert!(stalled.is_err(), "the daemon kept reading");
    // Reading the replies lets it go on.
    for _ in 0..10 {
        assert_eq!(line(&mut client).await["id"], 1);
    }
}

#[tokio::test]
async fn shutdown_ends_a_waiting_connection() {
    let state = state();
    let (mut client, stop) = ndjson(&state, 1024);
    stop.cancel();
    let mut rest = String::new();
    let read = tokio::time::timeout(Duration::from_secs(5), client.read_line(&mut rest));
    assert_eq!(read.await.unwrap().unwrap(), 0, "closed");
}

#[tokio::test]
async fn content_length_sends_events_as_notifications_beside_replies() {
    let state = state();
    let (client, server) = tokio::io::duplex(64 * 1024);
    let conn = ContentLengthConn::new(server, 1024, Duration::from_secs(30), BytesMut::new());
    tokio::spawn({
        let state = Arc::clone(&state);
        async move { serve(conn, &router(), state, CancellationToken::new()).await }
    });
    let (mut read, mut write) = tokio::io::split(client);
    let framed = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len());
    let subscribe = framed(r#"{"jsonrpc":"2.0","method":"Subscribe","id":1}"#);
    write.write_all(subscribe.as_bytes()).await.unwrap();
    publish_when_subscribed(&state, status_event("s1")).await;
    let version = framed(r#"{"jsonrpc":"2.0","method":"version","id":2}"#);
    write.write_all(version.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let mut chunk = [0u8; 4096];
        let n = read.read(&mut chunk).await.unwrap();
        out.extend_from_slice(&chunk[..n]);
        if let Ok(frames) = split_frames(&out) {
            seen = frames
                .iter()
                .map(|f| serde_json::from_slice::<Value>(f).unwrap())
                .collect();
        }
    }
    assert!(seen[0]["result"]["subscription_id"].is_string());
    let (event, reply) = match seen[1]["method"] == "event" {
        true => (&seen[1], &seen[2]),
        false => (&seen[2], &seen[1]),
    };
    assert!(event.get("id").is_none(), "a notification: {event}");
    assert_eq!(event["params"]["event"]["type"], "session_status_changed");
    assert_eq!(reply["id"], 2);
}

/// A holon-rpc connection over a duplex pair, one message a line; at most two server
/// requests wait, and heartbeats wait an hour.
fn holon(state: &Arc<State>) -> BufReader<DuplexStream> {
    let (client, server) = tokio::io::duplex(64 * 1024);
    let lines = Framed::new(server, LinesCodec::new())
        .map(|line| line.map(Bytes::from).map_err(io::Error::other));
    let lines = SinkExt::<String>::sink_map_err(lines, io::Error::other);
    let config = crate::config::WsConfig {
        address: "127.0.0.1:0".parse().unwrap(),
        tls: None,
        token: None,
        allowed_origins: Vec::new(),
        max_connections: 1,
        max_handshakes: 1,
        max_pending: 2,
        heartbeat: Duration::from_secs(3600),
        heartbeat_timeout: Duration::from_secs(5),
        stale_after: Duration::from_secs(30),
    };
    let conn = Holon::new(lines, &config);
    let state = Arc::clone(state);
    tokio::spawn(async move { serve(conn, &router(), state, CancellationToken::new()).await });
    BufReader::new(client)
}

#[tokio::test]
async fn holon_events_are_numbered_requests_bounded_and_their_replies_matched() {
    let state = state();
    let mut client = holon(&state);
    send(
        &mut client,
        "{\"jsonrpc\":\"2.0\",\"method\":\"Subscribe\",\"id\":\"1\"}\n",
    )
    .await;
    assert!(line(&mut client).await["result"]["subscription_id"].is_string());
    // At most two wait for a reply: the third and fourth are dropped.
    for s in ["a", "b", "c", "d"] {
        publish_when_subscribed(&state, status_event(s)).await;
    }
    let first = line(&mut client).await;
    assert_eq!(first["id"], "s1");
    assert_eq!(first["params"]["event"]["data"]["session_id"], "a");
    assert_eq!(line(&mut client).await["id"], "s2");
    // A reply frees a place, and what was lost is told at once; an unknown reply is
    // ignored; a heartbeat is answered.
    let replies = [
        r#"{"jsonrpc":"2.0","result":{},"id":"s1"}"#,
        r#"{"jsonrpc":"2.0","result":{},"id":"s99"}"#,
        r#"{"jsonrpc":"2.0","method":"rpc.heartbeat","id":"h"}"#,
        r#"{"jsonrpc":"2.0","method":"version","id":"v"}"#,
    ];
    send(&mut client, &(replies.join("\n") + "\n")).await;
    let lagged = line(&mut client).await;
    assert_eq!(lagged["id"], "s3");
    assert_eq!(lagged["params"]["event"]["type"], "lagged");
    assert_eq!(lagged["params"]["event"]["data"]["missed"], 2);
    assert_eq!(
        line(&mut client).await,
        json!({"jsonrpc":"2.0","result":{},"id":"h"})
    );
    assert_eq!(line(&mut client).await["id"], "v");
    let error = r#"{"jsonrpc":"2.0","error":{"code":1,"message":"x"},"id":"s2"}"#;
    send(&mut client, &format!("{error}\n")).await;
    state.bus.publish(status_event("e"));
    let next = line(&mut client).await;
    assert_eq!(next["id"], "s4");
    assert_eq!(next["params"]["event"]["data"]["session_id"], "e");
}

/// One JSON-RPC message as a hostile client might write it: known or random methods, ids
/// and params of every type, either version.
fn hostile_message() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let method = prop_oneof![
        Just("version".to_owned()),
        Just("Subscribe".to_owned()),
        Just("getSessionState".to_owned()),
        Just("shutdown".to_owned()),
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
        let method = serde_json::to_string(&m).unwrap();
        format!(r#"{{"jsonrpc":"{version}","method":{method},"params":{params},"id":{id}}}"#)
            .into_bytes()
    })
}

/// Anything at all, or lines of hostile messages with any line ends.
fn hostile_lines() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let end = prop_oneof![Just(&b"\n"[..]), Just(&b"\r\n"[..]), Just(&b""[..])];
    let lines = proptest::collection::vec((hostile_message(), end), 0..8).prop_map(|lines| {
        lines
            .into_iter()
            .flat_map(|(l, e)| [l, e.to_vec()])
            .collect::<Vec<_>>()
            .concat()
    });
    prop_oneof![proptest::collection::vec(any::<u8>(), 0..2048), lines]
}

/// Content-Length input: random bytes, or messages framed with right and wrong lengths,
/// header names in any case, good and bad content types, and bare newlines.
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
            [format!("{headers}{end}").into_bytes(), body].concat()
        },
    );
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..2048),
        proptest::collection::vec(framed, 0..6).prop_map(|f| f.concat()),
    ]
}

/// Writes `data` then `last` (unless empty) on a connection served by `conn` from the far
/// end of a duplex pair, a pause of `pause` between them, closes it, and returns all that
/// came back; a stall fails.
async fn exchange<C>(conn: impl FnOnce(DuplexStream) -> C, data: &[u8], last: &[u8]) -> Vec<u8>
where
    C: futures::Stream<Item = io::Result<crate::rpc::Frame>>
        + futures::Sink<crate::rpc::Outgoing, Error = io::Error>
        + Unpin
        + Send
        + 'static,
{
    let (client, server) = tokio::io::duplex(64 * 1024);
    let conn = conn(server);
    let served =
        tokio::spawn(
            async move { serve(conn, &router(), state(), CancellationToken::new()).await },
        );
    let (mut read, mut write) = tokio::io::split(client);
    let send = async {
        let _ = write.write_all(data).await;
        // Whatever half message is left times out, then a good one is answered.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let _ = write.write_all(last).await;
        let _ = write.shutdown().await;
    };
    let mut out = Vec::new();
    let exchange = async { tokio::join!(send, read.read_to_end(&mut out)) };
    let ((), read) = tokio::time::timeout(Duration::from_secs(60), exchange)
        .await
        .expect("the connection stalled");
    read.expect("the replies");
    served.await.expect("the connection's task panicked");
    out
}

/// Whether `reply` is a well-formed JSON-RPC reply.
fn well_formed(reply: &Value) -> bool {
    reply["jsonrpc"] == "2.0" && reply.get("result").is_some() != reply.get("error").is_some()
}

#[test]
fn hostile_input_never_panics_or_stalls_and_every_reply_is_well_formed() {
    use proptest::test_runner::{Config, TestRunner};
    // The clock is paused: the read timeout passes as soon as the connection waits.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    let mut runner = TestRunner::new(Config::with_cases(300));
    let ndjson = |io| NdjsonConn::new(io, BytesMut::new(), 64 * 1024, Duration::from_secs(60));
    runner
        .run(&hostile_lines(), |data| {
            let out = runtime.block_on(exchange(ndjson, &data, b""));
            for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let reply: Value = serde_json::from_slice(line).unwrap();
                assert!(well_formed(&reply) && reply.get("id").is_some(), "{reply}");
            }
            Ok(())
        })
        .unwrap();
    let content_length =
        |io| ContentLengthConn::new(io, 64 * 1024, Duration::from_millis(100), BytesMut::new());
    let last = br#"{"jsonrpc":"2.0","method":"version","id":"last"}"#;
    let last = [
        format!("Content-Length: {}\r\n\r\n", last.len()).as_bytes(),
        last,
    ]
    .concat();
    runner
        .run(&hostile_frames(), |data| {
            let out = runtime.block_on(exchange(content_length, &data, &last));
            let frames: Vec<Value> = split_frames(&out)
                .unwrap()
                .into_iter()
                .map(|body| serde_json::from_slice(body).unwrap())
                .collect();
            assert!(frames.iter().all(well_formed), "{frames:?}");
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
