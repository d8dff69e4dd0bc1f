//! A turn's own tokens and cost. Claude Code's `result` reports the turn's `usage`, but its
//! `total_cost_usd` and `modelUsage` count since the process started (2.1.197: the second turn
//! of a live process reports both turns; a resumed session's new process starts again at 0),
//! so a turn's share is what those grew by since the process's last `result`.

use std::collections::BTreeMap;

use crate::claude::stream::{ModelUsage, RunResult};
use crate::store::TurnUsage;

/// What one process has reported so far: per model, and in all.
#[derive(Debug, Clone, Default)]
pub struct Spend {
    /// The highest figures each model has had (a figure never goes back down: an interrupted
    /// turn may report less than the turns before it).
    models: BTreeMap<String, TurnUsage>,
    /// The highest `total_cost_usd`.
    cost: f64,
}

impl Spend {
    /// The turn `result` ends: its cost, what the process's total grew by (`None` when none is
    /// reported), and one entry per model whose figures grew. When no model's did (or the
    /// result has no `modelUsage`), one entry of the turn's `usage` and cost under `model`, the
    /// turn's model: every turn counts.
    pub fn turn(
        &mut self,
        result: &RunResult,
        model: Option<&str>,
    ) -> (Option<f64>, Vec<TurnUsage>) {
        let cost = result.cost().map(|total| {
            let grown = (total - self.cost).max(0.0);
            self.cost = self.cost.max(total);
            grown
        });
        let mut rows: Vec<TurnUsage> = result
            .model_usage
            .iter()
            .map(|(name, reported)| {
                let now = figures(name, reported);
                let seen = self.models.entry(name.clone()).or_default();
                let grown = minus(&now, seen);
                *seen = highest(seen, &now);
                grown
            })
            .filter(|grown| !is_zero(grown))
            .collect();
        if rows.is_empty() {
            let usage = &result.usage;
            rows.push(TurnUsage {
                model: model.unwrap_or_default().to_owned(),
                input_tokens: usage.input_tokens.unwrap_or(0),
                output_tokens: usage.output_tokens.unwrap_or(0),
                cache_creation_input_tokens: usage.cache_creation_input_tokens.unwrap_or(0),
                cache_read_input_tokens: usage.cache_read_input_tokens.unwrap_or(0),
                cost_usd: cost.unwrap_or(0.0),
            });
        }
        (cost, rows)
    }
}

/// A `modelUsage` entry as figures (a missing one is 0).
fn figures(model: &str, m: &ModelUsage) -> TurnUsage {
    TurnUsage {
        model: model.to_owned(),
        input_tokens: m.input_tokens.unwrap_or(0),
        output_tokens: m.output_tokens.unwrap_or(0),
        cache_creation_input_tokens: m.cache_creation_input_tokens.unwrap_or(0),
        cache_read_input_tokens: m.cache_read_input_tokens.unwrap_or(0),
        cost_usd: m.cost_usd.unwrap_or(0.0),
    }
}

/// `now` less `before`, each figure down to 0 at most.
fn minus(now: &TurnUsage, before: &TurnUsage) -> TurnUsage {
    TurnUsage {
        model: now.model.clone(),
        input_tokens: (now.input_tokens - before.input_tokens).max(0),
        output_tokens: (now.output_tokens - before.output_tokens).max(0),
        cache_creation_input_tokens: (now.cache_creation_input_tokens
            - before.cache_creation_input_tokens)
            .max(0),
        cache_read_input_tokens: (now.cache_read_input_tokens - before.cache_read_input_tokens)
            .max(0),
        cost_usd: (now.cost_usd - before.cost_usd).max(0.0),
    }
}

/// The higher of each figure.
fn highest(a: &TurnUsage, b: &TurnUsage) -> TurnUsage {
    TurnUsage {
        model: b.model.clone(),
        input_tokens: a.input_tokens.max(b.input_tokens),
        output_tokens: a.output_tokens.max(b.output_tokens),
        cache_creation_input_tokens: a
            .cache_creation_input_tokens
            .max(b.cache_creation_input_tokens),
        cache_read_input_tokens: a.cache_read_input_tokens.max(b.cache_read_input_tokens),
        cost_usd: a.cost_usd.max(b.cost_usd),
    }
}

fn is_zero(u: &TurnUsage) -> bool {
    u.input_tokens == 0
        && u.output_tokens == 0
        && u.cache_creation_input_tokens == 0
        && u.cache_read_input_tokens == 0
        && u.cost_usd == 0.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude::stream::{parse_line, AgentEvent};

    /// A result line with `modelUsage` `models` (name, input, output, cache write, cache read,
    /// cost) and `total_cost_usd` their costs' sum.
    fn result(usage_input: i64, models: &[(&str, i64, i64, i64, i64, f64)]) -> RunResult {
        let model_usage: serde_json::Map<String, serde_json::Value> = models
            .iter()
            .map(|(name, i, o, cw, cr, c)| {
                let entry = serde_json::json!({"inputTokens": i, "outputTokens": o,
                    "cacheCreationInputTokens": cw, "cacheReadInputTokens": cr, "costUSD": c,
                    "contextWindow": 200000});
                ((*name).to_owned(), entry)
            })
            .collect();
        let total: f64 = models.iter().map(|m| m.5).sum();
        let line = serde_json::json!({"type": "result", "subtype": "success",
            "total_cost_usd": total, "usage": {"input_tokens": usage_input, "output_tokens": 1},
            "modelUsage": model_usage});
        match parse_line(&line.to_string()).event {
            AgentEvent::Result(r) => r,
            other => panic!("not a result: {other:?}"),
        }
    }

    fn row(model: &str, i: i64, o: i64, cw: i64, cr: i64, c: f64) -> TurnUsage {
        TurnUsage {
            model: model.to_owned(),
            input_tokens: i,
            output_tokens: o,
            cache_creation_input_tokens: cw,
            cache_read_input_tokens: cr,
            cost_usd: c,
        }
    }

    #[test]
    fn spend_counts_what_the_process_totals_grew_by() {
        let mut spend = Spend::default();
        // The first turn: all of it.
        let first = result(1007, &[("opus", 1007, 13, 100, 10_000, 0.5)]);
        let (cost, rows) = spend.turn(&first, Some("opus"));
        assert_eq!(cost, Some(0.5));
        assert_eq!(rows, [row("opus", 1007, 13, 100, 10_000, 0.5)]);
        // The second turn reports both turns, and a second model (a subagent's): each model's
        // growth, once.
        let second = result(
            2007,
            &[
                ("opus", 3014, 36, 300, 30_000, 1.25),
                ("haiku", 50, 5, 0, 0, 0.25),
            ],
        );
        let (cost, rows) = spend.turn(&second, Some("opus"));
        assert_eq!(cost, Some(1.0));
        assert_eq!(
            rows,
            [
                row("haiku", 50, 5, 0, 0, 0.25),
                row("opus", 2007, 23, 200, 20_000, 0.75)
            ]
        );
        // A turn that reports less than before (interrupted) grew nothing: it counts as a
        // turn of its `usage`; the next turn counts from the highest figures seen.
        let interrupted = result(0, &[]);
        let (cost, rows) = spend.turn(&interrupted, Some("opus"));
        assert_eq!(cost, Some(0.0));
        assert_eq!(rows, [row("opus", 0, 1, 0, 0, 0.0)]);
        let third = result(
            7,
            &[
                ("opus", 3021, 40, 300, 30_000, 1.5),
                ("haiku", 50, 5, 0, 0, 0.25),
            ],
        );
        let (cost, rows) = spend.turn(&third, Some("opus"));
        assert!((cost.unwrap() - 0.25).abs() < 1e-9);
        assert_eq!(rows, [row("opus", 7, 4, 0, 0, 0.25)]);
    }

    #[test]
    fn spend_without_model_usage_counts_the_turn_usage_under_its_model() {
        let line = r#"{"type":"result","subtype":"success","cost_usd":0.2,
            "usage":{"input_tokens":5,"output_tokens":6,"cache_creation_input_tokens":7,
            "cache_read_input_tokens":8}}"#
            .replace('\n', "");
        let AgentEvent::Result(result) = parse_line(&line).event else {
            panic!("not a result")
        };
        let (cost, rows) = Spend::default().turn(&result, None);
        assert_eq!(cost, Some(0.2));
        assert_eq!(rows, [row("", 5, 6, 7, 8, 0.2)]);
    }
}
