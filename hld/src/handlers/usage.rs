//! `getUsage`: the stored turns' tokens and cost, summed by day (in the daemon's local time
//! zone), model or working directory.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, Local, NaiveDate, NaiveTime, SecondsFormat, TimeDelta, Utc};
use hld_client::protocol::{GetUsageParams, GetUsageResult, UsageGroupBy, UsageRow, UsageTotals};

use crate::daemon::Daemon;
use crate::error::{Error, Result};
use crate::store::usage::{self, UsageRecord};

/// The key of a group whose model or working directory is not known.
const UNKNOWN: &str = "unknown";

pub async fn get_usage(daemon: Arc<Daemon>, p: GetUsageParams) -> Result<GetUsageResult> {
    if let UsageGroupBy::Unknown(other) = &p.group_by {
        return Err(Error::not_accepted("group_by", other, &UsageGroupBy::NAMES));
    }
    let since = p.since.as_deref().map(since_utc).transpose()?;
    let records = daemon
        .store
        .read(move |c| usage::records(c, since.as_deref()))
        .await
        .map_err(|e| Error::internal("failed to read usage", e))?;
    Ok(summarize(&records, p.group_by))
}

/// `since` spelt as stored times are: RFC 3339 UTC. A day `YYYY-MM-DD` is its start in the
/// local time zone (or its first hour that exists, when midnight is skipped).
fn since_utc(since: &str) -> Result<String> {
    let at = match DateTime::parse_from_rfc3339(since.trim()) {
        Ok(at) => Some(at.with_timezone(&Utc)),
        Err(_) => NaiveDate::parse_from_str(since.trim(), "%Y-%m-%d")
            .ok()
            .and_then(|day| {
                let midnight = day.and_time(NaiveTime::MIN);
                [midnight, midnight + TimeDelta::hours(1)]
                    .into_iter()
                    .find_map(|t| t.and_local_timezone(Local).earliest())
            })
            .map(|at| at.with_timezone(&Utc)),
    };
    let at = at.ok_or_else(|| {
        Error::invalid_param(
            "since",
            "an RFC 3339 time or a day YYYY-MM-DD",
            since,
            format!("since must be an RFC 3339 time or a day YYYY-MM-DD, not {since:?}"),
        )
    })?;
    Ok(at.to_rfc3339_opts(SecondsFormat::Millis, true))
}

/// The group `record` falls in.
fn key(record: &UsageRecord, group_by: &UsageGroupBy) -> String {
    match group_by {
        UsageGroupBy::Model if record.usage.model.is_empty() => UNKNOWN.to_owned(),
        UsageGroupBy::Model => record.usage.model.clone(),
        UsageGroupBy::WorkingDir => (record.working_dir.as_deref())
            .filter(|d| !d.is_empty())
            .unwrap_or(UNKNOWN)
            .to_owned(),
        _ => match DateTime::parse_from_rfc3339(&record.ended_at) {
            Ok(at) => at.with_timezone(&Local).format("%Y-%m-%d").to_string(),
            Err(_) => record.ended_at.chars().take(10).collect(),
        },
    }
}

/// Sums of some rows, each session and each turn counted once however many rows it has.
#[derive(Default)]
struct Group<'a> {
    totals: UsageTotals,
    sessions: HashSet<&'a str>,
    turns: HashSet<(&'a str, i64)>,
}

impl<'a> Group<'a> {
    fn add(&mut self, record: &'a UsageRecord) {
        let (t, u) = (&mut self.totals, &record.usage);
        t.input_tokens += u.input_tokens;
        t.output_tokens += u.output_tokens;
        t.cache_creation_input_tokens += u.cache_creation_input_tokens;
        t.cache_read_input_tokens += u.cache_read_input_tokens;
        t.cost_usd += u.cost_usd;
        self.sessions.insert(&record.session_id);
        self.turns.insert((&record.session_id, record.turn));
    }

    fn totals(self) -> UsageTotals {
        UsageTotals {
            sessions: self.sessions.len() as u64,
            turns: self.turns.len() as u64,
            ..self.totals
        }
    }
}

/// The records grouped: days in order, else by cost, highest first (then by key).
fn summarize(records: &[UsageRecord], group_by: UsageGroupBy) -> GetUsageResult {
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let mut total = Group::default();
    for record in records {
        groups
            .entry(key(record, &group_by))
            .or_default()
            .add(record);
        total.add(record);
    }
    let mut rows: Vec<UsageRow> = groups
        .into_iter()
        .map(|(key, group)| UsageRow {
            key,
            totals: group.totals(),
        })
        .collect();
    if group_by != UsageGroupBy::Day {
        rows.sort_by(|a, b| b.totals.cost_usd.total_cmp(&a.totals.cost_usd));
    }
    GetUsageResult {
        group_by,
        rows,
        total: total.totals(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::TurnUsage;

    fn record(session: &str, turn: i64, ended_at: &str, model: &str, cost: f64) -> UsageRecord {
        UsageRecord {
            session_id: session.to_owned(),
            turn,
            ended_at: ended_at.to_owned(),
            working_dir: Some(format!("/work/{session}")),
            usage: TurnUsage {
                model: model.to_owned(),
                input_tokens: 10,
                output_tokens: 1,
                cache_creation_input_tokens: 100,
                cache_read_input_tokens: 1000,
                cost_usd: cost,
            },
        }
    }

    #[test]
    fn usage_groups_count_turns_and_sessions_once() {
        // Session a: a turn of two models, then one more; session b: one turn.
        let records = [
            record("a", 1, "2026-11-28T10:00:00.000Z", "opus", 1.0),
            record("a", 1, "2026-11-28T10:00:00.000Z", "haiku", 0.5),
            record("a", 2, "2026-11-29T09:00:00.000Z", "opus", 2.0),
            record("b", 1, "2026-11-29T11:00:00.000Z", "", 4.0),
        ];
        let by_model = summarize(&records, UsageGroupBy::Model);
        let rows: Vec<(&str, f64, u64, u64, i64)> = (by_model.rows.iter())
            .map(|r| {
                let t = &r.totals;
                (
                    r.key.as_str(),
                    t.cost_usd,
                    t.turns,
                    t.sessions,
                    t.input_tokens,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("unknown", 4.0, 1, 1, 10),
                ("opus", 3.0, 2, 1, 20),
                ("haiku", 0.5, 1, 1, 10)
            ]
        );
        let total = &by_model.total;
        assert_eq!((total.turns, total.sessions), (3, 2));
        assert_eq!(
            (total.input_tokens, total.cache_read_input_tokens),
            (40, 4000)
        );
        assert_eq!(total.cost_usd, 7.5);

        let by_dir = summarize(&records, UsageGroupBy::WorkingDir);
        let keys: Vec<(&str, u64)> = (by_dir.rows.iter())
            .map(|r| (r.key.as_str(), r.totals.turns))
            .collect();
        assert_eq!(keys, [("/work/b", 1), ("/work/a", 2)]);
        assert_eq!(by_dir.total, by_model.total);
    }

    #[test]
    fn usage_since_takes_rfc3339_and_days_and_refuses_the_rest() {
        assert_eq!(
            since_utc("2026-11-29T10:00:00+02:00").unwrap(),
            "2026-11-29T08:00:00.000Z"
        );
        let day = since_utc("2026-11-29").unwrap();
        let local = DateTime::parse_from_rfc3339(&day)
            .unwrap()
            .with_timezone(&Local);
        assert_eq!(local.format("%F %T").to_string(), "2026-11-29 00:00:00");
        for bad in ["", "yesterday", "2026-13-01", "29/11/2026"] {
            let Err(Error::InvalidParams { data, .. }) = since_utc(bad) else {
                panic!("{bad:?} was taken")
            };
            assert_eq!(data.param, "since");
        }
    }
}
