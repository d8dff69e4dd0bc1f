//! NDJSON framing and dispatch: arbitrary bytes sent on a connection of a real daemon (its
//! method table, a SQLite store in a temporary directory) never panic or stall it, and every
//! line it writes back is a well-formed JSON-RPC 2.0 response.
#![no_main]

mod common;

use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use common::{DAEMON, ROUTERS, RUNTIME};
use hld::rpc;
use hld::transport::ndjson::NdjsonConn;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

fuzz_target!(|data: &[u8]| {
    let daemon = Arc::clone(&DAEMON.1);
    RUNTIME.block_on(async move {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let conn = NdjsonConn::new(
            server,
            BytesMut::new(),
            daemon.config.max_message_size,
            daemon.config.heartbeat_interval,
        );
        let served = tokio::spawn(async move {
            rpc::serve(conn, &ROUTERS.0, daemon, CancellationToken::new()).await
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
        for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let reply: Value = serde_json::from_slice(line).expect("a JSON reply");
            assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
            assert!(
                reply.get("result").is_some() != reply.get("error").is_some(),
                "{reply}"
            );
            assert!(reply.get("id").is_some(), "{reply}");
        }
    });
});
