//! Timestamps: RFC 3339 in UTC, millisecond precision, as stored and as sent.

use chrono::{SecondsFormat, Utc};

/// The current time, e.g. `2026-11-25T21:47:00.123Z`.
pub fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}
