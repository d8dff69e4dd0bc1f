//! Content-Length framing (`hld --stdio`'s, spec/004) and dispatch: arbitrary bytes sent on
//! a connection of a real daemon never panic or stall it, and what it writes back is only
//! frames, each a well-formed JSON-RPC 2.0 response or `event` notification.
#![no_main]

mod common;

use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use common::{DAEMON, ROUTERS, RUNTIME};
use hld::rpc;
use hld::transport::content_length::{split_frames, ContentLengthConn};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

fuzz_target!(|data: &[u8]| {
    let daemon = Arc::clone(&DAEMON.1);
    RUNTIME.block_on(async move {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let conn = ContentLengthConn::new(server, 65536, Duration::from_secs(3600), BytesMut::new());
        let served = tokio::spawn(async move {
            rpc::serve(conn, &ROUTERS.1, daemon, CancellationToken::new()).await
        });
        let (mut read, mut write) = tokio::io::split(client);
        let send = async {
            let _ = write.write_all(data).await;
            let _ = write.shutdown().await;
        };
        let mut out = Vec::new();
        let exchange = async { tokio::join!(send, read.read_to_end(&mut out)) };
        let ((), read) = tokio::time::timeout(Duration::from_secs(10), exchange)
            .await
            .expect("the connection stalled");
        read.expect("the daemon's replies");
        served.await.expect("the connection's task panicked");
        let frames = split_frames(&out).expect("only frames");
        for body in frames {
            let message: Value = serde_json::from_slice(body).expect("a JSON body");
            assert_eq!(message["jsonrpc"], "2.0", "{message}");
            let reply = message.get("result").is_some() != message.get("error").is_some()
                && message.get("id").is_some();
            let event = message["method"] == "event" && message.get("id").is_none();
            assert!(reply || event, "{message}");
        }
    });
});
