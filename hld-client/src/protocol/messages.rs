//! Talking to a session while it works: `sendMessage` (queue or steer), the stored queue
//! (`listQueuedMessages`, `cancelQueuedMessage`) and the records they carry.

use serde::{Deserialize, Serialize};

use super::{SessionIdParams, SuccessResult};

open_enum!(
    /// How a message reaches an agent that is working.
    MessageMode {
        /// Wait for the current turn to end, then start the next turn with it (the default).
        Queue = "queue",
        /// Interrupt the current turn and send the message at once.
        Steer = "steer",
    }
);

open_enum!(
    /// Where a message sent with `sendMessage` is.
    MessageStatus {
        /// Waiting for the agent's turn to end.
        Queued = "queued",
        /// Handed to the agent: a turn started with it.
        Delivered = "delivered",
        /// Removed by `cancelQueuedMessage` before it was delivered.
        Cancelled = "cancelled",
        /// The daemon could not hand it to the agent; `error` says why.
        Undelivered = "undelivered",
    }
);

/// A message sent into a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueuedMessage {
    /// The message's id.
    pub id: String,
    /// Its session.
    pub session_id: String,
    /// What the user wrote.
    pub text: String,
    /// `queue` or `steer`.
    pub mode: MessageMode,
    /// Where it is.
    pub status: MessageStatus,
    /// When it was sent, RFC 3339.
    pub created_at: String,
    /// When it was delivered, cancelled or given up, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled_at: Option<String>,
    /// Why it was not delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The image files attached, as sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
}

/// Params of `sendMessage`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SendMessageParams {
    /// The session.
    pub session_id: String,
    /// The message.
    pub text: String,
    /// `queue` (the default) or `steer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<MessageMode>,
    /// Image files to attach: absolute paths the daemon reads, each a PNG, JPEG, GIF or WebP
    /// of at most [`MAX_IMAGE_BYTES`]. They reach the model as image blocks before the text;
    /// the conversation stores the text and names the images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<String>>,
}

/// The largest image file `sendMessage` and `launchSession` attach (Anthropic's API limit
/// per image).
pub const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;

/// Result of `sendMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SendMessageResult {
    /// The message's id, for `cancelQueuedMessage` and the `message_*` events.
    pub message_id: String,
    /// True when the message waits for the current turn to end; false when a turn started
    /// with it at once.
    pub queued: bool,
}

method!(
    /// Sends a message into a session, continuing that same session (same id, one
    /// conversation).
    ///
    /// While the agent works, a `queue` message waits and is delivered when the turn ends
    /// (several in order); a `steer` message interrupts the turn and is delivered at once. A
    /// session whose turn has ended gets it at once: its warm process reads it, or the daemon
    /// resumes the session (`claude --resume`, no fork). The queue is stored and survives a
    /// restart. Events: `message_queued`, `message_delivered`, `message_cancelled`.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"sendMessage","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","text":"Also update the changelog"},"id":1}
    /// {"jsonrpc":"2.0","result":{"message_id":"0b6e2f1c-5d9a-4c1e-8f3b-7a2d4e6c8b10","queued":true},"id":1}
    /// ```
    ///
    /// `/compact` sent as text compacts the conversation; its `compact_boundary` is stored as
    /// a `system` event.
    ///
    /// -32602 for an unknown session, empty text without images, an unknown mode, an image
    /// that is missing, too large or not a PNG, JPEG, GIF or WebP, or a session that cannot
    /// take messages (still starting, or without a Claude session to resume).
    SendMessage, "sendMessage", "Send a message into a session: queued while the agent works, or steering it",
    ["session_id: string", "text: string", "mode?: \"queue\" | \"steer\"", "images?: [string]"],
    "{message_id: string, queued: boolean}",
    SendMessageParams, SendMessageResult
);

/// Result of `listQueuedMessages`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListQueuedMessagesResult {
    /// The messages still waiting, oldest (next to be delivered) first.
    pub messages: Vec<QueuedMessage>,
}

method!(
    /// Lists a session's messages that wait for the current turn to end, in delivery order.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"listQueuedMessages","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13"},"id":1}
    /// {"jsonrpc":"2.0","result":{"messages":[{"id":"0b6e2f1c-5d9a-4c1e-8f3b-7a2d4e6c8b10","session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","text":"Also update the changelog","mode":"queue","status":"queued","created_at":"2026-11-29T10:00:00Z"}]},"id":1}
    /// ```
    ///
    /// -32602 for an unknown session.
    ListQueuedMessages, "listQueuedMessages", "List a session's queued messages",
    ["session_id: string"], "{messages: QueuedMessage[]}",
    SessionIdParams, ListQueuedMessagesResult
);

/// Params of `cancelQueuedMessage`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CancelQueuedMessageParams {
    /// The message, as `sendMessage` named it.
    pub message_id: String,
}

method!(
    /// Removes a queued message before it is delivered.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"cancelQueuedMessage","params":{"message_id":"0b6e2f1c-5d9a-4c1e-8f3b-7a2d4e6c8b10"},"id":1}
    /// {"jsonrpc":"2.0","result":{"success":true},"id":1}
    /// ```
    ///
    /// -32602 for an unknown message, or one already delivered or cancelled.
    CancelQueuedMessage, "cancelQueuedMessage", "Cancel a queued message before it is delivered",
    ["message_id: string"], "{success: boolean}",
    CancelQueuedMessageParams, SuccessResult
);
