//! The stream-json events, as structs whose field order follows the real CLI's output
//! (see `tests/fixtures/transcripts/`).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::CLI_VERSION;

/// One stdout line.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    System(System),
    Assistant(Assistant),
    /// The synthetic assistant message of an API error (different field set and order).
    #[serde(rename = "assistant")]
    SyntheticAssistant(SyntheticAssistant),
    User(User),
    /// `result` of a completed turn (`success`, also with `is_error: true` for API errors).
    Result(Completed),
    /// `result` of an aborted turn (`error_*` subtypes).
    #[serde(rename = "result")]
    FailedResult(Failed),
    /// A type no parser knows, for the `malformed` scenario.
    #[serde(rename = "mystery_event")]
    Mystery {
        session_id: String,
        uuid: String,
    },
}

/// `system` events.
#[derive(Debug, Serialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum System {
    Init(Box<Init>),
    ThinkingTokens {
        estimated_tokens: u64,
        estimated_tokens_delta: u64,
        uuid: String,
        session_id: String,
    },
    /// A failed API call about to be retried (claude-code.md §2.2).
    ApiRetry {
        attempt: u32,
        max_retries: u32,
        retry_delay_ms: u64,
        error_status: Option<u16>,
        error: &'static str,
        uuid: String,
        session_id: String,
    },
}

/// The built-in tools of 2.1.197 as listed in `init` (transcript 02).
const BUILTIN_TOOLS: &[&str] = &[
    "Task",
    "AskUserQuestion",
    "Bash",
    "CronCreate",
    "CronDelete",
    "CronList",
    "Edit",
    "EnterPlanMode",
    "EnterWorktree",
    "ExitPlanMode",
    "ExitWorktree",
    "NotebookEdit",
    "Read",
    "ReportFindings",
    "ScheduleWakeup",
    "SendMessage",
    "Skill",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskOutput",
    "TaskStop",
    "TaskUpdate",
    "WebFetch",
    "WebSearch",
    "Workflow",
    "Write",
];

const SKILLS: &[&str] = &[
    "deep-research",
    "update-config",
    "verify",
    "debug",
    "code-review",
    "simplify",
    "batch",
    "fewer-permission-prompts",
    "loop",
    "claude-api",
    "run",
    "run-skill-generator",
];

const BUILTIN_COMMANDS: &[&str] = &[
    "clear",
    "compact",
    "config",
    "context",
    "heapdump",
    "init",
    "reload-skills",
    "review",
    "security-review",
    "usage",
    "insights",
    "goal",
    "team-onboarding",
];

const AGENTS: &[&str] = &[
    "claude",
    "Explore",
    "general-purpose",
    "Plan",
    "statusline-setup",
];

/// `system/init`.
#[derive(Debug, Serialize)]
pub struct Init {
    cwd: String,
    session_id: String,
    tools: Vec<String>,
    mcp_servers: Vec<McpServerStatus>,
    model: String,
    #[serde(rename = "permissionMode")]
    permission_mode: String,
    slash_commands: Vec<&'static str>,
    #[serde(rename = "apiKeySource")]
    api_key_source: &'static str,
    claude_code_version: &'static str,
    output_style: &'static str,
    agents: &'static [&'static str],
    skills: &'static [&'static str],
    plugins: [(); 0],
    analytics_disabled: bool,
    product_feedback_disabled: bool,
    uuid: String,
    memory_paths: MemoryPaths,
    fast_mode_state: &'static str,
}

/// An entry of `init.mcp_servers`.
#[derive(Debug, Serialize)]
pub struct McpServerStatus {
    pub name: String,
    pub status: &'static str,
}

#[derive(Debug, Serialize)]
struct MemoryPaths {
    auto: String,
}

/// What `init` reports beyond the fixed 2.1.197 values.
#[derive(Debug)]
pub struct InitFacts {
    pub cwd: String,
    pub session_id: String,
    pub model: String,
    pub permission_mode: String,
    pub mcp_servers: Vec<McpServerStatus>,
    pub mcp_tools: Vec<String>,
    pub api_key_set: bool,
    pub telemetry_disabled: bool,
    pub home: String,
}

impl Init {
    /// Builds `init` from the run's facts.
    pub fn new(facts: InitFacts) -> Self {
        let mut tools: Vec<String> = BUILTIN_TOOLS.iter().map(|t| t.to_string()).collect();
        tools.extend(facts.mcp_tools);
        let project = facts.cwd.replace('/', "-");
        Self {
            memory_paths: MemoryPaths {
                auto: format!("{}/.claude/projects/{project}/memory/", facts.home),
            },
            cwd: facts.cwd,
            session_id: facts.session_id,
            tools,
            mcp_servers: facts.mcp_servers,
            model: facts.model,
            permission_mode: facts.permission_mode,
            slash_commands: SKILLS.iter().chain(BUILTIN_COMMANDS).copied().collect(),
            api_key_source: if facts.api_key_set {
                "ANTHROPIC_API_KEY"
            } else {
                "none"
            },
            claude_code_version: CLI_VERSION,
            output_style: "default",
            agents: AGENTS,
            skills: SKILLS,
            plugins: [],
            analytics_disabled: facts.telemetry_disabled,
            product_feedback_disabled: facts.telemetry_disabled,
            uuid: crate::ids::uuid(),
            fast_mode_state: "off",
        }
    }
}

/// An `assistant` line: one content block of a model message.
#[derive(Debug, Serialize)]
pub struct Assistant {
    pub message: Message,
    pub parent_tool_use_id: Option<String>,
    pub session_id: String,
    pub uuid: String,
    pub request_id: String,
}

/// The `message` of an `assistant` line.
#[derive(Debug, Serialize)]
pub struct Message {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub role: &'static str,
    pub model: String,
    pub content: [Block; 1],
    pub stop_reason: Option<&'static str>,
    pub stop_sequence: Option<&'static str>,
    pub usage: MessageUsage,
    pub context_management: Option<()>,
}

/// A content block of an assistant message.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Text {
        text: String,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
}

/// `message.usage` of an assistant line (the snapshot at the start of the response).
#[derive(Debug, Serialize)]
pub struct MessageUsage {
    pub input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub output_tokens: u64,
    pub service_tier: &'static str,
}

/// The synthetic assistant line of an API error (transcript 03).
#[derive(Debug, Serialize)]
pub struct SyntheticAssistant {
    message: SyntheticMessage,
    parent_tool_use_id: Option<String>,
    session_id: String,
    uuid: String,
    error: &'static str,
}

#[derive(Debug, Serialize)]
struct SyntheticMessage {
    id: String,
    container: Option<()>,
    model: &'static str,
    role: &'static str,
    stop_details: Option<()>,
    stop_reason: &'static str,
    stop_sequence: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    usage: SyntheticUsage,
    content: [Block; 1],
    context_management: Option<()>,
}

#[derive(Debug, Serialize)]
struct SyntheticUsage {
    input_tokens: u64,
    output_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
    server_tool_use: ServerToolUse,
    service_tier: Option<()>,
    cache_creation: CacheCreation,
    inference_geo: Option<()>,
    iterations: Option<()>,
    speed: Option<()>,
}

impl SyntheticAssistant {
    /// The synthetic message carrying an API error `text` of kind `error`
    /// (e.g. `authentication_failed`).
    pub fn new(session_id: &str, text: &str, error: &'static str) -> Self {
        Self {
            message: SyntheticMessage {
                id: crate::ids::uuid(),
                container: None,
                model: "<synthetic>",
                role: "assistant",
                stop_details: None,
                stop_reason: "stop_sequence",
                stop_sequence: "",
                kind: "message",
                usage: SyntheticUsage {
                    input_tokens: 0,
                    output_tokens: 0,
                    cache_creation_input_tokens: 0,
                    cache_read_input_tokens: 0,
                    server_tool_use: ServerToolUse::default(),
                    service_tier: None,
                    cache_creation: CacheCreation::default(),
                    inference_geo: None,
                    iterations: None,
                    speed: None,
                },
                content: [Block::Text { text: text.into() }],
                context_management: None,
            },
            parent_tool_use_id: None,
            session_id: session_id.into(),
            uuid: crate::ids::uuid(),
            error,
        }
    }
}

/// A `user` line: a tool result or an interrupt marker.
#[derive(Debug, Serialize)]
pub struct User {
    message: UserMessage,
    parent_tool_use_id: Option<String>,
    session_id: String,
    uuid: String,
    timestamp: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_use_result: Option<Value>,
}

#[derive(Debug, Serialize)]
struct UserMessage {
    role: &'static str,
    content: [UserBlock; 1],
}

/// The content block of a `user` line; the two tool_result forms order their fields
/// differently in the real output.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum UserBlock {
    ToolResult {
        tool_use_id: String,
        #[serde(rename = "type")]
        kind: &'static str,
        content: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
    },
    ToolError {
        #[serde(rename = "type")]
        kind: &'static str,
        content: Value,
        is_error: bool,
        tool_use_id: String,
    },
    Text {
        #[serde(rename = "type")]
        kind: &'static str,
        text: String,
    },
}

impl User {
    /// A tool_result line; `is_error` `Some(true)` selects the error form.
    pub fn tool_result(
        session_id: &str,
        tool_use_id: &str,
        content: Value,
        is_error: Option<bool>,
        tool_use_result: Value,
    ) -> Self {
        let block = if is_error == Some(true) {
            UserBlock::ToolError {
                kind: "tool_result",
                content,
                is_error: true,
                tool_use_id: tool_use_id.into(),
            }
        } else {
            UserBlock::ToolResult {
                tool_use_id: tool_use_id.into(),
                kind: "tool_result",
                content,
                is_error,
            }
        };
        Self::new(session_id, block, Some(tool_use_result))
    }

    /// A synthetic user text such as `[Request interrupted by user]`.
    pub fn text(session_id: &str, text: &str) -> Self {
        let block = UserBlock::Text {
            kind: "text",
            text: text.into(),
        };
        Self::new(session_id, block, None)
    }

    fn new(session_id: &str, block: UserBlock, tool_use_result: Option<Value>) -> Self {
        Self {
            message: UserMessage {
                role: "user",
                content: [block],
            },
            parent_tool_use_id: None,
            session_id: session_id.into(),
            uuid: crate::ids::uuid(),
            timestamp: crate::ids::timestamp(),
            tool_use_result,
        }
    }
}

/// Token counts, per turn or summed over the run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tokens {
    pub input: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
    pub output: u64,
}

impl Tokens {
    /// The price in USD at Sonnet 4.5 rates (what the transcripts' costs work out to).
    pub fn cost_usd(&self) -> f64 {
        (self.input as f64 * 3.0
            + self.cache_creation as f64 * 3.75
            + self.cache_read as f64 * 0.3
            + self.output as f64 * 15.0)
            / 1_000_000.0
    }

    pub fn add(&mut self, other: Tokens) {
        self.input += other.input;
        self.cache_creation += other.cache_creation;
        self.cache_read += other.cache_read;
        self.output += other.output;
    }

    fn is_zero(&self) -> bool {
        self.input + self.cache_creation + self.cache_read + self.output == 0
    }
}

/// Costs as JavaScript prints them: a zero cost is `0`, not `0.0`.
fn serialize_cost<S: serde::Serializer>(cost: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if *cost == 0.0 {
        serializer.serialize_u64(0)
    } else {
        serializer.serialize_f64(*cost)
    }
}

/// `result.usage`.
#[derive(Debug, Serialize)]
pub struct ResultUsage {
    input_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
    output_tokens: u64,
    server_tool_use: ServerToolUse,
    service_tier: &'static str,
    cache_creation: CacheCreation,
    inference_geo: &'static str,
    iterations: [(); 0],
    speed: &'static str,
}

#[derive(Debug, Default, Serialize)]
struct ServerToolUse {
    web_search_requests: u64,
    web_fetch_requests: u64,
}

#[derive(Debug, Default, Serialize)]
struct CacheCreation {
    ephemeral_1h_input_tokens: u64,
    ephemeral_5m_input_tokens: u64,
}

/// An entry of `result.modelUsage`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    input_tokens: u64,
    output_tokens: u64,
    cache_read_input_tokens: u64,
    cache_creation_input_tokens: u64,
    web_search_requests: u64,
    #[serde(rename = "costUSD", serialize_with = "serialize_cost")]
    cost_usd: f64,
    context_window: u64,
    max_output_tokens: u64,
}

/// An entry of `result.permission_denials`.
#[derive(Debug, Clone, Serialize)]
pub struct Denial {
    pub tool_name: String,
    pub tool_use_id: String,
    pub tool_input: Value,
}

/// What every `result` line reports about the run.
#[derive(Debug)]
pub struct RunStats {
    pub session_id: String,
    pub model: String,
    pub duration_ms: u64,
    pub duration_api_ms: u64,
    pub num_turns: u32,
    pub tokens: Tokens,
    pub permission_denials: Vec<Denial>,
}

impl RunStats {
    fn usage(&self) -> ResultUsage {
        ResultUsage {
            input_tokens: self.tokens.input,
            cache_creation_input_tokens: self.tokens.cache_creation,
            cache_read_input_tokens: self.tokens.cache_read,
            output_tokens: self.tokens.output,
            server_tool_use: ServerToolUse::default(),
            service_tier: "standard",
            cache_creation: CacheCreation::default(),
            inference_geo: "",
            iterations: [],
            speed: "standard",
        }
    }

    fn model_usage(&self) -> BTreeMap<String, ModelUsage> {
        if self.tokens.is_zero() {
            return BTreeMap::new();
        }
        let usage = ModelUsage {
            input_tokens: self.tokens.input,
            output_tokens: self.tokens.output,
            cache_read_input_tokens: self.tokens.cache_read,
            cache_creation_input_tokens: self.tokens.cache_creation,
            web_search_requests: 0,
            cost_usd: self.tokens.cost_usd(),
            context_window: 200_000,
            max_output_tokens: 32_000,
        };
        BTreeMap::from([(self.model.clone(), usage)])
    }
}

/// A `result` line of a turn that ran to its end.
#[derive(Debug, Serialize)]
pub struct Completed {
    subtype: &'static str,
    is_error: bool,
    api_error_status: Option<u16>,
    duration_ms: u64,
    duration_api_ms: u64,
    #[serde(flatten)]
    timing: Option<Timing>,
    num_turns: u32,
    result: String,
    stop_reason: &'static str,
    session_id: String,
    #[serde(serialize_with = "serialize_cost")]
    total_cost_usd: f64,
    usage: ResultUsage,
    #[serde(rename = "modelUsage")]
    model_usage: BTreeMap<String, ModelUsage>,
    permission_denials: Vec<Denial>,
    terminal_reason: &'static str,
    fast_mode_state: &'static str,
    uuid: String,
}

/// Latency figures present on results of real API responses.
#[derive(Debug, Serialize)]
struct Timing {
    ttft_ms: u64,
    ttft_stream_ms: u64,
    time_to_request_ms: u64,
}

impl Completed {
    /// `success` with the final assistant text.
    pub fn success(stats: RunStats, text: String) -> Self {
        Self::new(stats, text, false)
    }

    /// `success` with `is_error: true`: the API failed and `text` is the error shown.
    pub fn api_error(stats: RunStats, text: String) -> Self {
        Self::new(stats, text, true)
    }

    fn new(stats: RunStats, result: String, is_error: bool) -> Self {
        Self {
            subtype: "success",
            is_error,
            api_error_status: None,
            duration_ms: stats.duration_ms,
            duration_api_ms: stats.duration_api_ms,
            timing: (!is_error).then_some(Timing {
                ttft_ms: 52,
                ttft_stream_ms: 51,
                time_to_request_ms: 41,
            }),
            num_turns: stats.num_turns,
            result,
            stop_reason: if is_error {
                "stop_sequence"
            } else {
                "end_turn"
            },
            total_cost_usd: stats.tokens.cost_usd(),
            usage: stats.usage(),
            model_usage: stats.model_usage(),
            session_id: stats.session_id,
            permission_denials: stats.permission_denials,
            terminal_reason: "completed",
            fast_mode_state: "off",
            uuid: crate::ids::uuid(),
        }
    }
}

/// A `result` line with an `error_*` subtype.
#[derive(Debug, Serialize)]
pub struct Failed {
    subtype: &'static str,
    duration_ms: u64,
    duration_api_ms: u64,
    is_error: bool,
    num_turns: u32,
    stop_reason: Option<&'static str>,
    session_id: String,
    #[serde(serialize_with = "serialize_cost")]
    total_cost_usd: f64,
    usage: ResultUsage,
    #[serde(rename = "modelUsage")]
    model_usage: BTreeMap<String, ModelUsage>,
    permission_denials: Vec<Denial>,
    #[serde(skip_serializing_if = "Option::is_none")]
    terminal_reason: Option<&'static str>,
    fast_mode_state: &'static str,
    uuid: String,
    errors: Vec<String>,
}

/// Why a run ended without completing its turn.
#[derive(Debug, Clone)]
pub enum Failure {
    /// SIGINT while the model was "streaming".
    AbortedStreaming,
    /// SIGINT (or a deny with `interrupt`) during a tool call or permission wait.
    AbortedTools,
    /// `--max-turns` reached; the limit.
    MaxTurns(u32),
    /// `--resume` of a conversation that does not exist here.
    NoConversation,
    /// `--resume` without a usable value; the stderr message.
    InvalidResume(String),
}

impl Failed {
    pub fn new(stats: RunStats, failure: Failure) -> Self {
        let diagnostic = |stop: &str| {
            format!("[ede_diagnostic] result_type=user last_content_type=n/a stop_reason={stop}")
        };
        let (subtype, stop_reason, terminal_reason, error) = match failure {
            Failure::AbortedStreaming => (
                "error_during_execution",
                None,
                Some("aborted_streaming"),
                diagnostic("null"),
            ),
            Failure::AbortedTools => (
                "error_during_execution",
                Some("tool_use"),
                Some("aborted_tools"),
                diagnostic("tool_use"),
            ),
            Failure::MaxTurns(limit) => (
                "error_max_turns",
                Some("tool_use"),
                Some("max_turns"),
                format!("Reached maximum number of turns ({limit})"),
            ),
            Failure::NoConversation => (
                "error_during_execution",
                None,
                None,
                format!(
                    "No conversation found with session ID: {}",
                    stats.session_id
                ),
            ),
            Failure::InvalidResume(message) => ("error_during_execution", None, None, message),
        };
        Self {
            subtype,
            duration_ms: stats.duration_ms,
            duration_api_ms: stats.duration_api_ms,
            is_error: true,
            num_turns: stats.num_turns,
            stop_reason,
            total_cost_usd: stats.tokens.cost_usd(),
            usage: stats.usage(),
            model_usage: stats.model_usage(),
            session_id: stats.session_id,
            permission_denials: stats.permission_denials,
            terminal_reason,
            fast_mode_state: "off",
            uuid: crate::ids::uuid(),
            errors: vec![error],
        }
    }

    /// The errors joined (what `--output-format text` prints).
    pub fn text(&self) -> String {
        self.errors.join("\n")
    }
}
