//! Stream-json input (claude-code.md §3.3, §3.4): user messages that arrive during a turn
//! wait for its end; control requests are answered as they come, between turns and during
//! them, as the real CLI answers them.

use std::time::Duration;

use serde_json::Value;

use super::{Run, Stop};
use crate::cli::PERMISSION_MODES;
use crate::control::{Answer, Cancel, Initialized, Response};
use crate::events::{Event, Replay, System};
use crate::ids;
use crate::input::Input;
use crate::signals::{Signal, POLL};

/// What comes after a turn.
#[derive(Debug)]
pub enum Next {
    /// A user message: the next turn.
    Message(String),
    /// stdin is closed: the process exits with the last turn's code.
    Closed,
    /// The process exits with this code at once.
    Exit(i32),
}

impl Run {
    /// Between turns: the next user message to answer, a held one first, else the next from
    /// stdin (answering control requests meanwhile); or why the process ends: stdin closed, or
    /// a signal (SIGINT exits 0, SIGTERM and SIGHUP 128 + the signal, without output).
    pub fn next_message(&mut self) -> Next {
        loop {
            match self.signals.pending() {
                Some(Signal::Interrupt) => return Next::Exit(0),
                Some(Signal::Fatal(code)) => return Next::Exit(code),
                Some(Signal::Requested) | None => {}
            }
            let Some(inbox) = self.inbox.as_mut() else {
                return Next::Closed;
            };
            if let Some(text) = inbox.next_held() {
                return Next::Message(text);
            }
            if inbox.is_closed() {
                return Next::Closed;
            }
            match inbox.receive(Some(POLL)) {
                Some(Input::User(text)) => return Next::Message(text),
                Some(Input::Control {
                    request_id,
                    request,
                }) => {
                    let answered = if request["subtype"] == "interrupt" {
                        // Nothing runs: the interrupt just succeeds.
                        self.signals.interrupt_answered();
                        self.emit(&Event::ControlResponse(Response::success(request_id, None)))
                    } else {
                        self.answer(request_id, &request)
                    };
                    if answered.is_err() {
                        return Next::Exit(1);
                    }
                }
                Some(Input::ControlResponse(_) | Input::Invalid(_) | Input::Eof) | None => {}
            }
        }
    }

    /// Why stdin ended early (a line that was not JSON), for stderr and exit 1.
    pub fn input_error(&self) -> Option<&str> {
        self.inbox.as_ref()?.error()
    }

    /// During a turn: takes one message from stdin, waiting at most `timeout`. User messages
    /// are held for later, control requests answered; an `interrupt` stops the turn (during
    /// tool call `tool_use_id`, if any). Returns a `control_response` for the caller, who may
    /// be waiting for it.
    pub(super) fn read_inbox(
        &mut self,
        timeout: Option<Duration>,
        tool_use_id: Option<&str>,
    ) -> Result<Option<Value>, Stop> {
        let Some(inbox) = self.inbox.as_mut() else {
            return Ok(None);
        };
        match inbox.receive(timeout) {
            Some(Input::User(text)) => inbox.hold(text),
            Some(Input::Control {
                request_id,
                request,
            }) => {
                if request["subtype"] == "interrupt" {
                    self.interrupt(request_id)?;
                    return Err(Stop::Interrupted {
                        tool_use_id: tool_use_id.map(str::to_string),
                        by_sigint: false,
                    });
                }
                self.answer(request_id, &request)?;
            }
            Some(Input::ControlResponse(response)) => return Ok(Some(response)),
            Some(Input::Invalid(_) | Input::Eof) | None => {}
        }
        Ok(None)
    }

    /// Before an interrupted turn's markers: answers the `interrupt` requests that stopped
    /// it and are not answered yet (the flag is raised before the request is handed over).
    pub(super) fn settle_interrupts(&mut self) {
        while self.signals.interrupt_requested() {
            let Some(inbox) = self.inbox.as_mut() else {
                return;
            };
            match inbox.receive(None) {
                Some(Input::User(text)) => inbox.hold(text),
                Some(Input::Control {
                    request_id,
                    request,
                }) => {
                    let _ = if request["subtype"] == "interrupt" {
                        self.interrupt(request_id)
                    } else {
                        self.answer(request_id, &request)
                    };
                }
                Some(Input::ControlResponse(_) | Input::Invalid(_)) => {}
                Some(Input::Eof) | None => return,
            }
        }
    }

    /// Answers an `interrupt` of the running turn: the pending `can_use_tool` request is
    /// withdrawn (and its call counted as denied), then the interrupt succeeds.
    fn interrupt(&mut self, request_id: Value) -> Result<(), Stop> {
        self.signals.interrupt_answered();
        if let Some((asked, denial)) = self.asking.take() {
            self.denials.push(denial);
            self.emit(&Event::ControlCancelRequest(Cancel { request_id: asked }))?;
        }
        self.emit(&Event::ControlResponse(Response::success(request_id, None)))
    }

    /// Answers a control request other than `interrupt`.
    fn answer(&mut self, request_id: Value, request: &Value) -> Result<(), Stop> {
        let subtype = request["subtype"].as_str().unwrap_or_default();
        let response = match subtype {
            "initialize" => {
                let initialized = Initialized::new(crate::events::api_key_source());
                Response::success(request_id, Some(Answer::Initialized(Box::new(initialized))))
            }
            "set_permission_mode" => {
                let mode = request["mode"].as_str().unwrap_or_default().to_string();
                let known = PERMISSION_MODES.contains(&mode.as_str());
                if known {
                    self.policy.set_mode(&mode);
                    self.session.permission_mode = mode.clone();
                }
                self.emit(&Event::ControlResponse(Response::success(
                    request_id,
                    Some(Answer::Mode { mode: mode.clone() }),
                )))?;
                if known {
                    self.emit(&Event::System(System::Status {
                        status: None,
                        permission_mode: mode,
                        uuid: ids::uuid(),
                        session_id: self.session.id.clone(),
                    }))?;
                }
                return Ok(());
            }
            "set_model" => {
                if let Some(model) = request["model"].as_str() {
                    let resolved = crate::resolve_model(Some(model));
                    let text = if resolved == model {
                        format!("Set model to {model}")
                    } else {
                        format!("Set model to {model} ({resolved})")
                    };
                    self.emit(&Event::Replay(Replay::command_output(
                        &self.session.id,
                        &text,
                    )))?;
                    self.session.model = resolved;
                }
                Response::success(request_id, None)
            }
            "file_suggestions" => {
                let query = request["query"].as_str().unwrap_or_default();
                let suggestions = crate::files::suggest(&self.session.cwd, query);
                Response::success(request_id, Some(Answer::Files { suggestions }))
            }
            _ => Response::error(
                request_id,
                format!("Unsupported control request subtype: {subtype}"),
            ),
        };
        self.emit(&Event::ControlResponse(response))
    }
}
