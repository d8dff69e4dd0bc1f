//! Durations on the command line (`--bypass-for 15m`, `--older-than 30d`): one parser, the
//! hld-tui bypass prompt's spelling (a whole number and a unit: `30s`, `15m`, `2h`) plus days.
//! The unit is required: a bare number means nothing certain on a command line.

use std::time::Duration;

/// What a bad duration's error says it expects.
const EXPECTED: &str = "a whole number and a unit: s, m, h or d (30s, 15m, 2h, 30d)";

/// Parses `30s`, `15m`, `2h` or `30d`; `0s` is zero.
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let at = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("`{text}` has no unit; expected {EXPECTED}"))?;
    let (number, unit) = text.split_at(at);
    let seconds: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return Err(format!("`{text}` is not a duration; expected {EXPECTED}")),
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(seconds))
        .filter(|s| *s <= MAX_SECONDS)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("`{text}` is not a duration; expected {EXPECTED}"))
}

/// The longest duration taken: ten years, far below where milliseconds overflow an `i64`.
const MAX_SECONDS: u64 = 10 * 366 * 86_400;

/// [`parse`], refusing zero (how long a bypass lasts).
pub fn parse_positive(text: &str) -> Result<Duration, String> {
    let duration = parse(text)?;
    if duration.is_zero() {
        return Err(format!("`{}` is no time at all", text.trim()));
    }
    Ok(duration)
}

/// A duration in whole milliseconds, as the daemon takes timeouts.
pub fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// A duration as it could have been given: in the largest unit that divides it (`90m`).
pub fn display(duration: Duration) -> String {
    let secs = duration.as_secs();
    let unit = [(86_400, "d"), (3_600, "h"), (60, "m")]
        .into_iter()
        .find(|(size, _)| secs > 0 && secs.is_multiple_of(*size));
    match unit {
        Some((size, unit)) => format!("{}{unit}", secs / size),
        None => format!("{secs}s"),
    }
}

/// A time left, as tables show it, counting down (rounded up, as hld-tui rounds minutes):
/// `45s`, `15m`, `2h`, `3d`.
pub fn short(left: chrono::Duration) -> String {
    let secs = left.num_seconds().max(0);
    let up = |unit: i64| (secs + unit - 1) / unit;
    match secs {
        0..60 => format!("{secs}s"),
        60..3_600 => format!("{}m", up(60)),
        3_600..86_400 => format!("{}h", up(3_600)),
        _ => format!("{}d", up(86_400)),
    }
}

/// A time left, in words' place (`show`, `settings`): `45s`, `15m` (rounded up), `1h 59m`,
/// `3d 4h`.
pub fn left(left: chrono::Duration) -> String {
    let secs = left.num_seconds().max(0);
    match secs {
        0..3_600 => short(left),
        3_600..86_400 => format!("{}h {}m", secs / 3_600, secs % 3_600 / 60),
        _ => format!("{}d {}h", secs / 86_400, secs % 86_400 / 3_600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_with_a_unit() {
        assert_eq!(parse("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse("15m"), Ok(Duration::from_secs(900)));
        assert_eq!(parse(" 2H "), Ok(Duration::from_secs(7_200)));
        assert_eq!(parse("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse("0s"), Ok(Duration::ZERO));
        for bad in [
            "",
            "15",
            "m",
            "1.5h",
            "-1s",
            "15 minutes",
            "2w",
            "99999999999999999999s",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert!(parse("15").unwrap_err().contains("no unit"));
        assert!(parse_positive("0m").is_err());
        assert_eq!(parse_positive("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(millis(Duration::from_secs(2)), 2_000);
        for text in ["0s", "45s", "90m", "2h", "30d"] {
            assert_eq!(display(parse(text).unwrap()), text);
        }
    }

    #[test]
    fn time_left_is_short() {
        let s = chrono::Duration::seconds;
        assert_eq!(short(s(-5)), "0s");
        assert_eq!(short(s(59)), "59s");
        assert_eq!(short(s(61)), "2m");
        assert_eq!(short(s(900)), "15m");
        assert_eq!(short(s(7_200)), "2h");
        assert_eq!(short(s(7_199)), "2h");
        assert_eq!(short(s(3 * 86_400)), "3d");
        assert_eq!(left(s(59)), "59s");
        assert_eq!(left(s(899)), "15m");
        assert_eq!(left(s(7_199)), "1h 59m");
        assert_eq!(left(s(3 * 86_400 + 7_200)), "3d 2h");
    }
}
