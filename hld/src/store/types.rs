//! The store's records: what is written (new sessions, updates, events) and what is read back.

use hld_client::protocol::{
    Approval, ApprovalSource, ApprovalType, ConversationEvent, ConversationEventType, DraftState,
    PermissionMode, QueuedMessage, RateLimitWindow, SessionControl, SessionInfo, SessionResult,
    SessionState, SessionStatus, TurnResult, UsageLimit, WorktreeInfo,
};
use serde_json::Value;

use crate::model::{Modes, SessionOptions};

/// A session row to insert (its status starts as `starting`).
#[derive(Debug, Clone, PartialEq)]
pub struct NewSession {
    pub id: String,
    pub run_id: String,
    pub parent_session_id: Option<String>,
    pub query: String,
    /// The prompt shortened (see `summarize`).
    pub summary: String,
    pub options: SessionOptions,
    pub created_at: String,
    pub title: Option<String>,
    pub modes: Modes,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub new: NewSession,
    pub claude_session_id: Option<String>,
    pub status: SessionStatus,
    pub last_activity_at: String,
    pub completed_at: Option<String>,
    pub error_message: Option<String>,
    pub cost_usd: Option<f64>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub duration_ms: Option<i64>,
    pub num_turns: Option<i64>,
    pub result_content: Option<String>,
    pub result_is_error: Option<bool>,
    pub interrupted: bool,
    pub exit_code: Option<i32>,
    /// Hidden from the normal leaf list.
    pub archived: bool,
    pub context: ContextTokens,
    /// Whether a `claude` process serves the session.
    pub live: bool,
    /// Until when its process stays warm between turns, RFC 3339.
    pub live_until: Option<String>,
    /// The worktree it runs in, when isolated.
    pub worktree: Option<WorktreeInfo>,
    /// The usage limit its last turn stopped on (only while it is `failed` by it).
    pub usage_limit: Option<UsageLimit>,
    /// Set on a draft: composed, never run (stored as `completed` with no `completed_at`).
    pub draft: Option<DraftState>,
    /// A draft's editor contents, as its client stored them.
    pub editor_state: Option<String>,
}

/// Prompt-cache and context-window figures of a session, as Claude reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContextTokens {
    pub cache_creation_input_tokens: Option<i64>,
    pub cache_read_input_tokens: Option<i64>,
    /// The last model call's input, cache-creation and cache-read tokens.
    pub effective_context_tokens: Option<i64>,
    pub context_limit: Option<i64>,
}

impl ContextTokens {
    /// These figures, with those set in `later` instead.
    fn merged_with(self, later: ContextTokens) -> ContextTokens {
        ContextTokens {
            cache_creation_input_tokens: later
                .cache_creation_input_tokens
                .or(self.cache_creation_input_tokens),
            cache_read_input_tokens: later
                .cache_read_input_tokens
                .or(self.cache_read_input_tokens),
            effective_context_tokens: later
                .effective_context_tokens
                .or(self.effective_context_tokens),
            context_limit: later.context_limit.or(self.context_limit),
        }
    }
}

/// Fields to change on a session; `None` leaves a field alone. Every update also sets
/// `last_activity_at`. The status moves only by `Store::advance`, under `model::transition`.
/// Cost, tokens, duration and turns are one turn's own figures, added to the session's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionUpdate {
    pub claude_session_id: Option<String>,
    pub model: Option<String>,
    pub error_message: Option<String>,
    pub completed_at: Option<String>,
    pub cost_usd: Option<f64>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub duration_ms: Option<i64>,
    pub num_turns: Option<i64>,
    pub result_content: Option<String>,
    pub result_is_error: Option<bool>,
    pub interrupted: Option<bool>,
    pub exit_code: Option<i32>,
    pub context: ContextTokens,
    /// The skills `claude` listed at `init`: those of its slash commands that are skills.
    pub skills: Option<Vec<String>>,
    /// The permission mode `claude` reported it runs in (`default` or `plan`).
    pub permission_mode: Option<PermissionMode>,
}

impl SessionUpdate {
    /// This update followed by `later`: fields set in `later` win.
    pub fn merged_with(self, later: SessionUpdate) -> SessionUpdate {
        SessionUpdate {
            claude_session_id: later.claude_session_id.or(self.claude_session_id),
            model: later.model.or(self.model),
            error_message: later.error_message.or(self.error_message),
            completed_at: later.completed_at.or(self.completed_at),
            cost_usd: later.cost_usd.or(self.cost_usd),
            input_tokens: later.input_tokens.or(self.input_tokens),
            output_tokens: later.output_tokens.or(self.output_tokens),
            duration_ms: later.duration_ms.or(self.duration_ms),
            num_turns: later.num_turns.or(self.num_turns),
            result_content: later.result_content.or(self.result_content),
            result_is_error: later.result_is_error.or(self.result_is_error),
            interrupted: later.interrupted.or(self.interrupted),
            exit_code: later.exit_code.or(self.exit_code),
            context: self.context.merged_with(later.context),
            skills: later.skills.or(self.skills),
            permission_mode: later.permission_mode.or(self.permission_mode),
        }
    }
}

/// A conversation event to append. The store assigns `id`, `sequence` and `created_at`.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    /// The Claude session it came from ("" before one is known).
    pub claude_session_id: String,
    pub event_type: ConversationEventType,
    pub role: Option<String>,
    pub content: Option<String>,
    pub tool_id: Option<String>,
    pub tool_name: Option<String>,
    /// Tool input as JSON text (tool calls).
    pub tool_input_json: Option<String>,
    /// The tool use answered (tool results).
    pub tool_result_for_id: Option<String>,
    pub tool_result_content: Option<String>,
    pub is_error: bool,
    /// The Task tool use it ran under.
    pub parent_tool_use_id: Option<String>,
    /// What a `system` event reports (`api_retry`).
    pub subtype: Option<String>,
}

impl NewEvent {
    /// An event of `event_type` with every optional field empty.
    pub fn new(claude_session_id: &str, event_type: ConversationEventType) -> Self {
        NewEvent {
            claude_session_id: claude_session_id.to_owned(),
            event_type,
            role: None,
            content: None,
            tool_id: None,
            tool_name: None,
            tool_input_json: None,
            tool_result_for_id: None,
            tool_result_content: None,
            is_error: false,
            parent_tool_use_id: None,
            subtype: None,
        }
    }

    pub fn message(claude_session_id: &str, role: &str, content: impl Into<String>) -> Self {
        NewEvent {
            role: Some(role.to_owned()),
            content: Some(content.into()),
            ..Self::new(claude_session_id, ConversationEventType::Message)
        }
    }
}

/// Everything one stream line (or a burst of lines) writes, applied in one transaction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ingest {
    /// Lines exactly as Claude printed them.
    pub raw_lines: Vec<String>,
    pub events: Vec<NewEvent>,
    /// A session update, applied after the events.
    pub update: Option<SessionUpdate>,
    /// The turn these lines end, applied after the update.
    pub turn_end: Option<TurnEnd>,
    /// What the turn these lines end cost, one entry per model (none: no turn ended).
    pub usage: Vec<super::TurnUsage>,
    /// Usage-limit windows `claude` reported (`rate_limit_event`), stored when changed.
    pub rate_limits: Vec<RateLimitWindow>,
}

/// A turn's end: its `result` arrived.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnEnd {
    /// Why the turn failed, if it did (an interrupted one did not).
    pub error: Option<String>,
    /// `Some`: the process stays warm until then (RFC 3339). `None`: the next turn starts at
    /// once, with a message already handed to the process.
    pub live_until: Option<String>,
    /// The usage limit that refused the turn, when one did.
    pub usage_limit: Option<UsageLimit>,
}

/// An approval to store. The store fills `run_id` from the session and starts it `pending`.
#[derive(Debug, Clone, PartialEq)]
pub struct NewApproval {
    /// Its id (`local-<uuid>`, or the cloud `call_id`).
    pub id: String,
    pub session_id: String,
    pub kind: ApprovalType,
    pub source: ApprovalSource,
    /// The tool name (function calls; required for them).
    pub tool_name: Option<String>,
    pub tool_input: Option<Value>,
    /// The Claude tool use id it gates; without one, a function call gates the session's newest
    /// recent `tool_call` of that tool not completed nor gated yet (`Store::create_approval`).
    pub tool_use_id: Option<String>,
    pub message: Option<String>,
    /// An optional subject line (human contacts).
    pub subject: Option<String>,
    pub requested_at: String,
    pub timeout_at: Option<String>,
}

impl NewApproval {
    /// A pending local approval of `kind`, requested now, with nothing asked yet.
    fn asking(id: &str, session_id: &str, kind: ApprovalType) -> Self {
        NewApproval {
            id: id.to_owned(),
            session_id: session_id.to_owned(),
            kind,
            source: ApprovalSource::Local,
            tool_name: None,
            tool_input: None,
            tool_use_id: None,
            message: None,
            subject: None,
            requested_at: crate::time::now(),
            timeout_at: None,
        }
    }

    /// A pending permission request for a tool call, requested now.
    pub fn function_call(
        id: &str,
        session_id: &str,
        tool_name: &str,
        tool_input: Value,
        tool_use_id: Option<&str>,
    ) -> Self {
        NewApproval {
            tool_name: Some(tool_name.to_owned()),
            tool_input: Some(tool_input),
            tool_use_id: tool_use_id.map(str::to_owned),
            ..Self::asking(id, session_id, ApprovalType::FunctionCall)
        }
    }

    /// A pending question to the human, requested now.
    pub fn human_contact(id: &str, session_id: &str, message: &str) -> Self {
        NewApproval {
            message: Some(message.to_owned()),
            ..Self::asking(id, session_id, ApprovalType::HumanContact)
        }
    }
}

/// One thing a committed write changed, in the order subscribers hear of them; the store hands
/// them to its [`Sink`](super::Sink) only once the write is committed.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A session's status moved from `old_status`; `error` is the message it failed with;
    /// `turn`, the figures of the turn a `result` ended with this move.
    Session {
        old_status: SessionStatus,
        session: Box<SessionRow>,
        error: Option<String>,
        turn: Option<TurnResult>,
    },
    /// A session's `claude` reported a usage-limit window that differs from the stored one.
    RateLimit {
        session_id: String,
        run_id: String,
        window: Box<RateLimitWindow>,
    },
    /// A conversation event of run `run_id` was stored, or its approval status changed.
    Conversation {
        run_id: String,
        event: Box<ConversationEvent>,
    },
    /// An approval was stored (`created`) or decided; `pending`: how many of every session are
    /// now pending.
    Approval {
        approval: Box<Approval>,
        pending: u64,
        created: bool,
    },
    /// A session's title, archive state or approval modes changed; `expired`: its bypass ran out.
    Settings {
        session: Box<SessionRow>,
        expired: bool,
    },
    /// A message sent into session run `run_id` was queued, delivered, cancelled or given up.
    Message {
        run_id: String,
        message: Box<QueuedMessage>,
    },
}

/// Collapses whitespace and cuts to 50 characters (47 + `...`), as the Go daemon did.
pub fn summarize(query: &str) -> String {
    let collapsed = query.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= 50 {
        collapsed
    } else {
        let mut s: String = collapsed.chars().take(47).collect();
        s.push_str("...");
        s
    }
}

impl SessionRow {
    /// The working directory as text (`None` for rows stored without one).
    fn working_dir(&self) -> Option<String> {
        let dir = &self.new.options.working_dir;
        (!dir.as_os_str().is_empty()).then(|| dir.display().to_string())
    }

    fn result(&self) -> Option<SessionResult> {
        let has_result = self.result_content.is_some()
            || self.num_turns.is_some()
            || self.cost_usd.is_some()
            || self.duration_ms.is_some();
        has_result.then(|| SessionResult {
            kind: "result".into(),
            subtype: "session_completed".into(),
            total_cost_usd: self.cost_usd.unwrap_or_default(),
            is_error: self.result_is_error.unwrap_or(false) || self.status == SessionStatus::Failed,
            duration_ms: self.duration_ms.unwrap_or_default(),
            duration_api_ms: 0,
            num_turns: self.num_turns.unwrap_or_default(),
            result: self.result_content.clone().unwrap_or_default(),
            session_id: self.claude_session_id.clone().unwrap_or_default(),
            error: self.error_message.clone(),
        })
    }

    /// The `listSessions` shape, under the status rule of lists (see [`SessionInfo`]).
    pub fn to_info(&self) -> SessionInfo {
        let interrupting = self.status == SessionStatus::Completing;
        SessionInfo {
            live: self.live,
            live_until: self.live_until.clone(),
            id: self.new.id.clone(),
            run_id: self.new.run_id.clone(),
            claude_session_id: self.claude_session_id.clone(),
            parent_session_id: self.new.parent_session_id.clone(),
            status: if interrupting {
                SessionStatus::Running
            } else {
                self.status.clone()
            },
            interrupting,
            start_time: self.new.created_at.clone(),
            end_time: self.completed_at.clone(),
            last_activity_at: self.last_activity_at.clone(),
            error: self.error_message.clone(),
            query: self.new.query.clone(),
            summary: self.new.summary.clone(),
            model: self.new.options.model.clone(),
            working_dir: self.working_dir(),
            result: self.result(),
            interrupted: self.interrupted,
            cost_usd: self.cost_usd,
            usage_limit: self.usage_limit.clone(),
            effective_context_tokens: self.context.effective_context_tokens,
            context_limit: self.context.context_limit,
            worktree: self.worktree.clone(),
            control: self.control(),
        }
    }

    /// The title shown: the one given, else the query's first line.
    pub fn title(&self) -> String {
        match &self.new.title {
            Some(title) => title.clone(),
            None => self
                .new
                .query
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_owned(),
        }
    }

    /// Title, archive state and approval modes, as sent.
    pub fn control(&self) -> SessionControl {
        let modes = &self.new.modes;
        SessionControl {
            title: self.title(),
            archived: self.archived,
            auto_accept_edits: modes.auto_accept_edits,
            dangerously_skip_permissions: modes.dangerously_skip_permissions,
            dangerously_skip_permissions_expires_at: modes.bypass_expires_at.clone(),
            additional_directories: self
                .new
                .options
                .additional_directories
                .iter()
                .map(|d| d.display().to_string())
                .collect(),
            permission_mode: modes.permission_mode.clone(),
            resume_on_reset: modes.resume_on_reset,
            draft: self.draft.clone(),
            editor_state: self.editor_state.clone(),
        }
    }

    /// The `getSessionState` shape.
    pub fn to_state(&self) -> SessionState {
        let total_tokens = match (self.input_tokens, self.output_tokens) {
            (None, None) => None,
            (i, o) => Some(i.unwrap_or(0) + o.unwrap_or(0)),
        };
        SessionState {
            live: self.live,
            live_until: self.live_until.clone(),
            id: self.new.id.clone(),
            run_id: self.new.run_id.clone(),
            claude_session_id: self.claude_session_id.clone(),
            parent_session_id: self.new.parent_session_id.clone(),
            status: self.status.clone(),
            query: self.new.query.clone(),
            summary: self.new.summary.clone(),
            model: self.new.options.model.clone(),
            working_dir: self.working_dir(),
            created_at: self.new.created_at.clone(),
            last_activity_at: self.last_activity_at.clone(),
            completed_at: self.completed_at.clone(),
            error_message: self.error_message.clone(),
            cost_usd: self.cost_usd,
            total_tokens,
            duration_ms: self.duration_ms,
            num_turns: self.num_turns,
            result_content: self.result_content.clone(),
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            interrupted: self.interrupted,
            exit_code: self.exit_code,
            max_turns: self.new.options.max_turns,
            permission_prompt_tool: self.new.options.permission_prompt_tool.clone(),
            cache_creation_input_tokens: self.context.cache_creation_input_tokens,
            cache_read_input_tokens: self.context.cache_read_input_tokens,
            effective_context_tokens: self.context.effective_context_tokens,
            context_limit: self.context.context_limit,
            usage_limit: self.usage_limit.clone(),
            worktree: self.worktree.clone(),
            control: self.control(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_collapses_whitespace_and_cuts_at_50_chars() {
        assert_eq!(summarize("  hello \n\t world  "), "hello world");
        let long = "é".repeat(60);
        let s = summarize(&long);
        assert_eq!(s.chars().count(), 50);
        assert!(s.ends_with("..."));
        assert_eq!(summarize(&"x".repeat(50)), "x".repeat(50));
    }
}
