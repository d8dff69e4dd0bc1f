//! The WebSocket transport (`hld --ws`, subprotocol `holon-rpc`, spec/002) over real
//! processes, with a tokio-tungstenite client as strict as HolonClient (every message it
//! reads is checked as a spec/002 envelope): the envelope's rules, the heartbeat both ways,
//! the size limits, the handshake's refusals, events as server requests, the caps, TLS, and
//! a browser-style client (Node's `ws` package).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use futures::SinkExt;
use hld_e2e::ws::{self, daemon, WsClient};
use hld_e2e::{launch_params, wait_for, TestDaemon, WAIT};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

/// A session launched and ended, for `createApproval` to name.
fn finished_session(daemon: &TestDaemon) -> String {
    let id = daemon.launch(launch_params("hello", &daemon.dir));
    daemon.wait_ended(&id);
    id
}

/// Creates an approval of `session` on the Unix socket, which publishes one `new_approval`.
fn create_approval(daemon: &TestDaemon, session: &str, input: Value) {
    let reply = daemon.call(
        "createApproval",
        json!({"session_id": session, "tool_name": "Bench", "tool_input": input}),
    );
    assert!(reply.get("result").is_some(), "{reply}");
}

/// The close frame's code and reason.
fn close_of(frame: Option<tokio_tungstenite::tungstenite::protocol::CloseFrame>) -> (u16, String) {
    let frame = frame.expect("a close frame");
    (u16::from(frame.code), frame.reason.to_string())
}

/// The HTTP status and body of a refused handshake.
async fn refused(
    request: tokio_tungstenite::tungstenite::handshake::client::Request,
) -> (u16, String) {
    match tokio_tungstenite::connect_async(request).await {
        Err(WsError::Http(response)) => (
            response.status().as_u16(),
            String::from_utf8_lossy(response.body().as_deref().unwrap_or_default()).into_owned(),
        ),
        Ok(_) => panic!("the handshake was accepted"),
        Err(e) => panic!("the handshake failed without an HTTP answer: {e}"),
    }
}

#[tokio::test]
async fn every_answerable_envelope_violation_gets_minus_32600_to_its_id_and_the_connection_carries_on(
) {
    let (_daemon, address, token) = daemon(&[]);
    let mut client = WsClient::connect(address, &token).await;
    let cases = [
        (
            r#"{"jsonrpc":"2.0","id":"a","method":"health","extra":1}"#,
            "unknown member \"extra\"",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"b","method":"health","method":"version"}"#,
            "duplicate member \"method\"",
        ),
        (r#"{"id":"c","method":"health"}"#, "jsonrpc must be \"2.0\""),
        (
            r#"{"jsonrpc":"1.0","id":"d","method":"health"}"#,
            "jsonrpc must be \"2.0\"",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"e","method":""}"#,
            "method must be a non-empty string",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"f","method":["health"]}"#,
            "method must be a non-empty string",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"g","method":"health","result":{}}"#,
            "a request has no result or error",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"h","method":"health","params":[]}"#,
            "params must be an object",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"i","method":"health","params":null}"#,
            "params must be an object",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"j"}"#,
            "method, result or error is required",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"k","result":1,"error":{"code":1,"message":"x"}}"#,
            "not both",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"l","result":1,"params":{}}"#,
            "a response has no params",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"m","error":{"code":"1","message":"x"}}"#,
            "integer code",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"n","error":{"code":1}}"#,
            "string message",
        ),
    ];
    for (text, rule) in cases {
        client.send_text(text).await;
        let reply = client.next_json().await;
        let id: Value = serde_json::from_str::<Value>(text).unwrap()["id"].clone();
        assert_eq!(reply["id"], id, "{text} -> {reply}");
        assert_eq!(reply["error"]["code"], -32600, "{text} -> {reply}");
        assert_eq!(reply["error"]["data"]["reason"], "invalid-envelope");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains(rule), "{text} -> {message}");
    }
    // The method table's own errors, in WebBridge's wording for an unknown method.
    let unknown = client.call("nope", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601);
    assert_eq!(
        unknown["error"]["message"],
        "method \"nope\" not registered"
    );
    let bad = client
        .call("getSessionState", json!({"session_id": 5}))
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert_eq!(bad["error"]["data"]["param"], "session_id");
    // And the connection still serves.
    let health = client.result("health", json!({})).await;
    assert_eq!(health["status"], "ok");
}

#[tokio::test]
async fn a_message_without_a_readable_string_id_closes_the_connection_with_1002() {
    let (_daemon, address, token) = daemon(&[]);
    let cases = [
        ("{nope", "-32700"),
        ("[1,2]", "-32600"),
        ("42", "-32600"),
        (r#"{"jsonrpc":"2.0","method":"health"}"#, "-32600"),
        (r#"{"jsonrpc":"2.0","id":7,"method":"health"}"#, "-32600"),
        (r#"{"jsonrpc":"2.0","id":null,"method":"health"}"#, "-32600"),
        (r#"{"jsonrpc":"2.0","id":"","method":"health"}"#, "-32600"),
        (
            r#"{"jsonrpc":"2.0","id":"1","id":"2","method":"health"}"#,
            "-32600",
        ),
    ];
    for (text, code) in cases {
        let mut client = WsClient::connect(address, &token).await;
        client.send_text(text).await;
        let (close, reason) = close_of(client.closed().await);
        assert_eq!(close, 1002, "{text}: {reason}");
        assert!(reason.starts_with(code), "{text}: {reason}");
    }
}

#[tokio::test]
async fn heartbeats_go_both_ways_and_any_reply_counts_as_alive() {
    let (_daemon, address, token) = daemon(&[
        "--ws-heartbeat-ms",
        "150",
        "--ws-heartbeat-timeout-ms",
        "400",
    ]);
    let mut client = WsClient::connect(address, &token).await;
    // Ours, as HolonClient sends it.
    client
        .send_text(r#"{"jsonrpc":"2.0","id":"h1","method":"rpc.heartbeat","params":{}}"#)
        .await;
    let reply = client.reply_to("h1").await;
    assert_eq!(reply["result"], json!({}));
    // The server's: requests with s-numbered ids. One answered with an error (as a client
    // with no handler answers), the next with a result: the connection stays.
    let mut ids = Vec::new();
    for i in 0..4 {
        let beat = client.server_request().await;
        assert_eq!(beat["method"], "rpc.heartbeat");
        assert_eq!(beat["params"], json!({}));
        let id = beat["id"].as_str().unwrap().to_owned();
        if i % 2 == 0 {
            let error = json!({"jsonrpc":"2.0","id":id,"error":{"code":12,"message":"method \"rpc.heartbeat\" not registered"}});
            client.send_text(error.to_string()).await;
        } else {
            client.reply(&id, json!({})).await;
        }
        ids.push(id);
    }
    let numbers: Vec<u64> = ids.iter().map(|id| id[1..].parse().unwrap()).collect();
    assert!(numbers.windows(2).all(|w| w[1] == w[0] + 1), "{ids:?}");
    assert!(client.result("version", json!({})).await["version"].is_string());
}

#[tokio::test]
async fn a_client_that_answers_no_heartbeat_is_closed_with_1008() {
    let (_daemon, address, token) = daemon(&[
        "--ws-heartbeat-ms",
        "100",
        "--ws-heartbeat-timeout-ms",
        "200",
    ]);
    let mut client = WsClient::connect(address, &token).await;
    let started = Instant::now();
    let beat = client.server_request().await;
    assert_eq!(beat["method"], "rpc.heartbeat");
    let (code, reason) = close_of(client.closed().await);
    assert_eq!(code, 1008, "{reason}");
    assert!(reason.contains("rpc.heartbeat"), "{reason}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// A request of exactly `bytes` bytes: `rpc.heartbeat` with padding in its params.
fn padded_request(id: &str, bytes: usize) -> String {
    let head =
        format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"rpc.heartbeat","params":{{"pad":""#);
    let tail = r#""}}"#;
    format!(
        "{head}{}{tail}",
        "x".repeat(bytes - head.len() - tail.len())
    )
}

#[tokio::test]
async fn one_mib_is_accepted_and_one_byte_more_closes_with_1009() {
    let (_daemon, address, token) = daemon(&[]);
    let mut client = WsClient::connect(address, &token).await;
    let exactly = padded_request("big", 1 << 20);
    assert_eq!(exactly.len(), 1 << 20);
    client.send_text(exactly).await;
    assert_eq!(client.reply_to("big").await["result"], json!({}));
    client
        .send_text(padded_request("bigger", (1 << 20) + 1))
        .await;
    let (code, reason) = close_of(client.closed().await);
    assert_eq!(code, 1009, "{reason}");
    // A new connection works.
    let mut again = WsClient::connect(address, &token).await;
    assert_eq!(again.result("health", json!({})).await["status"], "ok");
}

#[tokio::test]
async fn a_binary_frame_closes_with_1003_and_invalid_utf8_with_1007() {
    let (_daemon, address, token) = daemon(&[]);
    let mut client = WsClient::connect(address, &token).await;
    client
        .ws
        .send(Message::binary(
            br#"{"jsonrpc":"2.0","id":"1","method":"health"}"#.to_vec(),
        ))
        .await
        .unwrap();
    let (code, reason) = close_of(client.closed().await);
    assert_eq!(code, 1003, "{reason}");
    let mut client = WsClient::connect(address, &token).await;
    let text = Frame::message(
        b"{\"x\":\"\xff\xfe\"}".to_vec(),
        OpCode::Data(Data::Text),
        true,
    );
    client.ws.send(Message::Frame(text)).await.unwrap();
    let (code, reason) = close_of(client.closed().await);
    assert_eq!(code, 1007, "{reason}");
}

#[tokio::test]
async fn handshakes_are_refused_with_a_status_and_a_reason_only() {
    let (daemon, address, token) = daemon(&["--ws-allowed-origin", "http://localhost:5173"]);
    let url = format!("ws://{address}/");
    let cases = [
        (
            ws::upgrade(&url, Some(&token), None, false),
            400,
            "holon-rpc",
        ),
        (ws::upgrade(&url, None, None, true), 401, "token"),
        (
            ws::upgrade(&url, Some("wrong-token-0123456789"), None, true),
            401,
            "token",
        ),
        (
            ws::upgrade(&url, Some(&token), Some("https://evil.example"), true),
            403,
            "Origin",
        ),
    ];
    for (request, status, reason) in cases {
        let (got, body) = refused(request).await;
        assert_eq!(got, status, "{body}");
        assert!(body.contains(reason), "{status}: {body}");
        assert!(!body.contains('{'), "a refusal carries no data: {body}");
    }
    // The allowed origin, and the token in the query as a browser must pass it.
    let request = ws::upgrade(&url, Some(&token), Some("http://localhost:5173"), true);
    let (ws, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    assert_eq!(
        WsClient::new(ws).result("health", json!({})).await["status"],
        "ok"
    );
    let request = ws::upgrade(&format!("{url}?token={token}"), None, None, true);
    let (ws, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    assert_eq!(
        WsClient::new(ws).result("health", json!({})).await["status"],
        "ok"
    );
    // The token is in a private file and never in the log.
    let meta = std::fs::metadata(daemon.dir.join("daemon.ws-token")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
        0o600
    );
    let log = daemon.log_text();
    assert!(log.contains("WebSocket handshake refused"), "{log}");
    assert!(!log.contains(&token), "the token is in the log");
}

/// What the daemon answers `request`, sent over raw TCP, before it closes the connection.
async fn raw_http(address: SocketAddr, request: &[u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(address).await.unwrap();
    tcp.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, tcp.read_to_end(&mut answer))
        .await
        .expect("the daemon closes the connection")
        .unwrap();
    String::from_utf8(answer).unwrap()
}

#[tokio::test]
async fn plain_http_gets_426_and_a_request_that_is_no_handshake_400() {
    let (daemon, address, token) = daemon(&[]);
    let plain = raw_http(
        address,
        format!("GET /?token={token} HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes(),
    )
    .await;
    assert!(
        plain.starts_with("HTTP/1.1 426 Upgrade Required\r\n"),
        "{plain}"
    );
    assert!(plain.contains("upgrade: websocket\r\n"), "{plain}");
    assert!(plain.ends_with("subprotocol holon-rpc\n"), "{plain}");
    let malformed: [&[u8]; 3] = [
        b"POST / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n",
        b"\x16\x03\x01 not http at all\r\n\r\n",
    ];
    for request in malformed {
        let answer = raw_http(address, request).await;
        assert!(
            answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{answer}"
        );
        assert!(answer.contains("not a WebSocket handshake"), "{answer}");
    }
    // The listener serves on.
    let mut client = WsClient::connect(address, &token).await;
    assert_eq!(client.result("health", json!({})).await["status"], "ok");
    drop(daemon);
}

#[tokio::test]
async fn connections_over_the_cap_are_refused_with_503_until_one_closes() {
    let (_daemon, address, token) = daemon(&["--ws-max-connections", "2"]);
    let mut first = WsClient::connect(address, &token).await;
    let mut second = WsClient::connect(address, &token).await;
    assert_eq!(first.result("health", json!({})).await["status"], "ok");
    let url = format!("ws://{address}/");
    let (status, body) = refused(ws::upgrade(&url, Some(&token), None, true)).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(second.result("health", json!({})).await["status"], "ok");
    first.ws.close(None).await.unwrap();
    drop(first);
    let mut third = None;
    for _ in 0..100 {
        let request = ws::upgrade(&url, Some(&token), None, true);
        if let Ok((ws, _)) = tokio_tungstenite::connect_async(request).await {
            third = Some(WsClient::new(ws));
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut third = third.expect("a place freed by the closed connection");
    assert_eq!(third.result("health", json!({})).await["status"], "ok");
}

#[tokio::test]
async fn events_arrive_as_server_requests_s1_s2_and_replies_are_matched() {
    let (daemon, address, token) = daemon(&[]);
    let session = finished_session(&daemon);
    let mut client = WsClient::connect(address, &token).await;
    let confirmed = client
        .result("Subscribe", json!({"event_types": ["new_approval"]}))
        .await;
    assert!(confirmed["subscription_id"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    for i in 0..3 {
        create_approval(&daemon, &session, json!({"seq": i}));
    }
    for i in 0..3 {
        let event = client.server_request().await;
        assert_eq!(event["id"], format!("s{}", i + 1), "{event}");
        assert_eq!(event["method"], "event");
        assert_eq!(event["params"]["event"]["type"], "new_approval");
        assert_eq!(
            event["params"]["event"]["data"]["approval"]["function_args"]["seq"],
            i
        );
        client.reply(event["id"].as_str().unwrap(), json!({})).await;
    }
    // Requests keep working on the subscribed connection.
    assert_eq!(client.result("health", json!({})).await["status"], "ok");
    // Replies to no pending request are ignored and logged by kind.
    client.reply("s1", json!({})).await;
    client.reply("s999", json!({})).await;
    client.reply("h1", json!({})).await;
    assert_eq!(client.result("health", json!({})).await["status"], "ok");
    let log = wait_for(WAIT, || {
        let log = daemon.log_text();
        (log.matches("unknown_response_id").count() == 2).then_some(log)
    })
    .unwrap_or_else(|| panic!("no unknown replies logged:\n{}", daemon.log_text()));
    assert_eq!(log.matches("duplicate_response_id").count(), 1, "{log}");
    // The three matched replies were not among them.
    assert_eq!(
        log.matches("a reply to no pending request").count(),
        3,
        "{log}"
    );
}

#[tokio::test]
async fn beyond_the_pending_cap_events_are_dropped_then_counted_by_a_lagged_event() {
    let (daemon, address, token) = daemon(&["--ws-max-pending", "2"]);
    let session = finished_session(&daemon);
    let mut client = WsClient::connect(address, &token).await;
    client
        .result("Subscribe", json!({"event_types": ["new_approval"]}))
        .await;
    for i in 0..5 {
        create_approval(&daemon, &session, json!({"seq": i}));
    }
    let (s1, s2) = (client.server_request().await, client.server_request().await);
    assert_eq!(
        (s1["id"].as_str(), s2["id"].as_str()),
        (Some("s1"), Some("s2"))
    );
    // Three were dropped: nothing more comes while both wait.
    let quiet = tokio::time::timeout(Duration::from_millis(300), client.server_request()).await;
    assert!(quiet.is_err(), "an event beyond the cap: {quiet:?}");
    client.reply("s1", json!({})).await;
    client.reply("s2", json!({})).await;
    // Answered in order, so the replies were taken before this.
    client.result("version", json!({})).await;
    create_approval(&daemon, &session, json!({"seq": 5}));
    let lagged = client.server_request().await;
    assert_eq!(lagged["id"], "s3");
    assert_eq!(lagged["params"]["event"]["type"], "lagged");
    assert_eq!(lagged["params"]["event"]["data"]["missed"], 3);
    let next = client.server_request().await;
    assert_eq!(next["id"], "s4");
    assert_eq!(
        next["params"]["event"]["data"]["approval"]["function_args"]["seq"],
        5
    );
}

#[tokio::test]
async fn an_unanswered_request_is_forgotten_as_stale_and_a_late_reply_is_logged_so() {
    let (daemon, address, token) = daemon(&["--ws-max-pending", "1", "--ws-stale-ms", "300"]);
    let session = finished_session(&daemon);
    let mut client = WsClient::connect(address, &token).await;
    client
        .result("Subscribe", json!({"event_types": ["new_approval"]}))
        .await;
    create_approval(&daemon, &session, json!({"seq": 0}));
    assert_eq!(client.server_request().await["id"], "s1");
    tokio::time::sleep(Duration::from_millis(400)).await;
    // s1 is stale by now: its place is free again, nothing was dropped.
    create_approval(&daemon, &session, json!({"seq": 1}));
    let next = client.server_request().await;
    assert_eq!(next["id"], "s2");
    assert_eq!(
        next["params"]["event"]["data"]["approval"]["function_args"]["seq"],
        1
    );
    client.reply("s1", json!({})).await;
    client.result("version", json!({})).await;
    let logged = wait_for(WAIT, || {
        daemon
            .log_text()
            .contains("stale_response_id")
            .then_some(())
    });
    assert!(logged.is_some(), "{}", daemon.log_text());
}

#[tokio::test]
async fn a_session_launched_over_websocket_is_the_one_the_unix_socket_sees() {
    let (daemon, address, token) = daemon(&[]);
    let mut client = WsClient::connect(address, &token).await;
    client
        .result(
            "Subscribe",
            json!({"event_types": ["session_status_changed"]}),
        )
        .await;
    let launched = client
        .result(
            "launchSession",
            json!({"query": "hello", "working_dir": daemon.dir}),
        )
        .await;
    let id = launched["session_id"].as_str().unwrap().to_owned();
    let ended = daemon.wait_ended(&id);
    assert_eq!(ended.status.as_str(), "completed");
    // Its status changes reached the WebSocket subscriber, as requests it answers.
    loop {
        let event = client.server_request().await;
        let data = &event["params"]["event"]["data"];
        client.reply(event["id"].as_str().unwrap(), json!({})).await;
        if data["session_id"] == id.as_str() && data["new_status"] == "completed" {
            break;
        }
    }
    let listed = daemon.call("listSessions", json!({}));
    let sessions = listed["result"]["sessions"].as_array().unwrap();
    assert!(sessions.iter().any(|s| s["id"] == id.as_str()), "{listed}");
    let state = client
        .result("getSessionState", json!({"session_id": id}))
        .await;
    assert_eq!(state["session"]["status"], "completed");
    // The token reached no child: not in the arguments, environment and stdin that
    // fake-claude recorded.
    let recorded = std::fs::read_to_string(daemon.dir.join("fake-log/invocations.jsonl"))
        .expect("fake-claude's record");
    assert!(recorded.contains("--input-format"), "{recorded}");
    assert!(!recorded.contains(&token), "the token reached claude");
}

#[tokio::test]
async fn an_oversize_event_or_string_goes_out_cut_and_a_reply_of_many_is_error_8() {
    let (daemon, address, token) = daemon(&["--max-message-size", "4000000"]);
    let session = finished_session(&daemon);
    let mut client = WsClient::connect(address, &token).await;
    client
        .result("Subscribe", json!({"event_types": ["new_approval"]}))
        .await;
    let big = "b".repeat(1_500_000);
    create_approval(&daemon, &session, json!({"text": big, "seq": 0}));
    let event = client.server_request().await;
    let text = event["params"]["event"]["data"]["approval"]["function_args"]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.starts_with("bbbb") && text.len() < 1 << 20,
        "{}",
        text.len()
    );
    assert!(
        text.ends_with("the daemon stores it whole]"),
        "{}",
        &text[text.len() - 100..]
    );
    assert_eq!(
        event["params"]["event"]["data"]["approval"]["function_args"]["seq"],
        0
    );
    client.reply(event["id"].as_str().unwrap(), json!({})).await;
    // Read back, its string could go whole in no message: it is cut the same way.
    let reply = client
        .result("fetchApprovals", json!({"session_id": session}))
        .await;
    let text = reply["approvals"][0]["function_args"]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.starts_with("bbbb") && text.ends_with("whole]"),
        "{}",
        text.len()
    );
    // Two more, each small enough to go whole: too large together, error 8, telling how to
    // ask for less.
    let other = finished_session(&daemon);
    for seq in 1..=2 {
        create_approval(
            &daemon,
            &other,
            json!({"text": "c".repeat(600_000), "seq": seq}),
        );
        let event = client.server_request().await;
        client.reply(event["id"].as_str().unwrap(), json!({})).await;
    }
    let reply = client
        .call("fetchApprovals", json!({"session_id": other}))
        .await;
    assert_eq!(
        reply["error"]["code"],
        8,
        "{}",
        &reply.to_string()[..200.min(reply.to_string().len())]
    );
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("after_sequence") && message.contains("limit"),
        "{message}"
    );
    assert_eq!(client.result("health", json!({})).await["status"], "ok");
}

#[tokio::test]
async fn shutdown_closes_websocket_connections_with_1001() {
    let (mut daemon, address, token) = daemon(&[]);
    let mut client = WsClient::connect(address, &token).await;
    client.result("health", json!({})).await;
    daemon.signal(nix::sys::signal::Signal::SIGTERM);
    let (code, reason) = close_of(client.closed().await);
    assert_eq!(code, 1001, "{reason}");
    let (status, _) = daemon.wait_exit(WAIT).expect("the daemon exits");
    assert!(status.success(), "{status}");
}

#[test]
fn a_non_loopback_address_needs_allow_remote_and_tls() {
    TestDaemon::assert_refuses(&[
        (vec!["--ws", "0.0.0.0:0"], "--ws-allow-remote"),
        (vec!["--ws", "0.0.0.0:0", "--ws-allow-remote"], "needs TLS"),
        (vec!["--ws", "localhost"], "not an address and port"),
        (
            vec!["--ws", "127.0.0.1:0", "--ws-tls-cert", "/nonexistent"],
            "go together",
        ),
    ]);
}

/// A self-signed certificate for 127.0.0.1 and localhost, written as PEM files in `dir`.
fn certificate(dir: &Path) -> (PathBuf, PathBuf, rcgen::CertifiedKey<rcgen::KeyPair>) {
    let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    let certified = rcgen::generate_simple_self_signed(names).unwrap();
    let (cert, key) = (dir.join("ws-cert.pem"), dir.join("ws-key.pem"));
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    (cert, key, certified)
}

#[tokio::test]
async fn wss_serves_over_tls_with_the_token() {
    let certs = tempfile::tempdir().unwrap();
    let (cert, key, certified) = certificate(certs.path());
    let (_daemon, address, token) = daemon(&[
        "--ws-tls-cert",
        cert.to_str().unwrap(),
        "--ws-tls-key",
        key.to_str().unwrap(),
    ]);
    let mut roots = tokio_rustls::rustls::RootCertStore::empty();
    roots.add(certified.cert.der().clone()).unwrap();
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = tokio_rustls::rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(address).await.unwrap();
    let name = tokio_rustls::rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let tls = connector
        .connect(name, tcp)
        .await
        .expect("the TLS handshake");
    let request = ws::upgrade(
        &format!("wss://localhost:{}/", address.port()),
        Some(&token),
        None,
        true,
    );
    let (stream, response) = tokio_tungstenite::client_async(request, tls)
        .await
        .expect("the WebSocket handshake over TLS");
    assert_eq!(
        response.headers()["sec-websocket-protocol"],
        ws::SUBPROTOCOL
    );
    let mut client = WsClient::new(stream);
    assert_eq!(client.result("health", json!({})).await["status"], "ok");
    client
        .send_text(r#"{"jsonrpc":"2.0","id":"h1","method":"rpc.heartbeat","params":{}}"#)
        .await;
    assert_eq!(client.reply_to("h1").await["result"], json!({}));
    // Plain ws:// to the TLS port gets no WebSocket.
    let plain = ws::upgrade(&format!("ws://{address}/"), Some(&token), None, true);
    assert!(tokio_tungstenite::connect_async(plain).await.is_err());
}

/// The pinned version of Node's `ws` package.
const NODE_WS_VERSION: &str = "8.23.0";

/// The `ws` package, installed with npm once into `<CARGO_TARGET_TMPDIR>/node-ws-<version>`
/// and reused afterwards; its directory.
fn node_ws() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("node-ws-{NODE_WS_VERSION}"));
        let installed = dir.join("node_modules/ws/package.json");
        let version = |path: &Path| -> Option<String> {
            let text = std::fs::read_to_string(path).ok()?;
            Some(
                serde_json::from_str::<Value>(&text).ok()?["version"]
                    .as_str()?
                    .to_owned(),
            )
        };
        if version(&installed).as_deref() == Some(NODE_WS_VERSION) {
            return dir;
        }
        std::fs::create_dir_all(&dir).unwrap();
        // Without a package.json here npm would install into the nearest ancestor with one.
        std::fs::write(
            dir.join("package.json"),
            r#"{"name":"ws-under-test","private":true}"#,
        )
        .unwrap();
        let package = format!("ws@{NODE_WS_VERSION}");
        let output = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", &package])
            .current_dir(&dir)
            .output()
            .unwrap_or_else(|e| {
                panic!("this test installs {package} with npm, which cannot run: {e}")
            });
        assert!(
            output.status.success(),
            "npm install {package} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(version(&installed).as_deref(), Some(NODE_WS_VERSION));
        dir
    })
}

/// Runs `tests/node/holon_rpc_client.mjs` against `url` with `origin`, launching its
/// session in `working_dir`; its JSON report.
fn run_node_client(url: &str, origin: &str, working_dir: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("node/holon_rpc_client.mjs");
    let output = Command::new("node")
        .arg(&script)
        .arg(url)
        .arg(origin)
        .arg(working_dir)
        .env("WS_PACKAGE_DIR", node_ws())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "the Node client printed no report ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn a_browser_style_node_client_with_an_allowed_origin_is_served_and_another_origin_refused() {
    let (daemon, address, token) = daemon(&["--ws-allowed-origin", "http://localhost:5173"]);
    // As a browser page must: the token in the query, the page's Origin in the handshake.
    let url = format!("ws://{address}/?token={token}");
    let report = run_node_client(&url, "http://localhost:5173", &daemon.dir);
    assert_eq!(report["protocol"], "holon-rpc", "{report}");
    assert_eq!(report["health"]["status"], "ok", "{report}");
    assert_eq!(report["heartbeat"], json!({}), "{report}");
    assert_eq!(report["unknown"]["code"], -32601, "{report}");
    assert_eq!(report["event"]["id"], "s1", "{report}");
    assert_eq!(
        report["event"]["params"]["event"]["type"], "session_status_changed",
        "{report}"
    );
    assert!(
        report["closed"].is_null(),
        "HolonClient-style checks failed: {report}"
    );
    let refused = run_node_client(&url, "https://evil.example", &daemon.dir);
    assert_eq!(refused["refused"]["status"], 403, "{refused}");
    assert!(
        refused["refused"]["body"]
            .as_str()
            .unwrap_or_default()
            .contains("Origin"),
        "{refused}"
    );
}
