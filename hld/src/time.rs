//! Timestamps: RFC 3339 in UTC, millisecond precision, as stored and as sent.

use chrono::{DateTime, SecondsFormat, Utc};

/// The current time, e.g. `2026-11-25T21:47:00.123Z`.
pub fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The time `later` from now, as [`now`] spells it.
pub fn after(later: std::time::Duration) -> String {
    let later = chrono::Duration::from_std(later).unwrap_or(chrono::Duration::MAX);
    let at = Utc::now()
        .checked_add_signed(later)
        .unwrap_or(chrono::DateTime::<Utc>::MAX_UTC);
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// How long from now until `rfc3339` (zero if past or unreadable).
pub fn until(rfc3339: &str) -> std::time::Duration {
    DateTime::parse_from_rfc3339(rfc3339)
        .ok()
        .and_then(|t| (t.with_timezone(&Utc) - Utc::now()).to_std().ok())
        .unwrap_or_default()
}
