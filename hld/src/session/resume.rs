//! Resuming sessions a usage limit stopped, when it resets (`resume_on_reset`): a task sleeps
//! until the earliest reset stored or a change, then resumes each session due as a message
//! would (the same session, its warm process or `--resume`, never a fork), after a `system`
//! event that says the daemon did it. The schedule is the store's, so it survives a restart;
//! a reset already past resumes at once. A session that ran again meanwhile (a message sent)
//! no longer carries its limit, and is left alone.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use hld_client::protocol::{ConversationEventType, MessageMode, SessionStatus};
use hld_client::view::usage::window_name;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::Sessions;
use crate::claude::prompt::Prompt;
use crate::store::{limits, Ingest, NewEvent};

/// The message a session is resumed with.
const RESUME_PROMPT: &str = "Continue: the usage limit reset.";

/// The subtype of the system event stored when the daemon resumes a session.
const LIMIT_RESET: &str = "limit_reset";

/// How long the task sleeps when no session waits for a reset (a change wakes it anyway).
const IDLE: Duration = Duration::from_secs(3600);

/// Runs until `shutdown`; `wake` is notified when a session with `resume_on_reset` stops on a
/// usage limit, or has it turned on while stopped.
pub async fn run(sessions: Arc<Sessions>, wake: Arc<Notify>, shutdown: CancellationToken) {
    // The resets already acted on: a session refused again with the same reset time is not
    // resumed in a loop.
    let mut tried: HashSet<(String, String)> = HashSet::new();
    loop {
        let waiting = match sessions.store.read(limits::limit_resets).await {
            Ok(due) => {
                tried.retain(|t| due.contains(t));
                due.into_iter().filter(|d| !tried.contains(d)).collect()
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the sessions waiting for a limit reset");
                Vec::new()
            }
        };
        let pause = waiting
            .first()
            .map_or(IDLE, |(_, at): &(String, String)| crate::time::until(at));
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = wake.notified() => continue,
            () = tokio::time::sleep(pause) => {}
        }
        for (id, at) in waiting {
            if !crate::time::until(&at).is_zero() {
                break;
            }
            sessions.resume_at_reset(&id).await;
            tried.insert((id, at));
        }
    }
}

impl Sessions {
    /// Resumes session `id` after its usage limit reset, if it still stops on one and
    /// `resume_on_reset` is still on; failures are logged.
    async fn resume_at_reset(self: &Arc<Self>, id: &str) {
        let row = match self.session_row(id).await {
            Ok(row) => row,
            Err(e) => {
                let error = e.public_message();
                return tracing::warn!(session = %id, %error, "cannot read a session to resume");
            }
        };
        let stopped = row.status == SessionStatus::Failed && row.usage_limit.is_some();
        if !stopped || !row.new.modes.resume_on_reset {
            return;
        }
        let window = row
            .usage_limit
            .as_ref()
            .map_or("", |l| window_name(&l.kind));
        let said = NewEvent {
            role: Some("system".to_owned()),
            content: Some(format!(
                "The {window} usage limit reset: the daemon resumed the session."
            )),
            subtype: Some(LIMIT_RESET.to_owned()),
            ..NewEvent::new(
                row.claude_session_id.as_deref().unwrap_or_default(),
                ConversationEventType::System,
            )
        };
        let session = id.to_owned();
        let stored = self.store.write(move |w, out| {
            let events = vec![said];
            w.ingest(
                &session,
                Ingest {
                    events,
                    ..Ingest::default()
                },
                out,
            )
        });
        if let Err(e) = stored.await {
            tracing::warn!(session = %id, error = %e, "cannot store that the session resumes");
        }
        tracing::info!(session = %id, %window, "the usage limit reset: resuming the session");
        let prompt = Prompt::text(RESUME_PROMPT.to_owned());
        if let Err(e) = self.send_message(id, prompt, MessageMode::Queue).await {
            let error = e.public_message();
            tracing::warn!(session = %id, %error, "cannot resume the session after its limit reset");
        }
    }
}
