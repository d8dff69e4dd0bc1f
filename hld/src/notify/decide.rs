//! What needs the user, in one line each, and the quiet period that folds a session's burst:
//! the first item goes out at once, the rest of the period's become one more at its end.

use std::collections::HashMap;
use std::time::Duration;

use hld_client::protocol::{Approval, Event, NotificationKind, SessionStatus, UsageLimit};
use hld_client::view::alert::{cut_line as one_line, waiting_line};
use tokio::time::Instant;

/// One event's worth of something that needs the user, before it is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub kind: NotificationKind,
    pub session_id: String,
    pub run_id: String,
    /// What waits or happened, one line.
    pub text: String,
    /// How to answer, as a command.
    pub answer: Option<String>,
    /// The approval that waits.
    pub approval_id: Option<String>,
}

/// The item an event stands for, if it needs the user: a new approval or question, or a
/// session that completed, failed or stopped at a usage limit.
pub fn item(event: &Event) -> Option<Item> {
    match event {
        Event::NewApproval { approval, .. } => Some(approval_item(approval)),
        Event::SessionStatusChanged {
            session_id,
            run_id,
            old_status,
            new_status,
            error,
            usage_limit,
            ..
        } if old_status != new_status => {
            let (kind, text) = match (new_status, usage_limit) {
                (SessionStatus::Failed, Some(limit)) => {
                    (NotificationKind::UsageLimit, limit_line(limit))
                }
                (SessionStatus::Failed, None) => (
                    NotificationKind::Failed,
                    match error.as_deref().map(str::trim).filter(|e| !e.is_empty()) {
                        Some(error) => format!("Failed: {}", one_line(error)),
                        None => "Failed".to_owned(),
                    },
                ),
                (SessionStatus::Completed, _) => {
                    (NotificationKind::Completed, "Completed".to_owned())
                }
                _ => return None,
            };
            Some(Item {
                kind,
                answer: Some(format!("hlyr send {session_id} \"…\"")),
                session_id: session_id.clone(),
                run_id: run_id.clone(),
                text,
                approval_id: None,
            })
        }
        _ => None,
    }
}

/// A bypass of permissions that ends at `expires_at` (RFC 3339).
pub fn bypass_item(session_id: &str, run_id: &str, expires_at: &str) -> Item {
    let left = hld_client::view::usage::until(expires_at, chrono::Utc::now())
        .map_or_else(String::new, |left| format!(" in {left}"));
    Item {
        kind: NotificationKind::BypassExpiring,
        session_id: session_id.to_owned(),
        run_id: run_id.to_owned(),
        text: format!("Bypass of permissions ends{left}"),
        answer: Some(format!("hlyr settings {session_id}")),
        approval_id: None,
    }
}

/// `usage limit (5h) · resets in 2h 13m`, as the front ends word it.
fn limit_line(limit: &UsageLimit) -> String {
    let text = hld_client::view::usage::limit_text(limit, chrono::Utc::now());
    let mut chars = text.chars();
    chars.next().map_or(text.clone(), |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// An approval that waits, said as [`waiting_line`] says it.
fn approval_item(approval: &Approval) -> Item {
    let (question, text) = waiting_line(approval);
    let (kind, answer) = match question {
        true => (NotificationKind::Question, "respond"),
        false => (NotificationKind::Approval, "approve"),
    };
    Item {
        kind,
        session_id: approval.session_id.clone(),
        run_id: approval.run_id.clone(),
        text,
        answer: Some(format!("hlyr {answer} {}", approval.id)),
        approval_id: Some(approval.id.clone()),
    }
}

/// Items held during a quiet period, sent as one at its end.
#[derive(Debug, Clone, PartialEq)]
pub struct Fold {
    /// The latest held item: the notification takes its kind, answer and approval.
    pub latest: Item,
    /// How many items it stands for.
    pub count: u64,
    /// The latest's text when alone, else `3 more: 2 approvals, completed`.
    pub text: String,
}

/// Each session's quiet period and what it holds.
#[derive(Debug)]
pub struct Folder {
    quiet: Duration,
    sessions: HashMap<String, Quiet>,
}

#[derive(Debug)]
struct Quiet {
    until: Instant,
    held: Vec<Item>,
}

impl Folder {
    pub fn new(quiet: Duration) -> Folder {
        Folder {
            quiet,
            sessions: HashMap::new(),
        }
    }

    /// Takes `item` at `now`: returns it when it goes out at once (no quiet period running
    /// for its session, which then starts one), else holds it.
    pub fn offer(&mut self, item: Item, now: Instant) -> Option<Item> {
        match self.sessions.get_mut(&item.session_id) {
            Some(quiet) if now < quiet.until || !quiet.held.is_empty() => {
                quiet.held.push(item);
                None
            }
            _ => {
                let quiet = Quiet {
                    until: now + self.quiet,
                    held: Vec::new(),
                };
                self.sessions.insert(item.session_id.clone(), quiet);
                Some(item)
            }
        }
    }

    /// Forgets a held approval that was answered: nothing waits for it any more.
    pub fn answered(&mut self, approval_id: &str) {
        for quiet in self.sessions.values_mut() {
            quiet
                .held
                .retain(|item| item.approval_id.as_deref() != Some(approval_id));
        }
    }

    /// When the earliest quiet period ends.
    pub fn next_end(&self) -> Option<Instant> {
        self.sessions.values().map(|q| q.until).min()
    }

    /// Ends the quiet periods due at `now`: each that holds items becomes one fold, and a new
    /// period starts for its session; one that holds none ends.
    pub fn due(&mut self, now: Instant) -> Vec<Fold> {
        let mut folds = Vec::new();
        let quiet = self.quiet;
        self.sessions.retain(|_, period| {
            if period.until > now {
                return true;
            }
            let held = std::mem::take(&mut period.held);
            let count = held.len() as u64;
            let Some(latest) = held.last().cloned() else {
                return false;
            };
            let text = match count {
                1 => latest.text.clone(),
                n => format!("{n} more: {}", summary(&held)),
            };
            folds.push(Fold {
                latest,
                count,
                text,
            });
            period.until = now + quiet;
            true
        });
        folds
    }
}

/// `2 approvals, completed`: each kind held, in the order first held, with its count.
fn summary(held: &[Item]) -> String {
    let mut counts: Vec<(&NotificationKind, u64)> = Vec::new();
    for item in held {
        match counts.iter_mut().find(|(kind, _)| **kind == item.kind) {
            Some((_, n)) => *n += 1,
            None => counts.push((&item.kind, 1)),
        }
    }
    counts
        .iter()
        .map(|(kind, n)| {
            let (one, many) = match kind {
                NotificationKind::Approval => ("approval", "approvals"),
                NotificationKind::Question => ("question", "questions"),
                NotificationKind::Completed => ("completed", "completed"),
                NotificationKind::Failed => ("failed", "failed"),
                NotificationKind::UsageLimit => ("usage limit", "usage limits"),
                NotificationKind::BypassExpiring => ("bypass expiring", "bypass expiring"),
                other => (other.as_str(), other.as_str()),
            };
            match n {
                1 => one.to_owned(),
                n => format!("{n} {many}"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn approval(id: &str, session: &str, tool: &str, input: Value) -> Approval {
        serde_json::from_value(json!({
            "id": id, "call_id": id, "run_id": "r", "session_id": session,
            "type": "function_call", "status": "pending", "function_name": tool,
            "function_args": input, "requested_at": "2026-01-01T00:00:00Z",
        }))
        .unwrap()
    }

    fn item_of(id: &str, session: &str) -> Item {
        approval_item(&approval(id, session, "Bash", json!({"command": "ls"})))
    }

    #[test]
    fn an_approval_says_what_it_would_do_but_never_a_files_content() {
        let write = json!({"file_path": "/src/a.rs", "content": "SECRET=1"});
        let item = approval_item(&approval("a1", "s", "Write", write));
        assert_eq!(item.kind, NotificationKind::Approval);
        assert_eq!(item.text, "Write: /src/a.rs");
        assert_eq!(item.answer.as_deref(), Some("hlyr approve a1"));
        let long = "x ".repeat(200);
        let bash = approval_item(&approval("a2", "s", "Bash", json!({"command": long})));
        assert!(bash.text.ends_with('…') && bash.text.chars().count() < 130);
        let ask = json!({"questions": [{"question": "Which\ndatabase?"}]});
        let ask = approval_item(&approval("a3", "s", "AskUserQuestion", ask));
        assert_eq!(ask.kind, NotificationKind::Question);
        assert_eq!(ask.text, "Asks: Which database?");
        assert_eq!(ask.answer.as_deref(), Some("hlyr respond a3"));
    }

    #[test]
    fn status_changes_notify_only_when_something_ended() {
        let change = |new_status, usage_limit| Event::SessionStatusChanged {
            session_id: "s".into(),
            run_id: "r".into(),
            old_status: SessionStatus::Running,
            new_status,
            parent_session_id: None,
            error: Some("boom".into()),
            usage_limit,
            turn: None,
        };
        assert_eq!(item(&change(SessionStatus::WaitingInput, None)), None);
        let failed = item(&change(SessionStatus::Failed, None)).unwrap();
        assert_eq!(
            (failed.kind, failed.text.as_str()),
            (NotificationKind::Failed, "Failed: boom")
        );
        let limit = UsageLimit {
            kind: hld_client::protocol::RateLimitKind::FiveHour,
            resets_at: None,
        };
        let limited = item(&change(SessionStatus::Failed, Some(limit))).unwrap();
        assert_eq!(limited.kind, NotificationKind::UsageLimit);
        assert_eq!(limited.text, "Usage limit (5h)");
        let done = item(&change(SessionStatus::Completed, None)).unwrap();
        assert_eq!(done.answer.as_deref(), Some("hlyr send s \"…\""));
    }

    #[test]
    fn a_burst_folds_into_one_more_at_the_end_of_the_quiet_period() {
        let quiet = Duration::from_secs(10);
        let mut folder = Folder::new(quiet);
        let t0 = Instant::now();
        assert!(folder.offer(item_of("a1", "s"), t0).is_some());
        for (i, id) in ["a2", "a3", "a4"].iter().enumerate() {
            assert!(folder
                .offer(item_of(id, "s"), t0 + Duration::from_secs(i as u64))
                .is_none());
        }
        // Another session has its own period.
        assert!(folder.offer(item_of("b1", "t"), t0).is_some());
        folder.answered("a3");
        assert_eq!(folder.next_end(), Some(t0 + quiet));
        assert!(folder.due(t0 + Duration::from_secs(9)).is_empty());
        let folds = folder.due(t0 + quiet);
        assert_eq!(folds.len(), 1, "{folds:?}");
        assert_eq!(folds[0].count, 2);
        assert_eq!(folds[0].text, "2 more: 2 approvals");
        assert_eq!(folds[0].latest.approval_id.as_deref(), Some("a4"));
        // A new period started with the fold: the next item is held too.
        assert!(folder.offer(item_of("a5", "s"), t0 + quiet).is_none());
        let folds = folder.due(t0 + quiet * 2);
        assert_eq!((folds[0].count, folds[0].text.as_str()), (1, "Bash: ls"));
        // A period that held nothing ends: the next item goes out at once.
        assert!(folder.due(t0 + quiet * 3).is_empty());
        assert_eq!(folder.next_end(), None);
        assert!(folder.offer(item_of("a6", "s"), t0 + quiet * 3).is_some());
    }

    #[test]
    fn a_summary_counts_each_kind_in_order() {
        let mut done = item_of("x", "s");
        done.kind = NotificationKind::Completed;
        let held = [item_of("a", "s"), done, item_of("b", "s")];
        assert_eq!(summary(&held), "2 approvals, completed");
    }
}
