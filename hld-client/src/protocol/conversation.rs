//! The stored conversation: its events (messages, thinking, tool calls and results, system
//! lines) and `getConversation`, which reads them.

use serde::{Deserialize, Serialize};

/// The kind of a stored conversation event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ConversationEventType {
    /// Text from the user, the assistant or the system.
    Message,
    /// A tool invocation by the assistant.
    ToolCall,
    /// The result of a tool invocation.
    ToolResult,
    /// A system notice.
    System,
    /// Assistant thinking.
    Thinking,
    /// A kind this version does not know (from a newer daemon); written back as `unknown`.
    #[serde(other)]
    Unknown,
}

impl ConversationEventType {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ConversationEventType::Message => "message",
            ConversationEventType::ToolCall => "tool_call",
            ConversationEventType::ToolResult => "tool_result",
            ConversationEventType::System => "system",
            ConversationEventType::Thinking => "thinking",
            ConversationEventType::Unknown => "unknown",
        }
    }

    /// The known kind `s` spells, if it is one.
    pub fn parse(s: &str) -> Option<Self> {
        [
            ConversationEventType::Message,
            ConversationEventType::ToolCall,
            ConversationEventType::ToolResult,
            ConversationEventType::System,
            ConversationEventType::Thinking,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

/// One stored conversation event (`getConversation`, `conversation_updated`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationEvent {
    /// Row id, unique across every session; not a position (page by `sequence`).
    pub id: i64,
    /// The daemon session it belongs to.
    pub session_id: String,
    /// The Claude session it belongs to (empty before Claude reported one).
    pub claude_session_id: String,
    /// Per-session position, strictly increasing.
    pub sequence: i64,
    /// Kind.
    pub event_type: ConversationEventType,
    /// Time stored, RFC 3339.
    pub created_at: String,
    /// `user`, `assistant` or `system`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Text content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Tool use id of a tool call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_id: Option<String>,
    /// Tool name of a tool call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Tool input of a tool call, as a JSON string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_input_json: Option<String>,
    /// For a tool result: the tool use id it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result_for_id: Option<String>,
    /// For a tool result: its content as text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result_content: Option<String>,
    /// For a tool call: whether its result arrived. Always present.
    pub is_completed: bool,
    /// For a tool result: whether the tool reported an error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// `pending`, `approved`, `denied` or `resolved`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_status: Option<String>,
    /// The linked approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    /// The Task tool use this event was produced under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_tool_use_id: Option<String>,
    /// For `system` events, what Claude reported: `api_retry` (an API call failed and is
    /// retried; `content` says the attempt, the error and the delay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtype: Option<String>,
}

/// Params of `getConversation`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetConversationParams {
    /// The session: its whole parent chain, oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// One Claude session (wins over `session_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claude_session_id: Option<String>,
    /// Page start: only events with a larger `sequence` (pass the `sequence` of the last event
    /// received, not its `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_sequence: Option<i64>,
    /// Page size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
}

/// Result of `getConversation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetConversationResult {
    /// Oldest first; always an array.
    pub events: Vec<ConversationEvent>,
}

method!(
    /// Stored conversation history.
    ///
    /// With `session_id`, the conversation of the session and of every session it continues,
    /// oldest first; with `claude_session_id`, that one Claude session's, both ordered by
    /// `sequence`. Page with `limit` and `after_sequence`, the `sequence` of the last event
    /// received (not its `id`, which counts rows of every session).
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"getConversation","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","limit":100},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"events":[{"id":101,"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","claude_session_id":"0b8e5f3a-2c41-4d7e-9f60-7a1d3c5e8b24","sequence":1,"event_type":"message","created_at":"2025-06-12T09:14:05.118Z","role":"user","content":"Fix the failing test in src/lib.rs","is_completed":false},{"id":102,"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","claude_session_id":"0b8e5f3a-2c41-4d7e-9f60-7a1d3c5e8b24","sequence":2,"event_type":"tool_call","created_at":"2025-06-12T09:14:09.730Z","role":"assistant","tool_id":"toolu_01XkR7d3Qm8bW2pZ5vN9sLcT","tool_name":"Bash","tool_input_json":"{\"command\":\"cargo test\"}","is_completed":false,"approval_status":"pending","approval_id":"local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35"}]},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// -32602 when neither id is given (`either session_id or claude_session_id is required`),
    /// when `session_id` names no session (`failed to get conversation: session not found: …`),
    /// or when `limit` is not positive (`limit must be positive`). An unknown
    /// `claude_session_id` gives an empty list.
    ///
    /// # Example
    ///
    /// ```no_run
    /// use hld_client::protocol::{ConversationEventType, GetConversationParams};
    /// use hld_client::Client;
    ///
    /// # async fn demo(session_id: String) -> Result<(), hld_client::Error> {
    /// let client = Client::connect_default().await?;
    /// let mut after = None;
    /// loop {
    ///     // Or `client.call::<GetConversation>(params)`, which returns `{events}`.
    ///     let page = client
    ///         .get_conversation(GetConversationParams {
    ///             session_id: Some(session_id.clone()),
    ///             after_sequence: after,
    ///             limit: Some(100),
    ///             ..Default::default()
    ///         })
    ///         .await?;
    ///     for event in &page {
    ///         match event.event_type {
    ///             ConversationEventType::Message => println!(
    ///                 "{}: {}",
    ///                 event.role.as_deref().unwrap_or("?"),
    ///                 event.content.as_deref().unwrap_or_default()
    ///             ),
    ///             ConversationEventType::ToolCall => {
    ///                 println!("tool call {}", event.tool_name.as_deref().unwrap_or("?"))
    ///             }
    ///             _ => {}
    ///         }
    ///     }
    ///     match page.last() {
    ///         Some(last) if page.len() == 100 => after = Some(last.sequence),
    ///         _ => break,
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    GetConversation, "getConversation",
    "Get the conversation of a session (its whole parent chain) or of one Claude session",
    ["session_id?: string", "claude_session_id?: string", "after_sequence?: number", "limit?: number"],
    "{events: [ConversationEvent]}",
    GetConversationParams, GetConversationResult
);
