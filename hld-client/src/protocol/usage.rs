//! What agents cost and the limits they run into: the usage-limit windows Claude Code reports
//! (`getRateLimits`, [`UsageLimit`] on a stopped session) and the tokens and cost of the
//! stored sessions (`getUsage`).

use serde::{Deserialize, Serialize};

use super::NoParams;

open_enum!(
    /// A usage-limit window of Claude Code (its `rateLimitType`).
    RateLimitKind {
        /// The five-hour session window.
        FiveHour = "five_hour",
        /// The weekly window.
        SevenDay = "seven_day",
        /// The weekly window of Opus models.
        SevenDayOpus = "seven_day_opus",
        /// The weekly window of Sonnet models.
        SevenDaySonnet = "seven_day_sonnet",
        /// The weekly window that includes overage.
        SevenDayOverageIncluded = "seven_day_overage_included",
        /// Usage beyond the plan (extra usage credits).
        Overage = "overage",
    }
);

open_enum!(
    /// Where a window stands (Claude Code's `status`).
    #[derive(Default)]
    RateLimitStatus {
        /// Under the limit.
        #[default]
        Allowed = "allowed",
        /// Near the limit.
        AllowedWarning = "allowed_warning",
        /// At the limit: requests are refused until the window resets.
        Rejected = "rejected",
    }
);

/// Why a session stopped: it hit a usage limit. The session keeps the status `failed`; this
/// says it is a limit, not an ordinary failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageLimit {
    /// The window that was hit; `Unknown("unknown")` when Claude Code did not say.
    pub kind: RateLimitKind,
    /// When it resets, RFC 3339, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resets_at: Option<String>,
}

/// The latest a session's `claude` reported about one window (a `rate_limit_event` line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateLimitWindow {
    /// The window.
    pub kind: RateLimitKind,
    /// Where it stands.
    pub status: RateLimitStatus,
    /// How much of it is used, from 0.0 to 1.0, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utilization: Option<f64>,
    /// When it resets, RFC 3339, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resets_at: Option<String>,
    /// When the daemon read it, RFC 3339.
    pub updated_at: String,
}

/// Result of `getRateLimits`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetRateLimitsResult {
    /// One entry per window reported, by kind; a window whose reset passed is left out.
    pub windows: Vec<RateLimitWindow>,
}

method!(
    /// The latest state of each usage-limit window, as the sessions' `claude` processes last
    /// reported it (`rate_limit_event`), kept over restarts; a window whose reset passed is
    /// left out. The windows are the account's, not a session's; a change is published as
    /// `rate_limit_updated`.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"getRateLimits","params":{},"id":1}
    /// {"jsonrpc":"2.0","result":{"windows":[{"kind":"five_hour","status":"allowed_warning","utilization":0.91,"resets_at":"2026-11-29T14:00:00Z","updated_at":"2026-11-29T11:02:13Z"}]},"id":1}
    /// ```
    GetRateLimits, "getRateLimits", "The latest state of each usage-limit window",
    [], "{windows: RateLimitWindow[]}",
    NoParams, GetRateLimitsResult
);

open_enum!(
    /// How `getUsage` groups.
    #[derive(Default)]
    UsageGroupBy {
        /// By calendar day of the daemon's local time zone (`2026-11-29`).
        #[default]
        Day = "day",
        /// By model id (a turn that used two models counts in both rows, each with its share).
        Model = "model",
        /// By working directory.
        WorkingDir = "working_dir",
    }
);

/// Params of `getUsage`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetUsageParams {
    /// Only turns that ended at or after this: RFC 3339, or a day `YYYY-MM-DD` (its start, in
    /// the daemon's local time zone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// `day` (the default), `model` or `working_dir`.
    #[serde(default)]
    pub group_by: UsageGroupBy,
}

/// Tokens and cost of some turns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageTotals {
    /// Input tokens not read from the cache.
    pub input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// Tokens written to the prompt cache.
    pub cache_creation_input_tokens: i64,
    /// Tokens read from the prompt cache.
    pub cache_read_input_tokens: i64,
    /// Cost in US dollars, as Claude Code reported it.
    pub cost_usd: f64,
    /// Sessions with at least one of these turns.
    pub sessions: u64,
    /// Turns (each `result` of `claude`).
    pub turns: u64,
}

/// One group of `getUsage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageRow {
    /// The day (`YYYY-MM-DD`), model id or working directory.
    pub key: String,
    /// Its totals.
    #[serde(flatten)]
    pub totals: UsageTotals,
}

/// Result of `getUsage`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetUsageResult {
    /// How the rows are grouped.
    pub group_by: UsageGroupBy,
    /// The groups: days in order, else by cost, highest first.
    pub rows: Vec<UsageRow>,
    /// Every turn counted, once.
    pub total: UsageTotals,
}

method!(
    /// Tokens and cost of the stored sessions, grouped by day, model or working directory.
    ///
    /// Every turn counts once, where it ran: a continuation counts its own turns, not its
    /// parent's again, and a live session counts each turn as it ends. Failed and interrupted
    /// turns count what Claude Code reported for them.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"getUsage","params":{"since":"2026-11-01","group_by":"model"},"id":1}
    /// {"jsonrpc":"2.0","result":{"group_by":"model","rows":[{"key":"claude-sonnet-4-5-20250929","input_tokens":1200,"output_tokens":5400,"cache_creation_input_tokens":81000,"cache_read_input_tokens":640000,"cost_usd":0.71,"sessions":4,"turns":9}],"total":{"input_tokens":1200,"output_tokens":5400,"cache_creation_input_tokens":81000,"cache_read_input_tokens":640000,"cost_usd":0.71,"sessions":4,"turns":9}},"id":1}
    /// ```
    ///
    /// -32602 for a `since` that is neither RFC 3339 nor `YYYY-MM-DD`, or an unknown
    /// `group_by`.
    GetUsage, "getUsage", "Tokens and cost of the stored sessions, by day, model or directory",
    ["since?: string", "group_by?: \"day\" | \"model\" | \"working_dir\""],
    "{group_by, rows: UsageRow[], total: UsageTotals}",
    GetUsageParams, GetUsageResult
);
