//! Usage limits as `claude` reports them: a `rate_limit_event` line (`rate_limit_info` with
//! `status`, `resetsAt` in Unix seconds, `rateLimitType`, `utilization` from 0 to 1), printed
//! when a subscription's limit state changes, and the "You've hit your … limit" text of a turn
//! the limit refused (`error: "rate_limit"` on its synthetic assistant message).

use chrono::{DateTime, SecondsFormat, Utc};
use hld_client::protocol::{RateLimitKind, RateLimitStatus, RateLimitWindow};
use serde::Deserialize;

use super::lenient;

/// The words that open a refused turn's text (the CLI also says "You've reached your").
const HIT_PREFIXES: [&str; 2] = ["You've hit your ", "You've reached your "];

/// The `rate_limit_info` of a `rate_limit_event` line.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct RateLimitInfo {
    /// `allowed`, `allowed_warning` or `rejected`.
    #[serde(default, deserialize_with = "lenient::string")]
    pub status: Option<String>,
    /// When the window resets, in Unix seconds.
    #[serde(default, rename = "resetsAt", deserialize_with = "lenient::int")]
    pub resets_at: Option<i64>,
    /// `five_hour`, `seven_day`, …
    #[serde(
        default,
        rename = "rateLimitType",
        deserialize_with = "lenient::string"
    )]
    pub rate_limit_type: Option<String>,
    /// How much of the window is used, from 0 to 1 (sent near the limit).
    #[serde(default, deserialize_with = "lenient::float")]
    pub utilization: Option<f64>,
}

/// A `rate_limit_event` line: its `rate_limit_info`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(super) struct RateLimitLine {
    #[serde(default, deserialize_with = "lenient::object")]
    pub(super) rate_limit_info: RateLimitInfo,
}

impl RateLimitInfo {
    /// The window this reports, read at `now` (RFC 3339); `None` without a window type.
    pub fn window(&self, now: &str) -> Option<RateLimitWindow> {
        let kind = self.kind()?;
        let status = match self.status.as_deref() {
            Some(status) => RateLimitStatus::from(status),
            None => RateLimitStatus::Allowed,
        };
        Some(RateLimitWindow {
            kind,
            status,
            utilization: self
                .utilization
                .filter(|u| u.is_finite())
                .map(|u| u.clamp(0.0, 1.0)),
            resets_at: self.reset(),
            updated_at: now.to_owned(),
        })
    }

    /// The window's kind, when named.
    pub fn kind(&self) -> Option<RateLimitKind> {
        let name = self.rate_limit_type.as_deref().filter(|t| !t.is_empty())?;
        Some(RateLimitKind::from(name))
    }

    /// When the window resets, RFC 3339.
    pub fn reset(&self) -> Option<String> {
        self.resets_at.and_then(unix_to_rfc3339)
    }

    /// Whether the window refuses requests.
    pub fn rejected(&self) -> bool {
        self.status.as_deref() == Some("rejected")
    }
}

/// Unix seconds as RFC 3339 (UTC, whole seconds).
fn unix_to_rfc3339(seconds: i64) -> Option<String> {
    DateTime::<Utc>::from_timestamp(seconds, 0)
        .map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
}

/// The window a refused turn's text names ("You've hit your session limit · resets 3pm"),
/// `Unknown("unknown")` for a limit it does not name; `None` when the text is no limit's.
pub fn limit_in_text(text: &str) -> Option<RateLimitKind> {
    let rest = HIT_PREFIXES.iter().find_map(|p| text.strip_prefix(p))?;
    let name = rest.split(" limit").next().unwrap_or_default();
    Some(match name {
        "session" => RateLimitKind::FiveHour,
        "weekly" => RateLimitKind::SevenDay,
        "Opus" => RateLimitKind::SevenDayOpus,
        "Sonnet" => RateLimitKind::SevenDaySonnet,
        "usage credit" => RateLimitKind::Overage,
        _ if rest.contains(" limit") => RateLimitKind::Unknown("unknown".to_owned()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_becomes_a_window_with_its_reset_in_rfc3339() {
        let info = RateLimitInfo {
            status: Some("allowed_warning".into()),
            resets_at: Some(1_795_938_417),
            rate_limit_type: Some("five_hour".into()),
            utilization: Some(0.93),
        };
        let window = info.window("2026-11-29T07:00:00Z").unwrap();
        assert_eq!(window.kind, RateLimitKind::FiveHour);
        assert_eq!(window.status, RateLimitStatus::AllowedWarning);
        assert_eq!(window.utilization, Some(0.93));
        assert_eq!(window.resets_at.as_deref(), Some("2026-11-29T07:46:57Z"));
        let unnamed = RateLimitInfo {
            rate_limit_type: None,
            ..info
        };
        assert_eq!(unnamed.window("2026-11-29T07:00:00Z"), None);
    }

    #[test]
    fn the_refusal_text_names_the_window() {
        let text = "You've hit your session limit · resets 7:46am (UTC)";
        assert_eq!(limit_in_text(text), Some(RateLimitKind::FiveHour));
        let weekly = "You've hit your weekly limit · resets Dec 3, 7am (UTC)";
        assert_eq!(limit_in_text(weekly), Some(RateLimitKind::SevenDay));
        assert_eq!(
            limit_in_text("You've hit your Opus limit · resets 3pm"),
            Some(RateLimitKind::SevenDayOpus)
        );
        assert_eq!(
            limit_in_text("You've hit your monthly spend limit."),
            Some(RateLimitKind::Unknown("unknown".into()))
        );
        assert_eq!(
            limit_in_text("Invalid API key · Fix external API key"),
            None
        );
    }
}
