//! Streaming input (`--input-format stream-json`): a thread reads stdin line by line, stamps
//! and records each line (see `record.rs`), and hands the messages to the run over a
//! channel. An `interrupt` control request also raises the interrupt flag at once, so that
//! whatever the running turn waits for stops (`signals.rs`).

use std::collections::VecDeque;
use std::io::BufRead;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use base64::Engine;
use serde_json::Value;

use crate::record::{Invocation, StdinLine};
use crate::scenarios::Scenario;
use crate::signals::Signals;

/// One message read from stdin.
#[derive(Debug)]
pub enum Input {
    /// A `user` message: one turn; its text (string content, or text blocks joined).
    User(String),
    /// A `control_request`: its `request_id` and `request` object.
    Control { request_id: Value, request: Value },
    /// A `control_response`: the `response` object (`subtype`, `request_id`, ...).
    ControlResponse(Value),
    /// A line that is not JSON: the CLI's stderr message (the reader stops there).
    Invalid(String),
    /// stdin closed, or a line was not JSON (see [`Inbox::error`]).
    Eof,
}

impl Input {
    /// Reads one stdin line; `None` for lines the CLI ignores (other types).
    fn parse(line: &str) -> Option<Self> {
        let value: Value = match serde_json::from_str(line) {
            Ok(value) => value,
            Err(error) => {
                return Some(Self::Invalid(format!(
                    "Error parsing streaming input line: {line}: SyntaxError: JSON Parse error: \
                     {error}"
                )))
            }
        };
        match value["type"].as_str()? {
            "user" => Some(Self::User(user_text(&value["message"]["content"]))),
            "control_request" => Some(Self::Control {
                request_id: value["request_id"].clone(),
                request: value["request"].clone(),
            }),
            "control_response" => Some(Self::ControlResponse(value["response"].clone())),
            _ => None,
        }
    }
}

/// The text of a user message's content: a string, or its blocks joined by newlines, each
/// image block as the line `[image: <media type>, <n> bytes]` (its base64 data decoded;
/// `invalid base64` when it does not decode).
fn user_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| match block["type"].as_str() {
                Some("image") => Some(image_line(&block["source"])),
                _ => block["text"].as_str().map(str::to_string),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn image_line(source: &Value) -> String {
    let media_type = source["media_type"].as_str().unwrap_or("unknown");
    let data = source["data"].as_str().unwrap_or_default();
    match base64::engine::general_purpose::STANDARD.decode(data) {
        Ok(bytes) => format!("[image: {media_type}, {} bytes]", bytes.len()),
        Err(_) => format!("[image: {media_type}, invalid base64]"),
    }
}

/// What the model says of the images in a user message's text (as [`user_text`] renders
/// it): `I see 2 images. `, or nothing without images.
pub fn images_seen(text: &str) -> String {
    match text.lines().filter(|l| l.starts_with("[image: ")).count() {
        0 => String::new(),
        1 => "I see 1 image. ".to_string(),
        n => format!("I see {n} images. "),
    }
}

/// The messages read so far, and the user messages that wait for the running turn to end.
#[derive(Debug)]
pub struct Inbox {
    incoming: Receiver<Input>,
    /// User messages received during a turn, oldest first.
    waiting: VecDeque<String>,
    /// Set once stdin is closed (or unreadable): no more input will come.
    closed: bool,
    /// The message about a line that was not JSON, which ends the input.
    error: Option<String>,
}

impl Inbox {
    /// Starts the reader thread on stdin. Each line is appended to `invocation`'s record;
    /// `interrupt` control requests raise the flag in `signals`.
    pub fn start(mut invocation: Invocation, signals: Signals) -> Self {
        let (sender, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                let stamp = StdinLine::now(&line);
                let input = Input::parse(&line);
                if let Some(Input::User(text)) = &input {
                    let scenario = Scenario::select(text).map_or("", Scenario::name);
                    invocation.first_prompt(text, scenario);
                }
                invocation.stdin.push(stamp);
                if let Err(error) = invocation.rewrite() {
                    eprintln!("fake-claude: cannot write the invocation log: {error}");
                }
                if let Some(Input::Control { request, .. }) = &input {
                    if request["subtype"] == "interrupt" {
                        signals.request_interrupt();
                    }
                }
                let invalid = matches!(input, Some(Input::Invalid(_)));
                if let Some(input) = input {
                    if sender.send(input).is_err() || invalid {
                        return;
                    }
                }
            }
            let _ = sender.send(Input::Eof);
        });
        Self {
            incoming,
            waiting: VecDeque::new(),
            closed: false,
            error: None,
        }
    }

    /// The next message, waiting at most `timeout` (forever when `None`); `None` if none came.
    /// After stdin closed, `Eof` again and again (never `Invalid`).
    pub fn receive(&mut self, timeout: Option<Duration>) -> Option<Input> {
        if self.closed {
            return match timeout {
                Some(timeout) => {
                    std::thread::sleep(timeout);
                    None
                }
                None => Some(Input::Eof),
            };
        }
        let input = match timeout {
            None => self.incoming.recv().unwrap_or(Input::Eof),
            Some(timeout) => match self.incoming.recv_timeout(timeout) {
                Ok(input) => input,
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => Input::Eof,
            },
        };
        Some(match input {
            Input::Invalid(message) => {
                self.closed = true;
                self.error = Some(message);
                Input::Eof
            }
            Input::Eof => {
                self.closed = true;
                Input::Eof
            }
            input => input,
        })
    }

    /// Whether stdin is closed: no more input will come.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Why the input ended early: a line that was not JSON (the CLI exits 1 with this).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Keeps a user message for after the running turn.
    pub fn hold(&mut self, text: String) {
        self.waiting.push_back(text);
    }

    /// The oldest user message held back, if any.
    pub fn next_held(&mut self) -> Option<String> {
        self.waiting.pop_front()
    }
}
