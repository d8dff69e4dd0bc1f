//! Identifiers and timestamps in the formats the real CLI uses.

use chrono::{SecondsFormat, Utc};

/// A random UUID (session ids, event `uuid`s, synthetic message ids).
pub fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A random Anthropic-style id: `prefix` followed by base62 characters up to `len`,
/// e.g. `toolu_01A9cXk3mQ7ZrT2bVnW8pLsE`.
pub fn prefixed(prefix: &str, len: usize) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut id = String::from(prefix);
    let mut bits = 0u128;
    while id.len() < len {
        if bits < 62 {
            bits = uuid::Uuid::new_v4().as_u128();
        }
        id.push(char::from(ALPHABET[(bits % 62) as usize]));
        bits /= 62;
    }
    id
}

/// A `toolu_...` tool_use id.
pub fn tool_use_id() -> String {
    prefixed("toolu_01", 30)
}

/// The current time as in `user.timestamp`: `2026-11-25T21:16:54.621Z`.
pub fn timestamp() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}
