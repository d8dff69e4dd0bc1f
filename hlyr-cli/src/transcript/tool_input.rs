//! A tool's input as Claude Code shows it ([`hld_client::view::ToolInput`], styled): Write as
//! the file's path and a numbered preview of its content, Edit and MultiEdit as a coloured
//! diff, Bash as `$ command` and `# description`, a plan (`ExitPlanMode`) as its markdown, any
//! other tool as pretty-printed JSON.
//!
//! A view is a head (what follows the tool's name on its line, such as a path) and body lines
//! below it. Long bodies are cut to [`FOLD_LINES`] unless all of it is asked for (a plan is
//! never cut: it is what the user approves), and long lines to [`LINE_CHARS`]; every string
//! from the agent is cleaned first.

use hld_client::view::{clean, count, Change, DiffLine, ToolInput, FOLD_LINES};
use serde_json::Value;

use crate::output::{paint, BOLD, DIM, GREEN, RED};

/// Longer lines are cut to this many characters.
const LINE_CHARS: usize = 300;
/// The indentation of body lines under their tool's name.
const INDENT: &str = "    ";

/// A tool's input, ready to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// What follows the tool's name on its line (styled); may be empty.
    pub head: String,
    /// The lines below it (styled, not indented).
    pub body: Vec<String>,
    /// Shown whole, however long.
    pub whole: bool,
}

/// The tool Claude calls in plan mode to present its plan (`plan`, markdown) for approval.
pub const EXIT_PLAN_MODE: &str = "ExitPlanMode";

impl View {
    /// The view of `tool`'s input given as JSON text, as a tool call stores it (text that is
    /// not JSON is shown as it is).
    pub fn of_json_text(tool: &str, text: &str) -> View {
        match serde_json::from_str::<Value>(text) {
            Ok(input) => View::of(tool, &input),
            Err(_) => View {
                head: String::new(),
                body: text.lines().map(shown).collect(),
                whole: false,
            },
        }
    }

    /// The view of `tool`'s input.
    pub fn of(tool: &str, input: &Value) -> View {
        if let Some(text) = (tool == EXIT_PLAN_MODE)
            .then(|| input.get("plan").and_then(Value::as_str))
            .flatten()
        {
            return plan(text);
        }
        match ToolInput::of(tool, input) {
            ToolInput::Bash {
                command,
                description,
            } => bash(&command, description.as_deref()),
            ToolInput::Write { path, content } => write(&path, &content),
            ToolInput::Edit {
                path,
                every_occurrence,
                edits,
            } => {
                let mut head = paint(BOLD, shown(&path));
                if every_occurrence {
                    head.push_str(&paint(DIM, " (every occurrence)"));
                }
                let mut body = Vec::new();
                for edit in &edits {
                    if !body.is_empty() {
                        body.push(paint(DIM, "⋯"));
                    }
                    body.extend(edit.iter().map(diff_line));
                }
                View {
                    head,
                    body,
                    whole: false,
                }
            }
            // Asked by its approval, which the transcript shows instead.
            ToolInput::Questions(_) => json(input),
            ToolInput::Other(input) => json(&input),
        }
    }

    /// Whether the body is longer than a cut view shows.
    pub fn is_long(&self) -> bool {
        !self.whole && self.body.len() > FOLD_LINES + 1
    }

    /// The body lines to print, indented: all of them, or cut to [`FOLD_LINES`] with a line
    /// saying how many more there are.
    pub fn lines(&self, all: bool) -> Vec<String> {
        let shown = if all || !self.is_long() {
            self.body.len()
        } else {
            FOLD_LINES
        };
        let mut lines: Vec<String> = self.body[..shown]
            .iter()
            .map(|line| format!("{INDENT}{line}"))
            .collect();
        if shown < self.body.len() {
            let more = count((self.body.len() - shown) as u64, "more line");
            lines.push(paint(DIM, format!("{INDENT}… {more}")));
        }
        lines
    }

    /// `name`, then the head on its line and the (cut) body below: how a tool call reads.
    pub fn under(&self, name: &str, all: bool) -> String {
        let mut text = name.to_owned();
        if !self.head.is_empty() {
            text.push(' ');
            text.push_str(&self.head);
        }
        for line in self.lines(all) {
            text.push('\n');
            text.push_str(&line);
        }
        text
    }
}

/// One line of `s`, cleaned, cut to [`LINE_CHARS`] characters.
fn shown(s: &str) -> String {
    let s = clean(s);
    match s.char_indices().nth(LINE_CHARS) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.into_owned(),
    }
}

/// Bash: each line of the command after `$ ` (continuation lines indented to match), then the
/// description as a comment.
fn bash(command: &str, description: Option<&str>) -> View {
    let mut body: Vec<String> = command
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let lead = if i == 0 { "$ " } else { "  " };
            format!("{}{}", paint(DIM, lead), shown(line))
        })
        .collect();
    if let Some(description) = description {
        body.extend(
            description
                .lines()
                .map(|line| paint(DIM, format!("# {}", shown(line)))),
        );
    }
    View {
        head: String::new(),
        body,
        whole: false,
    }
}

/// A plan: its markdown as written, which reads well on a terminal, with headings bold and
/// code blocks dim.
fn plan(text: &str) -> View {
    let mut in_code = false;
    let body = text
        .lines()
        .map(|line| {
            let fence = line.trim_start().starts_with("```");
            let style = if in_code || fence {
                DIM
            } else if line.starts_with('#') {
                BOLD
            } else {
                return shown(line);
            };
            in_code ^= fence;
            paint(style, shown(line))
        })
        .collect();
    View {
        head: String::new(),
        body,
        whole: true,
    }
}

/// Write: the path, then the content's lines numbered from 1.
fn write(path: &str, content: &str) -> View {
    let count = content.lines().count();
    let width = count.to_string().len();
    let mut body: Vec<String> = content
        .lines()
        .enumerate()
        .map(|(i, line)| {
            format!(
                "{} {}",
                paint(DIM, format!("{:>width$}", i + 1)),
                shown(line)
            )
        })
        .collect();
    if body.is_empty() {
        body.push(paint(DIM, "(empty file)"));
    }
    View {
        head: paint(BOLD, shown(path)),
        body,
        whole: false,
    }
}

/// A line of an edit's diff: removed red after `-`, added green after `+`, unchanged dim;
/// `⋯` between distant changes.
fn diff_line(line: &DiffLine) -> String {
    let (sign, style, text) = match line {
        DiffLine::Line(Change::Removed, text) => ('-', RED, text),
        DiffLine::Line(Change::Added, text) => ('+', GREEN, text),
        DiffLine::Line(Change::Same, text) => (' ', DIM, text),
        DiffLine::Gap => return paint(DIM, "⋯"),
    };
    paint(style, format!("{sign} {}", shown(text)))
}

/// Any other tool: a short object on the tool's line, a longer one pretty-printed below it.
fn json(input: &Value) -> View {
    let compact = input.to_string();
    let flat = !matches!(input, Value::Object(o) if o.len() > 1)
        && !matches!(input, Value::Array(a) if a.len() > 1);
    let head = match input {
        Value::Null => String::new(),
        Value::Object(o) if o.is_empty() => String::new(),
        _ if flat && compact.chars().count() <= 80 => shown(&compact),
        _ => {
            let pretty = serde_json::to_string_pretty(input).unwrap_or(compact);
            return View {
                head: String::new(),
                body: pretty.lines().map(shown).collect(),
                whole: false,
            };
        }
    };
    View {
        head,
        body: Vec::new(),
        whole: false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn plain(text: &str) -> String {
        anstream::adapter::strip_str(text).to_string()
    }

    fn plain_lines(view: &View, all: bool) -> Vec<String> {
        view.lines(all).iter().map(|l| plain(l)).collect()
    }

    #[test]
    fn write_shows_the_path_and_numbered_content() {
        let view = View::of(
            "Write",
            &json!({"file_path": "/w/hello.txt", "content": "Hello,\n\tworld!\n"}),
        );
        assert_eq!(plain(&view.head), "/w/hello.txt");
        assert_eq!(
            plain_lines(&view, false),
            ["    1 Hello,", "    2     world!"]
        );
        let empty = View::of("Write", &json!({"file_path": "/w/e", "content": ""}));
        assert_eq!(plain_lines(&empty, false), ["    (empty file)"]);
    }

    #[test]
    fn edit_is_a_diff_with_context_and_multi_edit_one_per_edit() {
        let view = View::of(
            "Edit",
            &json!({
                "file_path": "/w/g.txt",
                "old_string": "a\nb\nc\n",
                "new_string": "a\nB\nc\n",
                "replace_all": true,
            }),
        );
        assert_eq!(plain(&view.head), "/w/g.txt (every occurrence)");
        assert_eq!(view.body[1], paint(RED, "- b"));
        assert_eq!(view.body[2], paint(GREEN, "+ B"));
        assert_eq!(
            plain_lines(&view, false),
            ["      a", "    - b", "    + B", "      c"]
        );

        // Changes far apart are two groups, with three unchanged lines around each.
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new: String = (1..=20)
            .map(|i| match i {
                2 => "two\n".to_owned(),
                19 => "nineteen\n".to_owned(),
                i => format!("{i}\n"),
            })
            .collect();
        let view = View::of(
            "Edit",
            &json!({"file_path": "/w/n", "old_string": old, "new_string": new}),
        );
        let lines = plain_lines(&view, true);
        assert!(lines.contains(&"    ⋯".to_owned()), "{lines:#?}");
        assert!(lines.contains(&"    - 19".to_owned()), "{lines:#?}");
        assert!(!lines.contains(&"      10".to_owned()), "{lines:#?}");

        let multi = View::of(
            "MultiEdit",
            &json!({"file_path": "/w/m", "edits": [
                {"old_string": "x", "new_string": "y"},
                {"old_string": "p", "new_string": "q"},
            ]}),
        );
        assert_eq!(
            plain_lines(&multi, false),
            ["    - x", "    + y", "    ⋯", "    - p", "    + q"]
        );
    }

    #[test]
    fn bash_is_the_command_and_its_description() {
        let view = View::of(
            "Bash",
            &json!({"command": "cd src &&\nls -la", "description": "List the sources"}),
        );
        assert_eq!(view.head, "");
        assert_eq!(
            plain_lines(&view, false),
            ["    $ cd src &&", "      ls -la", "    # List the sources"]
        );
    }

    #[test]
    fn other_tools_are_json_short_on_the_line_long_pretty_below() {
        let read = View::of("Read", &json!({"file_path": "/w/a.txt"}));
        assert_eq!(read.head, r#"{"file_path":"/w/a.txt"}"#);
        assert!(read.body.is_empty());
        let grep = View::of("Grep", &json!({"pattern": "fn", "path": "/w"}));
        assert_eq!(grep.head, "");
        assert_eq!(
            grep.body,
            ["{", r#"  "path": "/w","#, r#"  "pattern": "fn""#, "}"]
        );
        assert_eq!(
            View::of("Task", &Value::Null).under("→ Task", false),
            "→ Task"
        );
        // A Write without content is shown as it came.
        let odd = View::of("Write", &json!({"file_path": "/w/x"}));
        assert_eq!(odd.head, r#"{"file_path":"/w/x"}"#);
        let text = View::of_json_text("Bash", "not json");
        assert_eq!(text.body, ["not json"]);
    }

    #[test]
    fn long_input_is_cut_unless_all_is_asked_for() {
        let content: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let view = View::of("Write", &json!({"file_path": "/w/l", "content": content}));
        assert!(view.is_long());
        let cut = plain_lines(&view, false);
        assert_eq!(cut.len(), FOLD_LINES + 1);
        assert_eq!(cut[FOLD_LINES - 1], "    10 line 10");
        assert_eq!(cut[FOLD_LINES], "    … 30 more lines");
        assert_eq!(plain_lines(&view, true).len(), 40);
        // One line over is shown rather than replaced by a line saying so.
        let content: String = (1..=FOLD_LINES + 1).map(|i| format!("{i}\n")).collect();
        let view = View::of("Write", &json!({"file_path": "/w/l", "content": content}));
        assert!(!view.is_long());
        assert_eq!(view.lines(false).len(), FOLD_LINES + 1);
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let view = View::of(
            "Bash",
            &json!({"command": "echo \u{1b}[2J\u{7}done\r", "description": "x"}),
        );
        // Raw, with the view's own styles: the agent's escape and bell are gone.
        let text = view.under("→ Bash", true);
        assert!(
            !text.contains("\u{1b}[2J") && !text.contains('\u{7}'),
            "{text:?}"
        );
        assert!(text.contains("echo �[2J�done"), "{text:?}");
        let long = "x".repeat(1000);
        let view = View::of("Bash", &json!({"command": long}));
        assert_eq!(plain(&view.body[0]).chars().count(), 2 + LINE_CHARS + 1);
    }

    #[test]
    fn a_plan_is_its_markdown_whole_headings_bold_code_dim() {
        let text = format!(
            "# Plan\n\n1. Add `greet`\n```rust\n# not a heading\n```\n{}",
            "- step\n".repeat(FOLD_LINES * 2)
        );
        let view = View::of(EXIT_PLAN_MODE, &json!({"plan": text}));
        assert!(!view.is_long(), "a plan is never cut");
        let lines = plain_lines(&view, false);
        assert_eq!(lines.len(), text.lines().count());
        assert_eq!(lines[..3], ["    # Plan", "    ", "    1. Add `greet`"]);
        assert_eq!(view.body[0], paint(BOLD, "# Plan"));
        assert_eq!(view.body[2], "1. Add `greet`");
        // Inside a code block a `#` line is code, not a heading; after it, text again.
        for at in 3..=5 {
            assert_eq!(view.body[at], paint(DIM, text.lines().nth(at).unwrap()));
        }
        assert_eq!(view.body[6], "- step");
        // Without a plan, ExitPlanMode's input is shown like any other tool's.
        assert_eq!(View::of(EXIT_PLAN_MODE, &json!({})).body.len(), 0);
    }
}
