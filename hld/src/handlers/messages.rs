//! Message methods: `sendMessage`, `listQueuedMessages`, `cancelQueuedMessage`.

use std::sync::Arc;

use hld_client::protocol::*;

use super::control::store_error;
use super::sessions::{no_nul, required, session};
use crate::claude::prompt::{self, Image, Prompt, MAX_IMAGES};
use crate::daemon::Daemon;
use crate::error::{Error, Result};
use crate::store::{messages, StoreError};

pub async fn send_message(daemon: Arc<Daemon>, p: SendMessageParams) -> Result<SendMessageResult> {
    no_nul(&p)?;
    required(&p.session_id, "session_id")?;
    let images = p.images.unwrap_or_default();
    // Images may go without text.
    if images.is_empty() {
        required(&p.text, "text")?;
    }
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
    let prompt = Prompt {
        text: p.text,
        images: read_images(images).await?,
    };
    let sent = daemon
        .sessions
        .send_message(&p.session_id, prompt, mode)
        .await?;
    // Talking to an archived session is working with it again: it comes back to the list.
    super::control::unarchive(&daemon, &p.session_id).await;
    Ok(sent)
}

/// Reads and checks the images attached to a message (off the runtime); -32602 naming the
/// first one refused.
pub(super) async fn read_images(paths: Vec<String>) -> Result<Vec<Image>> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let read = tokio::task::spawn_blocking(move || prompt::read_all(&paths)).await;
    match read {
        Ok(Ok(images)) => Ok(images),
        Ok(Err((index, why))) => Err(Error::invalid_param(
            "images",
            &format!(
                "at most {MAX_IMAGES} absolute paths of PNG, JPEG, GIF or WebP files of at \
                 most {MAX_IMAGE_BYTES} bytes"
            ),
            &format!("images[{index}]"),
            format!("invalid images[{index}]: {why}"),
        )),
        Err(e) => Err(Error::internal("failed to read the images", e)),
    }
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
