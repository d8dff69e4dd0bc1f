//! Claude's `--output-format stream-json` stdout: a tolerant line parser ([`parse_line`]) and
//! the mapper ([`StreamState`]) from lines to what the store writes ([`Ingest`]).
//!
//! Nothing here fails: a line that is not a JSON object is [`StreamLine::Malformed`], an
//! unknown `type` or `subtype` is [`StreamLine::Other`], a field of an unexpected type is read
//! as absent, and a content block that lacks its essential fields is [`ContentBlock::Other`].
//! Every line is kept verbatim in [`Ingest::raw_lines`] whatever it parsed to.

use hld_client::protocol::ConversationEventType;
use serde::de::{DeserializeOwned, Deserializer};
use serde::Deserialize;
use serde_json::Value;

use crate::store::{Ingest, NewEvent, SessionUpdate};

/// Field readers that never fail: a value of the wrong type reads as absent.
mod lenient {
    use super::*;

    /// A string, else `None`.
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

    /// A number, else `None`.
    pub(super) fn float<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        Ok(Value::deserialize(d)?.as_f64())
    }

    /// A boolean, else `None`.
    pub(super) fn boolean<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
        Ok(Value::deserialize(d)?.as_bool())
    }

    /// The strings of an array (other elements skipped), a lone string as a one-element list,
    /// else empty.
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
        Ok(serde_json::from_value(Value::deserialize(d)?).unwrap_or_default())
    }

    /// The elements of an array, each read as `T` (elements that fail are skipped).
    pub(super) fn list<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: DeserializeOwned,
    {
        Ok(match Value::deserialize(d)? {
            Value::Array(items) => items
                .into_iter()
                .filter_map(|v| serde_json::from_value(v).ok())
                .collect(),
            _ => Vec::new(),
        })
    }
}

/// The fields every line may carry.
#[derive(Debug, Default, Deserialize)]
struct Envelope {
    #[serde(rename = "type", default, deserialize_with = "lenient::string")]
    kind: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    subtype: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    session_id: Option<String>,
}

/// `system`/`api_retry`.
#[derive(Debug, Default, Deserialize)]
struct RetryRaw {
    #[serde(default, deserialize_with = "lenient::string")]
    session_id: Option<String>,
    #[serde(default, deserialize_with = "lenient::int")]
    attempt: Option<i64>,
    #[serde(default, deserialize_with = "lenient::int")]
    max_retries: Option<i64>,
    #[serde(default, deserialize_with = "lenient::int")]
    retry_delay_ms: Option<i64>,
    #[serde(default, deserialize_with = "lenient::int")]
    error_status: Option<i64>,
    #[serde(default, deserialize_with = "lenient::string")]
    error: Option<String>,
}

/// A `system`/`api_retry` line: an API call failed, and the CLI tries it again after a delay.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ApiRetry {
    /// Claude's session id.
    pub session_id: Option<String>,
    /// Which retry this is (from 1).
    pub attempt: Option<i64>,
    /// How many retries the CLI makes in all.
    pub max_retries: Option<i64>,
    /// How long it waits before this retry.
    pub retry_delay_ms: Option<i64>,
    /// The HTTP status of the failure (absent when no answer came).
    pub error_status: Option<i64>,
    /// What failed: `authentication_failed`, `overloaded`, `unknown`, …
    pub error: Option<String>,
}

impl ApiRetry {
    fn from_raw(raw: RetryRaw) -> ApiRetry {
        ApiRetry {
            session_id: raw.session_id,
            attempt: raw.attempt,
            max_retries: raw.max_retries,
            retry_delay_ms: raw.retry_delay_ms,
            error_status: raw.error_status,
            error: raw.error,
        }
    }

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

/// `system`/`init`.
#[derive(Debug, Default, Deserialize)]
struct InitRaw {
    #[serde(default, deserialize_with = "lenient::string")]
    session_id: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    model: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    cwd: Option<String>,
    #[serde(
        rename = "permissionMode",
        default,
        deserialize_with = "lenient::string"
    )]
    permission_mode: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    claude_code_version: Option<String>,
    #[serde(default, deserialize_with = "lenient::list")]
    mcp_servers: Vec<McpServerStatus>,
}

/// One entry of `system/init.mcp_servers`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct McpServerStatus {
    /// The server's key in the MCP config.
    #[serde(default, deserialize_with = "lenient::string")]
    pub name: Option<String>,
    /// `connected`, `failed`, `pending`, `needs-auth`, ...
    #[serde(default, deserialize_with = "lenient::string")]
    pub status: Option<String>,
}

/// What `system`/`init` reports about the run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InitInfo {
    /// Claude's session id.
    pub session_id: Option<String>,
    /// The resolved model id.
    pub model: Option<String>,
    /// The working directory.
    pub cwd: Option<String>,
    /// `default`, `acceptEdits`, ...
    pub permission_mode: Option<String>,
    /// The CLI version, e.g. `2.1.197`.
    pub claude_code_version: Option<String>,
    /// The MCP servers and whether they connected.
    pub mcp_servers: Vec<McpServerStatus>,
}

/// An `assistant` or `user` line.
#[derive(Debug, Default, Deserialize)]
struct MessageLineRaw {
    #[serde(default, deserialize_with = "lenient::string")]
    session_id: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    parent_tool_use_id: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    error: Option<String>,
    #[serde(default, deserialize_with = "lenient::object")]
    message: MessageRaw,
}

/// The `message` of an `assistant` or `user` line.
#[derive(Debug, Default, Deserialize)]
struct MessageRaw {
    #[serde(default, deserialize_with = "lenient::string")]
    id: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    model: Option<String>,
    #[serde(default)]
    content: Value,
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

/// One content block of a message.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// `text`.
    Text(String),
    /// `thinking`: the thinking text.
    Thinking(String),
    /// `tool_use`.
    ToolUse {
        /// The tool use id (`toolu_...`).
        id: String,
        /// The tool name.
        name: String,
        /// The input (an object in practice; `null` if absent).
        input: Value,
    },
    /// `tool_result`.
    ToolResult {
        /// The tool use it answers.
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

    /// The blocks of a message `content`: a string is one text block, an array is read block by
    /// block, anything else is no blocks.
    fn list(content: Value) -> Vec<ContentBlock> {
        match content {
            Value::String(s) => vec![ContentBlock::Text(s)],
            Value::Array(items) => items
                .into_iter()
                .map(|v| ContentBlock::from_raw(serde_json::from_value(v).unwrap_or_default()))
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// A tool result's `content` as text: a string as is; an array of blocks with each block
/// rendered (a text block as its text, an image as `[image]`, another block as `[<type>]`) and
/// joined by `\n`; `None` for absent or `null`; any other JSON as compact JSON text.
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

/// An `assistant` or `user` message.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessageInfo {
    /// Claude's session id.
    pub session_id: Option<String>,
    /// The Task tool use this message ran under (sub-agents).
    pub parent_tool_use_id: Option<String>,
    /// The API message id, shared by all blocks of one model reply (`msg_...`).
    pub message_id: Option<String>,
    /// The model; `<synthetic>` for error messages the CLI made up.
    pub model: Option<String>,
    /// The top-level `error` of a synthetic assistant message, e.g. `authentication_failed`.
    pub error: Option<String>,
    /// The content blocks (one per line in practice).
    pub blocks: Vec<ContentBlock>,
}

impl MessageInfo {
    fn from_raw(raw: MessageLineRaw) -> MessageInfo {
        MessageInfo {
            session_id: raw.session_id,
            parent_tool_use_id: raw.parent_tool_use_id,
            message_id: raw.message.id,
            model: raw.message.model,
            error: raw.error,
            blocks: ContentBlock::list(raw.message.content),
        }
    }
}

/// A `result` line.
#[derive(Debug, Default, Deserialize)]
struct ResultRaw {
    #[serde(default, deserialize_with = "lenient::string")]
    subtype: Option<String>,
    #[serde(default, deserialize_with = "lenient::boolean")]
    is_error: Option<bool>,
    #[serde(default, deserialize_with = "lenient::string")]
    terminal_reason: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    stop_reason: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    result: Option<String>,
    #[serde(default, deserialize_with = "lenient::strings")]
    errors: Vec<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    session_id: Option<String>,
    #[serde(default, deserialize_with = "lenient::float")]
    total_cost_usd: Option<f64>,
    #[serde(default, deserialize_with = "lenient::float")]
    cost_usd: Option<f64>,
    #[serde(default, deserialize_with = "lenient::int")]
    duration_ms: Option<i64>,
    #[serde(default, deserialize_with = "lenient::int")]
    duration_api_ms: Option<i64>,
    #[serde(default, deserialize_with = "lenient::int")]
    num_turns: Option<i64>,
    #[serde(default, deserialize_with = "lenient::int")]
    api_error_status: Option<i64>,
    #[serde(default, deserialize_with = "lenient::object")]
    usage: UsageRaw,
}

/// `result.usage`, the two fields kept.
#[derive(Debug, Default, Deserialize)]
struct UsageRaw {
    #[serde(default, deserialize_with = "lenient::int")]
    input_tokens: Option<i64>,
    #[serde(default, deserialize_with = "lenient::int")]
    output_tokens: Option<i64>,
}

/// The `result` line: how the run ended. Decide the session's outcome from this (and from
/// whether it arrived at all), not from the exit code.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultInfo {
    /// `success`, `error_max_turns`, `error_during_execution`, ... (`""` if absent). API
    /// failures arrive as `success` with `is_error`.
    pub subtype: String,
    /// The real success flag. If absent, true when `subtype` starts with `error`.
    pub is_error: bool,
    /// `completed`, `max_turns`, `aborted_streaming`, `aborted_tools`, ...
    pub terminal_reason: Option<String>,
    /// The model's last stop reason (`end_turn`, `tool_use`, ...).
    pub stop_reason: Option<String>,
    /// The final assistant text, or the error text of an API error; absent on `error_*`.
    pub result: Option<String>,
    /// Error texts of `error_*` subtypes.
    pub errors: Vec<String>,
    /// Claude's session id.
    pub session_id: Option<String>,
    /// `total_cost_usd` (or the older `cost_usd`).
    pub total_cost_usd: Option<f64>,
    /// Wall-clock duration of the run.
    pub duration_ms: Option<i64>,
    /// Time spent in API calls.
    pub duration_api_ms: Option<i64>,
    /// Model round-trips.
    pub num_turns: Option<i64>,
    /// `usage.input_tokens` (without cache reads and writes).
    pub input_tokens: Option<i64>,
    /// `usage.output_tokens`.
    pub output_tokens: Option<i64>,
    /// The HTTP status of a failed API call.
    pub api_error_status: Option<i64>,
}

impl ResultInfo {
    fn from_raw(raw: ResultRaw) -> ResultInfo {
        let subtype = raw.subtype.unwrap_or_default();
        ResultInfo {
            is_error: raw.is_error.unwrap_or_else(|| subtype.starts_with("error")),
            subtype,
            terminal_reason: raw.terminal_reason,
            stop_reason: raw.stop_reason,
            result: raw.result,
            errors: raw.errors,
            session_id: raw.session_id,
            total_cost_usd: raw.total_cost_usd.or(raw.cost_usd),
            duration_ms: raw.duration_ms,
            duration_api_ms: raw.duration_api_ms,
            num_turns: raw.num_turns,
            input_tokens: raw.usage.input_tokens,
            output_tokens: raw.usage.output_tokens,
            api_error_status: raw.api_error_status,
        }
    }

    /// The error text when `is_error`: the `errors` joined by `"; "`, else the `result` text,
    /// else the subtype.
    pub fn error_message(&self) -> Option<String> {
        if !self.is_error {
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
        match self.result.as_deref().filter(|r| !r.is_empty()) {
            Some(text) => Some(text.to_owned()),
            None if self.subtype.is_empty() => Some("claude reported an error".to_owned()),
            None => Some(self.subtype.clone()),
        }
    }

    /// Whether the run was cut short by an interrupt (`terminal_reason` `aborted_*`).
    pub fn aborted(&self) -> bool {
        self.terminal_reason
            .as_deref()
            .is_some_and(|r| r.starts_with("aborted"))
    }
}

/// A line of type or subtype this module does not interpret.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OtherLine {
    /// `type`.
    pub kind: Option<String>,
    /// `subtype`.
    pub subtype: Option<String>,
    /// `session_id`.
    pub session_id: Option<String>,
}

/// One parsed stdout line.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamLine {
    /// `system`/`init`.
    Init(InitInfo),
    /// `assistant`.
    Assistant(MessageInfo),
    /// `user` (tool results, interrupt markers).
    User(MessageInfo),
    /// `result`.
    Result(ResultInfo),
    /// `system`/`api_retry`.
    ApiRetry(ApiRetry),
    /// A JSON object of another type, or a `system` line of another subtype.
    Other(OtherLine),
    /// Not a JSON object: the parse error.
    Malformed(String),
}

impl StreamLine {
    /// The `session_id` the line carries, if any.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            StreamLine::Init(i) => i.session_id.as_deref(),
            StreamLine::Assistant(m) | StreamLine::User(m) => m.session_id.as_deref(),
            StreamLine::Result(r) => r.session_id.as_deref(),
            StreamLine::ApiRetry(r) => r.session_id.as_deref(),
            StreamLine::Other(o) => o.session_id.as_deref(),
            StreamLine::Malformed(_) => None,
        }
    }
}

/// Parses one stdout line (without its `\n`). Never fails and has no size limit.
///
/// A well-formed line is read in one pass into the fields the mapper uses ([`fast::Line`]);
/// anything that pass does not expect is read again through a JSON value, which tolerates
/// everything, with the same result for what both read.
pub fn parse_line(line: &str) -> StreamLine {
    if line.trim_start().starts_with('{') {
        if let Ok(fast) = serde_json::from_str::<fast::Line>(line) {
            return fast.into_line();
        }
    }
    parse_value(line)
}

/// [`parse_line`] through a [`Value`].
fn parse_value(line: &str) -> StreamLine {
    let value = match serde_json::from_str::<Value>(line) {
        Ok(v @ Value::Object(_)) => v,
        Ok(other) => {
            let kind = match other {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                Value::Null | Value::Object(_) => "null",
            };
            return StreamLine::Malformed(format!("not a JSON object but {kind}"));
        }
        Err(e) => return StreamLine::Malformed(e.to_string()),
    };
    let envelope = Envelope::deserialize(&value).unwrap_or_default();
    let parsed = match (envelope.kind.as_deref(), envelope.subtype.as_deref()) {
        (Some("system"), Some("init")) => serde_json::from_value::<InitRaw>(value).map(|raw| {
            StreamLine::Init(InitInfo {
                session_id: raw.session_id,
                model: raw.model,
                cwd: raw.cwd,
                permission_mode: raw.permission_mode,
                claude_code_version: raw.claude_code_version,
                mcp_servers: raw.mcp_servers,
            })
        }),
        (Some("assistant"), _) => serde_json::from_value::<MessageLineRaw>(value)
            .map(|raw| StreamLine::Assistant(MessageInfo::from_raw(raw))),
        (Some("user"), _) => serde_json::from_value::<MessageLineRaw>(value)
            .map(|raw| StreamLine::User(MessageInfo::from_raw(raw))),
        (Some("result"), _) => serde_json::from_value::<ResultRaw>(value)
            .map(|raw| StreamLine::Result(ResultInfo::from_raw(raw))),
        (Some("system"), Some("api_retry")) => serde_json::from_value::<RetryRaw>(value)
            .map(|raw| StreamLine::ApiRetry(ApiRetry::from_raw(raw))),
        _ => return StreamLine::Other(other_line(envelope)),
    };
    parsed.unwrap_or_else(|_| StreamLine::Other(other_line(envelope)))
}

/// The one-pass reading of a well-formed line: the fields of every line type the mapper reads,
/// each as lenient as in the per-type structs. Nested objects must be objects and keys must
/// not repeat; otherwise deserialising fails and [`parse_line`] falls back to the value path.
mod fast {
    use std::fmt;

    use serde::de::value::MapAccessDeserializer;
    use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use serde::Deserialize;

    use super::{
        lenient, other_line, ApiRetry, BlockRaw, ContentBlock, Envelope, InitInfo, McpServerStatus,
        MessageInfo, ResultInfo, ResultRaw, StreamLine, UsageRaw,
    };

    #[derive(Deserialize)]
    pub(super) struct Line {
        #[serde(rename = "type", default, deserialize_with = "lenient::string")]
        kind: Option<String>,
        #[serde(default, deserialize_with = "lenient::string")]
        subtype: Option<String>,
        #[serde(default, deserialize_with = "lenient::string")]
        session_id: Option<String>,
        // system/init
        #[serde(default, deserialize_with = "lenient::string")]
        model: Option<String>,
        #[serde(default, deserialize_with = "lenient::string")]
        cwd: Option<String>,
        #[serde(
            rename = "permissionMode",
            default,
            deserialize_with = "lenient::string"
        )]
        permission_mode: Option<String>,
        #[serde(default, deserialize_with = "lenient::string")]
        claude_code_version: Option<String>,
        #[serde(default, deserialize_with = "lenient::list")]
        mcp_servers: Vec<McpServerStatus>,
        // assistant, user
        #[serde(default, deserialize_with = "lenient::string")]
        parent_tool_use_id: Option<String>,
        #[serde(default, deserialize_with = "lenient::string")]
        error: Option<String>,
        #[serde(default)]
        message: Option<Message>,
        // result
        #[serde(default, deserialize_with = "lenient::boolean")]
        is_error: Option<bool>,
        #[serde(default, deserialize_with = "lenient::string")]
        terminal_reason: Option<String>,
        #[serde(default, deserialize_with = "lenient::string")]
        stop_reason: Option<String>,
        #[serde(default, deserialize_with = "lenient::string")]
        result: Option<String>,
        #[serde(default, deserialize_with = "lenient::strings")]
        errors: Vec<String>,
        #[serde(default, deserialize_with = "lenient::float")]
        total_cost_usd: Option<f64>,
        #[serde(default, deserialize_with = "lenient::float")]
        cost_usd: Option<f64>,
        #[serde(default, deserialize_with = "lenient::int")]
        duration_ms: Option<i64>,
        #[serde(default, deserialize_with = "lenient::int")]
        duration_api_ms: Option<i64>,
        #[serde(default, deserialize_with = "lenient::int")]
        num_turns: Option<i64>,
        #[serde(default, deserialize_with = "lenient::int")]
        api_error_status: Option<i64>,
        #[serde(default, deserialize_with = "lenient::object")]
        usage: UsageRaw,
        // system/api_retry
        #[serde(default, deserialize_with = "lenient::int")]
        attempt: Option<i64>,
        #[serde(default, deserialize_with = "lenient::int")]
        max_retries: Option<i64>,
        #[serde(default, deserialize_with = "lenient::int")]
        retry_delay_ms: Option<i64>,
        #[serde(default, deserialize_with = "lenient::int")]
        error_status: Option<i64>,
    }

    /// The `message` of an `assistant` or `user` line.
    #[derive(Deserialize)]
    struct Message {
        #[serde(default, deserialize_with = "lenient::string")]
        id: Option<String>,
        #[serde(default, deserialize_with = "lenient::string")]
        model: Option<String>,
        #[serde(default)]
        content: Content,
    }

    /// A message's `content`: a string is one text block, an array of objects is read block
    /// by block, anything else is no blocks.
    #[derive(Default)]
    struct Content(Vec<ContentBlock>);

    impl<'de> Deserialize<'de> for Content {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(ContentVisitor)
        }
    }

    struct ContentVisitor;

    impl<'de> Visitor<'de> for ContentVisitor {
        type Value = Content;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("message content")
        }

        fn visit_str<E>(self, v: &str) -> Result<Content, E> {
            Ok(Content(vec![ContentBlock::Text(v.to_owned())]))
        }

        fn visit_string<E>(self, v: String) -> Result<Content, E> {
            Ok(Content(vec![ContentBlock::Text(v)]))
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
            let mut blocks = Vec::new();
            while let Some(Block(raw)) = seq.next_element()? {
                blocks.push(ContentBlock::from_raw(raw));
            }
            Ok(Content(blocks))
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Content, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Content::default())
        }

        fn visit_bool<E>(self, _: bool) -> Result<Content, E> {
            Ok(Content::default())
        }

        fn visit_i64<E>(self, _: i64) -> Result<Content, E> {
            Ok(Content::default())
        }

        fn visit_u64<E>(self, _: u64) -> Result<Content, E> {
            Ok(Content::default())
        }

        fn visit_f64<E>(self, _: f64) -> Result<Content, E> {
            Ok(Content::default())
        }

        fn visit_unit<E>(self) -> Result<Content, E> {
            Ok(Content::default())
        }
    }

    /// A content block, which must be an object.
    struct Block(BlockRaw);

    impl<'de> Deserialize<'de> for Block {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct BlockVisitor;
            impl<'de> Visitor<'de> for BlockVisitor {
                type Value = Block;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a content block object")
                }
                fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Block, A::Error> {
                    BlockRaw::deserialize(MapAccessDeserializer::new(map)).map(Block)
                }
            }
            d.deserialize_map(BlockVisitor)
        }
    }

    impl Line {
        pub(super) fn into_line(self) -> StreamLine {
            match (self.kind.as_deref(), self.subtype.as_deref()) {
                (Some("system"), Some("init")) => StreamLine::Init(InitInfo {
                    session_id: self.session_id,
                    model: self.model,
                    cwd: self.cwd,
                    permission_mode: self.permission_mode,
                    claude_code_version: self.claude_code_version,
                    mcp_servers: self.mcp_servers,
                }),
                (Some(kind @ ("assistant" | "user")), _) => {
                    let assistant = kind == "assistant";
                    let (message_id, model, blocks) = match self.message {
                        Some(m) => (m.id, m.model, m.content.0),
                        None => (None, None, Vec::new()),
                    };
                    let info = MessageInfo {
                        session_id: self.session_id,
                        parent_tool_use_id: self.parent_tool_use_id,
                        message_id,
                        model,
                        error: self.error,
                        blocks,
                    };
                    if assistant {
                        StreamLine::Assistant(info)
                    } else {
                        StreamLine::User(info)
                    }
                }
                (Some("result"), _) => StreamLine::Result(ResultInfo::from_raw(ResultRaw {
                    subtype: self.subtype,
                    is_error: self.is_error,
                    terminal_reason: self.terminal_reason,
                    stop_reason: self.stop_reason,
                    result: self.result,
                    errors: self.errors,
                    session_id: self.session_id,
                    total_cost_usd: self.total_cost_usd,
                    cost_usd: self.cost_usd,
                    duration_ms: self.duration_ms,
                    duration_api_ms: self.duration_api_ms,
                    num_turns: self.num_turns,
                    api_error_status: self.api_error_status,
                    usage: self.usage,
                })),
                (Some("system"), Some("api_retry")) => StreamLine::ApiRetry(ApiRetry {
                    session_id: self.session_id,
                    attempt: self.attempt,
                    max_retries: self.max_retries,
                    retry_delay_ms: self.retry_delay_ms,
                    error_status: self.error_status,
                    error: self.error,
                }),
                _ => StreamLine::Other(other_line(Envelope {
                    kind: self.kind,
                    subtype: self.subtype,
                    session_id: self.session_id,
                })),
            }
        }
    }
}

fn other_line(envelope: Envelope) -> OtherLine {
    OtherLine {
        kind: envelope.kind,
        subtype: envelope.subtype,
        session_id: envelope.session_id,
    }
}

/// The mapper for one Claude process: turns each stdout line into what the store writes, and
/// remembers the Claude session id and the `result`.
#[derive(Debug, Clone, Default)]
pub struct StreamState {
    claude_session_id: Option<String>,
    result: Option<ResultInfo>,
}

impl StreamState {
    /// A mapper that has seen no line yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Claude's session id: from the first line that carried a non-empty one.
    pub fn claude_session_id(&self) -> Option<&str> {
        self.claude_session_id.as_deref()
    }

    /// The last `result` line seen; `None` if none arrived (the process was killed or failed
    /// before running).
    pub fn result(&self) -> Option<&ResultInfo> {
        self.result.as_ref()
    }

    /// Maps one stdout line (without its `\n`) to the store's writes, appended to `batch`: the
    /// verbatim line always; conversation events for message blocks; a session update for the
    /// first session id, the `init` model and the `result` figures, merged into the batch's
    /// (fields this line sets win). Never sets the status: the supervisor decides it from
    /// [`StreamState::result`], whether an interrupt was asked for and the process exit.
    pub fn apply_to(&mut self, line: &str, batch: &mut Ingest) {
        let parsed = parse_line(line);
        let mut update = SessionUpdate::default();
        if self.claude_session_id.is_none() {
            if let Some(id) = parsed.session_id().filter(|id| !id.is_empty()) {
                self.claude_session_id = Some(id.to_owned());
                update.claude_session_id = Some(id.to_owned());
            }
        }
        let sid = self.claude_session_id.as_deref().unwrap_or_default();
        let events = &mut batch.events;
        match parsed {
            StreamLine::Init(init) => {
                update.model = init.model.filter(|m| !m.is_empty());
            }
            StreamLine::Assistant(msg) => {
                message_events(sid, "assistant", msg, events);
            }
            StreamLine::User(msg) => {
                message_events(sid, "user", msg, events);
            }
            StreamLine::Result(result) => {
                update.cost_usd = result.total_cost_usd;
                update.duration_ms = result.duration_ms;
                update.num_turns = result.num_turns;
                update.result_content = result.result.clone();
                update.result_is_error = Some(result.is_error);
                update.input_tokens = result.input_tokens;
                update.output_tokens = result.output_tokens;
                update.error_message = result.error_message();
                self.result = Some(result);
            }
            StreamLine::ApiRetry(retry) => {
                events.push(NewEvent {
                    role: Some("system".to_owned()),
                    content: Some(retry.describe()),
                    is_error: true,
                    subtype: Some("api_retry".to_owned()),
                    ..NewEvent::new(sid, ConversationEventType::System)
                });
            }
            StreamLine::Other(other) if other.kind.as_deref() == Some("system") => {
                tracing::debug!(subtype = ?other.subtype, "system line kept raw");
            }
            StreamLine::Other(other) => {
                tracing::info!(kind = ?other.kind, "unknown line type kept raw");
            }
            StreamLine::Malformed(error) => {
                tracing::warn!(%error, "malformed line from claude kept raw");
            }
        }
        batch.raw_lines.push(line.to_owned());
        if update != SessionUpdate::default() {
            batch.update = Some(match batch.update.take() {
                Some(earlier) => earlier.merged_with(update),
                None => update,
            });
        }
    }
}

/// The conversation events of one message: text → message from `role`, thinking → thinking
/// from `role`, tool_use → tool call (no role, as the Go daemon stored it), tool_result → tool
/// result (role `user`); other blocks → nothing. They are appended to `events`.
fn message_events(sid: &str, role: &str, msg: MessageInfo, events: &mut Vec<NewEvent>) {
    let parent = msg.parent_tool_use_id;
    events.extend(msg.blocks.into_iter().filter_map(|block| {
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
mod tests {
    use super::*;
    use hld_client::protocol::ConversationEventType as Kind;
    use serde_json::json;

    /// One line on its own: [`StreamState::apply_to`] an empty batch.
    trait ApplyOne {
        fn apply(&mut self, line: &str) -> Ingest;
    }

    impl ApplyOne for StreamState {
        fn apply(&mut self, line: &str) -> Ingest {
            let mut ingest = Ingest::default();
            self.apply_to(line, &mut ingest);
            ingest
        }
    }

    /// Feeds a fixture transcript through a fresh mapper.
    fn run(name: &str) -> (StreamState, Vec<String>, Vec<Ingest>) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/transcripts")
            .join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let mut state = StreamState::new();
        let ingests = lines.iter().map(|l| state.apply(l)).collect();
        (state, lines, ingests)
    }

    fn events(ingests: &[Ingest]) -> Vec<NewEvent> {
        ingests.iter().flat_map(|i| i.events.clone()).collect()
    }

    fn kinds(events: &[NewEvent]) -> Vec<(Kind, Option<&str>)> {
        events
            .iter()
            .map(|e| (e.event_type, e.role.as_deref()))
            .collect()
    }

    /// Every line kept verbatim, one per ingest; every event tagged with `sid`.
    fn assert_raw_and_sid(lines: &[String], ingests: &[Ingest], sid: &str) {
        assert_eq!(lines.len(), ingests.len());
        for (line, ingest) in lines.iter().zip(ingests) {
            assert_eq!(ingest.raw_lines, std::slice::from_ref(line));
            for e in &ingest.events {
                assert_eq!(e.claude_session_id, sid);
                assert_eq!(e.parent_tool_use_id, None);
            }
        }
    }

    /// The only update that sets the claude session id is the first ingest's.
    fn assert_session_id_set_once(ingests: &[Ingest], sid: &str, model: &str) {
        let first = ingests[0].update.as_ref().unwrap();
        assert_eq!(first.claude_session_id.as_deref(), Some(sid));
        assert_eq!(first.model.as_deref(), Some(model));
        assert_eq!(first.status, None);
        assert!(ingests[0].events.is_empty());
        for later in &ingests[1..] {
            if let Some(u) = &later.update {
                assert_eq!(u.claude_session_id, None);
            }
        }
    }

    #[test]
    fn claude_fixture_01_simple_text() {
        let (state, lines, ingests) = run("01-simple-text.jsonl");
        let sid = "9c14fa8e-fbea-4f30-99c1-99dc87bfb7d8";
        assert_raw_and_sid(&lines, &ingests, sid);
        assert_session_id_set_once(&ingests, sid, "claude-sonnet-4-5-20250929");
        let evs = events(&ingests);
        assert_eq!(
            evs,
            [NewEvent::message(
                sid,
                "assistant",
                "The capital of France is Paris."
            )]
        );

        let update = ingests.last().unwrap().update.clone().unwrap();
        assert_eq!(
            update,
            SessionUpdate {
                cost_usd: Some(0.059895750000000005),
                duration_ms: Some(123),
                num_turns: Some(1),
                result_content: Some("The capital of France is Paris.".into()),
                result_is_error: Some(false),
                input_tokens: Some(4),
                output_tokens: Some(24),
                ..SessionUpdate::default()
            }
        );
        let result = state.result().unwrap();
        assert_eq!(result.subtype, "success");
        assert!(!result.is_error);
        assert!(!result.aborted());
        assert_eq!(result.terminal_reason.as_deref(), Some("completed"));
        assert_eq!(result.duration_api_ms, Some(17));
        assert_eq!(state.claude_session_id(), Some(sid));
    }

    #[test]
    fn claude_fixture_02_tool_use_approved() {
        let (state, lines, ingests) = run("02-tool-use-approved.jsonl");
        let sid = "f2e03c37-faaf-4854-b5c8-7d78f25b0edb";
        assert_raw_and_sid(&lines, &ingests, sid);
        assert_session_id_set_once(&ingests, sid, "claude-sonnet-4-5-20250929");
        // The thinking_tokens system line is kept raw only.
        assert!(ingests[1].events.is_empty() && ingests[1].update.is_none());

        let evs = events(&ingests);
        assert_eq!(
            kinds(&evs),
            [
                (Kind::Thinking, Some("assistant")),
                (Kind::Message, Some("assistant")),
                (Kind::ToolCall, None),
                (Kind::ToolResult, Some("user")),
                (Kind::Message, Some("assistant")),
            ]
        );
        assert!(evs[0]
            .content
            .as_deref()
            .unwrap()
            .starts_with("The user wants a new file hello.txt"));
        assert_eq!(
            evs[1].content.as_deref(),
            Some("I'll create that file for you.")
        );

        let call = &evs[2];
        assert_eq!(
            call.tool_id.as_deref(),
            Some("toolu_01A9cXk3mQ7ZrT2bVnW8pLsE")
        );
        assert_eq!(call.tool_name.as_deref(), Some("Write"));
        let input: Value = serde_json::from_str(call.tool_input_json.as_deref().unwrap()).unwrap();
        assert_eq!(
            input,
            json!({"file_path": "/home/dev/project/hello.txt", "content": "Hello, world!\n"})
        );
        assert!(!call.tool_input_json.as_deref().unwrap().contains(": "));

        let res = &evs[3];
        assert_eq!(res.tool_result_for_id, call.tool_id);
        assert_eq!(
            res.tool_result_content.as_deref(),
            Some("File created successfully at: /home/dev/project/hello.txt (file state is current in your context — no need to Read it back)")
        );
        assert!(!res.is_error);
        assert_eq!(res.content, None);
        assert_eq!(
            evs[4].content.as_deref(),
            Some("Done - the file hello.txt now contains \"Hello, world!\".")
        );

        let update = ingests.last().unwrap().update.clone().unwrap();
        assert_eq!(update.cost_usd, Some(0.06766065000000002));
        assert_eq!(update.num_turns, Some(2));
        assert_eq!(update.input_tokens, Some(10));
        assert_eq!(update.output_tokens, Some(120));
        assert_eq!(update.result_is_error, Some(false));
        assert_eq!(update.error_message, None);
        assert!(!state.result().unwrap().is_error);
    }

    #[test]
    fn claude_fixture_03_failed_not_logged_in() {
        let (state, lines, ingests) = run("03-failed-not-logged-in.jsonl");
        let sid = "df8e054f-a139-4537-b6cb-7fa6a33a8c6a";
        assert_raw_and_sid(&lines, &ingests, sid);
        assert_session_id_set_once(&ingests, sid, "claude-opus-4-8[1m]");
        assert_eq!(
            events(&ingests),
            [NewEvent::message(
                sid,
                "assistant",
                "Not logged in · Please run /login"
            )]
        );
        match parse_line(&lines[1]) {
            StreamLine::Assistant(msg) => {
                assert_eq!(msg.model.as_deref(), Some("<synthetic>"));
                assert_eq!(msg.error.as_deref(), Some("authentication_failed"));
            }
            other => panic!("expected assistant, got {other:?}"),
        }

        let update = ingests.last().unwrap().update.clone().unwrap();
        assert_eq!(update.result_is_error, Some(true));
        assert_eq!(update.cost_usd, Some(0.0));
        assert_eq!(update.num_turns, Some(1));
        assert_eq!(update.status, None);
        // No `errors` array: the error text is the result text.
        assert_eq!(
            update.error_message.as_deref(),
            Some("Not logged in · Please run /login")
        );
        assert_eq!(
            update.result_content.as_deref(),
            Some("Not logged in · Please run /login")
        );
        let result = state.result().unwrap();
        assert_eq!(result.subtype, "success");
        assert!(result.is_error);
        assert!(result.errors.is_empty());
    }

    #[test]
    fn claude_fixture_04_tool_use_denied() {
        let (state, lines, ingests) = run("04-tool-use-denied.jsonl");
        let sid = "1899901a-4462-4a44-a898-eac939b82117";
        assert_raw_and_sid(&lines, &ingests, sid);
        assert_session_id_set_once(&ingests, sid, "claude-sonnet-4-5-20250929");
        let evs = events(&ingests);
        assert_eq!(
            kinds(&evs),
            [
                (Kind::Thinking, Some("assistant")),
                (Kind::Message, Some("assistant")),
                (Kind::ToolCall, None),
                (Kind::ToolResult, Some("user")),
                (Kind::Message, Some("assistant")),
            ]
        );
        let denied = &evs[3];
        assert_eq!(
            denied.tool_result_for_id.as_deref(),
            Some("toolu_01A9cXk3mQ7ZrT2bVnW8pLsE")
        );
        assert_eq!(denied.tool_result_for_id, evs[2].tool_id);
        assert!(denied.is_error);
        assert_eq!(
            denied.tool_result_content.as_deref(),
            Some("Denied by reviewer: not allowed to write files here")
        );
        let result = state.result().unwrap();
        assert!(!result.is_error);
        assert_eq!(result.num_turns, Some(2));
        assert_eq!(
            result.result.as_deref(),
            Some(
                "I couldn't create hello.txt because permission to use the Write tool was denied."
            )
        );
    }

    #[test]
    fn claude_fixture_05_interrupted() {
        let (state, lines, ingests) = run("05-interrupted-sigint.jsonl");
        let sid = "b1c0fe5a-fc6a-4e71-9b90-46fc381706e0";
        assert_raw_and_sid(&lines, &ingests, sid);
        assert_session_id_set_once(&ingests, sid, "claude-sonnet-4-5-20250929");
        // task_started / task_notification lines: raw only.
        for i in 3..=5 {
            assert!(matches!(parse_line(&lines[i]), StreamLine::Other(_)));
            assert!(ingests[i].events.is_empty() && ingests[i].update.is_none());
        }
        let evs = events(&ingests);
        assert_eq!(
            kinds(&evs),
            [
                (Kind::Message, Some("assistant")),
                (Kind::ToolCall, None),
                (Kind::ToolResult, Some("user")),
                (Kind::Message, Some("user")),
            ]
        );
        assert_eq!(
            evs[1].tool_id.as_deref(),
            Some("toolu_01Sl33pXq9RkVb4nTzW2mYdA")
        );
        assert_eq!(evs[1].tool_name.as_deref(), Some("Bash"));
        assert_eq!(evs[2].tool_result_for_id, evs[1].tool_id);
        assert!(evs[2].is_error);
        assert!(evs[2]
            .tool_result_content
            .as_deref()
            .unwrap()
            .starts_with("The user doesn't want to proceed with this tool use."));
        assert_eq!(
            evs[3].content.as_deref(),
            Some("[Request interrupted by user for tool use]")
        );

        let update = ingests.last().unwrap().update.clone().unwrap();
        assert_eq!(update.result_is_error, Some(true));
        assert_eq!(update.result_content, None);
        assert_eq!(update.num_turns, Some(3));
        assert_eq!(update.duration_ms, Some(3668));
        assert_eq!(update.cost_usd, Some(0.06097575000000001));
        assert_eq!(
            update.error_message.as_deref(),
            Some("[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use")
        );
        let result = state.result().unwrap();
        assert_eq!(result.subtype, "error_during_execution");
        assert_eq!(result.terminal_reason.as_deref(), Some("aborted_tools"));
        assert!(result.aborted());
        assert!(result.is_error);
    }

    #[test]
    fn claude_malformed_and_unknown_lines_kept_raw_without_events() {
        let lines = [
            "",
            "not json",
            "{\"type\":\"assistant\"",
            "[1,2]",
            "\"a string\"",
            "null",
            "{}",
            "{\"type\":5}",
            "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\"}}",
            "{\"type\":\"assistant\",\"message\":\"oops\"}",
            "{\"type\":\"assistant\",\"message\":{\"content\":[1,null,{\"type\":\"text\"},{\"type\":\"tool_use\",\"id\":3},{\"type\":\"redacted_thinking\",\"data\":\"x\"},{\"type\":\"server_tool_use\"}]}}",
            "{\"type\":\"user\",\"message\":{\"content\":{\"weird\":true}}}",
        ];
        let mut state = StreamState::new();
        for line in lines {
            let ingest = state.apply(line);
            assert_eq!(ingest.raw_lines, [line.to_owned()], "{line}");
            assert!(ingest.events.is_empty(), "{line}");
            assert!(ingest.update.is_none(), "{line}");
        }
        assert_eq!(state.claude_session_id(), None);
        assert_eq!(state.result(), None);
        assert!(matches!(parse_line("not json"), StreamLine::Malformed(_)));
        assert!(matches!(parse_line("[1,2]"), StreamLine::Malformed(_)));
        assert_eq!(
            parse_line(
                "{\"type\":\"system\",\"subtype\":\"compact_boundary\",\"session_id\":\"s\"}"
            ),
            StreamLine::Other(OtherLine {
                kind: Some("system".into()),
                subtype: Some("compact_boundary".into()),
                session_id: Some("s".into()),
            })
        );
    }

    /// Each `api_retry` line becomes a system event saying the attempt, the error and the
    /// delay, through either reading of the line.
    #[test]
    fn claude_api_retries_become_system_events() {
        let line = json!({"type": "system", "subtype": "api_retry", "attempt": 3,
            "max_retries": 10, "retry_delay_ms": 4100, "error_status": 401,
            "error": "authentication_failed", "session_id": "S1", "uuid": "u"})
        .to_string();
        let mut state = StreamState::new();
        let ingest = state.apply(&line);
        assert_eq!(ingest.raw_lines, std::slice::from_ref(&line));
        let [event] = &ingest.events[..] else {
            panic!("one event: {:?}", ingest.events)
        };
        assert_eq!(event.event_type, Kind::System);
        assert_eq!(event.subtype.as_deref(), Some("api_retry"));
        assert_eq!(event.role.as_deref(), Some("system"));
        assert!(event.is_error);
        assert_eq!(
            event.content.as_deref(),
            Some("API error 401 (authentication_failed), retrying (3/10) in 4.1 s")
        );
        // The value path (a duplicate key sends the line there) reads it the same.
        let duplicated = line.replacen("\"uuid\":\"u\"", "\"uuid\":\"u\",\"uuid\":\"v\"", 1);
        assert_eq!(parse_line(&duplicated), parse_line(&line));
        // Offline: no status.
        let offline = r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":1,"retry_delay_ms":512,"error_status":null,"error":"unknown"}"#;
        let StreamLine::ApiRetry(retry) = parse_line(offline) else {
            panic!("an api_retry line")
        };
        assert_eq!(
            retry.describe(),
            "API error (unknown), retrying (1/1) in 0.5 s"
        );
    }

    #[test]
    fn claude_session_id_from_first_line_that_carries_one() {
        let mut state = StreamState::new();
        // An unknown line with a session id sets it, even before init.
        let first = state.apply("{\"type\":\"rate_limit_event\",\"session_id\":\"S1\"}");
        assert_eq!(
            first.update,
            Some(SessionUpdate {
                claude_session_id: Some("S1".into()),
                ..SessionUpdate::default()
            })
        );
        // A later, different id does not replace it.
        let init = state.apply(
            "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"S2\",\"model\":\"m\"}",
        );
        assert_eq!(
            init.update,
            Some(SessionUpdate {
                model: Some("m".into()),
                ..SessionUpdate::default()
            })
        );
        assert_eq!(state.claude_session_id(), Some("S1"));

        // Events before any session id carry "".
        let mut fresh = StreamState::new();
        let early = fresh.apply(
            "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}",
        );
        assert_eq!(early.events, [NewEvent::message("", "assistant", "hi")]);
    }

    #[test]
    fn claude_failed_resume_session_id_from_result() {
        let line = "{\"type\":\"result\",\"subtype\":\"error_during_execution\",\"duration_ms\":0,\"is_error\":true,\"num_turns\":0,\"stop_reason\":null,\"session_id\":\"0d9c2f8e-1111-4222-8333-944445555666\",\"total_cost_usd\":0,\"errors\":[\"No conversation found with session ID: 0d9c2f8e-1111-4222-8333-944445555666\"]}";
        let mut state = StreamState::new();
        let ingest = state.apply(line);
        let update = ingest.update.unwrap();
        assert_eq!(
            update.claude_session_id.as_deref(),
            Some("0d9c2f8e-1111-4222-8333-944445555666")
        );
        assert_eq!(
            update.error_message.as_deref(),
            Some("No conversation found with session ID: 0d9c2f8e-1111-4222-8333-944445555666")
        );
        assert_eq!(update.num_turns, Some(0));
        assert_eq!(update.result_content, None);
        assert!(!state.result().unwrap().aborted());
    }

    #[test]
    fn claude_result_old_cost_field_errors_joined_and_missing_is_error() {
        let old = parse_line("{\"type\":\"result\",\"subtype\":\"success\",\"cost_usd\":0.5,\"is_error\":false,\"num_turns\":2.0,\"duration_ms\":\"slow\"}");
        let StreamLine::Result(old) = old else {
            panic!("expected result")
        };
        assert_eq!(old.total_cost_usd, Some(0.5));
        assert_eq!(old.num_turns, Some(2));
        assert_eq!(old.duration_ms, None);
        assert_eq!(old.error_message(), None);

        let StreamLine::Result(max) = parse_line(
            "{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"total_cost_usd\":0.1,\"cost_usd\":9,\"errors\":[\"a\",\"b\"]}",
        ) else {
            panic!("expected result")
        };
        assert!(
            max.is_error,
            "absent is_error on an error_* subtype means error"
        );
        assert_eq!(max.total_cost_usd, Some(0.1));
        assert_eq!(max.error_message().as_deref(), Some("a; b"));
    }

    #[test]
    fn claude_several_blocks_in_one_line_and_parent_tool_use_id() {
        let line = json!({
            "type": "assistant",
            "parent_tool_use_id": "toolu_TASK",
            "session_id": "S",
            "message": {"content": [
                {"type": "thinking", "thinking": "hmm", "signature": "x"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_R", "name": "Read", "input": {"file_path": "/a"}},
                {"type": "image", "source": {}}
            ]}
        })
        .to_string();
        let ingest = StreamState::new().apply(&line);
        assert_eq!(
            kinds(&ingest.events),
            [
                (Kind::Thinking, Some("assistant")),
                (Kind::Message, Some("assistant")),
                (Kind::ToolCall, None),
            ]
        );
        for e in &ingest.events {
            assert_eq!(e.parent_tool_use_id.as_deref(), Some("toolu_TASK"));
            assert_eq!(e.claude_session_id, "S");
        }
        assert_eq!(
            ingest.events[2].tool_input_json.as_deref(),
            Some("{\"file_path\":\"/a\"}")
        );
    }

    #[test]
    fn claude_tool_result_array_content_and_user_text() {
        let line = json!({
            "type": "user",
            "session_id": "S",
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_M", "is_error": false, "content": [
                    {"type": "text", "text": "line one"},
                    {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
                    {"type": "text", "text": "line two"}
                ]},
                {"type": "tool_result", "tool_use_id": "toolu_N"},
                {"type": "text", "text": "[Request interrupted by user]"}
            ]}
        })
        .to_string();
        let evs = StreamState::new().apply(&line).events;
        assert_eq!(
            kinds(&evs),
            [
                (Kind::ToolResult, Some("user")),
                (Kind::ToolResult, Some("user")),
                (Kind::Message, Some("user")),
            ]
        );
        assert_eq!(
            evs[0].tool_result_content.as_deref(),
            Some("line one\n[image]\nline two")
        );
        assert_eq!(evs[0].tool_result_for_id.as_deref(), Some("toolu_M"));
        assert_eq!(evs[1].tool_result_for_id.as_deref(), Some("toolu_N"));
        assert_eq!(evs[1].tool_result_content, None);
        assert!(!evs[1].is_error);
        assert_eq!(
            evs[2].content.as_deref(),
            Some("[Request interrupted by user]")
        );

        // A plain-string user message (replayed input) is one user message.
        let replay = StreamState::new()
            .apply("{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"do it\"}}");
        assert_eq!(replay.events, [NewEvent::message("", "user", "do it")]);
    }

    #[test]
    fn claude_render_tool_result_shapes() {
        assert_eq!(render_tool_result(&Value::Null), None);
        assert_eq!(render_tool_result(&json!("x")).as_deref(), Some("x"));
        assert_eq!(render_tool_result(&json!([])).as_deref(), Some(""));
        assert_eq!(
            render_tool_result(&json!([{"type": "document"}, "raw", {"no": "type"}])).as_deref(),
            Some("[document]\nraw\n{\"no\":\"type\"}")
        );
        assert_eq!(
            render_tool_result(&json!({"a": 1})).as_deref(),
            Some("{\"a\":1}")
        );
    }

    #[test]
    fn claude_five_megabyte_tool_result_line() {
        let big = "x".repeat(5 * 1024 * 1024);
        for content in [json!(big), json!([{"type": "text", "text": big}])] {
            let line = json!({
                "type": "user",
                "session_id": "S",
                "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_BIG", "content": content}
                ]}
            })
            .to_string();
            assert!(line.len() > 5 * 1024 * 1024);
            let ingest = StreamState::new().apply(&line);
            assert_eq!(ingest.raw_lines[0].len(), line.len());
            assert_eq!(ingest.events.len(), 1);
            let text = ingest.events[0].tool_result_content.as_deref().unwrap();
            assert_eq!(text.len(), big.len());
            assert_eq!(
                ingest.events[0].tool_result_for_id.as_deref(),
                Some("toolu_BIG")
            );
        }
    }

    #[test]
    fn claude_init_info_parsed() {
        let (_, lines, _) = run("02-tool-use-approved.jsonl");
        let StreamLine::Init(init) = parse_line(&lines[0]) else {
            panic!("expected init")
        };
        assert_eq!(init.cwd.as_deref(), Some("/home/dev/project"));
        assert_eq!(init.permission_mode.as_deref(), Some("default"));
        assert_eq!(init.claude_code_version.as_deref(), Some("2.1.197"));
        assert_eq!(
            init.mcp_servers,
            [McpServerStatus {
                name: Some("approver".into()),
                status: Some("connected".into()),
            }]
        );
    }

    #[test]
    fn the_one_pass_reading_matches_the_value_path() {
        let mut lines = Vec::new();
        for name in [
            "01-simple-text.jsonl",
            "02-tool-use-approved.jsonl",
            "03-failed-not-logged-in.jsonl",
            "04-tool-use-denied.jsonl",
            "05-interrupted-sigint.jsonl",
        ] {
            lines.extend(run(name).1);
        }
        // Real lines take the one pass.
        for line in &lines {
            assert!(
                serde_json::from_str::<fast::Line>(line).is_ok(),
                "line {line}"
            );
        }
        let odd = [
            r#"{"type":"assistant","message":{"content":"plain text"},"session_id":"s"}"#,
            r#"{"type":"assistant","message":{"content":null}}"#,
            r#"{"type":"assistant","message":{"content":{"type":"text"}}}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"a"},"b",[1]]}}"#,
            r#"{"type":"assistant","message":"not an object","session_id":7}"#,
            r#"{"type":"assistant","message":null,"error":"authentication_failed"}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"},{"type":"image"}]}]}}"#,
            r#"{"type":"user","message":{"content":[{"type":"text","text":"a","text":"b"}]}}"#,
            r#"{"type":"result","subtype":"success","usage":[1],"num_turns":"2","is_error":"no"}"#,
            r#"{"type":"result","type":"assistant"}"#,
            r#"{"type":"system","subtype":"init","mcp_servers":[{"name":"a"},3],"model":5}"#,
            r#"{"type":"stream_event","message":[1,2],"result":{}}"#,
            r#"  {"type":"system","subtype":"api_retry"}"#,
        ];
        lines.extend(odd.iter().map(|l| (*l).to_owned()));
        for line in &lines {
            assert_eq!(parse_line(line), parse_value(line), "line {line}");
        }
    }
}
