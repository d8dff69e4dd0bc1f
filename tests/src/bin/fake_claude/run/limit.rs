//! Usage limits as `claude` 2.1.197 prints them when logged in with a subscription (an OAuth
//! token; with an API key it prints none): a `rate_limit_event` line when a window's state
//! changes, and for a request the limit refuses (HTTP 429) a `rejected` event, the synthetic
//! message "You've hit your session limit · resets 7:46am (UTC)" with `error: "rate_limit"`,
//! and a `result` with `api_error_status: 429` (fixture `06-usage-limit-rejected.jsonl`).

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{Ending, Run, Stop};
use crate::events::{Event, SyntheticAssistant};
use crate::ids;

/// A `rate_limit_event` line.
#[derive(Debug, Serialize)]
pub struct RateLimitEvent {
    rate_limit_info: RateLimitInfo,
    uuid: String,
    session_id: String,
}

/// Its `rate_limit_info`, fields in the CLI's order.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RateLimitInfo {
    status: &'static str,
    /// Unix seconds.
    resets_at: i64,
    rate_limit_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    utilization: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    overage_status: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    overage_disabled_reason: Option<&'static str>,
    is_using_overage: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    surpassed_threshold: Option<f64>,
}

/// How the CLI names a window in the refusal ("You've hit your session limit").
fn limit_name(kind: &str) -> &str {
    match kind {
        "five_hour" => "session limit",
        "seven_day" => "weekly limit",
        "seven_day_opus" => "Opus limit",
        "seven_day_sonnet" => "Sonnet limit",
        "overage" => "usage credit limit",
        _ => "usage limit",
    }
}

/// `7:46am (UTC)`, as the CLI words a reset on the same day.
fn reset_words(resets_at: i64) -> String {
    let at = DateTime::<Utc>::from_timestamp(resets_at, 0).unwrap_or_default();
    format!("{} (UTC)", at.format("%-I:%M%P")).replace(":00", "")
}

impl Run {
    fn rate_limit_event(&mut self, info: RateLimitInfo) -> Result<(), Stop> {
        self.checkpoint(None)?;
        self.emit(&Event::RateLimitEvent(RateLimitEvent {
            rate_limit_info: info,
            uuid: ids::uuid(),
            session_id: self.session.id.clone(),
        }))
    }

    /// Window `kind` is near its limit: `utilization` of it used (0 to 1), past the 0.9 mark.
    pub fn limit_warning(
        &mut self,
        kind: &str,
        utilization: f64,
        resets_at: i64,
    ) -> Result<(), Stop> {
        self.rate_limit_event(RateLimitInfo {
            status: "allowed_warning",
            resets_at,
            rate_limit_type: kind.to_owned(),
            utilization: Some(utilization),
            overage_status: None,
            overage_disabled_reason: None,
            is_using_overage: false,
            surpassed_threshold: Some(0.9),
        })
    }

    /// The API refuses the turn: window `kind` is used up until `resets_at` (Unix seconds).
    pub fn limit_refusal(&mut self, kind: &str, resets_at: i64) -> Result<Ending, Stop> {
        self.rate_limit_event(RateLimitInfo {
            status: "rejected",
            resets_at,
            rate_limit_type: kind.to_owned(),
            utilization: None,
            overage_status: Some("rejected"),
            overage_disabled_reason: Some("org_level_disabled"),
            is_using_overage: false,
            surpassed_threshold: None,
        })?;
        let text = format!(
            "You've hit your {} · resets {}",
            limit_name(kind),
            reset_words(resets_at)
        );
        self.turns += 1;
        let message = SyntheticAssistant::new(&self.session.id, &text, "rate_limit");
        self.emit(&Event::SyntheticAssistant(message))?;
        Ok(Ending::ApiError(text, Some(429)))
    }
}
