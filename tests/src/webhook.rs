//! A loopback webhook for the notification tests: it answers each POST with the next status
//! of a script (the last one for ever after) and records what was posted.
//!
//! A tiny HTTP/1.1 server on `127.0.0.1:0`: one thread per connection, one request per
//! connection (`Connection: close`), bodies by `Content-Length`.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::http::read_request;
use crate::{wait_for, WAIT};

/// One request as received.
#[derive(Debug, Clone)]
pub struct Posted {
    pub method: String,
    /// The path (with the secret the test put in it).
    pub target: String,
    /// The body as JSON (`Null` when not JSON).
    pub body: Value,
    /// The status it was answered with.
    pub status: u16,
}

#[derive(Debug)]
struct State {
    /// Statuses still to answer with; the last stays.
    script: Vec<u16>,
    posted: Vec<Posted>,
}

/// The running webhook. Its thread ends with the test process.
#[derive(Debug)]
pub struct Webhook {
    port: u16,
    state: Arc<Mutex<State>>,
}

impl Webhook {
    /// Starts the webhook answering with `script`, e.g. `[500, 500, 200]`.
    pub fn start(script: &[u16]) -> Webhook {
        assert!(!script.is_empty(), "a script has at least one status");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the webhook");
        let port = listener.local_addr().expect("local address").port();
        let state = Arc::new(Mutex::new(State {
            script: script.to_vec(),
            posted: Vec::new(),
        }));
        let thread_state = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let state = Arc::clone(&thread_state);
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        Webhook { port, state }
    }

    /// Its URL with `path` (where a test puts a secret).
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// What was posted so far.
    pub fn posted(&self) -> Vec<Posted> {
        self.state.lock().unwrap().posted.clone()
    }

    /// Waits until at least `n` requests arrived (within [`WAIT`]) and returns them all.
    pub fn wait_count(&self, n: usize) -> Vec<Posted> {
        wait_for(WAIT, || {
            let posted = self.posted();
            (posted.len() >= n).then_some(posted)
        })
        .unwrap_or_else(|| panic!("{n} webhook requests expected, got {:?}", self.posted()))
    }
}

fn serve(stream: TcpStream, state: &Mutex<State>) {
    let Some(request) = read_request(&stream) else {
        return;
    };
    let status = {
        let mut state = state.lock().unwrap();
        let status = match state.script.len() {
            1 => state.script[0],
            _ => state.script.remove(0),
        };
        state.posted.push(Posted {
            method: request.method,
            target: request.target,
            body: serde_json::from_slice(&request.body).unwrap_or(Value::Null),
            status,
        });
        status
    };
    let response =
        format!("HTTP/1.1 {status} Scripted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    let mut stream = stream;
    let _ = stream.write_all(response.as_bytes());
    let _ = stream.flush();
}
