//! What the front ends (`hlyr`, `hld-tui`) show of the daemon's data, without I/O or styles:
//! [`clean`] makes any string from the daemon safe for a terminal, and [`ToolInput`] is a tool
//! call's input as Claude Code shows it (Bash's command, Write's content, an edit's [`diff`], a
//! question and its choices), every string in it cleaned.
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
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_count_is_plural_unless_one() {
        assert_eq!(count(1, "turn"), "1 turn");
        assert_eq!(count(0, "session"), "0 sessions");
        assert_eq!(count(2, "more byte"), "2 more bytes");
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let cases = [
            ("plain text\nand more", "plain text\nand more"),
            ("a\x1b[2Jb", "a�[2Jb"),
            ("title\x1b]0;pwned\x07", "title�]0;pwned�"),
            ("tab\there", "tab    here"),
            ("crlf\r\nline", "crlf\nline"),
            ("over\rwrite", "overwrite"),
            ("c1\u{9b}31m", "c1�31m"),
            ("nul\0del\x7f", "nul�del�"),
            ("wide 日本 ✓", "wide 日本 ✓"),
            ("abc\u{202E}fed.txt", "abc�fed.txt"),
            ("\u{2067}isolate\u{2069} \u{200F}mark", "�isolate� �mark"),
            ("עברית and العربية", "עברית and العربية"),
        ];
        for (raw, shown) in cases {
            assert_eq!(clean(raw), shown, "{raw:?}");
        }
        assert!(matches!(clean("plain"), Cow::Borrowed("plain")));
    }

    fn same(text: &str) -> DiffLine {
        DiffLine::Line(Change::Same, text.to_owned())
    }
    fn removed(text: &str) -> DiffLine {
        DiffLine::Line(Change::Removed, text.to_owned())
    }
    fn added(text: &str) -> DiffLine {
        DiffLine::Line(Change::Added, text.to_owned())
    }

    #[test]
    fn a_diff_shows_each_change_with_its_context() {
        let numbers = |changed: &[(usize, &str)]| -> String {
            (1..=20)
                .map(|i| match changed.iter().find(|(at, _)| *at == i) {
                    Some((_, line)) => format!("{line}\n"),
                    None => format!("{i}\n"),
                })
                .collect()
        };
        let far_apart = numbers(&[(2, "two"), (19, "nineteen")]);
        let cases: [(&str, &str, Vec<DiffLine>); 5] = [
            (
                "a\nb\nc\n",
                "a\nB\nc\n",
                vec![same("a"), removed("b"), added("B"), same("c")],
            ),
            ("x", "y", vec![removed("x"), added("y")]),
            ("", "new\n", vec![added("new")]),
            ("same\n", "same\n", vec![]),
            (
                "a\x1b[2J\n",
                "a\tb\n",
                vec![removed("a�[2J"), added("a    b")],
            ),
        ];
        for (old, new, expected) in cases {
            assert_eq!(diff(old, new), expected, "{old:?} → {new:?}");
        }
        let lines = diff(&numbers(&[]), &far_apart);
        let expected = [
            vec![
                same("1"),
                removed("2"),
                added("two"),
                same("3"),
                same("4"),
                same("5"),
            ],
            vec![DiffLine::Gap],
            vec![
                same("16"),
                same("17"),
                same("18"),
                removed("19"),
                added("nineteen"),
                same("20"),
            ],
        ]
        .concat();
        assert_eq!(lines, expected);
    }

    #[test]
    fn a_tool_input_is_read_by_its_tool() {
        let cases = [
            (
                "Bash",
                json!({"command": "ls\x1b[2J\nwc", "description": "List"}),
                ToolInput::Bash {
                    command: "ls�[2J\nwc".into(),
                    description: Some("List".into()),
                },
            ),
            (
                "Bash",
                json!({"command": "ls", "description": " "}),
                ToolInput::Bash {
                    command: "ls".into(),
                    description: None,
                },
            ),
            (
                "Write",
                json!({"file_path": "/w/a", "content": "hi\n"}),
                ToolInput::Write {
                    path: "/w/a".into(),
                    content: "hi\n".into(),
                },
            ),
            (
                "Edit",
                json!({"file_path": "/w/a", "old_string": "x", "new_string": "y", "replace_all": true}),
                ToolInput::Edit {
                    path: "/w/a".into(),
                    every_occurrence: true,
                    edits: vec![vec![removed("x"), added("y")]],
                },
            ),
            (
                "MultiEdit",
                json!({"file_path": "/w/m", "edits": [
                    {"old_string": "x", "new_string": "y"},
                    {"old_string": "p", "new_string": "q"},
                ]}),
                ToolInput::Edit {
                    path: "/w/m".into(),
                    every_occurrence: false,
                    edits: vec![
                        vec![removed("x"), added("y")],
                        vec![removed("p"), added("q")],
                    ],
                },
            ),
            // Without the fields its tool needs, the input is shown as it came.
            (
                "Write",
                json!({"file_path": "/w/x"}),
                ToolInput::Other(json!({"file_path": "/w/x"})),
            ),
            (
                "Edit",
                json!({"old_string": "x"}),
                ToolInput::Other(json!({"old_string": "x"})),
            ),
            (
                "Bash",
                json!({"cmd": "ls"}),
                ToolInput::Other(json!({"cmd": "ls"})),
            ),
            (
                "Read",
                json!({"file_path": "/w/a"}),
                ToolInput::Other(json!({"file_path": "/w/a"})),
            ),
            (
                ASK_USER_QUESTION,
                json!({"questions": [
                    {"question": "Colour?\x07", "options": [
                        {"label": "Blue", "description": "like the sky"}, {"label": "Red"},
                    ]},
                    {"question": "Size?", "multiSelect": true},
                ]}),
                ToolInput::Questions(vec![
                    Question {
                        text: "Colour?�".into(),
                        choices: vec![
                            ("Blue".into(), Some("like the sky".into())),
                            ("Red".into(), None),
                        ],
                        several: false,
                    },
                    Question {
                        text: "Size?".into(),
                        choices: vec![],
                        several: true,
                    },
                ]),
            ),
            (
                CONTACT_HUMAN,
                json!({"message": "Which branch?"}),
                ToolInput::Questions(vec![Question {
                    text: "Which branch?".into(),
                    choices: vec![],
                    several: false,
                }]),
            ),
            // A question without its text is shown as it came.
            (
                ASK_USER_QUESTION,
                json!({"questions": [{"header": "Colour"}]}),
                ToolInput::Other(json!({"questions": [{"header": "Colour"}]})),
            ),
            (
                ASK_USER_QUESTION,
                json!({"questions": []}),
                ToolInput::Other(json!({"questions": []})),
            ),
        ];
        for (tool, input, expected) in cases {
            assert_eq!(ToolInput::of(tool, &input), expected, "{tool} {input}");
        }
    }

    #[test]
    fn questions_read_as_the_message_of_the_approval_that_asks_them() {
        let input = json!({"questions": [{"question": "Colour?"}, {"question": "Size?"}]});
        let asked = ToolInput::of(ASK_USER_QUESTION, &input).question_text();
        assert_eq!(asked.as_deref(), Some("Colour?\nSize?"));
        let bash = ToolInput::of("Bash", &json!({"command": "ls"}));
        assert_eq!(bash.question_text(), None);
    }

    #[test]
    fn an_approval_asks_its_own_questions_with_their_choices() {
        let approval = |fields: Value| -> Approval {
            let mut v = json!({"id": "a", "call_id": "a", "run_id": "r", "session_id": "s",
                "type": "human_contact", "status": "pending", "requested_at": "2026-01-01"});
            v.as_object_mut()
                .unwrap()
                .extend(fields.as_object().unwrap().clone());
            serde_json::from_value(v).unwrap()
        };
        let input = json!({"questions": [
            {"question": "Colour?", "options": [{"label": "Blue"}, {"label": "Red\u{1b}[2J"}]},
            {"question": "Size?"}]});
        let asked = questions_of(&approval(json!({"message": "Colour?\nSize?",
            "function_args": input})))
        .unwrap();
        assert_eq!(asked.len(), 2);
        assert_eq!(asked[0].choices[1], ("Red\u{fffd}[2J".to_owned(), None));
        assert_eq!(asked[1].text, "Size?");
        // Without its tool's input, the message is one question of free text.
        let one = questions_of(&approval(json!({"message": "Done.\nShall I go on?"}))).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].text, "Done.\nShall I go on?");
        assert!(one[0].choices.is_empty());
        let call = approval(json!({"type": "function_call", "function_name": "Bash",
            "function_args": {"command": "ls"}}));
        assert_eq!(questions_of(&call), None);
    }

    #[test]
    fn a_number_that_names_no_choice_is_caught_and_words_are_not() {
        let mut question = Question {
            text: "Which?".into(),
            choices: vec![("Blue".into(), None), ("Red".into(), None)],
            several: false,
        };
        for caught in ["3", " 0 ", "2 3", "99999999999999999999"] {
            assert!(question.names_no_choice(caught), "{caught:?}");
        }
        for kept in ["1", "2", "Blue", "3 shades of blue", "route 66"] {
            assert!(!question.names_no_choice(kept), "{kept:?}");
        }
        assert_eq!(
            question.choose_hint(),
            "choose 1–2 (or type an answer in words)"
        );
        question.several = true;
        assert!(question.names_no_choice("1, 3"));
        assert!(!question.names_no_choice("1,2"));
        question.choices.clear();
        assert!(!question.names_no_choice("3"), "no choices: any answer");
    }
}
