//! JSON-RPC 2.0's envelope as editors and sloppy clients send it, on the Unix socket (NDJSON)
//! and over `hld --stdio` (Content-Length): `"params": []` is no params (Neovim sends it for
//! an empty Lua table), and a message that is not a valid request is answered -32600 to
//! `null` even without an id; only a valid notification goes unanswered.

use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};

use hld_e2e::frames::read_frame;
use hld_e2e::{launch_params, workspace_bin, DaemonOptions, TestDaemon, WAIT};
use serde_json::{json, Value};

/// Invalid messages without an id: no members at all, no `jsonrpc`, and JSON-RPC 2.0's own
/// example of an invalid request.
const INVALID_WITHOUT_ID: [&str; 3] = [
    "{}",
    r#"{"method":"version"}"#,
    r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#,
];

/// `hld --stdio` on pipes, as Emacs starts it: frames in, frames out.
struct Editor {
    child: Child,
    frames: Receiver<Value>,
}

impl Editor {
    fn start(daemon: &TestDaemon) -> Editor {
        let mut child = Command::new(workspace_bin("hld"))
            .args(["--stdio", "--socket"])
            .arg(&daemon.socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start hld --stdio");
        let mut stdout = child.stdout.take().unwrap();
        let (tx, frames) = mpsc::channel();
        std::thread::spawn(move || {
            while let Ok(Some(frame)) = read_frame(&mut stdout) {
                if tx.send(frame).is_err() {
                    return;
                }
            }
        });
        Editor { child, frames }
    }

    /// Sends `text` as one frame.
    fn send_text(&mut self, text: &str) {
        use std::io::Write;
        let mut bytes = format!("Content-Length: {}\r\n\r\n", text.len()).into_bytes();
        bytes.extend_from_slice(text.as_bytes());
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(&bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// The next frame, [`WAIT`] at most.
    fn next(&self) -> Value {
        self.frames
            .recv_timeout(WAIT)
            .unwrap_or_else(|e| panic!("no frame within {WAIT:?}: {e}"))
    }

    /// Sends `text`; the next frame.
    fn call(&mut self, text: &str) -> Value {
        self.send_text(text);
        self.next()
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn assert_invalid_to_null(reply: &Value, sent: &str) {
    assert_eq!(reply["error"]["code"], -32600, "{sent}: {reply}");
    assert_eq!(
        reply["error"]["data"]["reason"], "invalid-envelope",
        "{sent}: {reply}"
    );
    assert_eq!(reply["id"], Value::Null, "{sent}: {reply}");
}

#[test]
fn an_invalid_message_without_an_id_gets_32600_to_null_on_the_socket() {
    let d = TestDaemon::start();
    let mut c = d.conn();
    for text in INVALID_WITHOUT_ID {
        assert_invalid_to_null(&c.call(text), text);
    }
    // A valid notification still gets nothing: the next line answers the request after it.
    c.send(r#"{"jsonrpc":"2.0","method":"version"}"#);
    let reply = c.call(r#"{"jsonrpc":"2.0","method":"health","id":"after"}"#);
    assert_eq!(reply["id"], "after", "{reply}");
}

#[test]
fn an_invalid_message_without_an_id_gets_32600_to_null_over_stdio() {
    let d = TestDaemon::start();
    let mut s = Editor::start(&d);
    for text in INVALID_WITHOUT_ID {
        assert_invalid_to_null(&s.call(text), text);
    }
    s.send_text(r#"{"jsonrpc":"2.0","method":"version"}"#);
    let reply = s.call(r#"{"jsonrpc":"2.0","method":"health","id":"after"}"#);
    assert_eq!(reply["id"], "after", "{reply}");
}

/// `method` with `params`, id 1, as one line.
fn request(method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params, "id": 1}).to_string()
}

/// What every transport but WebSocket must answer to array params: `[]` is no params for a
/// method whose params are all optional, a method with a required param names it, and any
/// other array is -32602 `params must be an object`.
fn assert_array_params(mut call: impl FnMut(&str) -> Value) {
    let health = call(&request("health", json!([])));
    assert_eq!(health["result"]["status"], "ok", "{health}");
    let methods = call(&request("listMethods", json!([])));
    assert!(methods["result"].as_array().is_some(), "{methods}");
    let state = call(&request("getSessionState", json!([])));
    assert_eq!(state["error"]["code"], -32602, "{state}");
    assert_eq!(state["error"]["data"]["param"], "session_id", "{state}");
    for params in [json!([1]), json!([{}])] {
        let reply = call(&request("health", params.clone()));
        assert_eq!(reply["error"]["code"], -32602, "{params}: {reply}");
        assert_eq!(
            reply["error"]["message"], "params must be an object",
            "{reply}"
        );
    }
}

#[test]
fn empty_array_params_are_no_params_on_the_socket_and_subscribe_takes_them() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let mut c = d.conn();
    assert_array_params(|text| c.call(text));
    // Subscribe with `[]`: every event, the launch's among them.
    let mut sub = d.conn();
    let confirmed = sub.call(&request("Subscribe", json!([])));
    assert!(
        confirmed["result"]["subscription_id"].is_string(),
        "{confirmed}"
    );
    let session = d.launch(launch_params("hello", &d.dir));
    while sub.recv()["result"]["event"]["data"]["session_id"] != session.as_str() {}
}

#[test]
fn empty_array_params_are_no_params_over_stdio_and_subscribe_takes_them() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let mut s = Editor::start(&d);
    assert_array_params(|text| s.call(text));
    let confirmed = s.call(&request("Subscribe", json!([])));
    assert!(
        confirmed["result"]["subscription_id"].is_string(),
        "{confirmed}"
    );
    let session = d.launch(launch_params("hello", &d.dir));
    loop {
        let event = s.next();
        assert_eq!(event["method"], "event", "{event}");
        if event["params"]["event"]["data"]["session_id"] == session.as_str() {
            break;
        }
    }
}

/// A client that sends nothing but mistakes cannot fill the log: each kind of mistake is
/// logged at most ten times a second, then with how many a line stands for, and every one is
/// answered.
#[test]
fn a_flood_of_mistakes_is_answered_in_full_and_logged_a_few_times_a_second() {
    let d = TestDaemon::start();
    let mut c = d.conn();
    let started = std::time::Instant::now();
    for n in 0..300 {
        assert_invalid_to_null(&c.call("{}"), "{}");
        let unknown = c.call(&request(&format!("noSuchMethod{n}"), json!({})));
        assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
        let invalid = c.call(&request("getSessionState", json!({})));
        assert_eq!(invalid["error"]["code"], -32602, "{invalid}");
    }
    let seconds = started.elapsed().as_secs() as usize + 1;
    let log = d.log_text();
    for line in ["rejected a request", "unknown method", "invalid params"] {
        let written = log.lines().filter(|l| l.contains(line)).count();
        assert!(
            (1..=10 * seconds).contains(&written) && written < 300,
            "{written} `{line}` lines for 300 in {seconds} s:\n{log}"
        );
    }
    assert!(log.contains("count="), "{log}");
}
