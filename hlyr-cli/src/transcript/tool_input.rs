//! A tool's input as Claude Code shows it: Write as the file's path and a numbered preview of
//! its content, Edit and MultiEdit as a coloured diff, Bash as `$ command` and `# description`,
//! any other tool as pretty-printed JSON.
//!
//! A view is a head (what follows the tool's name on its line, such as a path) and body lines
//! below it. Long bodies are cut to [`SHOWN_LINES`] unless all of it is asked for; every string
//! from the agent is cleaned of control characters first, so that none reaches the terminal.

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use crate::output::{count, paint, BOLD, DIM, GREEN, RED};

/// A cut body keeps this many lines.
pub const SHOWN_LINES: usize = 12;
/// Longer lines are cut to this many characters.
const LINE_CHARS: usize = 300;
/// Diffs show this many unchanged lines around each change.
const CONTEXT_LINES: usize = 3;
/// The indentation of body lines under their tool's name.
const INDENT: &str = "    ";

/// A tool's input, ready to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// What follows the tool's name on its line (styled); may be empty.
    pub head: String,
    /// The lines below it (styled, not indented).
    pub body: Vec<String>,
}

impl View {
    /// The view of `tool`'s input given as JSON text, as a tool call stores it (text that is
    /// not JSON is shown as it is).
    pub fn of_json_text(tool: &str, text: &str) -> View {
        match serde_json::from_str::<Value>(text) {
            Ok(input) => View::of(tool, &input),
            Err(_) => View {
                head: String::new(),
                body: text.lines().map(clean).collect(),
            },
        }
    }

    /// The view of `tool`'s input.
    pub fn of(tool: &str, input: &Value) -> View {
        let text = |key: &str| input.get(key).and_then(Value::as_str);
        match (tool, text("file_path")) {
            ("Bash", _) if text("command").is_some() => {
                bash(text("command").unwrap_or_default(), text("description"))
            }
            ("Write", Some(path)) if text("content").is_some() => {
                write(path, text("content").unwrap_or_default())
            }
            ("Edit", Some(path)) if text("old_string").is_some() => {
                let mut head = path_head(path);
                if input.get("replace_all") == Some(&Value::Bool(true)) {
                    head.push_str(&paint(DIM, " (every occurrence)"));
                }
                View {
                    head,
                    body: diff(
                        text("old_string").unwrap_or_default(),
                        text("new_string").unwrap_or_default(),
                    ),
                }
            }
            ("MultiEdit", Some(path)) if input.get("edits").is_some_and(Value::is_array) => {
                let edits = input["edits"].as_array().into_iter().flatten();
                let mut body = Vec::new();
                for edit in edits {
                    let field = |k: &str| edit.get(k).and_then(Value::as_str).unwrap_or_default();
                    if !body.is_empty() {
                        body.push(paint(DIM, "⋯"));
                    }
                    body.extend(diff(field("old_string"), field("new_string")));
                }
                View {
                    head: path_head(path),
                    body,
                }
            }
            _ => json(input),
        }
    }

    /// Whether the body is longer than a cut view shows.
    pub fn is_long(&self) -> bool {
        self.body.len() > SHOWN_LINES + 1
    }

    /// The body lines to print, indented: all of them, or cut to [`SHOWN_LINES`] with a line
    /// saying how many more there are.
    pub fn lines(&self, all: bool) -> Vec<String> {
        let shown = if all || !self.is_long() {
            self.body.len()
        } else {
            SHOWN_LINES
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

/// `s` made safe to print on one terminal line: tabs become spaces, other control characters
/// become `�`, and it is cut to [`LINE_CHARS`] characters.
fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        if i == LINE_CHARS {
            out.push('…');
            break;
        }
        match c {
            '\t' => out.push_str("    "),
            '\r' => {}
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

fn path_head(path: &str) -> String {
    paint(BOLD, clean(path))
}

/// Bash: each line of the command after `$ ` (continuation lines indented to match), then the
/// description as a comment.
fn bash(command: &str, description: Option<&str>) -> View {
    let mut body: Vec<String> = command
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let lead = if i == 0 { "$ " } else { "  " };
            format!("{}{}", paint(DIM, lead), clean(line))
        })
        .collect();
    if let Some(description) = description.filter(|d| !d.trim().is_empty()) {
        body.extend(
            description
                .lines()
                .map(|line| paint(DIM, format!("# {}", clean(line)))),
        );
    }
    View {
        head: String::new(),
        body,
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
                clean(line)
            )
        })
        .collect();
    if body.is_empty() {
        body.push(paint(DIM, "(empty file)"));
    }
    View {
        head: path_head(path),
        body,
    }
}

/// The lines of an edit's diff: removed lines red after `-`, added ones green after `+`, and
/// up to [`CONTEXT_LINES`] unchanged ones dim around each change; `⋯` between distant changes.
fn diff(old: &str, new: &str) -> Vec<String> {
    let diff = TextDiff::from_lines(old, new);
    let mut lines = Vec::new();
    for (i, group) in diff.grouped_ops(CONTEXT_LINES).iter().enumerate() {
        if i > 0 {
            lines.push(paint(DIM, "⋯"));
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let (sign, style) = match change.tag() {
                    ChangeTag::Delete => ('-', RED),
                    ChangeTag::Insert => ('+', GREEN),
                    ChangeTag::Equal => (' ', DIM),
                };
                let text = clean(change.value().trim_end_matches('\n'));
                lines.push(paint(style, format!("{sign} {text}")));
            }
        }
    }
    lines
}

/// Any other tool: a short object on the tool's line, a longer one pretty-printed below it.
fn json(input: &Value) -> View {
    let compact = input.to_string();
    let flat = !matches!(input, Value::Object(o) if o.len() > 1)
        && !matches!(input, Value::Array(a) if a.len() > 1);
    let head = match input {
        Value::Null => String::new(),
        Value::Object(o) if o.is_empty() => String::new(),
        _ if flat && compact.chars().count() <= 80 => clean(&compact),
        _ => {
            let pretty = serde_json::to_string_pretty(input).unwrap_or(compact);
            return View {
                head: String::new(),
                body: pretty.lines().map(clean).collect(),
            };
        }
    };
    View {
        head,
        body: Vec::new(),
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
        assert_eq!(cut.len(), SHOWN_LINES + 1);
        assert_eq!(cut[SHOWN_LINES - 1], "    12 line 12");
        assert_eq!(cut[SHOWN_LINES], "    … 28 more lines");
        assert_eq!(plain_lines(&view, true).len(), 40);
        // One line over is shown rather than replaced by a line saying so.
        let content: String = (1..=SHOWN_LINES + 1).map(|i| format!("{i}\n")).collect();
        let view = View::of("Write", &json!({"file_path": "/w/l", "content": content}));
        assert!(!view.is_long());
        assert_eq!(view.lines(false).len(), SHOWN_LINES + 1);
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
}
