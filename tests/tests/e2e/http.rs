//! The REST transport (`hld --http`, issue 41) over real HTTP with reqwest: every refusal
//! (secret, Host, Origin, body type and size, connection limit), CORS for allowed origins,
//! 404 for what is not in the API, port 0 announced on stdout as CodeLayer's desktop shell reads
//! it, gzip when asked (never for the event stream), and `GET /health` and `GET /sessions` decoded by strict mirrors of the reference's shapes
//! (hld-rest.md section 2).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::Duration;

use hld_e2e::rest::{call, daemon, refused, Counts, Health, Sessions};
use hld_e2e::{launch_params, wait_for, workspace_bin, DaemonOptions, TestDaemon};
use reqwest::{Client, Method, StatusCode};

#[tokio::test]
async fn every_request_without_the_secret_the_host_or_an_allowed_origin_is_refused() {
    let (daemon, address, base) = daemon(&["--http-allowed-origin", "http://ok.example"]);
    let mode = std::fs::metadata(daemon.dir.join("daemon.http-token"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let c = Client::new();
    let health = format!("{base}/api/v1/health");
    let (status, _) = call(c.get(&health)).await;
    assert_eq!(status, StatusCode::OK, "the control request is served");
    let echoed = c
        .get(&health)
        .header("x-request-id", "abc-1")
        .send()
        .await
        .unwrap();
    assert_eq!(echoed.headers()["x-request-id"], "abc-1");

    let made = c
        .get(format!("http://{address}/api/v1/health"))
        .send()
        .await
        .unwrap();
    let id = made.headers()["x-request-id"].to_str().unwrap();
    assert!(
        uuid::Uuid::parse_str(id).is_ok(),
        "a refusal has a new request id too: {id}"
    );
    let no_secret = refused(c.get(format!("http://{address}/api/v1/health"))).await;
    assert_eq!(no_secret.0, 401);
    assert!(no_secret.1.contains("daemon.http-token"), "{}", no_secret.1);
    let wrong = format!("http://{address}/t/0000000000000000000000/api/v1/health");
    assert_eq!(refused(c.get(wrong)).await.0, 401);

    let rebinding = c.get(&health).header("host", "evil.example:7777");
    let (status, message) = refused(rebinding).await;
    assert_eq!(status, 403);
    assert!(message.contains("Host"), "{message}");

    let page = c.get(&health).header("origin", "https://evil.example");
    assert_eq!(refused(page).await.0, 403);
    let preflight = c
        .request(Method::OPTIONS, &health)
        .header("origin", "https://evil.example")
        .header("access-control-request-method", "POST");
    assert_eq!(refused(preflight).await.0, 403);
    let sessions = format!("{base}/api/v1/sessions");
    let form = c
        .post(&sessions)
        .header("content-type", "text/plain")
        .body("{}");
    assert_eq!(refused(form).await.0, 415);
    let bare = c.post(format!("{base}/api/v1/sessions/x/interrupt"));
    let (status, message) = refused(bare).await;
    assert_eq!(status, 403);
    assert!(message.contains("X-Client"), "{message}");
    let big = c
        .post(&sessions)
        .header("content-type", "application/json")
        .body(vec![b' '; (1 << 20) + 1]);
    assert_eq!(refused(big).await.0, 413);
    let config = c
        .patch(format!("{base}/api/v1/config"))
        .header("content-type", "application/json")
        .body(r#"{"claude_path":"/bin/sh"}"#);
    let (status, message) = refused(config).await;
    assert_eq!(status, 403);
    assert!(message.contains("never served"), "{message}");
    // No refusal logged the secret.
    let secret = base.rsplit('/').next().unwrap();
    assert!(!daemon.log_text().contains(secret));
}

#[tokio::test]
async fn allowed_origins_get_cors_answers_and_unknown_operations_404() {
    let (_daemon, _address, base) = daemon(&["--http-allowed-origin", "http://ok.example/"]);
    let c = Client::new();
    let health = format!("{base}/api/v1/health");
    for origin in [
        "tauri://localhost",
        "http://localhost:1420",
        "http://ok.example",
    ] {
        let response = c
            .request(Method::OPTIONS, &health)
            .header("origin", origin)
            .header("access-control-request-method", "GET")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::NO_CONTENT, "{origin}");
        let headers = response.headers();
        assert_eq!(headers["access-control-allow-origin"], origin);
        assert!(headers["access-control-allow-headers"]
            .to_str()
            .unwrap()
            .contains("X-Client"));
    }
    let response = c
        .get(&health)
        .header("origin", "tauri://localhost")
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()["access-control-allow-origin"],
        "tauri://localhost"
    );
    let (status, _) = call(c.get(format!("{base}/api/v1/nonsense"))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn replies_are_gzipped_when_asked_and_the_event_stream_never() {
    let (_daemon, _address, base) = daemon(&["--http-keepalive-ms", "100"]);
    let c = Client::new();
    let sessions = format!("{base}/api/v1/sessions?leavesOnly=true");
    let response = c
        .get(&sessions)
        .header("accept-encoding", "gzip, deflate, br")
        .header("origin", "tauri://localhost")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers().clone();
    assert_eq!(headers["content-encoding"], "gzip");
    let vary: Vec<&str> = headers
        .get_all("vary")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert!(
        vary.contains(&"Accept-Encoding") && vary.contains(&"Origin"),
        "{vary:?}"
    );
    let bytes = response.bytes().await.unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_string(&mut text)
        .expect("a gzip body");
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["data"], serde_json::json!([]), "{text}");

    let plain = c.get(&sessions).send().await.unwrap();
    assert!(plain.headers().get("content-encoding").is_none());
    assert_eq!(plain.headers()["vary"], "Accept-Encoding");
    // The event stream is never compressed; its head leaves with the first keepalive.
    let stream = c
        .get(format!("{base}/api/v1/stream/events"))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    assert!(stream.headers().get("content-encoding").is_none());
}

#[tokio::test]
async fn a_port_0_is_announced_as_the_first_line_of_stdout() {
    let dir = hld_e2e::short_tempdir();
    let mut child = std::process::Command::new(workspace_bin("hld"))
        .arg("--socket")
        .arg(dir.path().join("hld.sock"))
        .arg("--database")
        .arg(dir.path().join("hld.db"))
        .arg("--log-file")
        .arg(dir.path().join("hld.log"))
        .args(["--http", "127.0.0.1:0"])
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    // Read on a thread, so that a daemon that never writes fails the test instead of hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(10));
    let port = line
        .as_deref()
        .ok()
        .and_then(|l| l.strip_suffix('\n')?.strip_prefix("HTTP_PORT="))
        .and_then(|p| p.parse::<u16>().ok());
    let secret = std::fs::read_to_string(dir.path().join("daemon.http-token"));
    let health = match (port, &secret) {
        (Some(port), Ok(secret)) => {
            let url = format!("http://127.0.0.1:{port}/t/{}/api/v1/health", secret.trim());
            Some(call(Client::new().get(url)).await.0)
        }
        _ => None,
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(port.is_some_and(|p| p != 0), "first line: {line:?}");
    assert_eq!(health, Some(StatusCode::OK), "the port announced serves");
}

#[test]
fn connections_over_the_limit_get_503_and_a_freed_slot_serves_again() {
    let (_daemon, address, base) = daemon(&["--http-max-connections", "1"]);
    let path = base.split_once(&address.to_string()).unwrap().1.to_owned();
    let get = |stream: &mut TcpStream| {
        let request = format!(
            "GET {path}/api/v1/health HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    };
    let mut held = TcpStream::connect(address).unwrap();
    held.write_all(b"GET ").unwrap();
    let mut second = TcpStream::connect(address).unwrap();
    let answer = get(&mut second);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("too many connections"), "{answer}");
    drop(held);
    let served = wait_for(Duration::from_secs(10), || {
        let answer = get(&mut TcpStream::connect(address).unwrap());
        answer.starts_with("HTTP/1.1 200").then_some(())
    });
    assert!(served.is_some(), "a freed slot serves again");
}

#[tokio::test]
async fn health_and_sessions_answer_in_the_references_shapes() {
    let (daemon, _address, base) = daemon(&[]);
    let c = Client::new();
    let (status, body) = call(c.get(format!("{base}/api/v1/health"))).await;
    assert_eq!(status, StatusCode::OK);
    let health: Health =
        serde_json::from_value(body.clone()).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(health.status, "ok");
    assert_eq!(health.version, env!("CARGO_PKG_VERSION"));
    assert!(health.dependencies.claude.available);
    assert!(health
        .dependencies
        .claude
        .path
        .unwrap()
        .ends_with("fake-claude"));
    assert_eq!(health.dependencies.claude.error, None);

    let id = daemon.launch(launch_params("hello over rest", &daemon.dir));
    daemon.wait_ended(&id);
    let list = |filter: &'static str| {
        let url = format!("{base}/api/v1/sessions?leavesOnly=true{filter}");
        let c = c.clone();
        async move {
            let (status, body) = call(c.get(url)).await;
            assert_eq!(status, StatusCode::OK);
            let sessions: Sessions =
                serde_json::from_value(body.clone()).unwrap_or_else(|e| panic!("{e}: {body}"));
            sessions
        }
    };
    let normal = list("&filter=normal").await;
    assert_eq!(
        normal.counts,
        Counts {
            normal: 1,
            archived: 0,
            draft: 0
        }
    );
    let [session] = &normal.data[..] else {
        panic!("{:?}", normal.data)
    };
    assert_eq!(session.id, id);
    assert_eq!(session.query, "hello over rest");
    assert_eq!(session.status, "completed");
    assert_eq!(session.context_limit, 168_000);
    assert!(!session.archived);
    assert!(session.completed_at.is_some());

    let reply = daemon.call(
        "archiveSession",
        serde_json::json!({"session_id": id, "archived": true}),
    );
    assert!(reply.get("result").is_some(), "{reply}");
    let archived = list("&filter=archived").await;
    assert_eq!(
        archived.counts,
        Counts {
            normal: 0,
            archived: 1,
            draft: 0
        }
    );
    assert!(archived.data[0].archived);
    assert!(list("&filter=normal").await.data.is_empty());
    assert_eq!(list("").await.data.len(), 1, "no filter lists every leaf");

    // A draft is listed under its own filter, with its status, title and toggles.
    let reply = daemon.call(
        "createDraft",
        serde_json::json!({"working_dir": daemon.dir.display().to_string(),
            "title": "Fix the flaky test", "auto_accept_edits": true,
            "editor_state": "{\"doc\":1}"}),
    );
    let draft_id = reply["result"]["session_id"].as_str().unwrap().to_owned();
    let drafts = list("&filter=draft").await;
    assert_eq!(
        drafts.counts,
        Counts {
            normal: 0,
            archived: 1,
            draft: 1
        }
    );
    let [draft] = &drafts.data[..] else {
        panic!("{:?}", drafts.data)
    };
    assert_eq!(draft.id, draft_id);
    assert_eq!(draft.status, "draft");
    assert_eq!(draft.title.as_deref(), Some("Fix the flaky test"));
    assert!(draft.auto_accept_edits && !draft.dangerously_skip_permissions);
    assert_eq!(draft.editor_state.as_deref(), Some("{\"doc\":1}"));
    assert!(list("&filter=archived")
        .await
        .data
        .iter()
        .all(|s| s.id != draft_id));
    // Replies that found room in the budget at once are no reason to warn that it is full.
    assert!(
        !daemon.log_text().contains("is full"),
        "{}",
        daemon.log_text()
    );
}

#[tokio::test]
async fn hlyr_daemon_url_prints_codelayers_url_and_health_reports_only_the_address() {
    let (daemon, address, base) = daemon(&[]);
    let run = crate::hlyr::hlyr(&daemon, &["daemon", "url"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), base);
    let url = format!("{}/api/v1/health", run.stdout.trim());
    let (status, _) = call(Client::new().get(url)).await;
    assert_eq!(status, StatusCode::OK, "the printed URL serves");
    let health = daemon.call("health", serde_json::json!({}));
    assert_eq!(health["result"]["http_address"], address.to_string());
    let secret = base.rsplit('/').next().unwrap();
    assert!(!health.to_string().contains(secret), "{health}");

    let plain = TestDaemon::start_with(DaemonOptions::fake_claude());
    let run = crate::hlyr::hlyr(&plain, &["daemon", "url"]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("--http"), "{}", run.stderr);
}
