//! One run of the fake model: the conversation state, the steps scenarios are made of
//! (turns, text, tool calls with their permission step), and how a run ends.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::daemon;
use crate::events::{
    Assistant, Block, Completed, Denial, Event, Failed, Failure, Init, InitFacts, McpServerStatus,
    Message, MessageUsage, RunStats, SyntheticAssistant, System, Tokens, User,
};
use crate::ids;
use crate::mcp::{CallError, McpServers};
use crate::output::Output;
use crate::permissions::{first_text, Policy, Reply, Verdict};
use crate::signals::{Signal, Signals};
use crate::tools::{self, ToolOutput};

/// The tool_result the real CLI prints for a tool call cut short by an interrupt.
const REJECTED: &str = "The user doesn't want to proceed with this tool use. The tool use was \
    rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what \
    you are doing and wait for the user to tell you how to proceed.";

/// The fake signature of thinking blocks (as in the transcripts).
const SIGNATURE: &str = "EqQBCkYIBxgCKkBmYWtlLXNpZ25hdHVyZQ==";

/// Why a scenario stopped before its end.
#[derive(Debug)]
pub enum Stop {
    /// SIGINT, or a permission deny with `interrupt`; `tool_use_id` names the tool call that
    /// was running or waiting for permission.
    Interrupted {
        tool_use_id: Option<String>,
        exit_code: i32,
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
            Signal::Interrupt => Self::Interrupted {
                tool_use_id: tool_use_id.map(str::to_string),
                exit_code: 0,
            },
            Signal::Fatal(code) => Self::Killed(code),
        }
    }
}

/// How a scenario that ran to its end wants the run to end.
#[derive(Debug)]
pub enum Ending {
    /// `result/success` with the last assistant text; exit 0 (1 after a missing
    /// permission-prompt tool, like the real CLI).
    Success,
    /// The API "failed": `result/success` with `is_error: true` and this text; exit 1.
    ApiError(String),
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
    pub prompt: String,
    /// The prompts of earlier runs of this conversation (when resumed).
    pub history: Vec<String>,
}

/// A run in progress.
#[derive(Debug)]
pub struct Run {
    session: Session,
    policy: Policy,
    max_turns: Option<u32>,
    out: Output,
    mcp: McpServers,
    signals: Signals,
    started: Instant,
    turns: u32,
    /// Tokens of the current turn (the `message.usage` snapshot) and of the whole run.
    turn_tokens: Tokens,
    tokens: Tokens,
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
        max_turns: Option<u32>,
        out: Output,
        mcp: McpServers,
        signals: Signals,
    ) -> Self {
        Self {
            session,
            policy,
            max_turns,
            out,
            mcp,
            signals,
            started: Instant::now(),
            turns: 0,
            turn_tokens: Tokens::default(),
            tokens: Tokens::default(),
            denials: Vec::new(),
            exit_code: 0,
            message_id: String::new(),
            request_id: String::new(),
            last_text: String::new(),
        }
    }

    /// Prints `system/init`.
    pub fn announce(&mut self, permission_mode: &str) -> Result<(), Stop> {
        let env_set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        let facts = InitFacts {
            cwd: self.session.cwd.display().to_string(),
            session_id: self.session.id.clone(),
            model: self.session.model.clone(),
            permission_mode: permission_mode.into(),
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
            api_key_set: env_set("ANTHROPIC_API_KEY"),
            telemetry_disabled: env_set("DISABLE_TELEMETRY")
                || env_set("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"),
            home: std::env::var("HOME").unwrap_or_default(),
        };
        self.emit(&Event::System(System::Init(Box::new(Init::new(facts)))))
    }

    pub fn cwd(&self) -> &Path {
        &self.session.cwd
    }

    /// The answer to the prompt, mentioning the loaded history on a resumed conversation.
    pub fn greeting(&self) -> String {
        let prompt = &self.session.prompt;
        if self.session.history.is_empty() {
            return format!("Hello! You asked: {prompt}");
        }
        let earlier: Vec<String> = self
            .session
            .history
            .iter()
            .map(|p| Value::String(p.clone()).to_string())
            .collect();
        format!(
            "Continuing our conversation (turn {}). You said: {prompt}\n\n\
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
        self.message_id = ids::prefixed("msg_01", 28);
        self.request_id = ids::prefixed("req_011CV", 26);
        self.turn_tokens = if self.turns == 1 {
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
                cache_read: 15873 + 412 * u64::from(self.turns - 2),
                output: 2,
            }
        };
        self.tokens.add(self.turn_tokens);
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

    /// Runs a tool call the way the CLI does: availability, permission rules, the
    /// permission-prompt tool, execution, and the tool_result line.
    pub fn use_tool(&mut self, call: &ToolUse) -> Result<ToolReport, Stop> {
        self.run_tool(call, None)
    }

    /// A tool call whose permission is asked before its tool_use line is printed: the line
    /// goes out only once the daemon lists the approval, as when Claude's stdout reaches the
    /// daemon after its permission request did.
    pub fn tool_use_asked_first(&mut self, name: &str, input: Value) -> Result<ToolReport, Stop> {
        self.checkpoint(None)?;
        let call = ToolUse {
            id: ids::tool_use_id(),
            name: name.into(),
            input,
        };
        let line = self.assistant(Block::ToolUse {
            id: call.id.clone(),
            name: call.name.clone(),
            input: call.input.clone(),
        });
        self.run_tool(&call, Some(line))
    }

    /// [`Self::use_tool`]; `late` is the call's tool_use line when it is not printed yet: it
    /// is printed once the approval shows, or before anything else the call prints.
    fn run_tool(&mut self, call: &ToolUse, mut late: Option<Event>) -> Result<ToolReport, Stop> {
        self.checkpoint(Some(&call.id))?;
        if let Some((server, tool)) = mcp_tool_name(&call.name) {
            if !self.mcp.has_tool(server, tool) {
                self.print_late(&mut late)?;
                return self.tool_result(call, ToolOutput::unavailable(&call.name));
            }
        }
        let input = match self.policy.check(&call.name, &call.input) {
            Verdict::Allow => {
                self.print_late(&mut late)?;
                call.input.clone()
            }
            Verdict::Deny(message) => {
                self.print_late(&mut late)?;
                return self.deny(call, message);
            }
            Verdict::Ask(prompt_tool) => {
                let asked = self.ask_permission(call, &prompt_tool, &mut late);
                self.print_late(&mut late)?;
                match asked? {
                    Permission::Allow(input) => input,
                    Permission::Deny(message) => return self.deny(call, message),
                    Permission::Failed(text) => {
                        return self.tool_result(call, ToolOutput::error(text))
                    }
                }
            }
        };
        let output = self.execute(call, input)?;
        self.tool_result(call, output)
    }

    /// Prints a tool_use line held back, if there is one.
    fn print_late(&mut self, late: &mut Option<Event>) -> Result<(), Stop> {
        match late.take() {
            Some(line) => self.emit(&line),
            None => Ok(()),
        }
    }

    /// Prints the tool_result line of `call`.
    pub fn tool_result(&mut self, call: &ToolUse, output: ToolOutput) -> Result<ToolReport, Stop> {
        let report = ToolReport {
            ok: output.is_error != Some(true),
            text: output.text(),
        };
        self.emit(&Event::User(User::tool_result(
            &self.session.id,
            &call.id,
            output.content,
            output.is_error,
            output.tool_use_result,
        )))?;
        Ok(report)
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
        Ok(Ending::ApiError(text.into()))
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

    /// Waits, unless a signal comes first.
    pub fn sleep(&self, duration: Duration) -> Result<(), Stop> {
        self.signals
            .sleep(duration)
            .map_err(|signal| Stop::from_signal(signal, None))
    }

    /// Turns per-line flushing of stdout on or off.
    pub fn set_line_flush(&mut self, on: bool) {
        self.out.set_line_flush(on);
    }

    /// Prints how the run ended and returns the exit code. Dropping the run afterwards shuts
    /// the MCP servers down.
    pub fn finish(mut self, outcome: Result<Ending, Stop>) -> i32 {
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
            Ok(Ending::ApiError(text)) => {
                let mut stats = self.stats(self.turns);
                stats.duration_api_ms = 0;
                let result = Completed::api_error(stats, text.clone());
                let _ = self.out.emit_result(&Event::Result(result), &text);
                1
            }
            Ok(Ending::Crash) => 2,
            Err(Stop::Interrupted {
                tool_use_id,
                exit_code,
            }) => {
                // The real CLI can take seconds to wind down after SIGINT.
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
                    None => (
                        "[Request interrupted by user]",
                        Failure::AbortedStreaming,
                        self.turns,
                    ),
                };
                let _ = self.out.emit(&Event::User(User::text(&session_id, marker)));
                self.fail(turns, failure);
                exit_code
            }
            Err(Stop::MaxTurns(limit)) => {
                self.fail(self.turns + 1, Failure::MaxTurns(limit));
                1
            }
            Err(Stop::Killed(code)) => code,
            Err(Stop::StdoutClosed) => 1,
        };
        let _ = self.out.flush();
        code
    }

    /// Prints an `error_*` result.
    fn fail(&mut self, num_turns: u32, failure: Failure) {
        let result = Failed::new(self.stats(num_turns), failure);
        let text = result.text();
        let _ = self.out.emit_result(&Event::FailedResult(result), &text);
    }

    fn stats(&mut self, num_turns: u32) -> RunStats {
        let duration_api_ms = 20 * u64::from(self.turns);
        RunStats {
            session_id: self.session.id.clone(),
            model: self.session.model.clone(),
            duration_ms: duration_ms(self.started.elapsed()).max(duration_api_ms),
            duration_api_ms,
            num_turns,
            tokens: self.tokens,
            permission_denials: std::mem::take(&mut self.denials),
        }
    }

    /// Stops if a signal arrived (during tool call `tool_use_id`, if given).
    fn checkpoint(&self, tool_use_id: Option<&str>) -> Result<(), Stop> {
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
            self.tokens.output += text.len() as u64 / 4 + 1;
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

    /// A refused call: listed in `permission_denials`, error tool_result with `message`.
    fn deny(&mut self, call: &ToolUse, message: String) -> Result<ToolReport, Stop> {
        self.denials.push(call.denial());
        self.tool_result(call, ToolOutput::error(message))
    }

    /// Asks the `--permission-prompt-tool` about `call` (claude-code.md §3.2), waiting for
    /// as long as it takes unless a signal arrives. `late` (the call's tool_use line, not
    /// printed yet) is printed as soon as the daemon lists the approval.
    fn ask_permission(
        &mut self,
        call: &ToolUse,
        prompt_tool: &str,
        late: &mut Option<Event>,
    ) -> Result<Permission, Stop> {
        let call_error = |text: &str| {
            format!(
                "<tool_use_error>Error calling tool ({}): {text}</tool_use_error>",
                call.name
            )
        };
        let target = mcp_tool_name(prompt_tool).filter(|(s, t)| self.mcp.has_tool(s, t));
        let Some((server, tool)) = target else {
            let available = self.mcp.tool_names();
            let message = format!(
                "Error: MCP tool {prompt_tool} (passed via --permission-prompt-tool) not found. \
                 Available MCP tools: {}",
                if available.is_empty() {
                    "none".to_string()
                } else {
                    available.join(", ")
                }
            );
            eprintln!("{message}");
            self.exit_code = 1;
            return Ok(Permission::Failed(call_error(&message)));
        };
        let arguments =
            json!({"tool_name": call.name, "input": call.input, "tool_use_id": call.id});
        let daemon = self.mcp.env(server).and_then(daemon::Peer::from_env);
        let out = &mut self.out;
        let mut waiting = || {
            if let (Some(line), Some(daemon)) = (late.as_ref(), daemon.as_ref()) {
                if daemon.lists_approval(&call.id) {
                    let _ = out.emit(line);
                    *late = None;
                }
            }
        };
        if let Err(error) = crate::record::permission_asked(&call.id) {
            eprintln!("fake-claude: cannot write the ask log: {error}");
        }
        let reply = self.mcp.call_tool_while(
            server,
            tool,
            arguments,
            &call.id,
            &self.signals,
            &mut waiting,
        );
        let result = match reply {
            Ok(result) => result,
            Err(CallError::Signal(Signal::Interrupt)) => {
                self.denials.push(call.denial());
                return Err(Stop::from_signal(Signal::Interrupt, Some(&call.id)));
            }
            Err(CallError::Signal(Signal::Fatal(code))) => {
                // The real CLI reports the MCP connection closing under it, then exits.
                let closed = ToolOutput::error(call_error(&CallError::Closed.describe()));
                let _ = self.tool_result(call, closed);
                return Err(Stop::Killed(code));
            }
            Err(error) => return Ok(Permission::Failed(call_error(&error.describe()))),
        };
        if result["isError"] == true {
            let text = first_text(&result).unwrap_or_default();
            return Ok(Permission::Failed(call_error(&text)));
        }
        match Reply::parse(&result) {
            Reply::Allow(input) => Ok(Permission::Allow(input)),
            Reply::Deny {
                message,
                interrupt: false,
            } => Ok(Permission::Deny(message)),
            Reply::Deny {
                interrupt: true, ..
            } => {
                self.denials.push(call.denial());
                Err(Stop::Interrupted {
                    tool_use_id: Some(call.id.clone()),
                    exit_code: 1,
                })
            }
            Reply::Invalid => Ok(Permission::Failed(call_error(
                "invalid permission response",
            ))),
        }
    }

    /// Executes an allowed call with its (possibly updated) input.
    fn execute(&mut self, call: &ToolUse, input: Value) -> Result<ToolOutput, Stop> {
        let cwd = &self.session.cwd;
        let stop = |signal| Stop::from_signal(signal, Some(&call.id));
        Ok(match call.name.as_str() {
            "Write" => tools::write_file(cwd, &input),
            "Edit" => tools::edit_file(cwd, &input),
            "Bash" => tools::bash(cwd, &input, &self.signals).map_err(stop)?,
            "Glob" => tools::glob(cwd),
            name => match mcp_tool_name(name) {
                Some((server, tool)) => {
                    match self
                        .mcp
                        .call_tool(server, tool, input, &call.id, &self.signals)
                    {
                        Ok(result) => {
                            let content = result.get("content").cloned().unwrap_or(json!([]));
                            ToolOutput {
                                is_error: (result["isError"] == true).then_some(true),
                                tool_use_result: content.clone(),
                                content,
                            }
                        }
                        Err(CallError::Signal(signal)) => return Err(stop(signal)),
                        Err(error) => ToolOutput::error(error.describe()),
                    }
                }
                None => ToolOutput::unavailable(name),
            },
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
