//! Approvals: a session's requests for a human decision (tool calls to approve or deny,
//! questions to answer), their HumanLayer cloud shapes, and the methods that create, list,
//! read and decide them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The kind of an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalType {
    /// Permission for a tool call (approve or deny).
    FunctionCall,
    /// A question to the human (respond).
    HumanContact,
    /// A kind this version does not know (from a newer daemon); written back as `unknown`.
    #[serde(other)]
    Unknown,
}

impl ApprovalType {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalType::FunctionCall => "function_call",
            ApprovalType::HumanContact => "human_contact",
            ApprovalType::Unknown => "unknown",
        }
    }
}

/// The state of an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalStatus {
    /// Waiting for a human.
    Pending,
    /// A function call was approved.
    Approved,
    /// A function call was denied.
    Denied,
    /// A human contact was answered.
    Responded,
    /// Answered outside this daemon (a HumanLayer cloud approval that left the pending list,
    /// or whose respond call got 409): the outcome is not known here.
    Resolved,
    /// A state this version does not know (from a newer daemon); written back as `unknown`.
    #[serde(other)]
    Unknown,
}

impl ApprovalStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::Denied => "denied",
            ApprovalStatus::Responded => "responded",
            ApprovalStatus::Resolved => "resolved",
            ApprovalStatus::Unknown => "unknown",
        }
    }
}

/// Where an approval lives: in this daemon only, or in the HumanLayer cloud (decisions are
/// sent to the HumanLayer API first).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalSource {
    /// Created with `createApproval`.
    #[default]
    Local,
    /// Fetched from the HumanLayer API; its id is the cloud `call_id`.
    Cloud,
    /// A source this version does not know (from a newer daemon); written back as `unknown`.
    #[serde(other)]
    Unknown,
}

impl ApprovalSource {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalSource::Local => "local",
            ApprovalSource::Cloud => "cloud",
            ApprovalSource::Unknown => "unknown",
        }
    }
}

/// The HumanLayer `FunctionCall` spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCallSpec {
    /// The tool name.
    #[serde(rename = "fn")]
    pub function: String,
    /// The tool input.
    pub kwargs: Value,
}

/// The HumanLayer `FunctionCall` status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionCallStatus {
    /// When it was requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_at: Option<String>,
    /// When it was answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responded_at: Option<String>,
    /// The decision, once answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<bool>,
    /// The reviewer's comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// The HumanLayer `FunctionCall` object (spec/001's nested shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The run it belongs to.
    pub run_id: String,
    /// Its id.
    pub call_id: String,
    /// What is asked.
    pub spec: FunctionCallSpec,
    /// Its state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<FunctionCallStatus>,
}

/// The HumanLayer `HumanContact` spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HumanContactSpec {
    /// The question.
    pub msg: String,
    /// An optional subject line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

/// The HumanLayer `HumanContact` status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HumanContactStatus {
    /// When it was requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_at: Option<String>,
    /// When it was answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responded_at: Option<String>,
    /// The answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
}

/// The HumanLayer `HumanContact` object (spec/001's nested shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HumanContact {
    /// The run it belongs to.
    pub run_id: String,
    /// Its id.
    pub call_id: String,
    /// What is asked.
    pub spec: HumanContactSpec,
    /// Its state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<HumanContactStatus>,
}

/// An approval, carrying both the flat fields of spec/003 and the nested object of spec/001
/// so that every existing client can read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    /// Its id (equal to `call_id`).
    pub id: String,
    /// Its id, as the HumanLayer API names it.
    pub call_id: String,
    /// The run it belongs to.
    pub run_id: String,
    /// The session it belongs to.
    pub session_id: String,
    /// Kind.
    #[serde(rename = "type")]
    pub kind: ApprovalType,
    /// State.
    pub status: ApprovalStatus,
    /// Where it lives.
    #[serde(default)]
    pub source: ApprovalSource,
    /// The tool name (function calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_name: Option<String>,
    /// The tool input (function calls; for a question Claude Code asked with its
    /// `AskUserQuestion` tool, that tool's input: each question and its choices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_args: Option<Value>,
    /// The question (human contacts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The Claude tool use id it gates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// When it was requested, RFC 3339.
    pub requested_at: String,
    /// When it times out, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_at: Option<String>,
    /// When it was answered, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responded_at: Option<String>,
    /// The reviewer's comment or answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Which rule decided it, when no person did: `auto_accept_edits` or
    /// `dangerously_skip_permissions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// The nested HumanLayer object of a function call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_call: Option<FunctionCall>,
    /// The nested HumanLayer object of a human contact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub human_contact: Option<HumanContact>,
}

// ---- methods ----

/// Params of `fetchApprovals`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FetchApprovalsParams {
    /// Only this session's approvals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// Result of `fetchApprovals`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FetchApprovalsResult {
    /// Pending approvals; always an array.
    pub approvals: Vec<Approval>,
}

method!(
    /// Pending approvals.
    ///
    /// The approvals waiting for a human, of every session or of one.
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"fetchApprovals","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13"},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"approvals":[{"id":"local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35","call_id":"local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35","run_id":"a3e9d0c4-5b61-4f2e-8c7d-19b0f6e2a845","session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","type":"function_call","status":"pending","source":"local","function_name":"Bash","function_args":{"command":"cargo test"},"tool_use_id":"toolu_01XkR7d3Qm8bW2pZ5vN9sLcT","requested_at":"2025-06-12T09:14:09.802Z","function_call":{"run_id":"a3e9d0c4-5b61-4f2e-8c7d-19b0f6e2a845","call_id":"local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35","spec":{"fn":"Bash","kwargs":{"command":"cargo test"}},"status":{"requested_at":"2025-06-12T09:14:09.802Z"}}}]},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// -32602 when `session_id` names no session (`session not found: …`). From Rust:
    /// `client.fetch_approvals(Some(id))` returns the `approvals` array.
    FetchApprovals, "fetchApprovals", "List pending approvals, optionally of one session",
    ["session_id?: string"], "{approvals: [Approval]}",
    FetchApprovalsParams, FetchApprovalsResult
);

/// The comment a client sends with a denial the person gave no reason for: the daemon (like
/// HumanLayer's) refuses a denial without a comment, and Claude reads it as the reason.
pub const NO_REASON: &str = "The user denied this tool call.";

/// The comment of a cloud approval that was answered in HumanLayer's cloud rather than here:
/// its status is `resolved`, as for one whose session ended, and this comment tells the two
/// apart (the outcome is the cloud's, unknown here).
pub const ANSWERED_ELSEWHERE: &str = "answered elsewhere, in HumanLayer's cloud";

/// Params of `sendDecision`. Validated by the handler so that each violation gets exact data.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SendDecisionParams {
    /// The approval (`approval_id` is accepted as an alias).
    #[serde(
        default,
        alias = "approval_id",
        skip_serializing_if = "Option::is_none"
    )]
    pub call_id: Option<String>,
    /// `function_call` or `human_contact`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `approve` or `deny` (function_call), `respond` (human_contact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// Required for deny (clients send [`NO_REASON`] when the person gave none) and respond.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// Result of `sendDecision`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SendDecisionResult {
    /// Whether the decision was recorded.
    pub success: bool,
    /// Why not, for a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why not, for a program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<RefusalReason>,
}

/// Why `sendDecision` did not record a decision (`success: false`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RefusalReason {
    /// No approval has this id.
    NotFound,
    /// A human already approved, denied or answered it.
    AlreadyDecided,
    /// It was resolved without a decision: its session ended, or it was answered elsewhere
    /// (a cloud approval). Nothing waits for it any more.
    Resolved,
    /// The decision does not fit the approval (a `respond` to a tool call, say).
    WrongType,
    /// The decision could not be delivered or stored; it may be sent again.
    Failed,
    /// A reason this client does not know (from a newer daemon).
    #[serde(other)]
    Unknown,
}

method!(
    /// Decide an approval.
    ///
    /// A function call takes `approve`, or `deny` with a `comment` saying why; a human contact
    /// takes `respond`, with the answer in `comment`. `type` is the approval's [`ApprovalType`].
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"sendDecision","params":{"call_id":"local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35","type":"function_call","decision":"deny","comment":"Run only the parser tests"},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"success":true},"id":1}
    /// ```
    ///
    /// A decision that fits the params but cannot be recorded is not an error: the reply says
    /// `success: false` with a [`RefusalReason`] (`not_found`, `already_decided`, `resolved`,
    /// `wrong_type`, or `failed`, which may be sent again):
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"success":false,"error":"approval local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35 was already decided: approved","reason":"already_decided"},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// -32602 when `call_id`, `type` or `decision` is missing (`call_id is required`), when
    /// `type` is not `function_call` or `human_contact`, when the decision does not fit the type
    /// (`data.accepted` lists the ones that do), or when a `deny` or `respond` has no comment:
    ///
    /// ```json
    /// {"jsonrpc":"2.0","error":{"code":-32602,"message":"comment is required for denial","data":{"param":"comment","expected":"non-empty string","received":"missing"}},"id":1}
    /// ```
    ///
    /// # Example
    ///
    /// ```no_run
    /// use hld_client::protocol::{ApprovalType, RefusalReason, SendDecisionParams};
    /// use hld_client::Client;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = Client::connect_default().await?;
    /// for approval in client.fetch_approvals(None).await? {
    ///     if approval.kind != ApprovalType::FunctionCall {
    ///         continue;
    ///     }
    ///     // Or `client.call::<SendDecision>(params)`, the same call.
    ///     let reply = client
    ///         .send_decision(SendDecisionParams {
    ///             call_id: Some(approval.id.clone()),
    ///             kind: Some(approval.kind.as_str().to_owned()),
    ///             decision: Some("approve".into()),
    ///             comment: None,
    ///         })
    ///         .await?;
    ///     match reply.reason {
    ///         None => println!("approved {}", approval.id),
    ///         Some(RefusalReason::Failed) => eprintln!("not recorded, try again: {:?}", reply.error),
    ///         Some(other) => eprintln!("{}: {other:?}: {:?}", approval.id, reply.error),
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    SendDecision, "sendDecision", "Approve, deny or respond to an approval",
    ["call_id: string", "type: string", "decision: string", "comment?: string"],
    "{success: boolean, error?: string, reason?: \"not_found\"|\"already_decided\"|\"resolved\"|\"wrong_type\"|\"failed\"}",
    SendDecisionParams, SendDecisionResult
);

/// Params of `createApproval`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CreateApprovalParams {
    /// The session asking (from `HUMANLAYER_SESSION_ID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The run asking (from `HUMANLAYER_RUN_ID`). With a `tool_use_id`, a session id is
    /// taken here too, as HumanLayer HEAD's approvals server sends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// `function_call` (default) or `human_contact`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The tool (function calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The tool input (function calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_input: Option<Value>,
    /// The Claude tool use id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// The question (human contacts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Result of `createApproval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateApprovalResult {
    /// The new approval.
    pub approval_id: String,
}

method!(
    /// Record a new approval request.
    ///
    /// Called by the approvals MCP server a session runs (`hld mcp claude_approvals`), which knows
    /// its session from `HUMANLAYER_SESSION_ID` and `HUMANLAYER_RUN_ID` (HumanLayer HEAD's server
    /// sends the session id as `run_id`, with a `tool_use_id`). A `function_call` needs
    /// `tool_name` and `tool_input`; a `human_contact` needs `message`. The new approval is
    /// announced as a `new_approval` event and waits for [`SendDecision`].
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"createApproval","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","run_id":"a3e9d0c4-5b61-4f2e-8c7d-19b0f6e2a845","type":"function_call","tool_name":"Bash","tool_input":{"command":"cargo test"},"tool_use_id":"toolu_01XkR7d3Qm8bW2pZ5vN9sLcT"},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"approval_id":"local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35"},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// -32602 when neither `session_id` nor `run_id` is given (`session_id or run_id is
    /// required`) or the one given names no session (`session not found: …`, `session not found
    /// for run_id: …`), when `type` is neither `function_call` nor `human_contact`, when
    /// `tool_name`, `tool_input` or `message` is missing (`tool_name is required`), or when
    /// `tool_input` is not an object (`tool_input must be a JSON object`). From Rust:
    /// `client.create_approval(params)`.
    CreateApproval, "createApproval", "Create an approval request for a session's tool call or question",
    ["session_id?: string", "run_id?: string", "type?: string", "tool_name?: string", "tool_input?: object",
     "tool_use_id?: string", "message?: string"],
    "{approval_id: string}",
    CreateApprovalParams, CreateApprovalResult
);

/// Params of `getApproval`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetApprovalParams {
    /// The approval.
    pub approval_id: String,
}

/// Result of `getApproval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetApprovalResult {
    /// The approval.
    pub approval: Approval,
}

method!(
    /// One approval.
    ///
    /// Any approval, pending or decided. `approval_id` is its id, or a unique prefix of it,
    /// with or without its leading `local-`: what a person types after seeing a short id.
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"getApproval","params":{"approval_id":"local-9b1e4c7a-5d2f-4a83-8e61-2c0d7f3b9a54"},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"approval":{"id":"local-9b1e4c7a-5d2f-4a83-8e61-2c0d7f3b9a54","call_id":"local-9b1e4c7a-5d2f-4a83-8e61-2c0d7f3b9a54","run_id":"a3e9d0c4-5b61-4f2e-8c7d-19b0f6e2a845","session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","type":"human_contact","status":"responded","source":"local","message":"Which database should the migration target?","requested_at":"2025-06-12T09:20:14.331Z","responded_at":"2025-06-12T09:21:02.876Z","comment":"staging","human_contact":{"run_id":"a3e9d0c4-5b61-4f2e-8c7d-19b0f6e2a845","call_id":"local-9b1e4c7a-5d2f-4a83-8e61-2c0d7f3b9a54","spec":{"msg":"Which database should the migration target?"},"status":{"requested_at":"2025-06-12T09:20:14.331Z","responded_at":"2025-06-12T09:21:02.876Z","response":"staging"}}}},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// -32602 when `approval_id` is missing or empty (`approval_id is required`), names no
    /// approval (`approval not found: …`), or is a prefix of several
    /// (`approval id … is ambiguous`). From Rust: `client.get_approval(id)` returns the
    /// `approval`.
    GetApproval, "getApproval", "Get one approval by id",
    ["approval_id: string"], "{approval: Approval}",
    GetApprovalParams, GetApprovalResult
);
