//! A session as hlyr prints it: one JSON shape whichever command prints it (`show`,
//! `sessions`, `search`, `prune`, the end of a followed session), built from the daemon's list
//! entry or its full state alike, and the status word that tells an interrupted or failed
//! session from a completed one.

use chrono::{DateTime, Utc};
use hld_client::protocol::{
    SessionControl, SessionInfo, SessionState, SessionStatus, UsageLimit, WorktreeInfo,
};
use hld_client::view::clean;
use hld_client::view::usage::{context_share, limit_text, until, window_name, CONTEXT_WARNING};
use serde::Serialize;

use crate::output::{paint, CYAN, DIM, GREEN, MAGENTA, RED, YELLOW};

/// What a session is doing, or how it ended: the daemon's status, with an interrupt (asked
/// for, or what ended it) told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Starting,
    Running,
    WaitingInput,
    /// An interrupt was asked for; the process is winding down.
    Interrupting,
    Completed,
    /// Ended by an interrupt.
    Interrupted,
    Failed,
    /// A status this version does not know (from a newer daemon).
    Unknown,
}

impl State {
    /// The state of a session with this status (lists report one being interrupted as
    /// `running` with `interrupting`; its state says `completing`).
    fn of(status: SessionStatus, interrupting: bool, interrupted: bool) -> State {
        match status {
            _ if interrupting && status.is_active() => State::Interrupting,
            SessionStatus::Starting => State::Starting,
            SessionStatus::Running => State::Running,
            SessionStatus::WaitingInput => State::WaitingInput,
            SessionStatus::Completing => State::Interrupting,
            SessionStatus::Completed if interrupted => State::Interrupted,
            SessionStatus::Completed => State::Completed,
            SessionStatus::Failed => State::Failed,
            _ => State::Unknown,
        }
    }

    /// The word, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Starting => "starting",
            State::Running => "running",
            State::WaitingInput => "waiting_input",
            State::Interrupting => "interrupting",
            State::Completed => "completed",
            State::Interrupted => "interrupted",
            State::Failed => "failed",
            State::Unknown => "unknown",
        }
    }

    /// The word in its colour.
    pub fn painted(self) -> String {
        let style = match self {
            State::Completed => GREEN,
            State::Failed => RED.bold(),
            State::Interrupted | State::Interrupting => YELLOW,
            State::WaitingInput => MAGENTA,
            State::Running | State::Starting => CYAN,
            State::Unknown => DIM,
        };
        paint(style, self.as_str())
    }
}

/// A session. Fields the daemon did not report are left out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Session {
    pub id: String,
    pub run_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claude_session_id: Option<String>,
    pub status: State,
    pub query: String,
    pub summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    pub created_at: String,
    /// The last activity: lists are sorted by it, and ages count from it.
    pub last_activity_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The usage limit that stopped a `failed` session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_limit: Option<UsageLimit>,
    /// Claude's final text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_turns: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
    /// The context the last model call used, in tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_context_tokens: Option<i64>,
    /// The model's context window, in tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_limit: Option<i64>,
    /// The git worktree of an isolated session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreeInfo>,
    /// Title, archive state, approval modes and extra directories.
    #[serde(flatten)]
    pub control: SessionControl,
}

/// The title a session is shown by: the one set, else its summary, else its query; its first
/// line, cleaned and cut as tables cut titles.
pub fn shown_title(title: &str, summary: &str, query: &str) -> String {
    let shown = [title, summary, query]
        .into_iter()
        .find(|t| !t.trim().is_empty())
        .unwrap_or_default();
    crate::output::title(&clean(shown))
}

impl Session {
    /// The title this session is shown by (see [`shown_title`]).
    pub fn shown_title(&self) -> String {
        shown_title(&self.control.title, &self.summary, &self.query)
    }

    /// The status in its colour; a session stopped by a usage limit shows the limit and when
    /// it resets instead of an ordinary failure, a draft its draft state.
    pub fn status_text(&self) -> String {
        self.status_in(limit_text)
    }

    /// The status as a table's cell: [`Session::status_text`], but a usage limit in a few
    /// characters (`5h limit ↻2h 0m`), so that one such session does not narrow every title.
    pub fn status_cell(&self) -> String {
        self.status_in(|limit, now| {
            let left = limit.resets_at.as_deref().and_then(|at| until(at, now));
            let reset = left.map_or_else(String::new, |left| format!(" ↻{left}"));
            format!("{} limit{reset}", window_name(&limit.kind))
        })
    }

    fn status_in(&self, limited: impl Fn(&UsageLimit, DateTime<Utc>) -> String) -> String {
        if let Some(draft) = &self.control.draft {
            return paint(DIM, draft.as_str());
        }
        match &self.usage_limit {
            // The window's name comes from the daemon when this version does not know it.
            Some(limit) if self.status == State::Failed => {
                paint(YELLOW.bold(), clean(&limited(limit, Utc::now())))
            }
            _ => self.status.painted(),
        }
    }

    /// The share of its context window the last model call used (`43%`), as a warning at
    /// [`CONTEXT_WARNING`] and above; `None` when not known.
    pub fn context_text(&self) -> Option<String> {
        let share = context_share(self.effective_context_tokens, self.context_limit)?;
        let text = format!("{:.0}%", share * 100.0);
        Some(if share >= CONTEXT_WARNING {
            paint(YELLOW.bold(), text)
        } else {
            text
        })
    }
}

impl From<SessionInfo> for Session {
    fn from(s: SessionInfo) -> Session {
        let result = s.result;
        Session {
            status: State::of(s.status, s.interrupting, s.interrupted),
            id: s.id,
            run_id: s.run_id,
            parent_session_id: s.parent_session_id,
            claude_session_id: s.claude_session_id,
            query: s.query,
            summary: s.summary,
            model: s.model,
            working_dir: s.working_dir,
            created_at: s.start_time,
            last_activity_at: s.last_activity_at,
            ended_at: s.end_time,
            error: s.error,
            usage_limit: s.usage_limit,
            result: result
                .as_ref()
                .map(|r| r.result.clone())
                .filter(|r| !r.is_empty()),
            cost_usd: s.cost_usd,
            num_turns: result.as_ref().map(|r| r.num_turns),
            duration_ms: result.as_ref().map(|r| r.duration_ms),
            effective_context_tokens: s.effective_context_tokens,
            context_limit: s.context_limit,
            worktree: s.worktree,
            control: s.control,
        }
    }
}

impl From<SessionState> for Session {
    fn from(s: SessionState) -> Session {
        Session {
            status: State::of(s.status, false, s.interrupted),
            id: s.id,
            run_id: s.run_id,
            parent_session_id: s.parent_session_id,
            claude_session_id: s.claude_session_id,
            query: s.query,
            summary: s.summary,
            model: s.model,
            working_dir: s.working_dir,
            created_at: s.created_at,
            last_activity_at: s.last_activity_at,
            ended_at: s.completed_at,
            error: s.error_message,
            usage_limit: s.usage_limit,
            result: s.result_content,
            cost_usd: s.cost_usd,
            num_turns: s.num_turns,
            duration_ms: s.duration_ms,
            effective_context_tokens: s.effective_context_tokens,
            context_limit: s.context_limit,
            worktree: s.worktree,
            control: s.control,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupts_are_told_apart_from_completion_and_failure() {
        use SessionStatus as S;
        assert_eq!(State::of(S::Completed, false, false), State::Completed);
        assert_eq!(State::of(S::Completed, false, true), State::Interrupted);
        assert_eq!(State::of(S::Failed, false, true), State::Failed);
        assert_eq!(State::of(S::Running, true, false), State::Interrupting);
        assert_eq!(State::of(S::Completing, false, false), State::Interrupting);
        // A stale `interrupting` on a session that ended says how it ended.
        assert_eq!(State::of(S::Completed, true, true), State::Interrupted);
        assert_eq!(
            State::of(S::WaitingInput, false, false),
            State::WaitingInput
        );
    }

    fn failed(limit: Option<serde_json::Value>) -> Session {
        let info: SessionInfo = serde_json::from_value(serde_json::json!({
            "id": "s", "run_id": "r", "status": "failed", "query": "q", "summary": "",
            "start_time": "2026-11-29T10:00:00Z", "last_activity_at": "2026-11-29T10:00:00Z",
            "usage_limit": limit, "effective_context_tokens": 170_000, "context_limit": 200_000,
        }))
        .unwrap();
        info.into()
    }

    #[test]
    fn a_usage_limit_shows_as_a_limit_and_a_full_context_warns() {
        let plain = |t: String| anstream::adapter::strip_str(&t).to_string();
        let in_2h = (chrono::Utc::now() + chrono::Duration::seconds(2 * 3600 + 30)).to_rfc3339();
        let limited = failed(Some(
            serde_json::json!({"kind": "five_hour", "resets_at": in_2h}),
        ));
        assert_eq!(
            plain(limited.status_text()),
            "usage limit (5h) · resets in 2h 0m"
        );
        assert_eq!(plain(limited.status_cell()), "5h limit ↻2h 0m");
        assert_eq!(plain(failed(None).status_text()), "failed");
        // 85%, at or above the warning share: painted.
        let share = limited.context_text().unwrap();
        assert_eq!(plain(share.clone()), "85%");
        assert_ne!(share, "85%");
        let mut roomy = failed(None);
        roomy.effective_context_tokens = Some(20_000);
        assert_eq!(roomy.context_text().unwrap(), "10%");
        roomy.context_limit = None;
        assert_eq!(roomy.context_text(), None);
    }
}
