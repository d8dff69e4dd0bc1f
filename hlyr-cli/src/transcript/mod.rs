//! The text of a followed session: conversation events, approvals, decisions and the outcome,
//! as `launch`, `continue` and `conversation` print them without `--json`. Every string from
//! the daemon is [`clean`]ed before it is styled.

pub mod tool_input;

use hld_client::protocol::{
    Approval, ApprovalStatus, ApprovalType, ConversationEvent, ConversationEventType,
    MessageStatus, QueuedMessage, SessionStatus, ANSWERED_ELSEWHERE,
};
use hld_client::view::usage::limit_text;
use hld_client::view::{
    clean, count, questions_of, tool_result_text, Question, ToolInput, FOLD_LINES, SEVERAL,
};

use crate::output::{
    cost, paint, short_id, shorten, status, Render, Update, API_RETRY, BOLD, CYAN, DIM, GREEN,
    MAGENTA, RED, YELLOW,
};
use crate::session::{Session, State};
use tool_input::View;

impl Render for Update {
    fn human(&self) -> String {
        match self {
            Update::Started {
                session_id,
                run_id,
                parent_session_id,
                worktree,
                from,
            } => {
                let mut text = format!(
                    "{} {session_id}\n{} {run_id}",
                    paint(BOLD, "Session"),
                    paint(BOLD, "Run    ")
                );
                if let Some(parent) = parent_session_id {
                    text.push_str(&format!("\n{} {parent}", paint(DIM, "Continues")));
                }
                if let Some(w) = worktree {
                    let commit: String = clean(&w.base_commit).chars().take(8).collect();
                    let start = match from.as_deref().filter(|f| *f != w.base_branch) {
                        Some(from) => format!(
                            "from {} at {commit}, merges into {}",
                            clean(from),
                            clean(&w.base_branch)
                        ),
                        None => format!("from {} at {commit}", clean(&w.base_branch)),
                    };
                    text.push_str(&format!(
                        "\n{} {} at {} ({start})",
                        paint(BOLD, "Branch "),
                        clean(&w.branch),
                        clean(&w.path),
                    ));
                }
                text
            }
            Update::Event(event) => event_text(event),
            Update::Status {
                old_status,
                new_status,
                error,
                ..
            } => {
                // The end is told by `Finished`; waiting on approvals by the approval lines.
                let waiting = SessionStatus::WaitingInput;
                if !new_status.is_active() || *new_status == waiting || *old_status == waiting {
                    return String::new();
                }
                let mut text = format!("{} {}", paint(DIM, "· status:"), status(new_status));
                if let Some(error) = error {
                    text.push_str(&format!(" {}", paint(RED, error)));
                }
                text
            }
            Update::Approval(a) => approval_text(a, true),
            // A rule's denial (plan mode refuses edits) tells the agent why in its result.
            Update::Decision {
                approval_id,
                decision: ApprovalStatus::Denied,
                decided_by: Some(rule),
                ..
            } => format!(
                "{} {}",
                paint(RED, format!("✗ denied automatically ({rule})")),
                short_id(approval_id)
            ),
            Update::Decision {
                approval_id,
                decided_by: Some(rule),
                ..
            } => format!(
                "{} {}",
                paint(GREEN, format!("✓ approved automatically ({rule})")),
                short_id(approval_id)
            ),
            Update::Decision {
                approval_id,
                decision,
                comment,
                decided_by: None,
            } => {
                let (style, mark, word) = match decision {
                    ApprovalStatus::Approved => (GREEN, "✓", "approved"),
                    ApprovalStatus::Denied => (RED, "✗", "denied"),
                    ApprovalStatus::Responded => (GREEN, "✓", "answered"),
                    ApprovalStatus::Pending => (DIM, "?", "pending"),
                    // Nobody decided it here: a cloud approval answered in the cloud (its
                    // comment says so), or one that ended with its session.
                    ApprovalStatus::Resolved if comment.as_deref() == Some(ANSWERED_ELSEWHERE) => {
                        (DIM, "·", "answered elsewhere")
                    }
                    ApprovalStatus::Resolved => (DIM, "·", "ended with its session"),
                    // A decision this version does not know.
                    other => (DIM, "·", other.as_str()),
                };
                let mut text = format!(
                    "{} {}",
                    paint(style, format!("{mark} {word}")),
                    short_id(approval_id)
                );
                if let Some(comment) = comment
                    .as_deref()
                    .filter(|c| !c.is_empty() && *c != ANSWERED_ELSEWHERE)
                {
                    let answered = *decision == ApprovalStatus::Responded;
                    text.push_str(&format!(": {}", said_with(answered, comment)));
                }
                text
            }
            Update::BypassExpired { .. } => paint(
                YELLOW,
                "⚠ bypass of permissions expired: tool calls are asked again",
            ),
            Update::Mode { mode, .. } => mode_text(mode),
            Update::Message(message) => message_text(message),
            Update::Finished(state) => finished_text(state),
        }
    }
}

/// The mode a session moved to.
pub fn mode_text(mode: &str) -> String {
    format!("{} {}", paint(CYAN, "◆ mode:"), paint(BOLD, mode))
}

/// A message sent into the session, as its status changes. A delivered one says nothing:
/// the turn it starts shows it as the user's message.
fn message_text(message: &QueuedMessage) -> String {
    let text = hang(&message.text, 2);
    match message.status {
        MessageStatus::Queued => format!(
            "{} {text} {}",
            paint(YELLOW, "⧗ queued:"),
            paint(DIM, "(sent when the turn ends)")
        ),
        MessageStatus::Delivered => String::new(),
        MessageStatus::Cancelled => paint(DIM, format!("· cancelled: {text}")),
        _ => {
            let why = clean(message.error.as_deref().unwrap_or("no reason given"));
            format!("{} {text} ({why})", paint(RED, "✗ not delivered:"))
        }
    }
}

/// A tool call's input, if it is one that a view reads (a question, here).
fn tool_input(event: &ConversationEvent) -> Option<ToolInput> {
    if event.event_type != ConversationEventType::ToolCall {
        return None;
    }
    let input: serde_json::Value = serde_json::from_str(event.tool_input_json.as_deref()?).ok()?;
    Some(ToolInput::of(event.tool_name.as_deref()?, &input))
}

/// The question a tool call asks the human, if it is one (`AskUserQuestion`,
/// `contact_human`): shown as the question, not as the tool's raw input. It reads as the
/// message of the approval that asks it.
pub fn question(event: &ConversationEvent) -> Option<String> {
    tool_input(event)?.question_text()
}

/// What a question's tool call asks with the choices it offers: each question, its choices a
/// line each below it, numbered; `None` when it offers none (its text says it all).
pub fn asked(event: &ConversationEvent) -> Option<String> {
    match tool_input(event) {
        Some(ToolInput::Questions(questions)) => with_choices(&questions),
        _ => None,
    }
}

/// Each question with its choices below it, numbered (a choice's number answers too); `None`
/// when none offers a choice. Plain text: what is shown of it is cleaned (see `hang`).
fn with_choices(questions: &[Question]) -> Option<String> {
    if questions.iter().all(|q| q.choices.is_empty()) {
        return None;
    }
    let choice = |(n, (label, meaning)): (usize, &(String, Option<String>))| match meaning {
        Some(meaning) => format!("{}. {label} — {meaning}", n + 1),
        None => format!("{}. {label}", n + 1),
    };
    let lines: Vec<String> = questions
        .iter()
        .flat_map(|q| {
            let choices = q.choices.iter().enumerate().map(choice);
            let several = q.several.then(|| SEVERAL.to_owned());
            std::iter::once(q.text.clone())
                .chain(choices)
                .chain(several)
        })
        .collect();
    Some(lines.join("\n"))
}

/// A question's approval: `? question ID:` and what it asks with its choices (its own tool
/// input's, else `asked`, its tool call's as stored), else its message.
pub fn question_approval_text(approval: &Approval, asked: Option<&str>) -> String {
    let own = questions_of(approval).and_then(|questions| with_choices(&questions));
    let asked =
        (own.as_deref().or(asked)).unwrap_or(approval.message.as_deref().unwrap_or_default());
    question_text(Some(&approval.id), asked)
}

/// `? question ID:` and what is asked below it. A question is named by its approval's id
/// wherever it shows (a replayed one too), as `hlyr respond` takes it; one without an
/// approval is `? question:`.
fn question_text(approval_id: Option<&str>, asked: &str) -> String {
    let head = match approval_id {
        Some(id) => format!("? question {}:", short_id(id)),
        None => "? question:".to_owned(),
    };
    format!("{} {}", paint(MAGENTA, head), hang(asked, 2))
}

fn event_text(event: &ConversationEvent) -> String {
    let content = clean(event.content.as_deref().unwrap_or_default());
    match event.event_type {
        ConversationEventType::Message => match event.role.as_deref() {
            Some("user") => user_message(&content),
            Some("assistant") => content.into_owned(),
            _ => paint(DIM, format!("system: {content}")),
        },
        ConversationEventType::ToolCall if question(event).is_some() => {
            let asked = asked(event).or_else(|| question(event)).unwrap_or_default();
            question_text(event.approval_id.as_deref(), &asked)
        }
        ConversationEventType::ToolCall => {
            let name = event.tool_name.as_deref().unwrap_or("tool");
            let view = View::of_json_text(name, event.tool_input_json.as_deref().unwrap_or("null"));
            view.under(&paint(YELLOW, format!("→ {name}")), false)
        }
        ConversationEventType::ToolResult => {
            let result = shorten(&clean(tool_result_text(event)));
            if event.is_error {
                format!("  {} {}", paint(RED, "← error:"), hang(&result, 4))
            } else {
                format!("  {} {}", paint(DIM, "←"), hang(&result, 4))
            }
        }
        ConversationEventType::Thinking => {
            paint(DIM, format!("thinking: {}", hang(&shorten(&content), 2)))
        }
        ConversationEventType::System if event.subtype.as_deref() == Some(API_RETRY) => {
            paint(YELLOW, format!("↻ {content}"))
        }
        ConversationEventType::System => paint(DIM, format!("system: {content}")),
        // A kind this version does not know: its text.
        _ => paint(DIM, content),
    }
}

/// A user's message after `>`: a long one, a paste most often, cut to its first
/// [`FOLD_LINES`] lines as a tool's input is, saying how many more (`--json` has them all).
fn user_message(content: &str) -> String {
    let total = content.lines().count();
    let kept = match total > FOLD_LINES + 1 {
        true => content
            .lines()
            .take(FOLD_LINES)
            .collect::<Vec<_>>()
            .join("\n"),
        false => content.to_owned(),
    };
    let mut text = format!("{} {}", paint(BOLD, ">"), paint(BOLD, hang(&kept, 2)));
    if total > FOLD_LINES + 1 {
        let more = count((total - FOLD_LINES) as u64, "more line");
        text.push_str(&format!("\n  {}", paint(DIM, format!("… {more}"))));
    }
    text
}

/// An approval's line. Its tool's input follows, cut, when `with_input` (when its tool call,
/// which shows the input, was not printed).
pub fn approval_text(approval: &Approval, with_input: bool) -> String {
    let id = short_id(&approval.id);
    match approval.kind {
        ApprovalType::FunctionCall => {
            let name = approval.function_name.as_deref().unwrap_or("tool");
            let line = format!(
                "{} {}",
                paint(MAGENTA, format!("? approval {id}:")),
                paint(BOLD, name)
            );
            if with_input {
                approval_input(approval).under(&line, false)
            } else {
                line
            }
        }
        ApprovalType::HumanContact => question_approval_text(approval, None),
        // A kind this version does not know.
        other => paint(MAGENTA, format!("? approval {id} ({})", other.as_str())),
    }
}

/// The view of a function call approval's tool input.
pub fn approval_input(approval: &Approval) -> View {
    View::of(
        approval.function_name.as_deref().unwrap_or_default(),
        approval
            .function_args
            .as_ref()
            .unwrap_or(&serde_json::Value::Null),
    )
}

fn finished_text(session: &Session) -> String {
    match (&session.status, &session.usage_limit) {
        (State::Failed, Some(limit)) => {
            let limit = limit_text(limit, chrono::Utc::now());
            let limit = clean(&limit);
            let resume = if session.control.resume_on_reset {
                paint(DIM, " (the daemon resumes it then)")
            } else {
                String::new()
            };
            return format!("{} {limit}{resume}", paint(YELLOW.bold(), "✗ stopped:"));
        }
        (State::Failed, None) => {
            let error = clean(session.error.as_deref().unwrap_or("no error message"));
            return format!("{} {error}", paint(RED.bold(), "✗ failed:"));
        }
        (State::Interrupted, _) => return paint(YELLOW.bold(), "■ interrupted"),
        _ => {}
    }
    let mut parts = vec![paint(GREEN.bold(), "✓ completed")];
    if let Some(turns) = session.num_turns {
        parts.push(count(turns as u64, "turn"));
    }
    if session.cost_usd.is_some() {
        parts.push(cost(session.cost_usd));
    }
    if let Some(ms) = session.duration_ms {
        parts.push(format!("{:.1}s", ms as f64 / 1000.0));
    }
    parts.join(&paint(DIM, " · "))
}

/// `text` cleaned, every line after the first indented by `indent` spaces.
/// What was said with a decision, as its line ends: answers to several questions (a line
/// each) read as one line, apart by `·`; any other comment hangs under the line. Cleaned.
pub fn said_with(answered: bool, comment: &str) -> String {
    match answered {
        true => hang(&comment.lines().collect::<Vec<_>>().join(" · "), 2),
        false => hang(comment, 2),
    }
}

fn hang(text: &str, indent: usize) -> String {
    clean(text).replace('\n', &format!("\n{:indent$}", ""))
}

#[cfg(test)]
mod tests;
