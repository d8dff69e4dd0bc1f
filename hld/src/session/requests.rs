//! The daemon's control requests to a live `claude` (claude-code.md 3.4: `initialize`,
//! `set_model`, `set_permission_mode`, `get_context_usage`, `file_suggestions`, …): each is
//! written on its stdin with a fresh id, and resolved by the `control_response` carrying it.

use std::sync::Arc;
use std::time::Duration;

use hld_client::protocol::{PermissionMode, SlashCommand};
use serde_json::{json, Value};
use tokio::sync::oneshot;

use super::supervisor::{Command, Supervisor};
use super::Sessions;
use crate::claude::control::{self, ControlResponse};
use crate::error::{Error, Result as RpcResult};

/// How long a caller waits for `claude` to answer a control request.
const ANSWER_WAIT: Duration = Duration::from_secs(30);

/// Why a control request got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// The session has no process that reads requests (none, or it is closing).
    #[error("the session is not live: it has no running claude process")]
    NotLive,
    /// The process ended before it answered.
    #[error("claude's process ended before it answered")]
    Gone,
    /// The process did not answer in time.
    #[error("claude did not answer within {} seconds", ANSWER_WAIT.as_secs())]
    NoAnswer,
    /// `claude` answered with an error: its text.
    #[error("claude refused the request: {0}")]
    Refused(String),
}

/// Where an answer goes: the caller waiting for it.
pub(super) type Reply = oneshot::Sender<Result<Value, ControlError>>;

impl Sessions {
    /// Sends control request `request` (an object with its `subtype`) to the session's live
    /// process and waits for its answer: the `response` value (`null` when it has none).
    pub(crate) async fn control(
        &self,
        session_id: &str,
        request: Value,
    ) -> Result<Value, ControlError> {
        let (reply, answer) = oneshot::channel();
        let sent = match self.live.lock().unwrap().get(session_id) {
            Some(handle) => handle
                .commands
                .send(Command::Control { request, reply })
                .is_ok(),
            None => false,
        };
        if !sent {
            return Err(ControlError::NotLive);
        }
        match tokio::time::timeout(ANSWER_WAIT, answer).await {
            Ok(Ok(answered)) => answered,
            // The actor dropped the request: its process ended.
            Ok(Err(_)) => Err(ControlError::Gone),
            Err(_) => Err(ControlError::NoAnswer),
        }
    }

    /// Asks a session's new process for its slash commands and agents (`initialize`), and
    /// stores them with the session for `listSlashCommands`.
    pub(super) async fn initialize(self: Arc<Self>, session_id: String) {
        let answer = match self.control(&session_id, control::initialize()).await {
            Ok(answer) => answer,
            // A process that ended at once (it failed, or was closed) is not news here.
            Err(e @ (ControlError::NotLive | ControlError::Gone)) => {
                return tracing::debug!(session = %session_id, error = %e, "claude did not answer initialize")
            }
            Err(e) => {
                return tracing::warn!(session = %session_id, error = %e, "claude did not answer initialize")
            }
        };
        let commands = control::slash_commands(&answer);
        let id = session_id.clone();
        let stored = (self.store)
            .write(move |w, _| w.set_slash_commands(&id, &commands))
            .await;
        if let Err(e) = stored {
            tracing::warn!(session = %session_id, error = %e, "cannot store the slash commands");
        }
    }

    /// Applies a model and a permission mode to the session's live process (`set_model`,
    /// `set_permission_mode`). Without one, the next process starts with them (they are
    /// stored): nothing to do.
    pub async fn apply(
        &self,
        session_id: &str,
        model: Option<String>,
        mode: Option<PermissionMode>,
    ) {
        let requests = [
            model.map(|m| json!({"subtype": "set_model", "model": m})),
            mode.map(|m| json!({"subtype": "set_permission_mode", "mode": m.as_str()})),
        ];
        for request in requests.into_iter().flatten() {
            match self.control(session_id, request.clone()).await {
                Ok(_) | Err(ControlError::NotLive) => {}
                Err(e) => {
                    tracing::warn!(session = %session_id, error = %e, request = %request["subtype"], "the live process did not take the setting; the next one starts with it")
                }
            }
        }
    }

    /// `listSlashCommands`: what the session's `claude` last reported.
    pub async fn slash_commands(&self, session_id: &str) -> RpcResult<Vec<SlashCommand>> {
        let id = session_id.to_owned();
        self.store
            .read(move |c| crate::store::settings::slash_commands(c, &id))
            .await
            .map_err(|e| Error::internal("failed to read the slash commands", e))?
            .ok_or_else(|| Error::not_found("session_id", "session", session_id))
    }
}

impl Supervisor {
    /// Writes a control request with a fresh id; `reply` gets its answer (at once, when the
    /// process reads no more requests).
    pub(super) async fn request(&mut self, request: Value, reply: Reply) {
        let request_id = uuid::Uuid::new_v4().to_string();
        if !self.write(&control::request(&request_id, &request)).await {
            let _ = reply.send(Err(ControlError::NotLive));
            return;
        }
        self.turns.requests.insert(request_id, reply);
    }

    /// `claude` answered a control request: its caller gets the answer. Answers to requests
    /// nobody waits for (an `interrupt`, a caller that gave up) are dropped.
    pub(super) fn responded(&mut self, response: ControlResponse) {
        if let Some(reply) = self.turns.requests.remove(&response.request_id) {
            let _ = reply.send(response.outcome.map_err(ControlError::Refused));
        }
    }
}
