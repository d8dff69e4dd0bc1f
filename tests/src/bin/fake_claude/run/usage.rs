//! What a turn reports having used: the tokens the scenario's steps count, or, when the
//! turn's message scripts them, those. A marker `usage:IN,OUT,CW,CR` (input, output, cache
//! written, cache read) is one model call of the turn on the session's model, `@MODEL` after
//! it puts it on another (a subagent's); the first on the session's model is also every
//! assistant line's `message.usage` (the context). As in the real CLI, `result.usage` is the
//! turn's, `modelUsage` and `total_cost_usd` count since the process started.

use super::Run;
use crate::results::{RunStats, Tokens};

/// The model calls the markers in `prompt` script, on `model` unless one names another.
pub fn scripted(prompt: &str, model: &str) -> Result<Vec<(String, Tokens)>, String> {
    let markers = prompt
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("usage:"));
    markers
        .map(|marker| {
            let (figures, on) = marker.split_once('@').unwrap_or((marker, model));
            let numbers: Vec<u64> = figures
                .split(',')
                .map(|n| n.parse().map_err(|_| bad(marker)))
                .collect::<Result<_, _>>()?;
            let [input, output, cache_creation, cache_read] = numbers[..] else {
                return Err(bad(marker));
            };
            let tokens = Tokens {
                input,
                cache_creation,
                cache_read,
                output,
            };
            Ok((on.to_owned(), tokens))
        })
        .collect()
}

fn bad(marker: &str) -> String {
    format!("fake-claude: usage:{marker} is not usage:IN,OUT,CW,CR[@MODEL]")
}

impl Run {
    /// Counts the turn's scripted model calls, if its message scripts any; the scenario's own
    /// counts are then left out.
    pub(super) fn count_script(&mut self) {
        for (model, tokens) in self.script.clone() {
            self.tokens.add(tokens);
            self.spent.entry(model).or_default().add(tokens);
        }
    }

    /// The `message.usage` of the current model call: the scripted one, if any.
    pub(super) fn message_tokens(&self, counted: Tokens) -> Tokens {
        let model = &self.session.model;
        (self.script.iter())
            .find(|(on, _)| on == model)
            .map_or(counted, |(_, tokens)| *tokens)
    }

    /// Adds `tokens` to the round-trip's, the turn's and the process's counts (unless the
    /// turn's usage is scripted).
    pub(super) fn count(&mut self, tokens: Tokens) {
        if !self.script.is_empty() {
            return;
        }
        self.inflight.add(tokens);
        self.tokens.add(tokens);
        self.spent
            .entry(self.session.model.clone())
            .or_default()
            .add(tokens);
    }

    pub(super) fn stats(&mut self, num_turns: u32) -> RunStats {
        RunStats {
            session_id: self.session.id.clone(),
            duration_ms: super::duration_ms(self.started.elapsed()).max(20 * u64::from(self.turns)),
            duration_api_ms: 20 * u64::from(self.api_calls),
            num_turns,
            tokens: self.tokens,
            spent: self.spent.clone(),
            permission_denials: std::mem::take(&mut self.denials),
        }
    }
}
