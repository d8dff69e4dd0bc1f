//! A loopback stand-in for Anthropic's Messages API, for the tests that run the real `claude`
//! CLI (pointed here with `ANTHROPIC_BASE_URL`): `POST /v1/messages` answers with the reply a
//! test scripts for each request, streamed as Server-Sent Events like the real API
//! (`message_start`, `content_block_*`, `message_delta`, `message_stop`) or as one JSON message
//! when `stream` is false; every request is recorded so that tests can assert what the model
//! was sent.
//!
//! A tiny HTTP/1.1 server on `127.0.0.1:0`: one thread per connection, one request per
//! connection (`Connection: close`), bodies by `Content-Length`. It counts the text and tool
//! input deltas it has streamed, so that a test can act mid-stream. Besides the Messages API the
//! CLI 2.1.197 sends a `HEAD /` reachability probe at start-up (answered 200); anything else is
//! logged to stderr and answered 404 with an API-style error.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};

use crate::{wait_for, WAIT};

mod limits;

/// The `input_tokens` every reply reports.
pub const INPUT_TOKENS: u64 = 1000;
/// The `output_tokens` every reply reports.
pub const OUTPUT_TOKENS: u64 = 100;

/// One request as received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// `HEAD`, `GET`, `POST`, ...
    pub method: String,
    /// The request target, query included (the CLI calls `/v1/messages?beta=true`).
    pub target: String,
    /// The body as JSON (`Null` when empty or not JSON).
    pub body: Value,
}

impl Recorded {
    /// Whether this is a streaming Messages API call, i.e. a model turn of the agent loop.
    pub fn is_model_turn(&self) -> bool {
        self.method == "POST"
            && path_of(&self.target) == "/v1/messages"
            && self.body["stream"] == true
    }
}

/// One content block of a scripted reply.
#[derive(Debug, Clone)]
pub enum Block {
    /// A `text` block.
    Text(String),
    /// A `tool_use` block.
    ToolUse {
        /// The `toolu_...` id.
        id: String,
        /// The tool's name, e.g. `Write`.
        name: String,
        /// The tool's input object.
        input: Value,
    },
}

/// A scripted model reply: its blocks, and how slowly to stream them; or an HTTP error.
/// Either may carry extra response headers, such as the unified rate-limit ones.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The content blocks, in order.
    pub blocks: Vec<Block>,
    /// The pause before each streamed delta: the stimulus of a slow model, which a test can
    /// interrupt mid-stream.
    pub delta_delay: Duration,
    /// Instead of a message: this HTTP status and API error body.
    pub error: Option<(u16, Value)>,
    /// Response headers besides the stand-in's own.
    pub headers: Vec<(String, String)>,
}

impl Reply {
    /// A reply of one text block.
    pub fn text(text: &str) -> Reply {
        Reply {
            blocks: vec![Block::Text(text.to_owned())],
            delta_delay: Duration::ZERO,
            error: None,
            headers: Vec::new(),
        }
    }

    /// An API error: `status` with the body `{"type":"error","error":{type, message}}`.
    pub fn http_error(status: u16, kind: &str, message: &str) -> Reply {
        Reply {
            blocks: Vec::new(),
            delta_delay: Duration::ZERO,
            error: Some((
                status,
                json!({"type": "error", "error": {"type": kind, "message": message}}),
            )),
            headers: Vec::new(),
        }
    }

    /// A reply of a text block followed by a `tool_use` block.
    pub fn tool_use(text: &str, id: &str, name: &str, input: Value) -> Reply {
        Reply {
            blocks: vec![
                Block::Text(text.to_owned()),
                Block::ToolUse {
                    id: id.to_owned(),
                    name: name.to_owned(),
                    input,
                },
            ],
            delta_delay: Duration::ZERO,
            error: None,
            headers: Vec::new(),
        }
    }

    /// The same reply, streamed with `delay` before each delta (text goes one word a delta).
    pub fn slow(mut self, delay: Duration) -> Reply {
        self.delta_delay = delay;
        self
    }

    fn stop_reason(&self) -> &'static str {
        if self
            .blocks
            .iter()
            .any(|b| matches!(b, Block::ToolUse { .. }))
        {
            "tool_use"
        } else {
            "end_turn"
        }
    }
}

/// Chooses the reply to a Messages API request from its body.
type Responder = dyn Fn(&Value) -> Reply + Send + Sync;

/// The running stand-in. Stops accepting when dropped.
#[derive(Debug)]
pub struct AnthropicStandIn {
    port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
    deltas: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl AnthropicStandIn {
    /// Starts the stand-in; `responder` picks the reply to each `/v1/messages` request.
    pub fn start(responder: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> AnthropicStandIn {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the stand-in");
        let port = listener.local_addr().expect("local address").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let deltas = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let responder: Arc<Responder> = Arc::new(responder);
        let counter = Arc::new(AtomicU64::new(0));
        let (thread_requests, thread_deltas, thread_stop) = (
            Arc::clone(&requests),
            Arc::clone(&deltas),
            Arc::clone(&stop),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if thread_stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let requests = Arc::clone(&thread_requests);
                let deltas = Arc::clone(&thread_deltas);
                let responder = Arc::clone(&responder);
                let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
                std::thread::spawn(move || {
                    serve(stream, &requests, &deltas, responder.as_ref(), n)
                });
            }
        });
        AnthropicStandIn {
            port,
            requests,
            deltas,
            stop,
        }
    }

    /// The value for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Recorded>> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().clone()
    }

    /// The bodies of the model turns (streaming `/v1/messages` calls) so far.
    pub fn model_turns(&self) -> Vec<Value> {
        self.lock()
            .iter()
            .filter(|r| r.is_model_turn())
            .map(|r| r.body.clone())
            .collect()
    }

    /// Waits until at least `n` model turns arrived ([`WAIT`] at most); returns them.
    pub fn wait_model_turns(&self, n: usize) -> Vec<Value> {
        wait_for(WAIT, || Some(self.model_turns()).filter(|t| t.len() >= n)).unwrap_or_else(|| {
            panic!(
                "the stand-in saw {} model turns, not {n}; requests: {:?}",
                self.model_turns().len(),
                self.requests()
                    .iter()
                    .map(|r| format!("{} {}", r.method, r.target))
                    .collect::<Vec<_>>()
            )
        })
    }

    /// Waits until at least `n` content deltas (a word of text, half a tool input) have been
    /// written to the CLI, over all streams ([`WAIT`] at most).
    pub fn wait_deltas(&self, n: u64) {
        let streamed = wait_for(WAIT, || {
            (self.deltas.load(Ordering::SeqCst) >= n).then_some(())
        });
        assert!(
            streamed.is_some(),
            "the stand-in streamed {} deltas, not {n}",
            self.deltas.load(Ordering::SeqCst)
        );
    }
}

impl Drop for AnthropicStandIn {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so that it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// The tool results in the last user message of a request (the answers to the previous
/// turn's `tool_use` blocks).
pub fn tool_results(request: &Value) -> Vec<Value> {
    let last = request["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"));
    last.and_then(|m| m["content"].as_array())
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b["type"] == "tool_result")
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The system prompt of a request as one string (its text blocks joined by newlines).
pub fn system_text(request: &Value) -> String {
    match &request["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The target without its query string.
fn path_of(target: &str) -> &str {
    target.split('?').next().unwrap_or_default()
}

/// Reads one request, answers it and closes the connection.
fn serve(
    stream: TcpStream,
    requests: &Mutex<Vec<Recorded>>,
    deltas: &AtomicU64,
    responder: &Responder,
    n: u64,
) {
    let Some(request) = crate::http::read_request(&stream) else {
        return;
    };
    let (method, target, body) = (request.method, request.target, request.body);
    let recorded = Recorded {
        method,
        target,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    requests
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(recorded.clone());
    let mut out = stream;
    let request_id = format!("req_standin{n:06}");
    match (recorded.method.as_str(), path_of(&recorded.target)) {
        ("HEAD", "/") => respond(&mut out, 200, &request_id, None, &[]),
        ("POST", "/v1/messages") => {
            let reply = responder(&recorded.body);
            let model = recorded.body["model"].as_str().unwrap_or("claude-standin");
            let message_id = format!("msg_standin{n:06}");
            if let Some((status, body)) = &reply.error {
                respond(&mut out, *status, &request_id, Some(body), &reply.headers);
            } else if recorded.is_model_turn() {
                stream_reply(&mut out, &request_id, &message_id, model, &reply, deltas);
            } else {
                let message = json!({
                    "id": message_id, "type": "message", "role": "assistant", "model": model,
                    "content": reply.blocks.iter().map(block_json).collect::<Vec<_>>(),
                    "stop_reason": reply.stop_reason(), "stop_sequence": null,
                    "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS},
                });
                respond(&mut out, 200, &request_id, Some(&message), &reply.headers);
            }
        }
        _ => {
            eprintln!(
                "anthropic stand-in: unexpected {} {}: {}",
                recorded.method, recorded.target, recorded.body
            );
            let error = json!({"type": "error", "error": {"type": "not_found_error",
                "message": format!("the stand-in does not serve {}", recorded.target)}});
            respond(&mut out, 404, &request_id, Some(&error), &[]);
        }
    }
}

/// Writes a complete JSON response (or an empty one), with `headers` besides its own.
fn respond(
    out: &mut TcpStream,
    status: u16,
    request_id: &str,
    body: Option<&Value>,
    headers: &[(String, String)],
) {
    let reason = match status {
        200 => "OK",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        529 => "Overloaded",
        _ => "Error",
    };
    let text = body.map(Value::to_string).unwrap_or_default();
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nrequest-id: {request_id}\r\n\
         {}Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
        header_lines(headers),
        text.len()
    );
    let _ = out.write_all(response.as_bytes());
    let _ = out.flush();
}

/// `name: value\r\n` for each header.
fn header_lines(headers: &[(String, String)]) -> String {
    headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect()
}

/// A block as it appears in a complete message.
fn block_json(block: &Block) -> Value {
    match block {
        Block::Text(text) => json!({"type": "text", "text": text}),
        Block::ToolUse { id, name, input } => {
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
    }
}

/// Streams `reply` as Server-Sent Events, counting the deltas written in `deltas`; gives up
/// quietly when the client goes away (an interrupted CLI closes the connection mid-stream).
fn stream_reply(
    out: &mut TcpStream,
    request_id: &str,
    message_id: &str,
    model: &str,
    reply: &Reply,
    deltas: &AtomicU64,
) {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
         request-id: {request_id}\r\n{}Connection: close\r\n\r\n",
        header_lines(&reply.headers)
    );
    if out.write_all(head.as_bytes()).is_err() {
        return;
    }
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": 1,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}),
    )];
    for (index, block) in reply.blocks.iter().enumerate() {
        let (start, deltas) = match block {
            Block::Text(text) => (
                json!({"type": "text", "text": ""}),
                text.split_inclusive(' ')
                    .map(|piece| json!({"type": "text_delta", "text": piece}))
                    .collect::<Vec<_>>(),
            ),
            Block::ToolUse { id, name, input } => {
                let partial = input.to_string();
                let (a, b) = partial.split_at(partial.len() / 2);
                (
                    json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                    vec![
                        json!({"type": "input_json_delta", "partial_json": a}),
                        json!({"type": "input_json_delta", "partial_json": b}),
                    ],
                )
            }
        };
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        events.extend(deltas.into_iter().map(|delta| {
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            )
        }));
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": reply.stop_reason(), "stop_sequence": null},
               "usage": {"output_tokens": OUTPUT_TOKENS}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    for (name, data) in events {
        let delta = name == "content_block_delta";
        if delta && !reply.delta_delay.is_zero() {
            std::thread::sleep(reply.delta_delay);
        }
        let frame = format!("event: {name}\ndata: {data}\n\n");
        if out
            .write_all(frame.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            return;
        }
        if delta {
            deltas.fetch_add(1, Ordering::SeqCst);
        }
    }
}
