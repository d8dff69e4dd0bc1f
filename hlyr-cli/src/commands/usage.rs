//! `hlyr usage [--since DATE|DURATION] [--by day|model|dir]`: what the stored sessions cost
//! (`getUsage`), a row per day (the daemon's local days), model or working directory and a
//! total: turns, sessions, tokens (input, output, cache written, cache read) and cost.

use hld_client::protocol::{GetUsageParams, GetUsageResult, UsageGroupBy, UsageTotals};
use hld_client::view::clean;

use super::sessions::home_as_tilde;
use crate::error::{CliError, Exit};
use crate::output::{cost, paint, Render, BOLD, DIM};
use crate::table::{table_giving, Gives};
use crate::Context;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum By {
    /// Each day, oldest first.
    Day,
    /// Each model, costliest first.
    Model,
    /// Each working directory, costliest first.
    Dir,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only turns that ended since then: a day (2026-11-01, from its start), an RFC 3339 time,
    /// or a duration back from now (30s, 15m, 2h, 7d).
    #[arg(long, value_name = "DATE|DURATION", value_parser = since)]
    since: Option<String>,
    /// How the rows are grouped.
    #[arg(long, value_enum, default_value_t = By::Day)]
    by: By,
}

/// `--since` as the daemon takes it: a duration becomes the time it reaches back to; a day
/// or time goes as given once it reads as one.
fn since(value: &str) -> Result<String, String> {
    let value = value.trim();
    let is_day = chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d").is_ok();
    if is_day || chrono::DateTime::parse_from_rfc3339(value).is_ok() {
        return Ok(value.to_owned());
    }
    let back = crate::duration::parse(value).map_err(|_| {
        format!("`{value}` is not a day (2026-11-01), an RFC 3339 time or a duration (7d)")
    })?;
    let back = chrono::TimeDelta::from_std(back).map_err(|e| e.to_string())?;
    let at = chrono::Utc::now() - back;
    Ok(at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

/// The result: as it came for `--json`, a table otherwise.
#[derive(serde::Serialize)]
#[serde(transparent)]
struct Usage {
    result: GetUsageResult,
    #[serde(skip)]
    since: Option<String>,
}

/// The columns after the key, right-aligned.
const FIGURES: [&str; 7] = [
    "TURNS",
    "SESSIONS",
    "INPUT",
    "OUTPUT",
    "CACHE WRITE",
    "CACHE READ",
    "COST",
];

fn figures(t: &UsageTotals) -> [String; 7] {
    [
        t.turns.to_string(),
        t.sessions.to_string(),
        tokens(t.input_tokens),
        tokens(t.output_tokens),
        tokens(t.cache_creation_input_tokens),
        tokens(t.cache_read_input_tokens),
        cost(Some(t.cost_usd)),
    ]
}

impl Render for Usage {
    fn human(&self) -> String {
        let result = &self.result;
        if result.rows.is_empty() {
            let empty = match &self.since {
                Some(since) => format!("no usage since {since}"),
                None => "no usage".to_owned(),
            };
            return paint(DIM, empty);
        }
        // When the table is too wide, the key gives way (a directory keeps its end).
        let (key_header, gives) = match result.group_by {
            UsageGroupBy::Model => ("MODEL", Gives::start(0, 12)),
            UsageGroupBy::WorkingDir => ("DIR", Gives::end(0, 12)),
            _ => ("DAY", Gives::start(0, 12)),
        };
        let mut rows: Vec<(String, [String; 7])> = (result.rows.iter())
            .map(|row| {
                let key = match result.group_by {
                    UsageGroupBy::WorkingDir => home_as_tilde(&row.key),
                    _ => clean(&row.key).into_owned(),
                };
                (key, figures(&row.totals))
            })
            .collect();
        rows.push((paint(BOLD, "total"), figures(&result.total)));
        // Each figure column as wide as its widest cell, its header included.
        let widths: Vec<usize> = (0..FIGURES.len())
            .map(|i| {
                let cells = rows.iter().map(|(_, f)| f[i].chars().count());
                cells.chain([FIGURES[i].len()]).max().unwrap_or(0)
            })
            .collect();
        let right = |i: usize, text: &str| format!("{text:>width$}", width = widths[i]);
        let header: Vec<String> = std::iter::once(key_header.to_owned())
            .chain(FIGURES.iter().enumerate().map(|(i, h)| right(i, h)))
            .collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let cells: Vec<Vec<String>> = rows
            .into_iter()
            .map(|(key, figures)| {
                let figures = figures.iter().enumerate().map(|(i, f)| right(i, f));
                std::iter::once(key).chain(figures).collect()
            })
            .collect();
        table_giving(&header, &cells, &[gives])
    }
}

/// A token count people read at a glance: `950`, `12.3k`, `1.2M`, `3.4B`.
fn tokens(n: i64) -> String {
    if n.abs() < 1000 {
        return n.to_string();
    }
    // The largest unit that reads at least 1 once rounded: 999,950 is 1M, not 1000k.
    for (size, unit) in [(1e9, "B"), (1e6, "M"), (1e3, "k")] {
        let scaled = (n as f64).abs() / size;
        let scaled = (scaled * 10.0).round() / 10.0;
        if scaled >= 1.0 {
            let sign = if n < 0 { "-" } else { "" };
            let text = format!("{scaled:.1}");
            return format!("{sign}{}{unit}", text.trim_end_matches(".0"));
        }
    }
    n.to_string()
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let group_by = match args.by {
        By::Day => UsageGroupBy::Day,
        By::Model => UsageGroupBy::Model,
        By::Dir => UsageGroupBy::WorkingDir,
    };
    let result = client
        .get_usage(GetUsageParams {
            since: args.since.clone(),
            group_by,
        })
        .await?;
    ctx.out.print(&Usage {
        result,
        since: args.since,
    })?;
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use hld_client::protocol::UsageRow;

    use super::*;

    /// A model's name and a directory's are the agent's or its repository's: cleaned.
    #[test]
    fn usage_keys_are_shown_cleaned() {
        for group_by in [UsageGroupBy::Model, UsageGroupBy::WorkingDir] {
            let row = UsageRow {
                key: "/srv/d\u{1b}]0;pwned\u{7}".into(),
                totals: UsageTotals::default(),
            };
            let usage = Usage {
                result: GetUsageResult {
                    group_by,
                    rows: vec![row],
                    total: UsageTotals::default(),
                },
                since: None,
            };
            let text = usage.human();
            assert!(text.contains("/srv/d�]0;pwned�"), "{text:?}");
        }
    }

    #[test]
    fn usage_tokens_read_at_a_glance() {
        let cases = [
            (0, "0"),
            (950, "950"),
            (999, "999"),
            (1_000, "1k"),
            (12_345, "12.3k"),
            (949_949, "949.9k"),
            (999_950, "1M"),
            (1_240_000, "1.2M"),
            (3_400_000_000, "3.4B"),
            (-12_345, "-12.3k"),
        ];
        for (n, text) in cases {
            assert_eq!(tokens(n), text, "{n}");
        }
    }

    #[test]
    fn usage_since_takes_days_times_and_durations() {
        assert_eq!(since("2026-11-01").unwrap(), "2026-11-01");
        assert_eq!(
            since("2026-11-01T08:00:00+02:00").unwrap(),
            "2026-11-01T08:00:00+02:00"
        );
        let week = since("7d").unwrap();
        let at = chrono::DateTime::parse_from_rfc3339(&week).unwrap();
        let back = chrono::Utc::now() - at.to_utc();
        assert!((back.num_hours() - 7 * 24).abs() <= 1, "{week}");
        for bad in ["yesterday", "2026-13-01", "7"] {
            assert!(since(bad).is_err(), "{bad}");
        }
    }
}
