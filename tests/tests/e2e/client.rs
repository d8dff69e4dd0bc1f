//! The typed client against the real daemon: concurrent callers on one connection, typed
//! errors, timeouts and disconnects.

use std::time::Duration;

use hld_client::{protocol::ErrorCode, Client, Error};
use hld_e2e::TestDaemon;

#[tokio::test]
async fn many_tasks_share_one_client_and_get_their_own_replies() {
    let d = TestDaemon::start();
    let client = d.client().await;
    let mut tasks = Vec::new();
    for i in 0..50 {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..20 {
                if i % 2 == 0 {
                    let v = client.version().await.unwrap();
                    assert_eq!(v.version, env!("CARGO_PKG_VERSION"));
                } else {
                    let methods = client.list_methods().await.unwrap();
                    assert!(methods.iter().any(|m| m.name == "health"));
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

#[tokio::test]
async fn a_daemon_error_is_a_typed_rpc_error() {
    let d = TestDaemon::start();
    let client = d.client().await;
    match client.set_log_level("shouting").await {
        Err(Error::Rpc(e)) => {
            assert_eq!(ErrorCode::from_code(e.code), Some(ErrorCode::InvalidParams));
            assert_eq!(e.data.unwrap()["param"], "level");
        }
        other => panic!("expected an RPC error, got {other:?}"),
    }
    // The connection is still usable.
    assert_eq!(client.health().await.unwrap().status, "ok");
}

#[tokio::test]
async fn a_call_without_a_reply_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("silent.sock");
    // A server that accepts and never answers: it holds the connection until it is aborted.
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    let server = tokio::spawn(async move {
        let (_conn, _) = listener.accept().await.unwrap();
        std::future::pending::<()>().await;
    });
    let client = Client::connect_with_timeout(&path, Duration::from_millis(200))
        .await
        .unwrap();
    let started = std::time::Instant::now();
    assert!(matches!(client.health().await, Err(Error::Timeout)));
    assert!(started.elapsed() < Duration::from_secs(2));
    server.abort();
}

#[tokio::test]
async fn pending_calls_fail_with_disconnected_when_the_daemon_goes_away() {
    let mut d = TestDaemon::start();
    let client = d.client().await;
    client.shutdown().await.unwrap();
    d.wait_exit(Duration::from_secs(3)).expect("daemon exits");
    match client.health().await {
        Err(Error::Disconnected) | Err(Error::Io(_)) => {}
        other => panic!("expected a disconnect, got {other:?}"),
    }
}

#[tokio::test]
async fn connecting_to_a_missing_socket_says_the_daemon_is_not_running_there() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("none.sock");
    let err = Client::connect(&path).await.unwrap_err();
    assert!(
        matches!(&err, Error::DaemonNotRunning { socket } if socket == &path),
        "{err:?}"
    );
}
