//! `hld --http` beyond loopback and under load (issue 41): an address other machines reach only
//! with `--http-allow-remote` and TLS, served over https with the `Host` check admitting the
//! certificate's names; and request bodies and replies held in the daemon's byte budget
//! (`--max-buffered`).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use hld_e2e::rest::{call, daemon, daemon_at, refused};
use hld_e2e::{wait_for, DaemonOptions, TestDaemon, WAIT};
use reqwest::StatusCode;

#[test]
fn a_non_loopback_http_address_needs_allow_remote_and_tls() {
    TestDaemon::assert_refuses(&[
        (vec!["--http", "0.0.0.0:0"], "--http-allow-remote"),
        (
            vec!["--http", "0.0.0.0:0", "--http-allow-remote"],
            "needs TLS",
        ),
        (
            vec!["--http", "127.0.0.1:0", "--http-tls-key", "/nonexistent"],
            "go together",
        ),
    ]);
}

#[tokio::test]
async fn a_remote_address_serves_https_and_admits_the_certificates_name_as_host() {
    let certs = tempfile::tempdir().unwrap();
    let made = rcgen::generate_simple_self_signed(vec!["hld.test".to_owned()]).unwrap();
    let (cert, key) = (certs.path().join("cert.pem"), certs.path().join("key.pem"));
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
    let options = DaemonOptions::fake_claude()
        .arg("--http-allow-remote")
        .arg("--http-tls-cert")
        .arg(cert.to_str().unwrap())
        .arg("--http-tls-key")
        .arg(key.to_str().unwrap());
    let (daemon, address, base) = daemon_at(options, "0.0.0.0:0");
    assert!(address.ip().is_unspecified(), "{address}");
    let port = address.port();
    let secret = base.split_once(&address.to_string()).unwrap().1;
    // `hlyr daemon url` says https, with the secret.
    let run = crate::hlyr::hlyr(&daemon, &["daemon", "url"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), format!("https://{address}{secret}"));
    // A client on another machine reaches the daemon by the certificate's name.
    let root = reqwest::Certificate::from_pem(made.cert.pem().as_bytes()).unwrap();
    let c = reqwest::Client::builder()
        .add_root_certificate(root)
        .resolve("hld.test", SocketAddr::from(([127, 0, 0, 1], port)))
        .build()
        .unwrap();
    let health = format!("https://hld.test:{port}{secret}/api/v1/health");
    let (status, body) = call(c.get(&health)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "ok");
    let local = c.get(&health).header("host", format!("localhost:{port}"));
    assert_eq!(call(local).await.0, StatusCode::OK);
    // A name the certificate is not for (a page rebound to this address) is refused.
    let rebinding = c
        .get(&health)
        .header("host", format!("evil.example:{port}"));
    let (status, message) = refused(rebinding).await;
    assert_eq!(status, 403);
    assert!(message.contains("certificate"), "{message}");
    let no_secret = format!("https://hld.test:{port}/api/v1/health");
    assert_eq!(refused(c.get(no_secret)).await.0, 401);
    // Plain HTTP gets no answer from the TLS port.
    let plain = format!("http://127.0.0.1:{port}{secret}/api/v1/health");
    assert!(reqwest::Client::new().get(plain).send().await.is_err());
}

/// Writes a POST's head (no body yet) asking for `100 Continue`; the answer's head.
fn post_head(stream: &mut TcpStream, path: &str, length: usize) -> String {
    let head = format!(
        "POST {path}/api/v1/sessions/archive HTTP/1.1\r\nhost: 127.0.0.1\r\n\
         content-type: application/json\r\ncontent-length: {length}\r\n\
         expect: 100-continue\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    read_head(stream)
}

/// The head of the next answer on `stream`.
fn read_head(stream: &mut TcpStream) -> String {
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let mut answer = Vec::new();
    let mut byte = [0u8; 1];
    while !answer.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => answer.push(byte[0]),
            other => panic!("no answer's head: {other:?}, so far {answer:?}"),
        }
    }
    String::from_utf8(answer).unwrap()
}

#[test]
fn a_body_the_byte_budget_cannot_hold_is_refused_unread_with_503() {
    // The smallest budget, 1 MiB: one body of 600 kB leaves too little for another.
    let (daemon, address, base) = daemon(&["--max-buffered", "1048576"]);
    let path = base.split_once(&address.to_string()).unwrap().1.to_owned();
    let mut holding = TcpStream::connect(address).unwrap();
    // `100 Continue` comes once the daemon reads the body, its share of the budget taken.
    let head = post_head(&mut holding, &path, 600_000);
    assert!(head.starts_with("HTTP/1.1 100"), "{head}");
    let mut second = TcpStream::connect(address).unwrap();
    let head = post_head(&mut second, &path, 600_000);
    assert!(head.starts_with("HTTP/1.1 503"), "{head}");
    let mut body = String::new();
    let _ = second.read_to_string(&mut body);
    assert!(body.contains("--max-buffered"), "{body}");
    // The other transports, within the rest of the budget, are served meanwhile.
    let health = daemon.call("health", serde_json::json!({}));
    assert_eq!(health["result"]["status"], "ok", "{health}");
    // The share comes back when the body's connection goes.
    drop(holding);
    let served = wait_for(Duration::from_secs(10), || {
        let mut again = TcpStream::connect(address).unwrap();
        let head = post_head(&mut again, &path, 600_000);
        (!head.starts_with("HTTP/1.1 503")).then_some(head)
    });
    let head = served.expect("a freed budget takes bodies again");
    assert!(head.starts_with("HTTP/1.1 100"), "{head}");
}

#[test]
fn a_reply_waits_for_room_in_the_byte_budget() {
    let (daemon, address, base) = daemon(&["--max-buffered", "1048576"]);
    let path = base.split_once(&address.to_string()).unwrap().1.to_owned();
    let mut holding = TcpStream::connect(address).unwrap();
    let head = post_head(&mut holding, &path, 1 << 20);
    assert!(head.starts_with("HTTP/1.1 100"), "{head}");
    let health = format!("{path}/api/v1/health");
    let asking = std::thread::spawn(move || {
        let mut stream = TcpStream::connect(address).unwrap();
        let request =
            format!("GET {health} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer
    });
    // The reply is built but the budget is full: the daemon says so, and it waits for room.
    let full = wait_for(WAIT, || {
        let log = daemon.log_text();
        log.contains("buffer budget (--max-buffered) is full")
            .then_some(())
    });
    assert!(full.is_some(), "{}", daemon.log_text());
    drop(holding);
    let answer = asking.join().unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    // A reply written gives its share back, though its connection stays open.
    let mut open = TcpStream::connect(address).unwrap();
    let request = format!("GET {path}/api/v1/health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
    open.write_all(request.as_bytes()).unwrap();
    let head = read_head(&mut open);
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{head}"));
    open.read_exact(&mut vec![0; length]).unwrap();
    let mut whole = TcpStream::connect(address).unwrap();
    let head = post_head(&mut whole, &path, 1 << 20);
    assert!(head.starts_with("HTTP/1.1 100"), "{head}");
}
