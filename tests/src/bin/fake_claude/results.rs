//! The `result` line and what it reports: token counts, costs, denials, and why a turn
//! failed (field order as in the real CLI's output, `tests/fixtures/transcripts/`).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

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

    /// Takes `other` away, down to zero.
    pub fn sub(&mut self, other: Tokens) {
        self.input = self.input.saturating_sub(other.input);
        self.cache_creation = self.cache_creation.saturating_sub(other.cache_creation);
        self.cache_read = self.cache_read.saturating_sub(other.cache_read);
        self.output = self.output.saturating_sub(other.output);
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
pub struct ServerToolUse {
    web_search_requests: u64,
    web_fetch_requests: u64,
}

#[derive(Debug, Default, Serialize)]
pub struct CacheCreation {
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

/// What every `result` line reports. As in the real CLI's live processes, `usage`,
/// `num_turns`, `duration_ms` and the denials are the turn's, while `total_cost_usd`,
/// `modelUsage` and `duration_api_ms` count since the process started.
#[derive(Debug)]
pub struct RunStats {
    pub session_id: String,
    pub duration_ms: u64,
    pub duration_api_ms: u64,
    pub num_turns: u32,
    /// The turn's tokens.
    pub tokens: Tokens,
    /// The tokens per model since the process started.
    pub spent: BTreeMap<String, Tokens>,
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
        self.spent
            .iter()
            .filter(|(_, tokens)| !tokens.is_zero())
            .map(|(model, tokens)| {
                let usage = ModelUsage {
                    input_tokens: tokens.input,
                    output_tokens: tokens.output,
                    cache_read_input_tokens: tokens.cache_read,
                    cache_creation_input_tokens: tokens.cache_creation,
                    web_search_requests: 0,
                    cost_usd: tokens.cost_usd(),
                    context_window: 200_000,
                    max_output_tokens: 32_000,
                };
                (model.clone(), usage)
            })
            .collect()
    }

    fn total_cost_usd(&self) -> f64 {
        self.spent.values().map(Tokens::cost_usd).sum()
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

    /// `success` with `is_error: true`: the API failed and `text` is the error shown;
    /// `status` the HTTP status it answered with.
    pub fn api_error(stats: RunStats, text: String, status: Option<u16>) -> Self {
        Self {
            api_error_status: status,
            ..Self::new(stats, text, true)
        }
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
            total_cost_usd: stats.total_cost_usd(),
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
            total_cost_usd: stats.total_cost_usd(),
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
