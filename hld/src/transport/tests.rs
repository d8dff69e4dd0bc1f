//! `rpc::serve` over Content-Length framing, on in-memory duplex pairs with a small method
//! table: hostile input never panics or stalls, every reply is well formed, and the
//! connection stays usable (NDJSON's is the `ndjson_dispatch` fuzz target).

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use hld_client::protocol as p;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio_util::sync::CancellationToken;

use super::content_length::{split_frames, ContentLengthConn};
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
