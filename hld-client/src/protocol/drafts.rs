//! Drafts: sessions a person is still composing, kept by the daemon until launched or discarded.

use serde::{Deserialize, Serialize};

use super::{SessionIdParams, SuccessResult};

open_enum!(
    /// What a draft session is: one being composed, or one set aside (restorable).
    DraftState {
        /// Being composed; nothing has run.
        Draft = "draft",
        /// Set aside by `discardDraft`; `restoreDraft` brings it back.
        Discarded = "discarded",
    }
);

/// The editable fields of a draft; an absent field is left as it is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DraftFields {
    /// Where it will run; not checked before launch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    /// The prompt typed so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The title; empty clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The model to run with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Approve Edit, Write and MultiEdit without asking once launched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_accept_edits: Option<bool>,
    /// Approve every tool call without asking once launched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerously_skip_permissions: Option<bool>,
    /// The client's editor contents (opaque text, usually JSON); empty clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor_state: Option<String>,
}

/// `{session_id}`: the draft made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateDraftResult {
    /// The new draft session.
    pub session_id: String,
}

method!(
    /// Creates a draft session: stored, listed only under `filter: "draft"`, never run.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"createDraft","params":{"working_dir":"/src/app","query":"Fix the flaky test"},"id":1}
    /// {"jsonrpc":"2.0","result":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13"},"id":1}
    /// ```
    ///
    /// -32602 for a string holding a NUL character.
    CreateDraft, "createDraft", "Create a draft session (nothing runs)",
    ["working_dir?: string", "query?: string", "title?: string", "model?: string",
     "auto_accept_edits?: boolean", "dangerously_skip_permissions?: boolean",
     "editor_state?: string"],
    "{session_id: string}",
    DraftFields, CreateDraftResult
);

/// Params of `updateDraft`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UpdateDraftParams {
    /// The draft.
    pub session_id: String,
    /// The fields to change.
    #[serde(flatten)]
    pub fields: DraftFields,
}

method!(
    /// Changes the fields given of a draft (or a discarded draft).
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"updateDraft","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","title":"Flaky test"},"id":1}
    /// {"jsonrpc":"2.0","result":{"success":true},"id":1}
    /// ```
    ///
    /// -32602 for an unknown session or one that is not a draft.
    UpdateDraft, "updateDraft", "Change a draft's fields",
    ["session_id: string", "working_dir?: string", "query?: string", "title?: string",
     "model?: string", "auto_accept_edits?: boolean",
     "dangerously_skip_permissions?: boolean", "editor_state?: string"],
    "{success: boolean}",
    UpdateDraftParams, SuccessResult
);

method!(
    /// Sets a draft aside: it leaves the `draft` list until `restoreDraft`.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"discardDraft","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13"},"id":1}
    /// {"jsonrpc":"2.0","result":{"success":true},"id":1}
    /// ```
    ///
    /// -32602 for an unknown session or one that is not a draft being composed.
    DiscardDraft, "discardDraft", "Set a draft aside",
    ["session_id: string"], "{success: boolean}",
    SessionIdParams, SuccessResult
);

method!(
    /// Brings a discarded draft back to the `draft` list.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"restoreDraft","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13"},"id":1}
    /// {"jsonrpc":"2.0","result":{"success":true},"id":1}
    /// ```
    ///
    /// -32602 for an unknown session or one that is not a discarded draft.
    RestoreDraft, "restoreDraft", "Bring a discarded draft back",
    ["session_id: string"], "{success: boolean}",
    SessionIdParams, SuccessResult
);

/// Params of `launchDraft`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LaunchDraftParams {
    /// The draft.
    pub session_id: String,
    /// The prompt to run; absent: the draft's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Create the draft's working directory when it does not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_directory: Option<bool>,
}

method!(
    /// Runs a draft as `launchSession` would, with the same checks; the session keeps its id
    /// and stops being a draft.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"launchDraft","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","create_directory":true},"id":1}
    /// {"jsonrpc":"2.0","result":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","run_id":"a3e9d0c4-5b61-4f2e-8c7d-19b0f6e2a845"},"id":1}
    /// ```
    ///
    /// -32602 for a session that is not a draft being composed, an empty query, or a working
    /// directory that does not exist (unless `create_directory`).
    LaunchDraft, "launchDraft", "Run a draft as launchSession would",
    ["session_id: string", "query?: string", "create_directory?: boolean"],
    "{session_id: string, run_id: string}",
    LaunchDraftParams, super::LaunchSessionResult
);
