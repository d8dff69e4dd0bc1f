//! How the front ends word usage: a session's context as a share of its window, a usage
//! limit with its reset time, and a usage-limit window's fill, each with the same thresholds.

use chrono::{DateTime, Utc};

use crate::protocol::{RateLimitKind, RateLimitStatus, RateLimitWindow, UsageLimit};

/// A context share at or above this is shown as a warning: the window is nearly full.
pub const CONTEXT_WARNING: f64 = 0.8;

/// A usage-limit window used at or above this share is shown as a warning.
pub const WINDOW_WARNING: f64 = 0.8;

/// The share of the context window the last model call used, when both are known.
pub fn context_share(tokens: Option<i64>, limit: Option<i64>) -> Option<f64> {
    match (tokens, limit) {
        (Some(tokens), Some(limit)) if limit > 0 => Some(tokens.max(0) as f64 / limit as f64),
        _ => None,
    }
}

/// A short name of a window: `5h`, `7d`, `7d opus`, `7d sonnet`, `overage`.
pub fn window_name(kind: &RateLimitKind) -> &str {
    match kind {
        RateLimitKind::FiveHour => "5h",
        RateLimitKind::SevenDay | RateLimitKind::SevenDayOverageIncluded => "7d",
        RateLimitKind::SevenDayOpus => "7d opus",
        RateLimitKind::SevenDaySonnet => "7d sonnet",
        RateLimitKind::Overage => "overage",
        other => other.as_str(),
    }
}

/// How long until `rfc3339`, from `now`: `2h 13m`, `4m`, `<1m`, `3d 2h`, or `now` once past.
pub fn until(rfc3339: &str, now: DateTime<Utc>) -> Option<String> {
    let at = DateTime::parse_from_rfc3339(rfc3339).ok()?;
    let left = at.with_timezone(&Utc) - now;
    Some(match left.num_minutes() {
        _ if left.num_seconds() <= 0 => "now".to_owned(),
        0 => "<1m".to_owned(),
        m if m < 60 => format!("{m}m"),
        m if m < 24 * 60 => format!("{}h {}m", m / 60, m % 60),
        m => format!("{}d {}h", m / (24 * 60), m / 60 % 24),
    })
}

/// A stopped session's limit in one line: `usage limit (5h) · resets in 2h 13m`.
pub fn limit_text(limit: &UsageLimit, now: DateTime<Utc>) -> String {
    let reset = limit
        .resets_at
        .as_deref()
        .and_then(|at| until(at, now))
        .map_or_else(String::new, |left| format!(" · resets in {left}"));
    format!("usage limit ({}){reset}", window_name(&limit.kind))
}

/// A window in a few characters: `5h 91%`, `7d 40%`, `5h limit` when refused.
pub fn window_text(window: &RateLimitWindow) -> String {
    let name = window_name(&window.kind);
    match (&window.status, window.utilization) {
        (RateLimitStatus::Rejected, _) => format!("{name} limit"),
        (_, Some(used)) => format!("{name} {:.0}%", used * 100.0),
        (_, None) => name.to_owned(),
    }
}

/// Whether what `window` says still holds at `now`: not once its reset time has passed (the
/// window it measured is over).
pub fn window_current(window: &RateLimitWindow, now: DateTime<Utc>) -> bool {
    window
        .resets_at
        .as_deref()
        .and_then(|at| DateTime::parse_from_rfc3339(at).ok())
        .is_none_or(|at| at > now)
}

/// Whether a window deserves a warning: refused, near the limit by its own status, or used
/// at or above [`WINDOW_WARNING`].
pub fn window_warns(window: &RateLimitWindow) -> bool {
    window.status != RateLimitStatus::Allowed
        || window.utilization.is_some_and(|u| u >= WINDOW_WARNING)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        "2026-11-29T12:00:00Z".parse().unwrap()
    }

    #[test]
    fn a_share_needs_both_figures_and_a_window() {
        assert_eq!(context_share(Some(50_000), Some(200_000)), Some(0.25));
        assert_eq!(context_share(Some(50_000), None), None);
        assert_eq!(context_share(Some(1), Some(0)), None);
    }

    #[test]
    fn a_limit_says_its_window_and_the_time_left() {
        let limit = UsageLimit {
            kind: RateLimitKind::FiveHour,
            resets_at: Some("2026-11-29T14:13:40Z".into()),
        };
        assert_eq!(
            limit_text(&limit, now()),
            "usage limit (5h) · resets in 2h 13m"
        );
        let unknown = UsageLimit {
            kind: "unknown".into(),
            resets_at: None,
        };
        assert_eq!(limit_text(&unknown, now()), "usage limit (unknown)");
        assert_eq!(until("2026-11-29T11:00:00Z", now()).unwrap(), "now");
        assert_eq!(until("2026-11-29T12:00:20Z", now()).unwrap(), "<1m");
        assert_eq!(until("2026-12-01T15:00:00Z", now()).unwrap(), "2d 3h");
    }

    #[test]
    fn a_window_warns_near_its_limit() {
        let mut window = RateLimitWindow {
            kind: RateLimitKind::SevenDay,
            status: RateLimitStatus::Allowed,
            utilization: Some(0.4),
            resets_at: None,
            updated_at: "2026-11-29T12:00:00Z".into(),
        };
        assert_eq!(window_text(&window), "7d 40%");
        assert!(!window_warns(&window));
        window.utilization = Some(0.85);
        assert!(window_warns(&window));
        window.status = RateLimitStatus::Rejected;
        assert_eq!(window_text(&window), "7d limit");
        assert!(window_current(&window, now()));
        window.resets_at = Some("2026-11-29T11:59:00Z".into());
        assert!(!window_current(&window, now()), "its reset passed");
        window.resets_at = Some("2026-11-29T12:01:00Z".into());
        assert!(window_current(&window, now()));
    }
}
