//! The WebSocket transport (holon-rpc, spec/002): the envelope check and dispatch. The input
//! is a series of frames a client sends on a connection of a real daemon (`Connection` in
//! `Holon`, and `rpc::serve` with the guests' method table): each frame is a kind
//! byte (text, text made valid UTF-8, binary, ping), two length bytes and its payload. The
//! daemon must not panic or stall, and must write back only text frames that are spec/002
//! envelopes and, at most, a close frame with one of the transport's codes.
#![no_main]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{DAEMON, ROUTERS, RUNTIME};
use futures::{SinkExt, StreamExt};
use hld::rpc;
use hld::transport::websocket::holon::Holon;
use hld::transport::websocket::{self, Connection};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;
use tokio_util::sync::CancellationToken;

/// The client's messages in `data`.
fn messages(mut data: &[u8]) -> Vec<Message> {
    let mut out = Vec::new();
    while let [kind, a, b, rest @ ..] = data {
        let length = usize::from(u16::from_le_bytes([*a, *b])).min(rest.len());
        let (payload, next) = rest.split_at(length);
        data = next;
        out.push(match kind % 4 {
            0 => Message::Frame(Frame::message(payload.to_vec(), OpCode::Data(Data::Text), true)),
            1 => Message::text(String::from_utf8_lossy(payload).into_owned()),
            2 => Message::binary(payload.to_vec()),
            _ => Message::Ping(payload.to_vec().into()),
        });
    }
    out
}

/// Checks one message the daemon sent, as HolonClient would.
fn check(message: &Value) {
    let object = message.as_object().expect("an object");
    for key in object.keys() {
        assert!(
            ["jsonrpc", "id", "method", "params", "result", "error"].contains(&key.as_str()),
            "{message}"
        );
    }
    assert_eq!(message["jsonrpc"], "2.0", "{message}");
    let id = message["id"].as_str().expect("a string id");
    assert!(!id.is_empty(), "{message}");
    if message.get("method").is_some() {
        assert!(id.starts_with('s') && message["params"].is_object(), "{message}");
        assert!(message.get("result").is_none() && message.get("error").is_none());
    } else {
        assert!(message.get("result").is_some() != message.get("error").is_some(), "{message}");
        if let Some(error) = message.get("error") {
            assert!(error["code"].is_i64() && error["message"].is_string(), "{message}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let daemon = Arc::clone(&DAEMON.1);
    let messages = messages(data);
    RUNTIME.block_on(async move {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let config = daemon.config.websocket.clone().expect("--ws");
        let served = tokio::spawn(async move {
            let ws = WebSocketStream::from_raw_socket(server, Role::Server, Some(websocket::ws_config())).await;
            let mut conn = Holon::new(Connection::new(ws), &config);
            let ended = rpc::serve(&mut conn, &ROUTERS.1, daemon, CancellationToken::new()).await;
            let (conn, violation) = conn.into_parts();
            conn.finish(ended, violation).await;
        });
        let ws = WebSocketStream::from_raw_socket(client, Role::Client, None).await;
        // Each half is dropped when its side is done, so that the daemon sees the end.
        let (mut write, mut read) = ws.split();
        let send = async move {
            for message in messages {
                if write.send(message).await.is_err() {
                    return;
                }
            }
            let _ = write.close().await;
        };
        let receive = async move {
            let mut received = Vec::new();
            while let Some(Ok(message)) = read.next().await {
                received.push(message);
            }
            received
        };
        let exchange = async { tokio::join!(send, receive) };
        let ((), received) = tokio::time::timeout(Duration::from_secs(10), exchange)
            .await
            .expect("the connection stalled");
        served.await.expect("the connection's task panicked");
        for message in received {
            match message {
                Message::Text(text) => check(&serde_json::from_str(&text).expect("JSON")),
                Message::Close(Some(frame)) => assert!(
                    [1000, 1001, 1002, 1003, 1007, 1008, 1009].contains(&u16::from(frame.code)),
                    "{frame:?}"
                ),
                Message::Close(None) | Message::Pong(_) => {}
                other => panic!("the daemon sent {other:?}"),
            }
        }
    });
});
