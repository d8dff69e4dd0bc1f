//! A session's transcript: each `claude` line kept verbatim, as conversation events and updates.

use hld_client::protocol::{ConversationEventType, PermissionMode, RateLimitKind, UsageLimit};
use serde_json::Value;

use crate::claude::control::{Control, ControlResponse};
use crate::claude::stream::{
    limit_in_text, parse_line, AgentEvent, ContentBlock, MessageLine, RunResult, System,
};
use crate::store::{Ingest, NewEvent, SessionUpdate};

/// The subtype of the system event an `api_retry` line becomes.
pub const API_RETRY: &str = "api_retry";
/// The subtype of the system event a `compact_boundary` line becomes.
pub const COMPACT_BOUNDARY: &str = "compact_boundary";

/// The subtype of the system event a command's output becomes (`Set model to …` after
/// `set_model`), which `claude` replays as a user line in `<local-command-stdout>` tags.
pub const LOCAL_COMMAND: &str = "local_command";

/// The transcript of one `claude` process.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    claude_session_id: Option<String>,
    /// The `result` that ended a turn, until taken.
    result: Option<RunResult>,
    /// The cost the process has reported so far: each `result` reports it since the start.
    process_cost: f64,
    /// Control lines read, until taken.
    controls: Vec<Control>,
    /// Answers to the daemon's control requests, until taken.
    responses: Vec<ControlResponse>,
    /// The model of the current turn, as its `init` names it (a live switch changes it).
    model: Option<String>,
    /// A compaction's boundary was stored and the command's own output ("Compacted") not yet
    /// read: that output belongs to the boundary, which already shows it.
    compacted: bool,
    /// The window `claude` last reported refusing requests, until it reports requests allowed.
    rejected: Option<UsageLimit>,
    /// This turn's API call was refused by a usage limit (`error: "rate_limit"`).
    refused: bool,
    /// The usage limit that refused the turn a `result` ended, until taken.
    usage_limit: Option<UsageLimit>,
}

impl Transcript {
    pub fn new() -> Self {
        Self::default()
    }

    /// A transcript of a process resuming Claude session `id`.
    pub fn resuming(id: Option<String>) -> Self {
        Transcript {
            claude_session_id: id,
            ..Self::default()
        }
    }

    /// Claude's session id: from the first line that carried a non-empty one.
    pub fn claude_session_id(&self) -> Option<&str> {
        self.claude_session_id.as_deref()
    }

    /// The `result` that ended a turn since last asked.
    pub fn take_result(&mut self) -> Option<RunResult> {
        self.result.take()
    }

    /// The usage limit that refused the turn last ended, if one did, since last asked.
    pub fn take_usage_limit(&mut self) -> Option<UsageLimit> {
        self.usage_limit.take()
    }

    /// The control lines read since last asked.
    pub fn take_controls(&mut self) -> Vec<Control> {
        std::mem::take(&mut self.controls)
    }

    /// The answers to the daemon's control requests read since last asked.
    pub fn take_responses(&mut self) -> Vec<ControlResponse> {
        std::mem::take(&mut self.responses)
    }

    /// Adds what one stdout line (without its `\n`) writes to `batch`: the verbatim line, its
    /// events, and a session update merged into the batch's (this line's fields win). False
    /// for an answer to a control request of the daemon's, which is not stored (its asker
    /// keeps what it needs; an `initialize` answer is about 10 KiB).
    pub fn apply_to(&mut self, text: &str, batch: &mut Ingest) -> bool {
        let line = parse_line(text);
        let mut update = SessionUpdate::default();
        if self.claude_session_id.is_none() {
            if let Some(id) = line.session_id.filter(|id| !id.is_empty()) {
                self.claude_session_id = Some(id.clone());
                update.claude_session_id = Some(id);
            }
        }
        let sid = self.claude_session_id.as_deref().unwrap_or_default();
        let events = &mut batch.events;
        match line.event {
            AgentEvent::System(System::Init(init)) => {
                update.model = init.model.filter(|m| !m.is_empty());
                update.skills = Some(init.skills);
                self.model.clone_from(&update.model);
            }
            AgentEvent::System(System::ApiRetry(retry)) => events.push(NewEvent {
                role: Some("system".to_owned()),
                content: Some(retry.describe()),
                is_error: true,
                subtype: Some(API_RETRY.to_owned()),
                ..NewEvent::new(sid, ConversationEventType::System)
            }),
            AgentEvent::System(System::Status(status)) => {
                // The daemon sets only `default` and `plan`; Claude may enter plan mode itself.
                let mode = status
                    .permission_mode
                    .as_deref()
                    .and_then(PermissionMode::parse);
                update.permission_mode = mode;
            }
            AgentEvent::System(System::CompactBoundary(boundary)) => {
                self.compacted = true;
                events.push(NewEvent {
                    role: Some("system".to_owned()),
                    content: Some(boundary.describe()),
                    subtype: Some(COMPACT_BOUNDARY.to_owned()),
                    ..NewEvent::new(sid, ConversationEventType::System)
                })
            }
            AgentEvent::System(System::Other) => tracing::debug!("system line kept raw"),
            AgentEvent::RateLimit(info) => {
                // The CLI reports one state at a time: a window refusing, or none.
                self.rejected = info.rejected().then(|| UsageLimit {
                    kind: info.kind().unwrap_or_else(unknown_kind),
                    resets_at: info.reset(),
                });
                batch.rate_limits.extend(info.window(&crate::time::now()));
            }
            AgentEvent::Assistant(msg) => {
                self.refused |= msg.error.as_deref() == Some("rate_limit");
                // The last call's context is what the conversation now takes of the window.
                update.context.effective_context_tokens = msg.message.usage.context_tokens();
                message_events(sid, "assistant", msg, events)
            }
            // What the CLI writes for itself was not said by anyone: a command's output is a
            // system line, a compaction shows as its boundary, the user's words as sent.
            AgentEvent::User(msg) => match command_output(&msg) {
                Some(_) if std::mem::take(&mut self.compacted) => {
                    tracing::debug!("a compaction's output kept raw")
                }
                Some(output) => events.push(NewEvent {
                    role: Some("system".to_owned()),
                    content: Some(output.trim().to_owned()),
                    subtype: Some(LOCAL_COMMAND.to_owned()),
                    ..NewEvent::new(sid, ConversationEventType::System)
                }),
                None if msg.is_replay == Some(true) || msg.is_synthetic == Some(true) => {
                    tracing::debug!("replayed or synthetic user line kept raw")
                }
                None => message_events(sid, "user", msg, events),
            },
            AgentEvent::Result(result) => {
                // The turn's own cost; an interrupted turn may report less (0) than before.
                if let Some(cost) = result.cost() {
                    update.cost_usd = Some((cost - self.process_cost).max(0.0));
                    self.process_cost = self.process_cost.max(cost);
                }
                update.duration_ms = result.duration_ms;
                update.num_turns = result.num_turns;
                update.result_content = result.result.clone();
                update.result_is_error = Some(result.is_error());
                update.input_tokens = result.usage.input_tokens;
                update.output_tokens = result.usage.output_tokens;
                update.context.cache_creation_input_tokens =
                    result.usage.cache_creation_input_tokens;
                update.context.cache_read_input_tokens = result.usage.cache_read_input_tokens;
                // The window of the turn's model; `model_usage` counts every model the
                // process used (a switched one, subagents), so the largest is only a fallback.
                let turn_model = self.model.as_ref().and_then(|m| result.model_usage.get(m));
                update.context.context_limit = match turn_model.and_then(|m| m.context_window) {
                    Some(window) => Some(window),
                    None => (result.model_usage.values())
                        .filter_map(|m| m.context_window)
                        .max(),
                };
                update.error_message = result.error_message();
                self.usage_limit = self.limit_of(&result);
                self.result = Some(result);
            }
            AgentEvent::ControlResponse(response) => {
                self.responses.push(response);
                return false;
            }
            AgentEvent::Control(control) => self.controls.push(control),
            AgentEvent::Unknown { kind } => {
                tracing::info!(kind = %kind.as_deref().unwrap_or("none"), "unknown line type kept raw");
            }
            AgentEvent::Malformed(error) => {
                tracing::warn!(%error, "malformed line from claude kept raw");
            }
        }
        batch.raw_lines.push(text.to_owned());
        if update != SessionUpdate::default() {
            batch.update = Some(match batch.update.take() {
                Some(earlier) => earlier.merged_with(update),
                None => update,
            });
        }
        true
    }

    /// The usage limit that refused the turn `result` ends: a failed turn whose API call the
    /// limit refused, whose text names a limit, or that failed while a window refuses. The
    /// window is the one the text names, else the refusing one; its reset, the refusing one's.
    fn limit_of(&mut self, result: &RunResult) -> Option<UsageLimit> {
        let refused = std::mem::take(&mut self.refused);
        let named = result.result.as_deref().and_then(limit_in_text);
        if !result.is_error() || !(refused || named.is_some() || self.rejected.is_some()) {
            return None;
        }
        let rejected = self.rejected.clone();
        Some(match (named, rejected) {
            (Some(RateLimitKind::Unknown(_)) | None, Some(rejected)) => rejected,
            (Some(kind), Some(rejected)) if kind == rejected.kind => rejected,
            (named, _) => UsageLimit {
                kind: named.unwrap_or_else(unknown_kind),
                resets_at: None,
            },
        })
    }
}

/// The kind of a limit no window names.
fn unknown_kind() -> RateLimitKind {
    RateLimitKind::Unknown("unknown".to_owned())
}

/// The output of a command `claude` ran itself, if `line` replays one: not the user's words.
fn command_output(line: &MessageLine) -> Option<&str> {
    match &line.message.content[..] {
        [ContentBlock::Text(text)] => text
            .strip_prefix("<local-command-stdout>")?
            .strip_suffix("</local-command-stdout>"),
        _ => None,
    }
}

/// The events of one message: text → message and thinking → thinking from `role`, tool_use →
/// tool call (no role, as the Go daemon stored it), tool_result → tool result (`user`).
fn message_events(sid: &str, role: &str, line: MessageLine, events: &mut Vec<NewEvent>) {
    let parent = line.parent_tool_use_id;
    events.extend(line.message.content.into_iter().filter_map(|block| {
        let event = match block {
            ContentBlock::Text(text) => NewEvent::message(sid, role, text),
            ContentBlock::Thinking(thinking) => NewEvent {
                role: Some(role.to_owned()),
                content: Some(thinking),
                ..NewEvent::new(sid, ConversationEventType::Thinking)
            },
            ContentBlock::ToolUse { id, name, input } => NewEvent {
                tool_id: Some(id),
                tool_name: Some(name),
                tool_input_json: Some(match input {
                    Value::Null => "{}".to_owned(),
                    input => input.to_string(),
                }),
                ..NewEvent::new(sid, ConversationEventType::ToolCall)
            },
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => NewEvent {
                role: Some("user".to_owned()),
                tool_result_for_id: Some(tool_use_id),
                tool_result_content: content,
                is_error,
                ..NewEvent::new(sid, ConversationEventType::ToolResult)
            },
            ContentBlock::Other(_) => return None,
        };
        Some(NewEvent {
            parent_tool_use_id: parent.clone(),
            ..event
        })
    }));
}

#[cfg(test)]
mod tests;
