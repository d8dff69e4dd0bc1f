//! Message methods: `sendMessage`, `listQueuedMessages`, `cancelQueuedMessage`.

use std::sync::Arc;

use hld_client::protocol::*;

use super::control::store_error;
use super::sessions::{no_nul, required, session};
use crate::daemon::Daemon;
use crate::error::{Error, Result};
use crate::store::{messages, StoreError};

pub async fn send_message(daemon: Arc<Daemon>, p: SendMessageParams) -> Result<SendMessageResult> {
    no_nul(&p)?;
    required(&p.session_id, "session_id")?;
    required(&p.text, "text")?;
    let mode = match p.mode {
        None => MessageMode::Queue,
        Some(mode @ (MessageMode::Queue | MessageMode::Steer)) => mode,
        Some(other) => {
            return Err(Error::not_accepted(
                "mode",
                other.as_str(),
                &["queue", "steer"],
            ))
        }
    };
    let sent = daemon
        .sessions
        .send_message(&p.session_id, p.text, mode)
        .await?;
    // Talking to an archived session is working with it again: it comes back to the list.
    super::control::unarchive(&daemon, &p.session_id).await;
    Ok(sent)
}

pub async fn list_queued_messages(
    daemon: Arc<Daemon>,
    p: SessionIdParams,
) -> Result<ListQueuedMessagesResult> {
    let row = session(&daemon, &p.session_id).await?;
    let messages = daemon
        .store
        .read(move |c| messages::queued(c, &row.new.id))
        .await
        .map_err(store_error("failed to list queued messages"))?;
    Ok(ListQueuedMessagesResult { messages })
}

pub async fn cancel_queued_message(
    daemon: Arc<Daemon>,
    p: CancelQueuedMessageParams,
) -> Result<SuccessResult> {
    required(&p.message_id, "message_id")?;
    let id = p.message_id.clone();
    let cancelled = daemon
        .store
        .write(move |w, out| w.cancel_message(&id, None, out))
        .await;
    match cancelled {
        Ok(_) => Ok(SuccessResult { success: true }),
        Err(StoreError::MessageNotQueued(id)) => Err(Error::invalid_param(
            "message_id",
            "a queued message",
            "unknown, delivered or cancelled",
            format!("no queued message {id}: it is unknown, or delivered or cancelled already"),
        )),
        Err(e) => Err(Error::internal("failed to cancel the message", e)),
    }
}
