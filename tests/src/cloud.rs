//! A loopback stand-in for the HumanLayer cloud API (hld-anchor.md §4.2–4.4), for the cloud
//! approval tests: it serves the pending function calls and human contacts from shared state,
//! accepts responses, and records every request with its arrival time.
//!
//! A tiny HTTP/1.1 server on `127.0.0.1:0`: one thread per connection, one request per
//! connection (`Connection: close`), bodies by `Content-Length`.

use std::collections::HashMap;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde_json::{json, Value};

use crate::{wait_for, WAIT};

/// The path prefix the stand-in serves under (like the real `/humanlayer/v1`).
const PREFIX: &str = "/humanlayer/v1";

/// One request as received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// When it arrived.
    pub at: Instant,
    /// `GET` or `POST`.
    pub method: String,
    /// The path without the prefix, e.g. `/agent/function_calls/pending`.
    pub path: String,
    /// The `Authorization` header.
    pub authorization: Option<String>,
    /// The body as JSON (`Null` when empty or not JSON).
    pub body: Value,
}

#[derive(Debug, Default)]
struct State {
    function_calls: Vec<Value>,
    human_contacts: Vec<Value>,
    /// How many more `GET …/pending` requests of each list answer 500.
    failing_polls: HashMap<&'static str, u32>,
    /// Status forced on the respond call of a call id.
    respond_status: HashMap<String, u16>,
    requests: Vec<Recorded>,
}

/// The running stand-in. Stops accepting when dropped.
#[derive(Debug)]
pub struct CloudStandIn {
    port: u16,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
}

impl CloudStandIn {
    /// Starts the stand-in with empty pending lists.
    pub fn start() -> CloudStandIn {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the stand-in");
        let port = listener.local_addr().expect("local address").port();
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (thread_state, thread_stop) = (Arc::clone(&state), Arc::clone(&stop));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if thread_stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let state = Arc::clone(&thread_state);
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        CloudStandIn { port, state, stop }
    }

    /// The base URL to give the daemon (`--api-base-url`).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}{PREFIX}", self.port)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lists a function call as pending.
    pub fn add_function_call(&self, item: Value) {
        self.lock().function_calls.push(item);
    }

    /// Lists a human contact as pending.
    pub fn add_human_contact(&self, item: Value) {
        self.lock().human_contacts.push(item);
    }

    /// Takes an item off the pending lists (as if answered elsewhere).
    pub fn remove(&self, call_id: &str) {
        let mut state = self.lock();
        state.function_calls.retain(|i| i["call_id"] != call_id);
        state.human_contacts.retain(|i| i["call_id"] != call_id);
    }

    /// Makes the next `n` requests for each pending list answer 500.
    pub fn fail_polls(&self, n: u32) {
        let mut state = self.lock();
        state.failing_polls.insert("function_calls", n);
        state.failing_polls.insert("human_contacts", n);
    }

    /// Makes the respond call of `call_id` answer `status` (and leave the item listed).
    pub fn respond_with(&self, call_id: &str, status: u16) {
        self.lock()
            .respond_status
            .insert(call_id.to_owned(), status);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().requests.clone()
    }

    /// The requests to `path` (without the prefix) so far.
    pub fn requests_to(&self, path: &str) -> Vec<Recorded> {
        self.lock()
            .requests
            .iter()
            .filter(|r| r.path == path)
            .cloned()
            .collect()
    }

    /// Waits until `done` holds for the recorded requests ([`WAIT`] at most).
    pub fn wait_until(&self, what: &str, done: impl Fn(&[Recorded]) -> bool) -> Vec<Recorded> {
        wait_for(WAIT, || Some(self.requests()).filter(|r| done(r))).unwrap_or_else(|| {
            panic!(
                "the stand-in never saw {what}; it saw {:?}",
                self.requests()
                    .iter()
                    .map(|r| format!("{} {}", r.method, r.path))
                    .collect::<Vec<_>>()
            )
        })
    }
}

impl Drop for CloudStandIn {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so that it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Reads one request, answers it and closes the connection.
fn serve(stream: TcpStream, state: &Mutex<State>) {
    let Some(request) = crate::http::read_request(&stream) else {
        return;
    };
    let at = Instant::now();
    let (method, target, headers, body) = (
        request.method,
        request.target,
        request.headers,
        request.body,
    );
    let path = target
        .strip_prefix(PREFIX)
        .unwrap_or(&target)
        .split('?')
        .next()
        .unwrap_or_default()
        .to_owned();
    let (status, reply) = {
        let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
        state.requests.push(Recorded {
            at,
            method: method.clone(),
            path: path.clone(),
            authorization: headers.get("authorization").cloned(),
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        });
        route(&mut state, &method, &path, target.starts_with(PREFIX))
    };
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        409 => "Conflict",
        _ => "Error",
    };
    let text = reply.to_string();
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    let mut stream = stream;
    let _ = stream.write_all(response.as_bytes());
    let _ = stream.flush();
}

/// The status and body for one request.
fn route(state: &mut State, method: &str, path: &str, prefixed: bool) -> (u16, Value) {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    match (prefixed, method, segments.as_slice()) {
        (true, "GET", ["agent", list @ ("function_calls" | "human_contacts"), "pending"]) => {
            let key = if *list == "function_calls" {
                "function_calls"
            } else {
                "human_contacts"
            };
            if let Some(left) = state.failing_polls.get_mut(key).filter(|n| **n > 0) {
                *left -= 1;
                return (500, json!({"error": "internal error"}));
            }
            let items = if key == "function_calls" {
                state.function_calls.clone()
            } else {
                state.human_contacts.clone()
            };
            let total = items.len();
            (
                200,
                json!({"items": items, "total": total, "limit": 100, "offset": 0,
                       "has_more": false}),
            )
        }
        (true, "POST", ["agent", "function_calls" | "human_contacts", call_id, "respond"]) => {
            if let Some(status) = state.respond_status.get(*call_id) {
                return (*status, json!({"error": "forced by the test"}));
            }
            state.function_calls.retain(|i| i["call_id"] != *call_id);
            state.human_contacts.retain(|i| i["call_id"] != *call_id);
            (200, json!({"call_id": call_id}))
        }
        _ => (404, json!({"error": "not found"})),
    }
}
