//! The WebSocket listener under a flood, on loopback and bounded in count and time: a flood
//! of connections that never send a handshake does not lock real clients out (connections
//! still in their handshake have a pool of their own, whose oldest is closed to make room),
//! and refusals and evictions are logged at most once a second, with their count.

use std::collections::VecDeque;
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use hld_e2e::ws::{self, daemon, WsClient};
use hld_e2e::{wait_for, TestDaemon, WAIT};
use serde_json::json;

/// Silent TCP connections opened as fast as they go until dropped (at most `LIMIT`), the
/// last [`HELD`] of them kept open.
struct Flood {
    stop: Arc<AtomicBool>,
    opened: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The most connections a flood opens.
const LIMIT: usize = 20_000;
/// The connections a flood keeps open at once.
const HELD: usize = 300;

impl Flood {
    fn start(address: SocketAddr) -> Flood {
        let stop = Arc::new(AtomicBool::new(false));
        let opened = Arc::new(AtomicUsize::new(0));
        let thread = std::thread::spawn({
            let (stop, opened) = (Arc::clone(&stop), Arc::clone(&opened));
            move || {
                let mut held = VecDeque::new();
                while !stop.load(Ordering::Relaxed) && opened.load(Ordering::Relaxed) < LIMIT {
                    if let Ok(conn) = TcpStream::connect(address) {
                        held.push_back(conn);
                        if held.len() > HELD {
                            held.pop_front();
                        }
                        opened.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        });
        Flood {
            stop,
            opened,
            thread: Some(thread),
        }
    }

    fn opened(&self) -> usize {
        self.opened.load(Ordering::Relaxed)
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// How many lines of the log contain `text`.
fn lines_with(daemon: &TestDaemon, text: &str) -> usize {
    daemon
        .log_text()
        .lines()
        .filter(|l| l.contains(text))
        .count()
}

#[tokio::test]
async fn silent_connections_do_not_lock_an_authenticated_client_out() {
    let (daemon, address, token) =
        daemon(&["--ws-max-connections", "4", "--ws-max-handshakes", "32"]);
    let started = Instant::now();
    let flood = Flood::start(address);
    // Many more silent connections than there are places of either kind.
    assert!(
        wait_for(WAIT, || (flood.opened() >= 500).then_some(())).is_some(),
        "the flood did not start"
    );
    // A client is closed only if more new connections than the pool holds come before it
    // speaks (its process starved of CPU, say): then, as a real client does, it tries again,
    // and gets in.
    for _ in 0..5 {
        let mut closed = Vec::new();
        let ws = loop {
            let request = ws::upgrade(&format!("ws://{address}/"), Some(&token), None, true);
            let connecting = tokio_tungstenite::connect_async(request);
            match tokio::time::timeout(WAIT, connecting).await {
                Ok(Ok((ws, _))) => break ws,
                Ok(Err(e)) if closed.len() < 10 => closed.push(e.to_string()),
                Ok(Err(e)) => panic!("locked out by the flood: {e}, after {closed:?}"),
                Err(_) => panic!("no handshake within the wait"),
            }
        };
        let mut client = WsClient::new(ws);
        assert_eq!(client.result("health", json!({})).await["status"], "ok");
    }
    let opened = flood.opened();
    drop(flood);
    // The evictions were many, their lines few: one a second at most.
    let seconds = started.elapsed().as_secs() as usize + 1;
    let evicted = lines_with(&daemon, "closed the oldest connection still in its");
    assert!(
        (1..=seconds).contains(&evicted),
        "{evicted} eviction lines in {seconds} s for {opened} connections"
    );
}

#[tokio::test]
async fn refused_handshakes_are_logged_once_a_second_with_their_count() {
    let (daemon, address, _) = daemon(&[]);
    let started = Instant::now();
    let url = format!("ws://{address}/");
    for _ in 0..200 {
        let request = ws::upgrade(&url, Some("a-wrong-token-0123456789"), None, true);
        let refused = tokio_tungstenite::connect_async(request).await;
        assert!(refused.is_err(), "a wrong token was accepted");
    }
    let seconds = started.elapsed().as_secs() as usize + 1;
    let lines = lines_with(&daemon, "WebSocket handshake refused");
    assert!(
        (1..=seconds).contains(&lines),
        "{lines} lines for 200 refusals in {seconds} s"
    );
    assert!(
        daemon.log_text().contains("count="),
        "{}",
        daemon.log_text()
    );
}
