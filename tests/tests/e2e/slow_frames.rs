//! Messages left incomplete. A Content-Length message left incomplete for the read timeout is
//! discarded however slowly its bytes trickle in: the timeout runs from the message's first
//! byte, the bytes read to pick the framing included, and is not moved by each byte that
//! arrives. What many connections hold half-read stays within the daemon's buffer budget,
//! with either framing: a message the budget cannot hold now is refused with code 8; and a
//! long message's buffer is let go once it is read.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use hld_e2e::frames::read_frame;
use hld_e2e::{proc_status, DaemonOptions, TestDaemon, WAIT};

/// The daemon's read timeout in these tests.
const TIMEOUT_MS: u64 = 600;
/// The pause between two bytes: well under the timeout, so that only a deadline that runs
/// from the first byte can expire.
const DRIP: Duration = Duration::from_millis(50);

/// A `version` request, framed.
fn request() -> Vec<u8> {
    let body = r#"{"jsonrpc":"2.0","method":"version","params":{},"id":1}"#;
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// Asserts that the daemon's `field` of its status (`VmRSS`, or `VmHWM`: its peak) is less than
/// `mib` MiB over `before` (KiB, as the status says).
#[track_caller]
fn grew_less(d: &TestDaemon, field: &str, before: u64, mib: u64) {
    let now = proc_status(d.pid(), field).unwrap();
    assert!(
        now < before + mib * 1024,
        "{field} {} MiB, {} MiB before",
        now / 1024,
        before / 1024
    );
}

/// Writes `bytes` one at a time, [`DRIP`] apart; stops early if the daemon closed.
fn drip(conn: &mut UnixStream, bytes: &[u8]) {
    for byte in bytes {
        if conn.write_all(&[*byte]).is_err() {
            return;
        }
        std::thread::sleep(DRIP);
    }
}

fn daemon() -> TestDaemon {
    TestDaemon::start_with(
        DaemonOptions::default()
            .arg("--frame-timeout-ms")
            .arg(&TIMEOUT_MS.to_string()),
    )
}

#[test]
fn a_message_sent_a_byte_at_a_time_is_discarded_after_the_timeout() {
    let d = daemon();
    let mut conn = UnixStream::connect(&d.socket).unwrap();
    conn.set_read_timeout(Some(WAIT)).unwrap();
    // The framing is chosen at once; then the rest comes slowly (2 s in all).
    let message = request();
    let (header, rest) = message.split_at("Content-Length:".len());
    conn.write_all(header).unwrap();
    drip(&mut conn, rest);
    // Whatever followed the discard is answered as the garbage it is, never as `version`.
    conn.write_all(b"\r\n\r\n").unwrap();
    let reply = read_frame(&mut conn).unwrap().expect("a reply");
    assert!(reply.get("result").is_none(), "served: {reply}");
    assert!(
        d.log_text().contains("an incomplete message timed out"),
        "{}",
        d.log_text()
    );
}

#[test]
fn the_bytes_that_pick_the_framing_count_toward_the_timeout() {
    let d = daemon();
    let mut conn = UnixStream::connect(&d.socket).unwrap();
    conn.set_read_timeout(Some(WAIT)).unwrap();
    // "Content-Length:" alone takes 750 ms to come: the connection is closed before it has.
    drip(&mut conn, &request());
    let mut rest = Vec::new();
    let _ = conn.read_to_end(&mut rest);
    assert!(
        rest.is_empty(),
        "served: {}",
        String::from_utf8_lossy(&rest)
    );
    assert!(
        d.log_text().contains("did not show its framing in time"),
        "{}",
        d.log_text()
    );
}

#[test]
fn partial_payloads_held_by_many_connections_stay_within_the_budget() {
    let d = TestDaemon::start_with(
        DaemonOptions::default()
            .arg("--max-buffered")
            .arg(&(32 << 20).to_string()),
    );
    let before = proc_status(d.pid(), "VmRSS").unwrap();
    // Forty connections each announce a 9 MB payload and send all of it but its last byte:
    // 360 MB half-read. The budget holds a few; the others are refused (code 8) and their
    // bytes discarded as they come.
    let payload = vec![b' '; 9_000_000 - 1];
    let connections: Vec<UnixStream> = (0..40)
        .map(|_| {
            let mut conn = UnixStream::connect(&d.socket).unwrap();
            conn.write_all(b"Content-Length: 9000000\r\n\r\n").unwrap();
            conn.write_all(&payload).unwrap();
            conn
        })
        .collect();
    let mut refused = 0;
    for mut conn in &connections {
        conn.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        if let Ok(Some(reply)) = read_frame(&mut conn) {
            assert_eq!(reply["error"]["code"], 8, "{reply}");
            refused += 1;
        }
    }
    assert!((30..40).contains(&refused), "{refused} refused");
    grew_less(&d, "VmHWM", before, 64);
    drop(connections);
}

#[test]
fn long_ndjson_lines_held_by_many_connections_stay_within_the_budget() {
    let d = TestDaemon::start_with(
        DaemonOptions::default()
            .arg("--max-buffered")
            .arg(&(8 << 20).to_string()),
    );
    let before = proc_status(d.pid(), "VmRSS").unwrap();
    // Forty connections each send 900 kB of a line (the limit is 1 MiB) and never end it:
    // 36 MB half-read. The budget holds a few; the others are refused (code 8, `id: null`)
    // and the rest of their line discarded as it comes.
    let line = vec![b' '; 900_000];
    let connections: Vec<UnixStream> = (0..40)
        .map(|_| {
            let mut conn = UnixStream::connect(&d.socket).unwrap();
            conn.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"version\",\"id\":1,\"x\":\"")
                .unwrap();
            conn.write_all(&line).unwrap();
            conn
        })
        .collect();
    let mut refused = 0;
    for conn in &connections {
        conn.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut reply = String::new();
        if std::io::BufRead::read_line(&mut std::io::BufReader::new(conn), &mut reply).is_ok() {
            let reply: serde_json::Value = serde_json::from_str(&reply).unwrap();
            assert_eq!(reply["error"]["code"], 8, "{reply}");
            refused += 1;
        }
    }
    assert!((30..40).contains(&refused), "{refused} refused");
    grew_less(&d, "VmHWM", before, 24);
    drop(connections);
}

/// A connection that sent a long request, once answered, keeps no more than a usual request's
/// room: the buffer the request grew is let go, with either framing, so that many idle
/// connections that each sent one hold little outside the budget.
#[test]
fn connections_idle_after_a_long_request_let_its_buffer_go() {
    let d = TestDaemon::start();
    let before = proc_status(d.pid(), "VmRSS").unwrap();
    let body = format!(
        r#"{{"jsonrpc":"2.0","method":"version","id":1,"x":"{}"}}"#,
        " ".repeat(900_000)
    );
    // Twenty connections a framing, each with one 900 kB request answered: 36 MB read.
    let mut connections = Vec::new();
    for content_length in [false, true] {
        for _ in 0..20 {
            let mut conn = UnixStream::connect(&d.socket).unwrap();
            conn.set_read_timeout(Some(WAIT)).unwrap();
            let reply = if content_length {
                let framed = format!("Content-Length: {}\r\n\r\n{body}", body.len());
                conn.write_all(framed.as_bytes()).unwrap();
                read_frame(&mut conn).unwrap().expect("a reply")
            } else {
                conn.write_all(format!("{body}\n").as_bytes()).unwrap();
                let mut line = String::new();
                std::io::BufRead::read_line(&mut std::io::BufReader::new(&conn), &mut line)
                    .unwrap();
                serde_json::from_str(&line).unwrap()
            };
            assert!(reply.get("result").is_some(), "{reply}");
            connections.push(conn);
        }
    }
    grew_less(&d, "VmRSS", before, 12);
    drop(connections);
}

/// Long lines left unfinished by connections that then close give their share of the budget
/// back: the daemon answers everyone after, however many did so.
#[test]
fn long_lines_left_unfinished_by_closed_connections_give_the_budget_back() {
    let d = TestDaemon::start_with(
        DaemonOptions::default()
            .arg("--max-buffered")
            .arg(&(8 << 20).to_string()),
    );
    for _ in 0..3 {
        let closed: Vec<UnixStream> = (0..8)
            .map(|_| {
                let mut conn = UnixStream::connect(&d.socket).unwrap();
                conn.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"version\",\"id\":1,\"x\":\"")
                    .unwrap();
                conn.write_all(&[b'a'; 70_000]).unwrap();
                conn
            })
            .collect();
        drop(closed);
    }
    let mut conn = hld_e2e::LineConn::connect(&d.socket).unwrap();
    let reply = conn.call(r#"{"jsonrpc":"2.0","method":"version","id":7}"#);
    assert_eq!(reply["id"], 7, "{reply}");
    assert!(reply["result"]["version"].is_string(), "{reply}");
}
