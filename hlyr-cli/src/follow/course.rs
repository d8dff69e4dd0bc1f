//! Changing a conversation's course from its prompt: Shift+Tab moves the session to the next
//! mode of the cycle (default → accept edits → plan, [`Mode`]), and `/model NAME` switches its
//! model. Both are `updateSessionSettings` calls, never messages to the agent. Tab completes
//! a `/command` from what the session's `claude` reported, and an `@file` from its directory.

use hld_client::mode::Mode;
use hld_client::protocol::{SlashCommandKind, UpdateSessionSettingsParams};
use hld_client::view::clean;

use super::Follower;
use crate::composer::Completion;
use crate::error::CliError;
use crate::output::{paint, Update, BOLD, CYAN, DIM};
use crate::transcript::mode_text;

/// What `/model` alone adds after the model in use.
const MODEL_HELP: &str = "(`/model NAME` switches it: an alias such as opus or sonnet, or a \
full model id)";

impl Follower<'_> {
    /// Takes in the mode the session is in now; a conversation tells a new one.
    pub(super) fn mode_now(&mut self, mode: Mode) {
        if std::mem::replace(&mut self.mode, mode) != mode && self.converse {
            self.queue.push_back(Update::Mode {
                session_id: self.session_id.to_owned(),
                mode: mode.label(),
            });
        }
    }

    /// Shift+Tab: moves the session to the next mode of the cycle. Returns the line telling
    /// the new mode.
    pub(super) async fn cycle_mode(&mut self) -> Result<String, CliError> {
        let next = self.mode.next();
        self.client
            .update_session_settings(next.settings(self.session_id))
            .await?;
        // Told here: the settings change it publishes then finds the mode known.
        self.mode = next;
        Ok(mode_text(next.label()))
    }

    /// `/model NAME`: switches the session's model (`claude` takes the name unchecked);
    /// `/model` alone tells the model in use. Returns the line to tell.
    pub(super) async fn switch_model(&self, model: &str) -> Result<String, CliError> {
        if model.is_empty() {
            let state = self.client.get_session_state(self.session_id).await?;
            let now = state.model.unwrap_or_else(|| "claude's default".to_owned());
            return Ok(format!(
                "{} {} {}",
                paint(CYAN, "◆ model:"),
                paint(BOLD, clean(&now)),
                paint(DIM, MODEL_HELP)
            ));
        }
        self.client
            .update_session_settings(UpdateSessionSettingsParams {
                session_id: self.session_id.to_owned(),
                model: Some(model.to_owned()),
                ..Default::default()
            })
            .await?;
        Ok(format!(
            "{} {}",
            paint(CYAN, "◆ model:"),
            paint(BOLD, model)
        ))
    }

    /// The whole words (`/compact`, `@src/main.rs`) that complete `word`, best first.
    pub(super) async fn candidates(&self, word: &Completion) -> Result<Vec<String>, CliError> {
        Ok(match word {
            Completion::Command(prefix) => self
                .client
                .list_slash_commands(self.session_id)
                .await?
                .into_iter()
                .filter(|c| c.kind != SlashCommandKind::Agent && c.name.starts_with(prefix))
                .map(|c| format!("/{}", clean(&c.name)))
                .collect(),
            Completion::File(query) => self
                .client
                .suggest_files(self.session_id, query)
                .await?
                .into_iter()
                .map(|f| format!("@{}", clean(&f.path)))
                .collect(),
        })
    }
}
