//! Where a daemon's figures for the usage view stand, and those of a whole fleet: each
//! daemon's `getUsage` answers summed row by row (rows matched by key: the day, the model),
//! and which daemons are counted and which are not, with why.

use std::collections::HashMap;

use hld_client::protocol::{GetUsageResult, UsageGroupBy, UsageRow, UsageTotals};

use super::{Loaded, UsageTable};
use crate::app::{away, State};

/// Why a daemon's figures are not in the total.
#[derive(Debug, Clone, PartialEq)]
pub enum Missing {
    /// Not connected, and no answer from it yet: its figures load once it is back.
    NotConnected,
    Loading,
    /// The daemon's reason (an older daemon has no `getUsage`).
    Failed(String),
}

/// One table of the fleet's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Total {
    /// The answers of the daemons counted, summed; `None` while none is.
    pub sum: Option<GetUsageResult>,
    /// The daemons counted, by index, in the fleet's order.
    pub counted: Vec<usize>,
    /// The daemons not counted, by index, with why.
    pub missing: Vec<(usize, Missing)>,
}

/// Where each daemon's answer to `table` stands: an answer counts, even from a daemon that
/// has dropped out since (its figures as last seen, as its rows are); a daemon with none is
/// missing.
pub fn total(state: &State, table: UsageTable) -> Total {
    let answers = state
        .usage
        .as_ref()
        .map_or(&[][..], |view| view.answers(table));
    let mut counted = Vec::new();
    let mut missing = Vec::new();
    let mut results = Vec::new();
    for (daemon, answer) in answers.iter().enumerate() {
        match standing(state, daemon, answer) {
            Ok(result) => {
                counted.push(daemon);
                results.push(result);
            }
            Err(why) => missing.push((daemon, why)),
        }
    }
    Total {
        sum: sum(results),
        counted,
        missing,
    }
}

/// `daemon`'s `answer`: its figures, or why there are none.
pub fn standing<'a>(
    state: &State,
    daemon: usize,
    answer: &'a Loaded,
) -> Result<&'a GetUsageResult, Missing> {
    match answer {
        Loaded::Ready(result) => Ok(result),
        Loaded::Failed(reason) => Err(Missing::Failed(reason.clone())),
        Loaded::Loading if away(state, daemon).is_some() => Err(Missing::NotConnected),
        Loaded::Loading => Err(Missing::Loading),
    }
}

/// `results` (of one grouping) summed: a row per key, its figures summed over the results
/// that have it, and the totals summed; days in order, other rows by cost, highest first (as
/// the daemon orders them). `None` for no results.
fn sum<'a>(results: impl IntoIterator<Item = &'a GetUsageResult>) -> Option<GetUsageResult> {
    let mut results = results.into_iter().peekable();
    let group_by = results.peek()?.group_by.clone();
    let mut total = UsageTotals::default();
    let mut rows: Vec<UsageRow> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for result in results {
        add(&mut total, &result.total);
        for row in &result.rows {
            match index.get(&row.key) {
                Some(&i) => add(&mut rows[i].totals, &row.totals),
                None => {
                    index.insert(row.key.clone(), rows.len());
                    rows.push(row.clone());
                }
            }
        }
    }
    match group_by {
        UsageGroupBy::Day => rows.sort_by(|a, b| a.key.cmp(&b.key)),
        _ => rows.sort_by(|a, b| {
            b.totals
                .cost_usd
                .total_cmp(&a.totals.cost_usd)
                .then_with(|| a.key.cmp(&b.key))
        }),
    }
    Some(GetUsageResult {
        group_by,
        rows,
        total,
    })
}

/// Adds `more` to `to`. Sessions add up too: a session is stored by one daemon only.
fn add(to: &mut UsageTotals, more: &UsageTotals) {
    to.input_tokens += more.input_tokens;
    to.output_tokens += more.output_tokens;
    to.cache_creation_input_tokens += more.cache_creation_input_tokens;
    to.cache_read_input_tokens += more.cache_read_input_tokens;
    to.cost_usd += more.cost_usd;
    to.sessions += more.sessions;
    to.turns += more.turns;
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::super::{loaded, open};
    use super::*;
    use crate::app::{update, Fleet, Msg};

    fn totals(tokens: i64, cost_usd: f64, turns: u64) -> UsageTotals {
        UsageTotals {
            input_tokens: tokens,
            output_tokens: 2 * tokens,
            cache_creation_input_tokens: 3 * tokens,
            cache_read_input_tokens: 4 * tokens,
            cost_usd,
            sessions: turns,
            turns,
        }
    }

    fn result(group_by: UsageGroupBy, rows: &[(&str, i64, f64, u64)]) -> GetUsageResult {
        let rows: Vec<UsageRow> = rows
            .iter()
            .map(|&(key, tokens, cost, turns)| UsageRow {
                key: key.into(),
                totals: totals(tokens, cost, turns),
            })
            .collect();
        let mut total = UsageTotals::default();
        for row in &rows {
            add(&mut total, &row.totals);
        }
        GetUsageResult {
            group_by,
            rows,
            total,
        }
    }

    #[test]
    fn rows_of_the_same_key_are_summed_and_the_others_kept() {
        let laptop = result(
            UsageGroupBy::Model,
            &[
                ("claude-opus-4-1", 100, 2.0, 2),
                ("claude-haiku-4-5", 10, 0.5, 1),
            ],
        );
        let the_box = result(
            UsageGroupBy::Model,
            &[
                ("claude-sonnet-4-5", 50, 1.0, 3),
                ("claude-haiku-4-5", 30, 2.25, 1),
            ],
        );
        let sum = sum([&laptop, &the_box]).unwrap();
        assert_eq!(sum.group_by, UsageGroupBy::Model);
        // By cost, highest first: haiku's two rows make 2.75.
        let rows: Vec<_> = sum
            .rows
            .iter()
            .map(|r| (r.key.as_str(), r.totals.clone()))
            .collect();
        assert_eq!(
            rows,
            [
                ("claude-haiku-4-5", totals(40, 2.75, 2)),
                ("claude-opus-4-1", totals(100, 2.0, 2)),
                ("claude-sonnet-4-5", totals(50, 1.0, 3)),
            ]
        );
        assert_eq!(sum.total, totals(190, 5.75, 7));
    }

    #[test]
    fn days_are_summed_in_order_and_nothing_sums_to_none() {
        let laptop = result(
            UsageGroupBy::Day,
            &[("2026-11-20", 1, 1.0, 1), ("2026-11-29", 2, 0.25, 1)],
        );
        let the_box = result(
            UsageGroupBy::Day,
            &[("2026-11-25", 4, 3.0, 2), ("2026-11-29", 8, 0.5, 1)],
        );
        let sum = sum([&laptop, &the_box]).unwrap();
        let days: Vec<_> = sum
            .rows
            .iter()
            .map(|r| (r.key.as_str(), r.totals.cost_usd))
            .collect();
        assert_eq!(
            days,
            [
                ("2026-11-20", 1.0),
                ("2026-11-25", 3.0),
                ("2026-11-29", 0.75)
            ]
        );
        assert_eq!(sum.total, totals(15, 4.75, 5));
        assert_eq!(super::sum([&laptop]).as_ref(), Some(&laptop));
        assert_eq!(super::sum([]), None);
    }

    #[test]
    fn the_total_counts_each_daemon_that_answered_and_names_the_others() {
        let mut state = State::new(Utc::now(), 120, 30, true);
        let names = ["laptop", "box", "old", "far"].map(String::from);
        state.fleet = Fleet::new(names.to_vec());
        for daemon in 0..3 {
            let connected = Msg::From {
                daemon,
                msg: Box::new(Msg::Connected),
            };
            update(&mut state, connected);
        }
        open(&mut state);
        let models = |cost| result(UsageGroupBy::Model, &[("claude-opus-4-1", 1, cost, 1)]);
        let answers = [
            (0, Ok(models(1.5))),
            (2, Err("method not found".to_owned())),
        ];
        for (daemon, answer) in answers {
            loaded(&mut state, Some(daemon), UsageTable::Models, answer);
        }
        let missing = vec![
            (1, Missing::Loading),
            (2, Missing::Failed("method not found".into())),
            (3, Missing::NotConnected),
        ];
        let total = total(&state, UsageTable::Models);
        assert_eq!(total.sum, Some(models(1.5)));
        assert_eq!((total.counted, total.missing), (vec![0], missing));

        // The box answers later: the sum grows.
        let answer = Ok(models(2.0));
        loaded(&mut state, Some(1), UsageTable::Models, answer);
        let total = super::total(&state, UsageTable::Models);
        assert_eq!(total.sum.unwrap().total.cost_usd, 3.5);
        assert_eq!(total.counted, [0, 1]);
        // No daemon answered by day yet.
        let days = super::total(&state, UsageTable::Days);
        assert_eq!((days.sum, days.counted.len()), (None, 0));
    }
}
