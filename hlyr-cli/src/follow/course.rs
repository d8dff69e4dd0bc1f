//! Changing a conversation's course from its prompt: Shift+Tab moves the session to the next
//! mode of the cycle (default → accept edits → plan, [`Mode`]), and `/model NAME` switches its
//! model. Both are `updateSessionSettings` calls, never messages to the agent. Tab completes
//! a `/command` from what the session's `claude` reported and hlyr's own, and an `@file` from
//! its directory. Esc interrupts the agent's turn and the conversation goes on; Ctrl-C stops
//! the session, or following it ([`OnCtrlC`]).

use hld_client::mode::Mode;
use hld_client::protocol::{SlashCommandKind, UpdateSessionSettingsParams};
use hld_client::view::clean;
use hld_client::Client;

use super::{note, Follower, OnCtrlC};
use crate::composer::Completion;
use crate::error::{CliError, Exit};
use crate::hint::hlyr;
use crate::output::{paint, short_id, Update, BOLD, CYAN, DIM};
use crate::transcript::mode_text;

/// What `/model` alone adds after the model in use.
const MODEL_HELP: &str = "(`/model NAME` switches it: an alias such as opus or sonnet, or a \
full model id)";

/// The commands hlyr takes itself rather than sending them to the agent.
const OWN_COMMANDS: [&str; 3] = ["/model", "/exit", "/quit"];

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

    /// Ctrl-C: interrupts the session, stops waiting for it, or stops following, as `on`
    /// says. Returns the exit code when following stops.
    pub(super) async fn ctrl_c(&mut self, on: OnCtrlC) -> Option<Exit> {
        if let Some(prompter) = self.prompter.as_mut() {
            prompter.interrupt();
        }
        self.activity.hide();
        if std::mem::take(&mut self.retrying) {
            let _ = self.out.end_line();
        }
        let id = short_id(self.session_id);
        let told = match on {
            OnCtrlC::Interrupt if !self.interrupting => {
                self.interrupting = true;
                // Nothing more is asked of a session that is being stopped.
                self.prompter = None;
                note("interrupting the session (Ctrl-C again to stop waiting)");
                // Nor does it go on with what was queued for it: that is taken back, and told.
                for (id, text) in std::mem::take(&mut self.queued) {
                    if self.client.cancel_queued_message(&id).await.is_ok() {
                        note(&format!("not sent, taken back: {}", clean(&text)));
                    }
                }
                if let Err(e) = self.client.interrupt_session(self.session_id).await {
                    // It may have ended meanwhile: its end is on its way.
                    CliError::from(e).print();
                }
                return None;
            }
            OnCtrlC::Interrupt => format!(
                "stopped waiting; the daemon is still interrupting the session (see {})",
                hlyr(&format!("show {id}"))
            ),
            OnCtrlC::Detach => format!(
                "detached; the session keeps running: follow it again with {}, stop it with {}",
                hlyr(&format!("conversation {id} --follow")),
                hlyr(&format!("interrupt {id}"))
            ),
            OnCtrlC::StopWatching => format!(
                "stopped following; the session keeps running (stop it with {})",
                hlyr(&format!("interrupt {id}"))
            ),
        };
        note(&told);
        Some(Exit::CtrlC)
    }

    /// Esc while the agent works: interrupts its turn, and takes back what was queued for the
    /// turn's end. Returns the line to tell and the texts taken back, for the line to hold.
    pub(super) async fn interrupt_turn(&mut self) -> Result<(String, Vec<String>), CliError> {
        let mut back = Vec::new();
        for (id, text) in std::mem::take(&mut self.queued) {
            if self.client.cancel_queued_message(&id).await.is_ok() {
                back.push(text);
            }
        }
        self.client.interrupt_session(self.session_id).await?;
        self.doing = Some("interrupting".to_owned());
        let said = match back.len() {
            0 => "interrupting the turn; type the next message".to_owned(),
            _ => "interrupting the turn; what was queued is back on the line".to_owned(),
        };
        Ok((paint(DIM, said), back))
    }

    /// Connects to the daemon again, its connection having been lost; says whether it could.
    pub(super) async fn reconnect(&mut self) -> bool {
        match Client::connect_to(self.client.address()).await {
            Ok(client) => {
                self.client = client;
                true
            }
            Err(_) => false,
        }
    }

    /// Whether a conversation holds the terminal's keys (not given up by Ctrl-C).
    pub(super) fn holds_keys(&self) -> bool {
        self.converse && !self.interrupting && self.prompter.is_some()
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

    /// The whole words (`/compact`, `@src/main.rs`) that complete `word`, best first. A
    /// connection lost meanwhile (the daemon restarted) is made again, once.
    pub(super) async fn candidates(&mut self, word: &Completion) -> Result<Vec<String>, CliError> {
        match self.completing(word).await {
            Err(e) if e.is_lost() && self.reconnect().await => Ok(self.completing(word).await?),
            found => Ok(found?),
        }
    }

    async fn completing(&self, word: &Completion) -> Result<Vec<String>, hld_client::Error> {
        Ok(match word {
            Completion::Command(prefix) => {
                let reported = self.client.list_slash_commands(self.session_id).await?;
                let reported = reported
                    .into_iter()
                    .filter(|c| c.kind != SlashCommandKind::Agent)
                    .map(|c| format!("/{}", clean(&c.name)));
                let mut found: Vec<String> = OWN_COMMANDS
                    .iter()
                    .map(|c| c.to_string())
                    .chain(reported)
                    .filter(|c| c[1..].starts_with(prefix.as_str()))
                    .collect();
                found.sort();
                found.dedup();
                found
            }
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
