//! `interruptSession`: stopping a running session.

use serde::{Deserialize, Serialize};

use super::SessionIdParams;

/// Result of `interruptSession`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterruptSessionResult {
    /// Always true on success.
    pub success: bool,
    /// The session.
    pub session_id: String,
    /// Always `"completing"`.
    pub status: String,
    /// What happens next.
    pub message: String,
}

method!(
    /// Stop a running session.
    ///
    /// The session goes to `completing` and then to `completed` with `interrupted: true`.
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"interruptSession","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13"},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"success":true,"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","status":"completing","message":"Session interrupt requested, shutting down gracefully"},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// -32602 when `session_id` is missing or empty (`session_id is required`), names no session
    /// (`session not found: …`), or names one without a live process:
    ///
    /// ```json
    /// {"jsonrpc":"2.0","error":{"code":-32602,"message":"cannot interrupt session with status completed (must be running)","data":{"param":"session_id","expected":"a running session","received":"completed"}},"id":1}
    /// ```
    ///
    /// From Rust: `client.interrupt_session(id)`.
    InterruptSession, "interruptSession", "Interrupt a running session (SIGINT, then SIGKILL after a grace period)",
    ["session_id: string"], "{success: boolean, session_id: string, status: string, message: string}",
    SessionIdParams, InterruptSessionResult
);
