//! What the front ends (`hlyr`, `hld-tui`) show of the daemon's data, without I/O or styles:
//! [`clean`] makes any string from the daemon safe for a terminal, and [`ToolInput`] is a tool
//! call's input as Claude Code shows it (Bash's command, Write's content, an edit's [`diff`], a
//! question and its choices), every string in it cleaned; [`tool_result_text`] is its result's
//! text as Claude Code shows it.
//!
//! An agent's output is untrusted: an escape sequence in it could move the cursor, rewrite the
//! screen or set the window title. Every string from the daemon passes through [`clean`]
//! before it reaches a terminal. [`usage`] words context shares, usage limits and windows;
//! [`alert`] is the escape that tells a terminal the daemon notified; [`in_checkout`] is where
//! an isolated session works, as its user knows the place.

pub mod alert;
mod choice;
mod place;
pub mod usage;

pub use choice::read_choice;
pub use place::in_checkout;

use std::borrow::Cow;

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use crate::protocol::{Approval, ApprovalType, ConversationEvent, ConversationEventType};

/// Lines a folded text (a long message, tool input or result) keeps in hlyr and hld-tui alike.
/// Ten: enough to recognise a paste or a file's start, and most of a 24-row screen stays free.
pub const FOLD_LINES: usize = 10;

/// A diff shows this many unchanged lines around each change.
pub const CONTEXT_LINES: usize = 3;

/// `n` and `noun`, plural unless `n` is 1: "1 session", "2 sessions".
pub fn count(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// A model's id without the `claude-` every id starts with: what a narrow column shows.
pub fn short_model(model: &str) -> &str {
    model.strip_prefix("claude-").unwrap_or(model)
}

/// Whether `event` is a tool result that only repeats `reason`, a denial's comment already
/// shown with the denial (the agent reads a denial's reason as its tool's result).
pub fn repeats_denial(event: &ConversationEvent, reason: &str) -> bool {
    event.event_type == ConversationEventType::ToolResult
        && !reason.trim().is_empty()
        && event.tool_result_content.as_deref().map(str::trim) == Some(reason.trim())
}

/// A tool result's text as Claude Code shows it: without the `<system-reminder>` blocks the
/// CLI appends after a tool's output for the model, and an error without its
/// `<tool_use_error>` wrapper, the CLI's mark of a call that failed. Not yet [`clean`]ed.
pub fn tool_result_text(event: &ConversationEvent) -> &str {
    let mut text = event.tool_result_content.as_deref().unwrap_or_default();
    // Only trailing blocks: a tool's own output is shown whole, whatever it contains.
    while let Some(start) = trailing_reminder(text) {
        text = text[..start].trim_end();
    }
    let unwrapped = event.is_error.then(|| {
        text.trim()
            .strip_prefix("<tool_use_error>")?
            .strip_suffix("</tool_use_error>")
    });
    unwrapped.flatten().map_or(text, str::trim)
}

/// Where the `<system-reminder>` block that ends `text` starts, if one does.
fn trailing_reminder(text: &str) -> Option<usize> {
    text.trim_end()
        .strip_suffix("</system-reminder>")?
        .rfind("<system-reminder>")
}

/// `text` made safe for a terminal: newlines are kept, a tab becomes four spaces, a carriage
/// return is dropped, and every other control character (escape, bell, C1 codes…) becomes a
/// visible `�`, as does every explicit bidirectional formatting character (overrides,
/// embeddings, isolates and marks), which would reorder what is shown after it.
pub fn clean(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| (c.is_control() && c != '\n') || reorders(c);
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str("    "),
            '\r' => {}
            c if unsafe_char(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `c` is one of Unicode's explicit bidirectional formatting characters.
fn reorders(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// What a line of a diff is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Same,
    Removed,
    Added,
}

/// A line of a [`diff`]: a line of text (cleaned, without its newline), or the gap between
/// two changes too far apart to show the lines between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    Line(Change, String),
    Gap,
}

/// The line diff from `old` to `new`: each change with up to [`CONTEXT_LINES`] unchanged lines
/// around it, and a [`DiffLine::Gap`] between changes further apart.
pub fn diff(old: &str, new: &str) -> Vec<DiffLine> {
    let diff = TextDiff::from_lines(old, new);
    let mut lines = Vec::new();
    for (i, group) in diff.grouped_ops(CONTEXT_LINES).iter().enumerate() {
        if i > 0 {
            lines.push(DiffLine::Gap);
        }
        for change in group.iter().flat_map(|op| diff.iter_changes(op)) {
            let kind = match change.tag() {
                ChangeTag::Delete => Change::Removed,
                ChangeTag::Insert => Change::Added,
                ChangeTag::Equal => Change::Same,
            };
            let text = clean(change.value().trim_end_matches('\n')).into_owned();
            lines.push(DiffLine::Line(kind, text));
        }
    }
    lines
}

/// A tool call's input, as Claude Code shows it; every string in it is cleaned.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolInput {
    /// Bash: the command (its lines) and what it is for.
    Bash {
        command: String,
        description: Option<String>,
    },
    /// Write: the file and its whole new content.
    Write { path: String, content: String },
    /// Edit (one diff) and MultiEdit (one per edit); `every_occurrence` is Edit's
    /// `replace_all`.
    Edit {
        path: String,
        every_occurrence: bool,
        edits: Vec<Vec<DiffLine>>,
    },
    /// A question to the human: Claude Code's `AskUserQuestion` (one or more, each maybe
    /// with choices), or the approvals MCP server's `contact_human` (one, free text).
    Questions(Vec<Question>),
    /// Any other tool, or one of the above without the fields it needs: the input as it came,
    /// to be cleaned once formatted.
    Other(Value),
}

/// One question a tool call asks the human, and the choices it offers (none: free text).
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub text: String,
    /// Each choice's label and what it means.
    pub choices: Vec<(String, Option<String>)>,
    /// Several choices may be picked (`multiSelect`).
    pub several: bool,
}

impl Question {
    /// Whether `answer` is made of numbers (one, or several for a question that takes
    /// several) of which one names none of the question's choices: a slip, not an answer.
    pub fn names_no_choice(&self, answer: &str) -> bool {
        let count = self.choices.len();
        let numbers: Vec<&str> = answer
            .split(|c: char| (self.several && c == ',') || c.is_whitespace())
            .filter(|n| !n.is_empty())
            .collect();
        let is_number = |n: &&str| n.bytes().all(|b| b.is_ascii_digit());
        let names_none = |n: &&str| n.parse::<usize>().map_or(true, |n| n == 0 || n > count);
        let numeric = !numbers.is_empty() && numbers.iter().all(is_number);
        count > 0 && numeric && numbers.iter().any(names_none)
    }

    /// What to tell an answer that [names no choice](Self::names_no_choice).
    pub fn choose_hint(&self) -> String {
        format!(
            "choose 1–{} (or type an answer in words)",
            self.choices.len()
        )
    }
}

/// What a question that takes several choices says below them.
pub const SEVERAL: &str = "(several may be picked: their numbers, e.g. 1, 3)";

/// The approvals MCP server's question tool, as Claude Code names it.
pub const CONTACT_HUMAN: &str = "mcp__approvals__contact_human";
/// Claude Code's own question tool, asked through the permission prompt.
pub const ASK_USER_QUESTION: &str = "AskUserQuestion";

/// The questions of an `AskUserQuestion` input; `None` unless each has its text.
fn questions(input: &Value) -> Option<Vec<Question>> {
    let text = |value: &Value, key: &str| value.get(key)?.as_str().map(|s| clean(s).into_owned());
    let question = |q: &Value| {
        let choices = q
            .get("options")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        Some(Question {
            text: text(q, "question")?,
            choices: choices
                .filter_map(|c| Some((text(c, "label")?, text(c, "description"))))
                .collect(),
            several: q.get("multiSelect") == Some(&Value::Bool(true)),
        })
    };
    let asked = input.get("questions")?.as_array()?;
    let questions: Option<Vec<Question>> = asked.iter().map(question).collect();
    questions.filter(|q| !q.is_empty())
}

/// The questions `approval` asks the human, each with its choices, or `None` for a tool call
/// to approve. A question Claude Code asked carries its tool's input; any other is its
/// message, one question of free text.
pub fn questions_of(approval: &Approval) -> Option<Vec<Question>> {
    let tool = approval
        .function_name
        .as_deref()
        .unwrap_or(ASK_USER_QUESTION);
    let input = approval.function_args.as_ref();
    if let Some(ToolInput::Questions(questions)) = input.map(|input| ToolInput::of(tool, input)) {
        return Some(questions);
    }
    let message = approval.message.as_deref()?;
    (approval.kind == ApprovalType::HumanContact).then(|| {
        vec![Question {
            text: clean(message).into_owned(),
            choices: Vec::new(),
            several: false,
        }]
    })
}

/// The texts of the questions `approval` asks when it asks several at once (one
/// `AskUserQuestion`), which are answered a line each; empty when it asks one or none.
pub fn asked_together(approval: &Approval) -> Vec<String> {
    match questions_of(approval) {
        Some(questions) if questions.len() > 1 => questions.into_iter().map(|q| q.text).collect(),
        _ => Vec::new(),
    }
}

impl ToolInput {
    /// The view of `tool`'s input.
    pub fn of(tool: &str, input: &Value) -> ToolInput {
        let text = |value: &Value, key: &str| {
            value
                .get(key)
                .and_then(Value::as_str)
                .map(|s| clean(s).into_owned())
        };
        let edit = |edit: &Value| {
            let field = |k: &str| edit.get(k).and_then(Value::as_str).unwrap_or_default();
            diff(field("old_string"), field("new_string"))
        };
        match (tool, text(input, "file_path")) {
            ("Bash", _) if input.get("command").is_some_and(Value::is_string) => ToolInput::Bash {
                command: text(input, "command").unwrap_or_default(),
                description: text(input, "description").filter(|d| !d.trim().is_empty()),
            },
            ("Write", Some(path)) if input.get("content").is_some_and(Value::is_string) => {
                ToolInput::Write {
                    path,
                    content: text(input, "content").unwrap_or_default(),
                }
            }
            ("Edit", Some(path)) if input.get("old_string").is_some_and(Value::is_string) => {
                ToolInput::Edit {
                    path,
                    every_occurrence: input.get("replace_all") == Some(&Value::Bool(true)),
                    edits: vec![edit(input)],
                }
            }
            ("MultiEdit", Some(path)) => match input.get("edits").and_then(Value::as_array) {
                Some(edits) => ToolInput::Edit {
                    path,
                    every_occurrence: false,
                    edits: edits.iter().map(edit).collect(),
                },
                None => ToolInput::Other(input.clone()),
            },
            (ASK_USER_QUESTION, _) => match questions(input) {
                Some(questions) => ToolInput::Questions(questions),
                None => ToolInput::Other(input.clone()),
            },
            (CONTACT_HUMAN, _) => match text(input, "message") {
                Some(text) => ToolInput::Questions(vec![Question {
                    text,
                    choices: Vec::new(),
                    several: false,
                }]),
                None => ToolInput::Other(input.clone()),
            },
            _ => ToolInput::Other(input.clone()),
        }
    }

    /// The questions' texts, one a line, when this is [`ToolInput::Questions`]: the message
    /// of the approval that asks them.
    pub fn question_text(&self) -> Option<String> {
        match self {
            ToolInput::Questions(questions) => Some(
                questions
                    .iter()
                    .map(|q| q.text.as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
