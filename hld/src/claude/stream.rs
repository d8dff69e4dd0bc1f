//! Claude's `--output-format stream-json` stdout, one line at a time, read by serde into a
//! typed [`AgentEvent`] ([`parse_line`]). Nothing here fails: a line that is not a JSON object
//! is `Malformed`, an unknown type `Unknown`, a field of the wrong type absent.

use serde::de::{DeserializeOwned, Deserializer};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::control::Control;
pub use rate_limit::{limit_in_text, RateLimitInfo};

mod rate_limit;

/// One line of Claude's output.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The `session_id` the line carries (any type of line may).
    pub session_id: Option<String>,
    pub event: AgentEvent,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    System(System),
    Assistant(MessageLine),
    /// `user`: tool results, interrupt markers, replayed input.
    User(MessageLine),
    Result(RunResult),
    /// `control_request` (`claude` asks the daemon, e.g. for a permission) or
    /// `control_cancel_request` (an earlier request is no longer waited for).
    Control(super::control::Control),
    /// `control_response`: the answer to one of the daemon's requests.
    ControlResponse(super::control::ControlResponse),
    /// `rate_limit_event`: a usage-limit window's state changed.
    RateLimit(RateLimitInfo),
    /// A JSON object of an unknown type, or of a known type that does not read as one.
    Unknown {
        kind: Option<String>,
    },
    /// Not a JSON object: why.
    Malformed(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum System {
    Init(Init),
    ApiRetry(ApiRetry),
    Status(Status),
    CompactBoundary(CompactBoundary),
    /// Another subtype (`thinking_tokens`, `task_started`, …).
    Other,
}

/// Field readers that never fail: a value of the wrong type reads as absent.
mod lenient {
    use super::*;

    pub(super) fn string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::String(s) => Some(s),
            _ => None,
        })
    }

    /// An integer (a float is truncated), else `None`.
    pub(super) fn int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)))
    }

    pub(super) fn float<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        Ok(Value::deserialize(d)?.as_f64())
    }

    pub(super) fn boolean<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
        Ok(Value::deserialize(d)?.as_bool())
    }

    /// The strings of an array (others skipped), a lone string as one, else empty.
    pub(super) fn strings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Array(items) => items
                .into_iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s),
                    _ => None,
                })
                .collect(),
            Value::String(s) => vec![s],
            _ => Vec::new(),
        })
    }

    /// A `T` (itself lenient), else `T::default()`.
    pub(super) fn object<'de, D, T>(d: D) -> Result<T, D::Error>
    where
        D: Deserializer<'de>,
        T: DeserializeOwned + Default,
    {
        Ok(read(<&RawValue>::deserialize(d)?).unwrap_or_default())
    }

    /// `content`: a string is one text block, an array is read block by block, else none.
    pub(super) fn blocks<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ContentBlock>, D::Error> {
        let raw = <&RawValue>::deserialize(d)?;
        if let Some(text) = read(raw) {
            return Ok(vec![ContentBlock::Text(text)]);
        }
        let items: Vec<&RawValue> = read(raw).unwrap_or_default();
        let block = |item| ContentBlock::from_raw(read(item).unwrap_or_default());
        Ok(items.into_iter().map(block).collect())
    }

    fn read<'a, T: Deserialize<'a>>(raw: &'a RawValue) -> Option<T> {
        serde_json::from_str(raw.get()).ok()
    }
}

/// `system`/`init`: what the run starts with.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Init {
    #[serde(default, deserialize_with = "lenient::string")]
    pub model: Option<String>,
    /// The skills among the slash commands.
    #[serde(default, deserialize_with = "lenient::strings")]
    pub skills: Vec<String>,
}

/// `system`/`status`: the CLI's permission mode changed (a control request, `EnterPlanMode`, an
/// approved plan).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Status {
    #[serde(
        rename = "permissionMode",
        default,
        deserialize_with = "lenient::string"
    )]
    pub permission_mode: Option<String>,
}

/// `system`/`api_retry`: an API call failed, and the CLI tries it again after a delay.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ApiRetry {
    #[serde(default, deserialize_with = "lenient::int")]
    pub attempt: Option<i64>,
    #[serde(default, deserialize_with = "lenient::int")]
    pub max_retries: Option<i64>,
    #[serde(default, deserialize_with = "lenient::int")]
    pub retry_delay_ms: Option<i64>,
    /// The HTTP status of the failure (absent when no answer came).
    #[serde(default, deserialize_with = "lenient::int")]
    pub error_status: Option<i64>,
    /// What failed: `authentication_failed`, `overloaded`, `unknown`, …
    #[serde(default, deserialize_with = "lenient::string")]
    pub error: Option<String>,
}

impl ApiRetry {
    /// The retry in words: `API error 401 (authentication_failed), retrying (3/10) in 4.1 s`.
    pub fn describe(&self) -> String {
        let mut text = "API error".to_owned();
        if let Some(status) = self.error_status {
            text.push_str(&format!(" {status}"));
        }
        if let Some(error) = self.error.as_deref().filter(|e| !e.is_empty()) {
            text.push_str(&format!(" ({error})"));
        }
        text.push_str(", retrying");
        match (self.attempt, self.max_retries) {
            (Some(attempt), Some(max)) => text.push_str(&format!(" ({attempt}/{max})")),
            (Some(attempt), None) => text.push_str(&format!(" (attempt {attempt})")),
            _ => {}
        }
        if let Some(ms) = self.retry_delay_ms {
            text.push_str(&format!(" in {:.1} s", ms as f64 / 1000.0));
        }
        text
    }
}

/// `system`/`compact_boundary`: the conversation was compacted (`/compact`, or automatically
/// near the context limit); a summary replaces what came before.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct CompactBoundary {
    #[serde(default, deserialize_with = "lenient::object")]
    pub compact_metadata: CompactMetadata,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct CompactMetadata {
    /// `manual` or `auto`.
    #[serde(default, deserialize_with = "lenient::string")]
    pub trigger: Option<String>,
    /// The context's tokens before the compaction.
    #[serde(default, deserialize_with = "lenient::int")]
    pub pre_tokens: Option<i64>,
}

impl CompactBoundary {
    /// In words: `Conversation compacted (45,210 tokens before)`.
    pub fn describe(&self) -> String {
        let meta = &self.compact_metadata;
        let mut text = match meta.trigger.as_deref() {
            Some("auto") => "Conversation compacted automatically".to_owned(),
            _ => "Conversation compacted".to_owned(),
        };
        if let Some(tokens) = meta.pre_tokens.and_then(|t| u64::try_from(t).ok()) {
            text.push_str(&format!(" ({} tokens before)", thousands(tokens)));
        }
        text
    }
}

/// `45210` as `45,210`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// An `assistant` or `user` line.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct MessageLine {
    /// The Task tool use this line was produced under (a sub-agent's).
    #[serde(default, deserialize_with = "lenient::string")]
    pub parent_tool_use_id: Option<String>,
    /// A user line the CLI echoes: a local command's output (`<local-command-stdout>`).
    #[serde(default, rename = "isReplay", deserialize_with = "lenient::boolean")]
    pub is_replay: Option<bool>,
    /// A user line the CLI wrote itself: the summary a compaction leaves.
    #[serde(default, rename = "isSynthetic", deserialize_with = "lenient::boolean")]
    pub is_synthetic: Option<bool>,
    /// The API error of a synthetic assistant message: `rate_limit`, `server_error`, …
    #[serde(default, deserialize_with = "lenient::string")]
    pub error: Option<String>,
    #[serde(default, deserialize_with = "lenient::object")]
    pub message: Message,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Message {
    #[serde(default, deserialize_with = "lenient::blocks")]
    pub content: Vec<ContentBlock>,
    #[serde(default, deserialize_with = "lenient::object")]
    pub usage: Usage,
}

/// One content block, every field optional.
#[derive(Debug, Default, Deserialize)]
struct BlockRaw {
    #[serde(rename = "type", default, deserialize_with = "lenient::string")]
    kind: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    text: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    thinking: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    id: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    name: Option<String>,
    #[serde(default)]
    input: Value,
    #[serde(default, deserialize_with = "lenient::string")]
    tool_use_id: Option<String>,
    #[serde(default)]
    content: Value,
    #[serde(default, deserialize_with = "lenient::boolean")]
    is_error: Option<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    Text(String),
    Thinking(String),
    ToolUse {
        id: String,
        name: String,
        /// The input (an object in practice; `null` if absent).
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        /// The content as text (see [`render_tool_result`]); `None` if absent.
        content: Option<String>,
        /// Whether the tool failed or was refused (absent means `false`).
        is_error: bool,
    },
    /// Any other block, or a known one missing its essential fields: the block's `type`.
    Other(Option<String>),
}

impl ContentBlock {
    fn from_raw(raw: BlockRaw) -> ContentBlock {
        match raw.kind.as_deref() {
            Some("text") if raw.text.is_some() => ContentBlock::Text(raw.text.unwrap_or_default()),
            Some("thinking") if raw.thinking.is_some() => {
                ContentBlock::Thinking(raw.thinking.unwrap_or_default())
            }
            Some("tool_use") if raw.id.is_some() && raw.name.is_some() => ContentBlock::ToolUse {
                id: raw.id.unwrap_or_default(),
                name: raw.name.unwrap_or_default(),
                input: raw.input,
            },
            Some("tool_result") if raw.tool_use_id.is_some() => ContentBlock::ToolResult {
                tool_use_id: raw.tool_use_id.unwrap_or_default(),
                content: render_tool_result(&raw.content),
                is_error: raw.is_error.unwrap_or(false),
            },
            _ => ContentBlock::Other(raw.kind),
        }
    }
}

/// A tool result's `content` as text: a string as is, an array of blocks rendered (text as is,
/// an image `[image]`, others `[<type>]`) joined by `\n`, `null` as `None`, else JSON text.
pub fn render_tool_result(content: &Value) -> Option<String> {
    match content {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => Some(
            blocks
                .iter()
                .map(|block| match block {
                    Value::String(s) => s.clone(),
                    _ => match (
                        block.get("type").and_then(Value::as_str),
                        block.get("text").and_then(Value::as_str),
                    ) {
                        (Some("text"), Some(text)) => text.to_owned(),
                        (Some(kind), _) => format!("[{kind}]"),
                        (None, _) => block.to_string(),
                    },
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        other => Some(other.to_string()),
    }
}

/// The `result` line: a session's outcome comes from it (or its absence), not the exit code.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct RunResult {
    /// `success`, `error_max_turns`, …; API failures arrive as `success` with `is_error`.
    #[serde(default, deserialize_with = "lenient::string")]
    pub subtype: Option<String>,
    /// The success flag as sent; see [`RunResult::is_error`].
    #[serde(default, rename = "is_error", deserialize_with = "lenient::boolean")]
    pub error_flag: Option<bool>,
    /// `completed`, `max_turns`, `aborted_streaming`, `aborted_tools`, …
    #[serde(default, deserialize_with = "lenient::string")]
    pub terminal_reason: Option<String>,
    /// The final assistant text, or the error text of an API error; absent on `error_*`.
    #[serde(default, deserialize_with = "lenient::string")]
    pub result: Option<String>,
    /// Error texts of `error_*` subtypes.
    #[serde(default, deserialize_with = "lenient::strings")]
    pub errors: Vec<String>,
    #[serde(default, deserialize_with = "lenient::float")]
    pub total_cost_usd: Option<f64>,
    /// The cost, as older CLIs named it.
    #[serde(default, deserialize_with = "lenient::float")]
    pub cost_usd: Option<f64>,
    #[serde(default, deserialize_with = "lenient::int")]
    pub duration_ms: Option<i64>,
    #[serde(default, deserialize_with = "lenient::int")]
    pub num_turns: Option<i64>,
    #[serde(default, deserialize_with = "lenient::object")]
    pub usage: Usage,
    /// Per model: its context window.
    #[serde(default, rename = "modelUsage", deserialize_with = "lenient::object")]
    pub model_usage: std::collections::BTreeMap<String, ModelUsage>,
}

/// The token counts of a message (`message.usage`) or of the run (`result.usage`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Usage {
    /// Input tokens (without cache reads and writes).
    #[serde(default, deserialize_with = "lenient::int")]
    pub input_tokens: Option<i64>,
    #[serde(default, deserialize_with = "lenient::int")]
    pub output_tokens: Option<i64>,
    #[serde(default, deserialize_with = "lenient::int")]
    pub cache_creation_input_tokens: Option<i64>,
    #[serde(default, deserialize_with = "lenient::int")]
    pub cache_read_input_tokens: Option<i64>,
}

impl Usage {
    /// The context a model call used: its input, cache-creation and cache-read tokens.
    pub fn context_tokens(&self) -> Option<i64> {
        let parts = [
            self.input_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        ];
        parts
            .iter()
            .any(Option::is_some)
            .then(|| parts.iter().flatten().sum())
    }
}

/// One model's entry of `result.modelUsage`, the figure kept.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ModelUsage {
    #[serde(default, rename = "contextWindow", deserialize_with = "lenient::int")]
    pub context_window: Option<i64>,
}

impl RunResult {
    /// Whether the run failed: `is_error` when sent, else whether the subtype is `error_*`.
    pub fn is_error(&self) -> bool {
        self.error_flag.unwrap_or_else(|| {
            self.subtype
                .as_deref()
                .is_some_and(|s| s.starts_with("error"))
        })
    }

    /// The run's cost: `total_cost_usd`, or the older `cost_usd`.
    pub fn cost(&self) -> Option<f64> {
        self.total_cost_usd.or(self.cost_usd)
    }

    /// The error text when failed: `errors` joined by `"; "`, else `result`, else the subtype.
    pub fn error_message(&self) -> Option<String> {
        if !self.is_error() {
            return None;
        }
        let errors: Vec<&str> = self
            .errors
            .iter()
            .map(String::as_str)
            .filter(|e| !e.is_empty())
            .collect();
        if !errors.is_empty() {
            return Some(errors.join("; "));
        }
        let subtype = self.subtype.as_deref().filter(|s| !s.is_empty());
        match (self.result.as_deref().filter(|r| !r.is_empty()), subtype) {
            (Some(text), _) => Some(text.to_owned()),
            (None, Some(subtype)) => Some(subtype.to_owned()),
            (None, None) => Some("claude reported an error".to_owned()),
        }
    }

    /// Whether the run was cut short by an interrupt (`terminal_reason` `aborted_*`).
    pub fn aborted(&self) -> bool {
        self.terminal_reason
            .as_deref()
            .is_some_and(|r| r.starts_with("aborted"))
    }
}

/// Parses one stdout line (without its `\n`). Never fails and has no size limit.
pub fn parse_line(line: &str) -> Line {
    let malformed = |why: String| Line {
        session_id: None,
        event: AgentEvent::Malformed(why),
    };
    // A struct would also read from an array.
    if !line
        .trim_start_matches([' ', '\t', '\r', '\n'])
        .starts_with('{')
    {
        return malformed("not a JSON object".into());
    }
    let head = match serde_json::from_str::<Head>(line) {
        Ok(head) => head,
        Err(e) => return malformed(e.to_string()),
    };
    let event = match (head.kind.as_deref(), head.subtype.as_deref()) {
        (Some("system"), Some("init")) => read(line).map(|i| AgentEvent::System(System::Init(i))),
        (Some("system"), Some("api_retry")) => {
            read(line).map(|r| AgentEvent::System(System::ApiRetry(r)))
        }
        (Some("system"), Some("status")) => {
            read(line).map(|s| AgentEvent::System(System::Status(s)))
        }
        (Some("system"), Some("compact_boundary")) => {
            read(line).map(|b| AgentEvent::System(System::CompactBoundary(b)))
        }
        (Some("system"), _) => Some(AgentEvent::System(System::Other)),
        (Some("assistant"), _) => read(line).map(AgentEvent::Assistant),
        (Some("user"), _) => read(line).map(AgentEvent::User),
        (Some("result"), _) => read(line).map(AgentEvent::Result),
        (Some("control_request"), _) => {
            read(line).map(|r| AgentEvent::Control(Control::Request(r)))
        }
        (Some("control_cancel_request"), _) => {
            read(line).map(|c| AgentEvent::Control(Control::Cancel(c)))
        }
        (Some("control_response"), _) => read(line).map(AgentEvent::ControlResponse),
        (Some("rate_limit_event"), _) => {
            read(line).map(|l: rate_limit::RateLimitLine| AgentEvent::RateLimit(l.rate_limit_info))
        }
        _ => None,
    };
    Line {
        session_id: head.session_id,
        event: event.unwrap_or(AgentEvent::Unknown { kind: head.kind }),
    }
}

/// The fields of a line that say what it is.
#[derive(Deserialize)]
struct Head {
    #[serde(rename = "type", default, deserialize_with = "lenient::string")]
    kind: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    subtype: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    session_id: Option<String>,
}

fn read<T: DeserializeOwned>(line: &str) -> Option<T> {
    serde_json::from_str(line).ok()
}

#[cfg(test)]
mod tests;
