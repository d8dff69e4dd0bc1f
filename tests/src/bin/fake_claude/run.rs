//! One process of the fake model: the conversation state, the steps scenarios are made of
//! (model round-trips, text, tool calls with their permission step), and how a turn ends.
//! With stream-json input a process plays one turn per user message (`live.rs`).

mod ask;
pub mod compact;
pub mod limit;
mod live;
mod tool_call;
pub mod usage;

pub use live::Next;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::events::{
    Assistant, Block, Event, Init, InitFacts, McpServerStatus, Message, MessageUsage,
    SyntheticAssistant, System, User,
};
use crate::ids;
use crate::input::Inbox;
use crate::mcp::McpServers;
use crate::output::Output;
use crate::permissions::Policy;
use crate::results::{Completed, Denial, Failed, Failure, Tokens};
use crate::signals::{Signal, Signals};

/// The tool_result the real CLI prints for a tool call cut short by an interrupt.
const REJECTED: &str = "The user doesn't want to proceed with this tool use. The tool use was \
    rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what \
    you are doing and wait for the user to tell you how to proceed.";

/// The fake signature of thinking blocks (as in the transcripts).
const SIGNATURE: &str = "EqQBCkYIBxgCKkBmYWtlLXNpZ25hdHVyZQ==";

/// Why a scenario stopped before its end.
#[derive(Debug)]
pub enum Stop {
    /// SIGINT (`by_sigint`: exit 0 after the result), an `interrupt` control request or a
    /// permission deny with `interrupt` (the turn's exit code is 1, a live process reads on);
    /// `tool_use_id` names the tool call that was running or waiting for permission.
    Interrupted {
        tool_use_id: Option<String>,
        by_sigint: bool,
    },
    /// The next turn would exceed `--max-turns` (the limit).
    MaxTurns(u32),
    /// SIGTERM/SIGHUP: exit with this code, nothing more on stdout.
    Killed(i32),
    /// stdout is gone (the reader closed it).
    StdoutClosed,
}

impl Stop {
    /// The stop for `signal` arriving while tool call `tool_use_id` runs (if any).
    fn from_signal(signal: Signal, tool_use_id: Option<&str>) -> Self {
        match signal {
            Signal::Interrupt | Signal::Requested => Self::Interrupted {
                tool_use_id: tool_use_id.map(str::to_string),
                by_sigint: signal == Signal::Interrupt,
            },
            Signal::Fatal(code) => Self::Killed(code),
        }
    }
}

/// Whether a turn that came to `outcome` ends the process, also with stream-json input
/// (SIGINT ends it after the result, as in the real CLI; an `interrupt` request does not).
pub fn ends_process(outcome: &Result<Ending, Stop>) -> bool {
    matches!(
        outcome,
        Ok(Ending::Crash)
            | Err(Stop::Killed(_) | Stop::StdoutClosed)
            | Err(Stop::Interrupted {
                by_sigint: true,
                ..
            })
    )
}

/// How a scenario that ran to its end wants the run to end.
#[derive(Debug)]
pub enum Ending {
    /// `result/success` with the last assistant text; exit 0 (1 after a missing
    /// permission-prompt tool, like the real CLI).
    Success,
    /// The API "failed": `result/success` with `is_error: true`, this text and HTTP status
    /// (`api_error_status`, when the API answered); exit 1.
    ApiError(String, Option<u16>),
    /// Exit 2 at once, without a result line.
    Crash,
}

/// A tool call the model made.
#[derive(Debug)]
pub struct ToolUse {
    pub id: String,
    pub name: String,
    pub input: Value,
}

impl ToolUse {
    fn denial(&self) -> Denial {
        Denial {
            tool_name: self.name.clone(),
            tool_use_id: self.id.clone(),
            tool_input: self.input.clone(),
        }
    }
}

/// What a tool call came to, for the scenario's follow-up text.
#[derive(Debug)]
pub struct ToolReport {
    pub ok: bool,
    pub text: String,
}

/// The permission step's outcome when it does not stop the run.
enum Permission {
    Allow(Value),
    /// Listed in `permission_denials`.
    Deny(String),
    /// The prompt tool failed; an error tool_result, not a denial.
    Failed(String),
}

/// Who the conversation is with and what was said before.
#[derive(Debug)]
pub struct Session {
    pub id: String,
    pub cwd: PathBuf,
    /// The resolved model id.
    pub model: String,
    /// The current turn's prompt.
    pub prompt: String,
    /// The prompts of earlier turns of this conversation (also of resumed runs).
    pub history: Vec<String>,
    /// `default`, `acceptEdits`, ... as `init` reports it.
    pub permission_mode: String,
}

/// A process in progress: the current turn and what the process has spent so far.
#[derive(Debug)]
pub struct Run {
    pub(crate) session: Session,
    policy: Policy,
    max_turns: Option<u32>,
    out: Output,
    mcp: McpServers,
    signals: Signals,
    /// Stdin with stream-json input.
    inbox: Option<Inbox>,
    /// The pending `can_use_tool` request: its id and the call's denial entry.
    asking: Option<(String, Denial)>,
    /// When the current turn started.
    started: Instant,
    /// Model round-trips of the current turn, and of the process.
    turns: u32,
    api_calls: u32,
    /// The `message.usage` snapshot of the current round-trip, all the round-trip's tokens,
    /// the turn's, and the tokens per model since the process started.
    turn_tokens: Tokens,
    inflight: Tokens,
    tokens: Tokens,
    spent: BTreeMap<String, Tokens>,
    /// The turn's scripted model calls and their models (`usage.rs`).
    script: Vec<(String, Tokens)>,
    denials: Vec<Denial>,
    exit_code: i32,
    message_id: String,
    request_id: String,
    last_text: String,
}

impl Run {
    pub fn new(
        session: Session,
        policy: Policy,
        out: Output,
        mcp: McpServers,
        signals: Signals,
        inbox: Option<Inbox>,
    ) -> Self {
        Self {
            session,
            policy,
            max_turns: None,
            out,
            mcp,
            signals,
            inbox,
            asking: None,
            started: Instant::now(),
            turns: 0,
            api_calls: 0,
            turn_tokens: Tokens::default(),
            inflight: Tokens::default(),
            tokens: Tokens::default(),
            spent: BTreeMap::new(),
            script: Vec::new(),
            denials: Vec::new(),
            exit_code: 0,
            message_id: String::new(),
            request_id: String::new(),
            last_text: String::new(),
        }
    }

    /// Starts a turn answering `prompt`, at most `max_turns` model round-trips long.
    pub fn begin(&mut self, prompt: String, max_turns: Option<u32>) {
        self.session.prompt = prompt;
        self.max_turns = max_turns;
        self.started = Instant::now();
        self.turns = 0;
        self.inflight = Tokens::default();
        self.tokens = Tokens::default();
        self.exit_code = 0;
        self.last_text.clear();
        // Markers were checked when the scenario was selected.
        let script = usage::scripted(&self.session.prompt, &self.session.model);
        self.script = script.unwrap_or_default();
        self.count_script();
    }

    /// Prints `system/init`.
    pub fn announce(&mut self) -> Result<(), Stop> {
        let env_set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        let facts = InitFacts {
            cwd: self.session.cwd.display().to_string(),
            session_id: self.session.id.clone(),
            model: self.session.model.clone(),
            permission_mode: self.session.permission_mode.clone(),
            mcp_servers: self
                .mcp
                .servers()
                .iter()
                .map(|server| McpServerStatus {
                    name: server.name.clone(),
                    status: server.status(),
                })
                .collect(),
            mcp_tools: self.mcp.tool_names(),
            api_key_source: crate::events::api_key_source(),
            telemetry_disabled: env_set("DISABLE_TELEMETRY")
                || env_set("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"),
            home: std::env::var("HOME").unwrap_or_default(),
        };
        self.emit(&Event::System(System::Init(Box::new(Init::new(facts)))))
    }

    pub fn cwd(&self) -> &Path {
        &self.session.cwd
    }

    /// Whether MCP server `server` offers `tool`.
    pub fn offers(&self, server: &str, tool: &str) -> bool {
        self.mcp.has_tool(server, tool)
    }

    /// The answer to the prompt, mentioning the loaded history on a resumed conversation.
    pub fn greeting(&self) -> String {
        let prompt = &self.session.prompt;
        let seen = crate::input::images_seen(prompt);
        if self.session.history.is_empty() {
            return format!("{seen}Hello! You asked: {prompt}");
        }
        let earlier: Vec<String> = self
            .session
            .history
            .iter()
            .map(|p| Value::String(p.clone()).to_string())
            .collect();
        format!(
            "{seen}Continuing our conversation (turn {}). You said: {prompt}\n\n\
             (Earlier in this conversation you said: {})",
            self.session.history.len() + 1,
            earlier.join(", ")
        )
    }

    /// Starts a model round-trip: a new message id, its token usage, and the max-turns check.
    pub fn start_turn(&mut self) -> Result<(), Stop> {
        self.checkpoint(None)?;
        if let Some(limit) = self.max_turns.filter(|&limit| self.turns >= limit) {
            return Err(Stop::MaxTurns(limit));
        }
        self.turns += 1;
        self.api_calls += 1;
        self.message_id = ids::prefixed("msg_01", 28);
        self.request_id = ids::prefixed("req_011CV", 26);
        self.turn_tokens = if self.api_calls == 1 {
            Tokens {
                input: 4,
                cache_creation: 15873,
                cache_read: 0,
                output: 2,
            }
        } else {
            Tokens {
                input: 6,
                cache_creation: 412,
                cache_read: 15873 + 412 * u64::from(self.api_calls - 2),
                output: 2,
            }
        };
        self.inflight = Tokens::default();
        self.count(self.turn_tokens);
        self.turn_tokens = self.message_tokens(self.turn_tokens);
        Ok(())
    }

    /// A `system/thinking_tokens` line.
    pub fn thinking_tokens(&mut self, estimated: u64) -> Result<(), Stop> {
        self.checkpoint(None)?;
        self.emit(&Event::System(System::ThinkingTokens {
            estimated_tokens: estimated,
            estimated_tokens_delta: estimated,
            uuid: ids::uuid(),
            session_id: self.session.id.clone(),
        }))
    }

    /// A `system/api_retry` line: the API answered `status` and the call is tried again after
    /// `delay` (which is waited, unless a signal comes).
    pub fn api_retry(
        &mut self,
        attempt: u32,
        max_retries: u32,
        delay: Duration,
        status: u16,
    ) -> Result<(), Stop> {
        self.checkpoint(None)?;
        self.emit(&Event::System(System::ApiRetry {
            attempt,
            max_retries,
            retry_delay_ms: duration_ms(delay),
            error_status: Some(status),
            error: "authentication_failed",
            uuid: ids::uuid(),
            session_id: self.session.id.clone(),
        }))?;
        self.sleep(delay)
    }

    /// An assistant thinking block.
    pub fn think(&mut self, thinking: &str) -> Result<(), Stop> {
        self.block(Block::Thinking {
            thinking: thinking.into(),
            signature: SIGNATURE.into(),
        })
    }

    /// An assistant text block; the last one becomes the `result` text.
    pub fn say(&mut self, text: &str) -> Result<(), Stop> {
        self.block(Block::Text { text: text.into() })?;
        self.last_text = text.into();
        Ok(())
    }

    /// An assistant tool_use block with a fresh `toolu_` id.
    pub fn tool_use(&mut self, name: &str, input: Value) -> Result<ToolUse, Stop> {
        let call = ToolUse {
            id: ids::tool_use_id(),
            name: name.into(),
            input,
        };
        self.block(Block::ToolUse {
            id: call.id.clone(),
            name: call.name.clone(),
            input: call.input.clone(),
        })?;
        Ok(call)
    }

    /// The synthetic assistant message of a failed API call; ends the turn.
    pub fn api_error(&mut self, text: &str, error: &'static str) -> Result<Ending, Stop> {
        self.checkpoint(None)?;
        self.turns += 1;
        self.emit(&Event::SyntheticAssistant(SyntheticAssistant::new(
            &self.session.id,
            text,
            error,
        )))?;
        Ok(Ending::ApiError(text.into(), None))
    }

    /// A stdout line that is not JSON.
    pub fn emit_raw(&mut self, line: &str) -> Result<(), Stop> {
        self.checkpoint(None)?;
        self.out.emit_raw(line).map_err(|_| Stop::StdoutClosed)
    }

    /// An event of a type no parser knows.
    pub fn mystery_event(&mut self) -> Result<(), Stop> {
        self.checkpoint(None)?;
        self.emit(&Event::Mystery {
            session_id: self.session.id.clone(),
            uuid: ids::uuid(),
        })
    }

    /// Waits, unless a signal or an `interrupt` control request comes first.
    pub fn sleep(&mut self, duration: Duration) -> Result<(), Stop> {
        if self.inbox.is_none() {
            return self
                .signals
                .sleep(duration)
                .map_err(|signal| Stop::from_signal(signal, None));
        }
        let deadline = Instant::now() + duration;
        loop {
            self.checkpoint(None)?;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            self.read_inbox(Some(left.min(crate::signals::POLL)), None)?;
        }
    }

    /// Turns per-line flushing of stdout on or off.
    pub fn set_line_flush(&mut self, on: bool) {
        self.out.set_line_flush(on);
    }

    /// Prints how the turn ended (the `result` line) and returns the turn's exit code: the
    /// process's, when it ends with this turn.
    pub fn end_turn(&mut self, outcome: Result<Ending, Stop>) -> i32 {
        let session_id = self.session.id.clone();
        // Write errors no longer matter here: the exit code is all that is left to report.
        let code = match outcome {
            Ok(Ending::Success) => {
                let result = Completed::success(self.stats(self.turns), self.last_text.clone());
                let _ = self
                    .out
                    .emit_result(&Event::Result(result), &self.last_text);
                self.exit_code
            }
            Ok(Ending::ApiError(text, status)) => {
                let mut stats = self.stats(self.turns);
                stats.duration_api_ms = 0;
                let result = Completed::api_error(stats, text.clone(), status);
                let _ = self.out.emit_result(&Event::Result(result), &text);
                1
            }
            Ok(Ending::Crash) => 2,
            Err(Stop::Interrupted {
                tool_use_id,
                by_sigint,
            }) => {
                self.settle_interrupts();
                // The real CLI can take seconds to wind down after an interrupt.
                if let Some(delay) = interrupt_delay() {
                    std::thread::sleep(delay);
                }
                let (marker, failure, turns) = match &tool_use_id {
                    Some(id) => {
                        let rejected = User::tool_result(
                            &session_id,
                            id,
                            Value::String(REJECTED.into()),
                            Some(true),
                            json!("User rejected tool use"),
                        );
                        let _ = self.out.emit(&Event::User(rejected));
                        (
                            "[Request interrupted by user for tool use]",
                            Failure::AbortedTools,
                            self.turns + 2,
                        )
                    }
                    None => {
                        // The aborted response is not billed, and counts as one more turn.
                        let aborted = std::mem::take(&mut self.inflight);
                        self.tokens.sub(aborted);
                        if let Some(spent) = self.spent.get_mut(&self.session.model) {
                            spent.sub(aborted);
                        }
                        (
                            "[Request interrupted by user]",
                            Failure::AbortedStreaming,
                            self.turns + 1,
                        )
                    }
                };
                let _ = self.out.emit(&Event::User(User::text(&session_id, marker)));
                self.fail(turns, failure);
                i32::from(!by_sigint)
            }
            Err(Stop::MaxTurns(limit)) => {
                self.fail(self.turns + 1, Failure::MaxTurns(limit));
                1
            }
            Err(Stop::Killed(code)) => code,
            Err(Stop::StdoutClosed) => 1,
        };
        let _ = self.out.flush();
        // Lines between turns (control responses) go out at once, whatever the turn chose.
        self.out.set_line_flush(true);
        let prompt = std::mem::take(&mut self.session.prompt);
        self.session.history.push(prompt);
        code
    }

    /// Prints an `error_*` result.
    fn fail(&mut self, num_turns: u32, failure: Failure) {
        let result = Failed::new(self.stats(num_turns), failure);
        let text = result.text();
        let _ = self.out.emit_result(&Event::FailedResult(result), &text);
    }

    /// Stops if a signal or an `interrupt` control request arrived (during tool call
    /// `tool_use_id`, if given); answers the other control requests that arrived.
    fn checkpoint(&mut self, tool_use_id: Option<&str>) -> Result<(), Stop> {
        // Control responses nobody waits for are dropped.
        while self
            .read_inbox(Some(Duration::ZERO), tool_use_id)?
            .is_some()
        {}
        match self.signals.pending() {
            Some(signal) => Err(Stop::from_signal(signal, tool_use_id)),
            None => Ok(()),
        }
    }

    fn emit(&mut self, event: &Event) -> Result<(), Stop> {
        self.out.emit(event).map_err(|_| Stop::StdoutClosed)
    }

    /// Prints one assistant line of the current message.
    fn block(&mut self, block: Block) -> Result<(), Stop> {
        self.checkpoint(None)?;
        if let Block::Text { text } | Block::Thinking { thinking: text, .. } = &block {
            let output = text.len() as u64 / 4 + 1;
            self.count(Tokens {
                output,
                ..Tokens::default()
            });
        }
        let event = self.assistant(block);
        self.emit(&event)
    }

    /// The assistant line of `block` in the current message.
    fn assistant(&self, block: Block) -> Event {
        Event::Assistant(Assistant {
            message: Message {
                id: self.message_id.clone(),
                kind: "message",
                role: "assistant",
                model: self.session.model.clone(),
                content: [block],
                stop_reason: None,
                stop_sequence: None,
                usage: MessageUsage {
                    input_tokens: self.turn_tokens.input,
                    cache_creation_input_tokens: self.turn_tokens.cache_creation,
                    cache_read_input_tokens: self.turn_tokens.cache_read,
                    output_tokens: self.turn_tokens.output,
                    service_tier: "standard",
                },
                context_management: None,
            },
            parent_tool_use_id: None,
            session_id: self.session.id.clone(),
            uuid: ids::uuid(),
            request_id: self.request_id.clone(),
        })
    }
}

/// `FAKE_CLAUDE_INTERRUPT_DELAY_MS`: how long an interrupted run takes to stop.
fn interrupt_delay() -> Option<Duration> {
    let ms = std::env::var("FAKE_CLAUDE_INTERRUPT_DELAY_MS").ok()?;
    ms.trim().parse().ok().map(Duration::from_millis)
}

/// Splits `mcp__<server>__<tool>`.
fn mcp_tool_name(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix("mcp__")?.split_once("__")
}

fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
