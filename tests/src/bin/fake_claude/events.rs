//! The stream-json events, as structs whose field order follows the real CLI's output
//! (see `tests/fixtures/transcripts/`).

use serde::Serialize;
use serde_json::Value;

use crate::results::{CacheCreation, Completed, Failed, ServerToolUse};
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
    /// A user line echoing a command's output (`set_model`), with `isReplay: true`.
    #[serde(rename = "user")]
    Replay(Replay),
    /// The CLI asks the SDK host (`can_use_tool`).
    ControlRequest(crate::control::Request),
    /// The answer to a control request read from stdin.
    ControlResponse(crate::control::Response),
    /// The CLI withdraws a control request it sent.
    ControlCancelRequest(crate::control::Cancel),
    /// A usage-limit window changed (`run/limit.rs`).
    RateLimitEvent(crate::run::limit::RateLimitEvent),
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
    /// The permission mode changed (after `set_permission_mode`).
    Status {
        status: Option<()>,
        #[serde(rename = "permissionMode")]
        permission_mode: String,
        uuid: String,
        session_id: String,
    },
    /// A compaction starts (`status: "compacting"`) or ends (`compact_result`).
    #[serde(rename = "status")]
    Compacting {
        status: Option<&'static str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        compact_result: Option<&'static str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        compact_error: Option<&'static str>,
        session_id: String,
        uuid: String,
    },
    /// The conversation was compacted: a summary replaces what came before.
    CompactBoundary {
        session_id: String,
        uuid: String,
        compact_metadata: CompactMetadata,
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

/// What a `compact_boundary` reports (the real CLI adds the preserved messages' uuids).
#[derive(Debug, Serialize)]
pub struct CompactMetadata {
    pub trigger: &'static str,
    pub pre_tokens: u64,
    pub post_tokens: u64,
    pub cumulative_dropped_tokens: u64,
    pub duration_ms: u64,
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
    /// `ANTHROPIC_API_KEY` or `none` (see [`api_key_source`]).
    pub api_key_source: &'static str,
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
            api_key_source: facts.api_key_source,
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

/// Where the API key comes from, as `init` and the `initialize` answer report it.
pub fn api_key_source() -> &'static str {
    if std::env::var_os("ANTHROPIC_API_KEY").is_some_and(|v| !v.is_empty()) {
        "ANTHROPIC_API_KEY"
    } else {
        "none"
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
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'static str>,
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
            error: Some(error),
        }
    }

    /// A synthetic message saying `text` without an API error (a command that did not run).
    pub fn notice(session_id: &str, text: &str) -> Self {
        Self {
            error: None,
            ..Self::new(session_id, text, "")
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

/// A replayed user line, as `set_model` prints its `<local-command-stdout>`.
#[derive(Debug, Serialize)]
pub struct Replay {
    message: ReplayMessage,
    session_id: String,
    parent_tool_use_id: Option<String>,
    uuid: String,
    timestamp: String,
    #[serde(rename = "isReplay")]
    is_replay: bool,
    #[serde(rename = "isSynthetic", skip_serializing_if = "std::ops::Not::not")]
    is_synthetic: bool,
}

#[derive(Debug, Serialize)]
struct ReplayMessage {
    role: &'static str,
    content: String,
}

impl Replay {
    /// The output `text` of a local command.
    pub fn command_output(session_id: &str, text: &str) -> Self {
        Self {
            message: ReplayMessage {
                role: "user",
                content: format!("<local-command-stdout>{text}</local-command-stdout>"),
            },
            session_id: session_id.into(),
            parent_tool_use_id: None,
            uuid: crate::ids::uuid(),
            timestamp: crate::ids::timestamp(),
            is_replay: true,
            is_synthetic: false,
        }
    }

    /// A message the CLI writes itself (the summary a compaction leaves).
    pub fn synthetic(session_id: &str, text: &str) -> Self {
        Self {
            message: ReplayMessage {
                role: "user",
                content: text.into(),
            },
            is_replay: false,
            is_synthetic: true,
            ..Self::command_output(session_id, "")
        }
    }
}
