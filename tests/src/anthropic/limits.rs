//! Anthropic's unified rate-limit headers (`anthropic-ratelimit-unified-*`), as the API sends
//! them to a subscription login: `claude` 2.1.197 reads them into its `rate_limit_event` lines
//! and, on a 429, into the "You've hit your … limit" refusal.

use serde_json::json;

use super::Reply;

const PREFIX: &str = "anthropic-ratelimit-unified";

impl Reply {
    /// A 429: the window `claim` (`five_hour`, `seven_day`, …) is used up until `resets_at`
    /// (Unix seconds), with no overage to fall back on.
    pub fn usage_limit(claim: &str, resets_at: i64) -> Reply {
        let mut reply = Reply::http_error(
            429,
            "rate_limit_error",
            "Number of requests has exceeded your rate limit",
        );
        reply.headers = [
            ("status", "rejected".to_owned()),
            ("reset", resets_at.to_string()),
            ("representative-claim", claim.to_owned()),
            ("overage-status", "rejected".to_owned()),
            ("overage-disabled-reason", "org_level_disabled".to_owned()),
        ]
        .into_iter()
        .map(|(name, value)| (format!("{PREFIX}-{name}"), value))
        .collect();
        reply
    }

    /// The same reply, with window `abbrev` (`5h`, `7d`) past its warning threshold (0.9):
    /// `utilization` of it used (0 to 1), resetting at `resets_at` (Unix seconds).
    pub fn near_limit(mut self, abbrev: &str, utilization: f64, resets_at: i64) -> Reply {
        self.headers.extend(
            [
                ("status".to_owned(), "allowed_warning".to_owned()),
                ("reset".to_owned(), resets_at.to_string()),
                (
                    format!("{abbrev}-utilization"),
                    json!(utilization).to_string(),
                ),
                (format!("{abbrev}-reset"), resets_at.to_string()),
                (format!("{abbrev}-surpassed-threshold"), "0.9".to_owned()),
            ]
            .into_iter()
            .map(|(name, value)| (format!("{PREFIX}-{name}"), value)),
        );
        self
    }
}
