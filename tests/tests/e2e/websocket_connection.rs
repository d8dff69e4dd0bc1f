//! What one WebSocket connection does to itself alone (`hld --ws`, spec/002), over the real
//! daemon: `shutdown` ends that connection, as over stdio, never the daemon; a `lagged` event
//! is sent as soon as a reply makes room, without waiting for a later event; and a message
//! without an id, which spec/002 never answers, closes the connection naming -32600.

use hld_client::protocol::{Health, NoParams};
use hld_e2e::ws::{daemon, WsClient};
use hld_e2e::{launch_params, wait_for, WAIT};
use serde_json::json;

/// The close frame's code and reason.
fn close_of(frame: Option<tokio_tungstenite::tungstenite::protocol::CloseFrame>) -> (u16, String) {
    let frame = frame.expect("a close frame");
    (u16::from(frame.code), frame.reason.to_string())
}

#[tokio::test]
async fn shutdown_over_websocket_ends_that_connection_and_the_daemon_serves_on() {
    let (mut daemon, address, token) = daemon(&[]);
    let mut leaving = WsClient::connect(address, &token).await;
    let mut staying = WsClient::connect(address, &token).await;
    staying.result("Subscribe", json!({})).await;
    let reply = leaving.result("shutdown", json!({})).await;
    assert_eq!(reply["message"], "Shutting down gracefully");
    let (code, reason) = close_of(leaving.closed().await);
    assert_eq!(code, 1000, "{reason}");
    // The other client, its subscription, the Unix socket and new connections are served.
    assert_eq!(staying.result("health", json!({})).await["status"], "ok");
    let session = daemon.launch(launch_params("hello", &daemon.dir));
    let event = staying.next_of("event").await;
    assert_eq!(
        event["params"]["event"]["data"]["session_id"],
        session.as_str()
    );
    assert_eq!(daemon.request::<Health>(NoParams {}).status, "ok");
    let mut again = WsClient::connect(address, &token).await;
    assert!(again.result("version", json!({})).await["version"].is_string());
    assert!(
        daemon.wait_exit(std::time::Duration::ZERO).is_none(),
        "the daemon exited"
    );
}

#[tokio::test]
async fn a_lagged_event_comes_as_soon_as_a_reply_makes_room() {
    let (daemon, address, token) = daemon(&["--ws-max-pending", "2"]);
    let session = daemon.launch(launch_params("hello", &daemon.dir));
    daemon.wait_ended(&session);
    let mut client = WsClient::connect(address, &token).await;
    client
        .result("Subscribe", json!({"event_types": ["new_approval"]}))
        .await;
    // Five approvals: two of their events wait for an answer, and the daemon says when it has
    // dropped the other three.
    for i in 0..5 {
        let params = json!({"session_id": session, "tool_name": "Bench", "tool_input": {"seq": i}});
        client.result("createApproval", params).await;
    }
    let (s1, s2) = (client.server_request().await, client.server_request().await);
    assert_eq!(
        (s1["id"].as_str(), s2["id"].as_str()),
        (Some("s1"), Some("s2"))
    );
    let dropped = wait_for(WAIT, || {
        daemon.log_text().contains("dropped=3").then_some(())
    });
    assert!(dropped.is_some(), "{}", daemon.log_text());
    // No event is published from here on: the reply makes room, and the count comes at once.
    client.reply("s1", json!({})).await;
    let lagged = client.server_request().await;
    assert_eq!(lagged["id"], "s3", "{lagged}");
    assert_eq!(lagged["params"]["event"]["type"], "lagged", "{lagged}");
    assert_eq!(lagged["params"]["event"]["data"]["missed"], 3, "{lagged}");
}

#[tokio::test]
async fn an_invalid_message_without_an_id_closes_the_connection_naming_32600() {
    let (_daemon, address, token) = daemon(&[]);
    // spec/002: an id is required, and HolonClient closes the socket on a reply to `null`.
    for text in [
        "{}",
        r#"{"method":"version"}"#,
        r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#,
    ] {
        let mut client = WsClient::connect(address, &token).await;
        client.send_text(text).await;
        let (code, reason) = close_of(client.closed().await);
        assert_eq!(code, 1002, "{text}: {reason}");
        assert!(reason.starts_with("-32600"), "{text}: {reason}");
    }
}
