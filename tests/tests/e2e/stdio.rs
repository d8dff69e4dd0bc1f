//! `hld --stdio` (spec/004): Content-Length framing on stdin/stdout, relayed to the daemon,
//! over real processes: given pipes, Unix socket pairs (as editors start it) or a TCP
//! socket. Every byte written on stdout is read as a frame: a stray byte fails the test.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use hld_client::protocol::*;
use hld_e2e::frames::{frame, read_frame};
use hld_e2e::{launch_params, wait_for, workspace_bin, DaemonOptions, TestDaemon, WAIT};
use nix::sys::signal::Signal;
use serde_json::{json, Value};

/// A daemon whose incomplete frames time out after 300 ms (spec/004's 30 s, made short).
fn daemon() -> TestDaemon {
    TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .arg("--frame-timeout-ms")
            .arg("300"),
    )
}

/// What `hld --stdio` gets as its stdin and stdout, which decides how it reaches the daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// Pipes, as most programs start a child: the daemon takes them.
    Pipes,
    /// Unix socket pairs, as Node and libuv start a child (VS Code, Neovim): the daemon takes
    /// them.
    Sockets,
    /// stdin a TCP socket: `hld --stdio` relays the bytes.
    Relay,
}

/// Every way.
const EVERY: [Via; 3] = [Via::Pipes, Via::Sockets, Via::Relay];

/// A connected pair of TCP sockets on the loopback address.
fn tcp_pair() -> (std::net::TcpStream, std::net::TcpStream) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ours = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    (ours, listener.accept().unwrap().0)
}

/// Our end of `hld --stdio`'s stdin.
type Writer = Box<dyn Write + Send>;
/// Our end of its stdout.
type Reader = Box<dyn Read + Send>;

/// A running `hld --stdio`: its stdin, and the frames it wrote, parsed strictly.
struct Relay {
    child: Child,
    stdin: Option<Writer>,
    frames: Receiver<Result<Value, String>>,
}

impl Relay {
    fn start(socket: &Path) -> Relay {
        Self::start_via(socket, Via::Pipes)
    }

    fn start_via(socket: &Path, via: Via) -> Relay {
        Self::start_in(socket, None, via)
    }

    /// With `home` as its HOME (where a daemon it starts keeps its database).
    fn start_in(socket: &Path, home: Option<&Path>, via: Via) -> Relay {
        let mut command = Command::new(workspace_bin("hld"));
        if let Some(home) = home {
            command
                .env("HOME", home)
                .env_remove("HUMANLAYER_DATABASE_PATH");
        }
        // Our ends, where they are not the child's piped stdin and stdout.
        let mut ends: (Option<Writer>, Option<Reader>) = (None, None);
        match via {
            Via::Pipes => {
                command.stdin(Stdio::piped()).stdout(Stdio::piped());
            }
            Via::Sockets => {
                let (stdin, theirs_in) = UnixStream::pair().unwrap();
                let (stdout, theirs_out) = UnixStream::pair().unwrap();
                ends = (Some(Box::new(stdin)), Some(Box::new(stdout)));
                command
                    .stdin(Stdio::from(OwnedFd::from(theirs_in)))
                    .stdout(Stdio::from(OwnedFd::from(theirs_out)));
            }
            Via::Relay => {
                let (stdin, theirs) = tcp_pair();
                ends.0 = Some(Box::new(stdin));
                command
                    .stdin(Stdio::from(OwnedFd::from(theirs)))
                    .stdout(Stdio::piped());
            }
        };
        let mut child = command
            .args(["--stdio", "--socket"])
            .arg(socket)
            .stderr(Stdio::piped())
            .spawn()
            .expect("start hld --stdio");
        let stdin = ends
            .0
            .unwrap_or_else(|| Box::new(child.stdin.take().unwrap()));
        let mut stdout = ends
            .1
            .unwrap_or_else(|| Box::new(child.stdout.take().unwrap()));
        let (tx, frames) = mpsc::channel();
        std::thread::spawn(move || loop {
            match read_frame(&mut stdout) {
                Ok(Some(frame)) => {
                    if tx.send(Ok(frame)).is_err() {
                        return;
                    }
                }
                Ok(None) => return,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        });
        Relay {
            stdin: Some(stdin),
            child,
            frames,
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: &Value) {
        self.send_raw(&frame(message));
    }

    /// The next frame (a test failure on a stray byte, or after [`WAIT`]).
    fn next(&self) -> Value {
        match self.frames.recv_timeout(WAIT) {
            Ok(Ok(frame)) => frame,
            Ok(Err(e)) => panic!("not a frame on stdout: {e}"),
            Err(e) => panic!("no frame within {WAIT:?}: {e}"),
        }
    }

    /// The next frame that is a reply (events are skipped).
    fn reply(&self) -> Value {
        loop {
            let frame = self.next();
            if frame.get("method").is_none() {
                return frame;
            }
        }
    }

    /// Sends `method` with `params` and id 1; returns the reply.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params, "id": 1}));
        self.reply()
    }

    fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// Waits for the relay to exit; its status code, how long it took, and its stderr.
    fn wait_exit(&mut self, within: Duration) -> (i32, Duration, String) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut stderr = String::new();
                let _ = self
                    .child
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut stderr);
                return (status.code().unwrap_or(-1), started.elapsed(), stderr);
            }
            assert!(started.elapsed() < within, "hld --stdio still running");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn signal(&self, signal: Signal) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, signal).unwrap();
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn reason(reply: &Value) -> &str {
    reply["error"]["data"]["reason"].as_str().unwrap_or("")
}

#[test]
fn every_method_of_the_table_is_served_with_content_length_framing() {
    let d = daemon();
    let mut r = Relay::start(&d.socket);
    let init = r.call("initialize", json!({}));
    assert_eq!(init["result"]["protocolVersion"], "2.0", "{init}");
    let methods = r.call("listMethods", json!({}));
    let names: Vec<&str> = methods["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    for name in [
        "launchSession",
        "getConversation",
        "sendDecision",
        "searchSessions",
        "shutdown",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let version = d.request::<Version>(NoParams {}).version;
    assert_eq!(r.call("version", json!({}))["result"]["version"], version);
    let level = r.call("setLogLevel", json!({"level": "DEBUG"}));
    assert_eq!(level["result"], json!({"level": "debug", "success": true}));
    let bad = r.call("setLogLevel", json!({"level": "loud"}));
    assert_eq!(bad["error"]["code"], -32602);
    assert!(bad["error"]["data"]["accepted"].is_array(), "{bad}");
}

#[test]
fn framing_errors_get_their_codes_and_the_connection_carries_on() {
    let d = daemon();
    for via in EVERY {
        framing_errors_via(&d, via);
    }
}

fn framing_errors_via(d: &TestDaemon, via: Via) {
    let mut r = Relay::start_via(&d.socket, via);
    // Back to back, with unknown headers and header names in any case.
    let mut two = b"X-Editor: emacs\r\ncontent-length: 43\r\n\r\n".to_vec();
    two.extend_from_slice(br#"{"jsonrpc":"2.0","method":"version","id":7}"#);
    two.extend_from_slice(&frame(
        &json!({"jsonrpc":"2.0","method":"version","id":"s"}),
    ));
    r.send_raw(&two);
    assert_eq!(r.reply()["id"], 7);
    assert_eq!(r.reply()["id"], "s");
    for charset in ["utf-8", "UTF-8", "Utf8"] {
        let body = r#"{"jsonrpc":"2.0","method":"version","id":null}"#;
        r.send_raw(
            format!(
                "Content-Type: application/vscode-jsonrpc; charset={charset}\r\n\
                 Content-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
        let reply = r.reply();
        assert!(
            reply["result"]["version"].is_string() && reply["id"].is_null(),
            "{reply}"
        );
    }
    r.send_raw(b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
    assert_eq!(reason(&r.reply()), "unsupported-content-type");
    r.send_raw(b"Content-Type: application/vscode-jsonrpc; charset=iso-8859-1\r\nContent-Length: 2\r\n\r\n{}");
    assert_eq!(reason(&r.reply()), "bad-charset");
    // Refused by its headers, a request is read for its id, which the refusal echoes.
    let body = r#"{"jsonrpc":"2.0","method":"version","id":"typed"}"#;
    let typed = format!(
        "Content-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    r.send_raw(typed.as_bytes());
    let refused = r.reply();
    assert_eq!(
        (reason(&refused), &refused["id"]),
        ("unsupported-content-type", &json!("typed"))
    );
    assert!(refused.get("result").is_none(), "{refused}");
    // A length shorter than the JSON: what was read is not JSON.
    r.send_raw(b"Content-Length: 5\r\n\r\n{\"jso");
    assert_eq!(r.reply()["error"]["code"], -32700);
    // A length in characters rather than bytes: the body's last byte is left before the next
    // header, which is read in step all the same, as is one after noise.
    let body = r#"{"jsonrpc":"2.0","method":"version","id":"café"}"#;
    let chars = body.chars().count();
    r.send_raw(format!("Content-Length: {chars}\r\n\r\n{body}").as_bytes());
    assert_eq!(r.reply()["error"]["code"], -32700);
    assert_eq!(r.call("version", json!({}))["id"], 1);
    r.send_raw(b"junk");
    assert_eq!(r.call("version", json!({}))["id"], 1);
    r.send(&json!([{"jsonrpc":"2.0","method":"version","id":1}]));
    let batch = r.reply();
    assert_eq!(reason(&batch), "batch-not-supported");
    assert_eq!(batch["error"]["message"], "Batch requests not supported");
    r.send(&json!({"jsonrpc":"2.0","method":"version","id":{"a":1}}));
    assert_eq!(reason(&r.reply()), "invalid-id-type");
    r.send(&json!({"method":"version","id":3}));
    assert_eq!(r.reply()["error"]["code"], -32600);
    r.send(&json!({"jsonrpc":"2.0","method":"nope","id":4}));
    assert_eq!(r.reply()["error"]["code"], -32601);
    r.send(&json!({"jsonrpc":"2.0","method":"launchSession","params":{},"id":5}));
    assert_eq!(r.reply()["error"]["code"], -32602);
    // Notifications, known or not, get nothing; the next request is answered next.
    r.send(&json!({"jsonrpc":"2.0","method":"version"}));
    r.send(&json!({"jsonrpc":"2.0","method":"nope"}));
    assert_eq!(r.call("version", json!({}))["id"], 1);
    // A header section over 8 KB.
    let mut big = b"Content-Length: 2\r\n".to_vec();
    big.extend_from_slice(format!("X-Pad: {}\r\n\r\n{{}}", "p".repeat(9000)).as_bytes());
    r.send_raw(&big);
    let reply = r.reply();
    assert_eq!(
        (reason(&reply), reply["id"].clone()),
        ("header-too-large", Value::Null)
    );
    assert_eq!(r.call("version", json!({}))["id"], 1);
}

#[test]
fn an_oversize_payload_is_refused_with_a_null_id_and_never_buffered() {
    let d = daemon();
    let mut r = Relay::start(&d.socket);
    let n = 11 * 1024 * 1024;
    r.send_raw(format!("Content-Length: {n}\r\n\r\n").as_bytes());
    let reply = r.reply();
    assert_eq!(reason(&reply), "oversize");
    assert!(reply["id"].is_null());
    let chunk = vec![b' '; 1024 * 1024];
    for _ in 0..11 {
        r.send_raw(&chunk);
    }
    assert_eq!(r.call("version", json!({}))["id"], 1);
}

#[test]
fn an_incomplete_message_times_out_and_the_framing_starts_again() {
    let d = daemon();
    let mut r = Relay::start(&d.socket);
    r.send_raw(b"Content-Length: 100\r\n\r\n{\"jsonrpc\"");
    let timed_out = wait_for(WAIT, || d.log_text().contains("timed out").then_some(()));
    assert!(timed_out.is_some(), "{}", d.log_text());
    assert_eq!(r.call("version", json!({}))["id"], 1);
}

#[test]
fn notifications_get_no_reply_and_an_unknown_one_is_logged_at_warn() {
    let d = daemon();
    let mut r = Relay::start(&d.socket);
    // What a language client sends unasked, then a known method sent as a notification.
    r.send(&json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 7}}));
    r.send(&json!({"jsonrpc": "2.0", "method": "health"}));
    // The first frame back is the reply to the request that follows them.
    r.send(&json!({"jsonrpc": "2.0", "method": "version", "id": "after"}));
    let reply = r.next();
    assert_eq!(reply["id"], "after", "{reply}");
    assert!(reply["result"]["version"].is_string(), "{reply}");
    let warned = wait_for(WAIT, || {
        let log = d.log_text();
        log.lines()
            .find(|l| {
                l.contains("WARN") && l.contains("unknown method") && l.contains("$/cancelRequest")
            })
            .map(str::to_owned)
    });
    assert!(warned.is_some(), "{}", d.log_text());
}

#[test]
fn events_arrive_as_notifications_while_requests_keep_working() {
    let d = daemon();
    let work = d.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut r = Relay::start(&d.socket);
    let sub = r.call("Subscribe", json!({}));
    assert!(sub["result"]["subscription_id"].is_string(), "{sub}");
    // A socket subscriber sees what is launched over stdio, and the other way round.
    let mut socket_events = d.subscribe(SubscribeParams::default());
    let launched = r.call(
        "launchSession",
        serde_json::to_value(launch_params("scenario:plain hi", &work)).unwrap(),
    );
    let id = launched["result"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut notified = false;
    while !notified {
        let frame = r.next();
        assert!(frame.get("id").is_none(), "an event with an id: {frame}");
        if frame["method"] == "event" {
            let event = &frame["params"]["event"];
            notified = event["type"] == "session_status_changed"
                && event["data"]["session_id"] == id.as_str()
                && event["data"]["new_status"] == "completed";
        }
    }
    let conversation = r.call("getConversation", json!({"session_id": id}));
    assert!(conversation["result"]["events"].as_array().unwrap().len() >= 2);
    assert_eq!(d.state(&id).status, SessionStatus::Completed);
    socket_events.until(
        |e| matches!(e, Event::SessionStatusChanged { session_id, .. } if *session_id == id),
    );
}

#[test]
fn shutdown_ends_the_editors_connection_not_the_daemon() {
    let d = daemon();
    for via in EVERY {
        let mut r = Relay::start_via(&d.socket, via);
        let reply = r.call("shutdown", json!({}));
        assert_eq!(reply["result"]["message"], "Shutting down gracefully");
        let (code, took, _) = r.wait_exit(Duration::from_secs(5));
        assert_eq!(code, 0, "{via:?}");
        assert!(took < Duration::from_secs(2), "{via:?}: {took:?}");
        assert_eq!(d.request::<Health>(NoParams {}).status, "ok");
        // As a notification: no reply, same exit.
        let mut r = Relay::start_via(&d.socket, via);
        r.send(&json!({"jsonrpc":"2.0","method":"shutdown"}));
        assert_eq!(r.wait_exit(Duration::from_secs(5)).0, 0, "{via:?}");
        assert!(
            r.frames.recv_timeout(Duration::from_millis(200)).is_err(),
            "{via:?}: a reply to a notification"
        );
        assert_eq!(d.request::<Health>(NoParams {}).status, "ok");
    }
}

#[test]
fn stdin_closing_or_a_signal_ends_it_with_0_within_2_s() {
    let d = daemon();
    for via in EVERY {
        let mut r = Relay::start_via(&d.socket, via);
        r.call("version", json!({}));
        r.close_stdin();
        let (code, took, stderr) = r.wait_exit(Duration::from_secs(5));
        assert_eq!(code, 0, "{via:?}: {stderr}");
        assert!(took < Duration::from_secs(2), "{via:?}: {took:?}");
        assert!(
            stderr.contains("stdin closed, shutting down gracefully"),
            "{via:?}: {stderr}"
        );
        // It starts by logging its version, pid, level and sink, and no path.
        let start = stderr.lines().find(|l| l.contains("hld starting")).unwrap();
        for field in ["version=", "pid=", "level=", "sink=stderr", "stdio=true"] {
            assert!(start.contains(field), "{field} in {start}");
        }
        assert!(
            !stderr.contains(&d.socket.display().to_string()),
            "{stderr}"
        );
        for (signal, name) in [
            (Signal::SIGINT, "SIGINT"),
            (Signal::SIGTERM, "SIGTERM"),
            (Signal::SIGHUP, "SIGHUP"),
        ] {
            let mut r = Relay::start_via(&d.socket, via);
            r.call("version", json!({}));
            r.signal(signal);
            let (code, took, stderr) = r.wait_exit(Duration::from_secs(5));
            assert_eq!(code, 0, "{via:?} {name}: {stderr}");
            assert!(took < Duration::from_secs(2), "{via:?} {name}: {took:?}");
            assert!(stderr.contains(name), "{stderr}");
        }
    }
}

#[test]
fn when_the_daemon_goes_away_it_says_so_and_exits_non_zero() {
    for (via, killed) in [
        (Via::Pipes, true),
        (Via::Pipes, false),
        (Via::Sockets, true),
        (Via::Relay, true),
    ] {
        let mut d = daemon();
        let mut r = Relay::start_via(&d.socket, via);
        r.call("version", json!({}));
        // Killed, or stopped as `hlyr daemon stop` stops it.
        match killed {
            true => d.kill9(),
            false => d.stop(),
        }
        let (code, _, stderr) = r.wait_exit(Duration::from_secs(10));
        assert_eq!(code, 1, "{via:?}, killed {killed}: {stderr}");
        assert!(
            stderr.contains("went away"),
            "{via:?}, killed {killed}: {stderr}"
        );
    }
}

#[test]
fn a_killed_hld_stdio_closes_the_editors_pipes_and_the_daemon_serves_on() {
    let d = daemon();
    for (n, via) in [(1, Via::Pipes), (2, Via::Sockets)] {
        a_killed_hld_stdio_via(&d, via, n);
    }
}

/// The `n`th `hld --stdio` of `d`, killed.
fn a_killed_hld_stdio_via(d: &TestDaemon, via: Via, n: usize) {
    let mut r = Relay::start_via(&d.socket, via);
    r.call("version", json!({}));
    r.child.kill().unwrap();
    // The daemon closes its copies of the pipes: stdout ends (the reader thread hangs up).
    let started = Instant::now();
    match r.frames.recv_timeout(Duration::from_secs(2)) {
        Err(mpsc::RecvTimeoutError::Disconnected) => {}
        other => panic!("stdout did not end within 2 s: {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        d.request::<Health>(NoParams {}).status,
        "ok",
        "{via:?}, {n}"
    );
}

#[test]
fn it_starts_a_daemon_when_none_answers() {
    let dir = hld_e2e::short_tempdir();
    let socket = dir.path().join("run").join("daemon.sock");
    let mut r = Relay::start_in(&socket, Some(dir.path()), Via::Pipes);
    assert_eq!(r.call("health", json!({}))["result"]["status"], "ok");
    assert!(dir.path().join(".humanlayer").join("daemon.db").exists());
    r.close_stdin();
    assert_eq!(r.wait_exit(Duration::from_secs(5)).0, 0);
    // It is a daemon of its own, still serving; stop it.
    let stopped = Command::new(workspace_bin("hlyr"))
        .args(["daemon", "stop", "--daemon-socket"])
        .arg(&socket)
        .output()
        .unwrap();
    assert!(stopped.status.success(), "{stopped:?}");
}

#[test]
fn emacs_jsonrpc_el_launches_a_session_and_hears_its_events() {
    let d = daemon();
    let work = d.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let script = d.dir.join("hld-test.el");
    std::fs::write(
        &script,
        format!(
            r#"
(require 'jsonrpc)
(require 'cl-lib)
(setq debug-on-error nil)
(defvar hld-completed nil)
(defvar hld-session nil)
(defvar hld-conn
  (make-instance 'jsonrpc-process-connection
                 :name "hld"
                 :process (make-process :name "hld" :command '("{hld}" "--stdio" "--socket" "{socket}")
                                        :connection-type 'pipe :noquery t
                                        :stderr (get-buffer-create "*hld-stderr*"))
                 :notification-dispatcher
                 (lambda (_conn method params)
                   (when (eq method 'event)
                     (let* ((event (plist-get params :event))
                            (data (plist-get event :data)))
                       ;; Kept by id: the event may come in the same read as the launch's
                       ;; reply, and be dispatched before that reply is returned.
                       (when (and (equal (plist-get event :type) "session_status_changed")
                                  (equal (plist-get data :new_status) "completed"))
                         (push (plist-get data :session_id) hld-completed)))))))
(condition-case err
    (progn
      (princ (format "protocol=%s\n" (plist-get (jsonrpc-request hld-conn :initialize nil) :protocolVersion)))
      (princ (format "health=%s\n" (plist-get (jsonrpc-request hld-conn :health nil) :status)))
      (jsonrpc-request hld-conn :Subscribe nil)
      (setq hld-session
            (plist-get (jsonrpc-request hld-conn :launchSession
                                        '(:query "scenario:plain hello from emacs" :working_dir "{work}"))
                       :session_id))
      (princ (format "session=%s\n" hld-session))
      ;; A request each round: in batch mode Emacs does not always read a pipe's output while
      ;; merely waiting, but it reads it all while a request waits for its reply.
      (cl-loop repeat 300 until (member hld-session hld-completed)
               do (accept-process-output nil 0.1)
                  (jsonrpc-request hld-conn :version nil))
      (princ (format "completed-event=%s\n" (if (member hld-session hld-completed) "t" "nil")))
      (let ((events (plist-get (jsonrpc-request hld-conn :getConversation (list :session_id hld-session)) :events)))
        (princ (format "events=%d\n" (length events))))
      (jsonrpc-shutdown hld-conn)
      (kill-emacs 0))
  (error (princ (format "error=%S\n" err)) (kill-emacs 1)))
"#,
            hld = workspace_bin("hld").display(),
            socket = d.socket.display(),
            work = work.display(),
        ),
    )
    .unwrap();
    // `.ci/run` installs emacs-nox when it is missing.
    let output = Command::new("emacs")
        .args(["--batch", "-Q", "-l"])
        .arg(&script)
        .output()
        .expect("emacs (the tests need emacs-nox; .ci/run installs it)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("protocol=2.0"), "{stdout}");
    assert!(stdout.contains("health=ok"), "{stdout}");
    assert!(stdout.contains("completed-event=t"), "{stdout}\n{stderr}");
    let session = stdout
        .lines()
        .find_map(|l| l.strip_prefix("session="))
        .expect("a session id");
    assert_eq!(d.state(session).status, SessionStatus::Completed);
    let events: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("events="))
        .and_then(|n| n.parse().ok())
        .expect("a count of events");
    assert_eq!(events, d.conversation(session).len());
}
