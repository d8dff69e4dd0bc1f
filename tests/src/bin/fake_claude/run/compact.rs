//! `/compact` sent as a user message, as the real CLI 2.1.197 plays it: `status`
//! `compacting`, then (with at least two earlier exchanges to summarise) `status` success, a
//! fresh `init`, `compact_boundary`, the summary as a synthetic user line, the echoed
//! "Compacted" and a `result` of no turns; with fewer, `status` failed, `init`, and "Not
//! enough messages to compact." as the result.

use super::{Ending, Run, Stop};
use crate::events::{CompactMetadata, Event, Replay, SyntheticAssistant, System};
use crate::ids;

/// The real CLI's answer when there is too little to summarise.
const TOO_FEW: &str = "Not enough messages to compact.";

/// The context a summary leaves (the real CLI reported 582 for a short conversation).
const SUMMARY_TOKENS: u64 = 582;

/// Whether a user message asks for a compaction (`/compact`, maybe with instructions).
pub fn asked(text: &str) -> bool {
    let text = text.trim();
    text == "/compact" || text.starts_with("/compact ")
}

impl Run {
    /// Compacts a conversation of `earlier` exchanges (after `begin`).
    pub fn compact(&mut self, earlier: usize) -> Result<Ending, Stop> {
        self.checkpoint(None)?;
        self.compact_status(Some("compacting"), None, None)?;
        if earlier < 2 {
            self.compact_status(None, Some("failed"), Some(TOO_FEW))?;
            self.announce()?;
            let notice = SyntheticAssistant::notice(&self.session.id, TOO_FEW);
            self.emit(&Event::SyntheticAssistant(notice))?;
            self.last_text = TOO_FEW.into();
            return Ok(Ending::Success);
        }
        self.compact_status(None, Some("success"), None)?;
        self.announce()?;
        let last = self.turn_tokens;
        let pre_tokens = last.input + last.cache_creation + last.cache_read + last.output;
        self.emit(&Event::System(System::CompactBoundary {
            session_id: self.session.id.clone(),
            uuid: ids::uuid(),
            compact_metadata: CompactMetadata {
                trigger: "manual",
                pre_tokens,
                post_tokens: SUMMARY_TOKENS,
                cumulative_dropped_tokens: pre_tokens.saturating_sub(SUMMARY_TOKENS),
                duration_ms: 20,
            },
        }))?;
        let summary = format!(
            "This session is being continued from a previous conversation that ran out of \
             context. The summary below covers the earlier portion of the conversation.\n\n\
             Summary: {earlier} earlier exchanges."
        );
        self.emit(&Event::Replay(Replay::synthetic(
            &self.session.id,
            &summary,
        )))?;
        let compacted = Replay::command_output(&self.session.id, "Compacted ");
        self.emit(&Event::Replay(compacted))?;
        Ok(Ending::Success)
    }

    fn compact_status(
        &mut self,
        status: Option<&'static str>,
        compact_result: Option<&'static str>,
        compact_error: Option<&'static str>,
    ) -> Result<(), Stop> {
        self.emit(&Event::System(System::Compacting {
            status,
            compact_result,
            compact_error,
            session_id: self.session.id.clone(),
            uuid: ids::uuid(),
        }))
    }
}
