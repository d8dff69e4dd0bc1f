//! Conversation events as styled, wrapped lines: markdown for assistant text, diffs for edits,
//! the command for Bash, long results collapsed. Everything from the daemon passes through
//! [`clean`] first, so no byte an agent printed can reach the terminal as a control sequence.

use hld_client::protocol::{
    ApprovalStatus, ConversationEvent, ConversationEventType, ANSWERED_ELSEWHERE,
};
use hld_client::view::{
    clean, repeats_denial, tool_result_text, Change, DiffLine, Question, ToolInput, FOLD_LINES,
    SEVERAL,
};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;
use unicode_width::UnicodeWidthStr;

/// Lines one event may take at most, expanded, so that a huge output cannot swamp the view
/// (a tool call's input aside).
const MAX_EVENT_LINES: usize = 2000;

/// How the conversation is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Thinking shown in full (else one dimmed line).
    pub thinking: bool,
    /// Long tool results (up to `MAX_EVENT_LINES`), tool inputs and user messages shown in
    /// full.
    pub expanded: bool,
}

/// An approval's state, shown under the tool call it gates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    pub status: ApprovalStatus,
    pub comment: Option<String>,
}

/// The first line of `text`, cleaned.
pub fn first_line(text: &str) -> String {
    clean(text.lines().next().unwrap_or("")).into_owned()
}

const DIM: Style = Style::new().add_modifier(Modifier::DIM);
const BOLD: Style = Style::new().add_modifier(Modifier::BOLD);

/// The lines of one event at `width` columns, under `mark`, the approval of its tool call (a
/// tool result's: of the call it answers).
pub fn event_lines(
    event: &ConversationEvent,
    mark: Option<&Mark>,
    options: Options,
    width: u16,
) -> Vec<Line<'static>> {
    let repeats = |m: &Mark| {
        m.status == ApprovalStatus::Denied
            && m.comment
                .as_deref()
                .is_some_and(|c| repeats_denial(event, c))
    };
    let lines = match event.event_type {
        // Its call's mark says it.
        ConversationEventType::ToolResult if mark.is_some_and(repeats) => return Vec::new(),
        ConversationEventType::Message => message(event, options),
        ConversationEventType::Thinking => thinking(event, options),
        ConversationEventType::ToolCall => tool_call(event, mark, options),
        ConversationEventType::ToolResult => tool_result(event, options),
        ConversationEventType::System => system(event),
        // A kind this version does not know: its text, as a notice.
        _ => system(event),
    };
    // A tool call's input is what an approval is asked for: all of it can be read.
    let most = match event.event_type {
        ConversationEventType::ToolCall => usize::MAX,
        _ => MAX_EVENT_LINES,
    };
    let mut wrapped: Vec<Line<'static>> = Vec::new();
    for line in lines {
        let room = most - wrapped.len();
        if room == 0 {
            wrapped.push(Line::styled("  … cut: too long to show here", DIM));
            break;
        }
        wrapped.extend(wrap(line, usize::from(width.max(1)), room));
    }
    wrapped.push(Line::default());
    wrapped
}

fn message(event: &ConversationEvent, options: Options) -> Vec<Line<'static>> {
    let content = clean(event.content.as_deref().unwrap_or("")).into_owned();
    if event.role.as_deref() == Some("user") {
        let style = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
        // A long message, a paste most often, is folded as Claude Code folds one.
        let lines = content
            .lines()
            .enumerate()
            .map(|(i, l)| match attachment(l) {
                Some(name) => Line::from(vec![
                    Span::styled(if i == 0 { "› " } else { "  " }, style),
                    Span::styled("[image] ", Style::new().fg(Color::Magenta)),
                    Span::styled(name.to_owned(), DIM),
                ]),
                None => {
                    let lead = if i == 0 { "› " } else { "  " };
                    Line::from(vec![
                        Span::styled(lead, style),
                        Span::styled(l.to_owned(), style),
                    ])
                }
            })
            .collect();
        return collapse(lines, options.expanded);
    }
    crate::markdown::lines(&content)
}

/// The file name of a line that stands for an attached image (`[image: NAME]`, as the
/// daemon stores a message sent with images).
fn attachment(line: &str) -> Option<&str> {
    line.strip_prefix("[image: ")?.strip_suffix(']')
}

fn thinking(event: &ConversationEvent, options: Options) -> Vec<Line<'static>> {
    let content = clean(event.content.as_deref().unwrap_or("")).into_owned();
    let style = DIM.add_modifier(Modifier::ITALIC);
    if !options.thinking {
        let n = content.lines().count();
        let lines = if n == 1 { "line" } else { "lines" };
        return vec![Line::styled(
            format!("▸ thinking ({n} {lines}, t shows)"),
            style,
        )];
    }
    std::iter::once(Line::styled("▾ thinking", style))
        .chain(
            content
                .lines()
                .map(|l| Line::styled(format!("  {l}"), style)),
        )
        .collect()
}

/// A notice: its text (an API retry's says the error, the attempt and the delay), else its
/// subtype; an error's in yellow. A compaction is a rule across the conversation.
fn system(event: &ConversationEvent) -> Vec<Line<'static>> {
    if event.subtype.as_deref() == Some("compact_boundary") {
        let what = event
            .content
            .as_deref()
            .filter(|t| !t.trim().is_empty())
            .unwrap_or("Conversation compacted");
        return vec![Line::styled(format!("──── {} ────", first_line(what)), DIM)];
    }
    let what = [event.content.as_deref(), event.subtype.as_deref()]
        .into_iter()
        .flatten()
        .find(|t| !t.trim().is_empty())
        .unwrap_or("system");
    let style = if event.is_error {
        Style::new().fg(Color::Yellow)
    } else {
        DIM
    };
    vec![Line::styled(format!("· {}", first_line(what)), style)]
}

fn tool_call(
    event: &ConversationEvent,
    mark: Option<&Mark>,
    options: Options,
) -> Vec<Line<'static>> {
    let name = first_line(event.tool_name.as_deref().unwrap_or("tool"));
    let input: Value = event
        .tool_input_json
        .as_deref()
        .and_then(|j| serde_json::from_str(j).ok())
        .unwrap_or(Value::Null);
    let mut lines = vec![Line::from(vec![
        Span::styled("● ", Style::new().fg(Color::Magenta)),
        Span::styled(name.clone(), BOLD),
    ])];
    lines.extend(tool_input(&name, &input, options.expanded));
    if let Some(mark) = mark {
        let asks = match ToolInput::of(&name, &input) {
            _ if name == PLAN_TOOL => Asks::Plan,
            ToolInput::Questions(_) => Asks::Answer,
            _ => Asks::Approval,
        };
        lines.push(mark_line(mark, asks));
    }
    lines
}

/// Questions to the human, each with its numbered choices (a choice's number answers too).
pub fn asked(questions: &[Question]) -> Vec<Line<'static>> {
    let question = |q: &Question| {
        let text = q.text.lines().map(|l| {
            Line::from(vec![
                Span::styled("  ? ", Style::new().fg(Color::Magenta)),
                Span::styled(l.to_owned(), BOLD),
            ])
        });
        let choices = q.choices.iter().enumerate().map(|(n, (label, meaning))| {
            let number = Span::styled(format!("    {}. ", n + 1), DIM);
            let mut spans = vec![number, Span::raw(label.clone())];
            spans.extend(
                meaning
                    .as_ref()
                    .map(|m| Span::styled(format!(" — {m}"), DIM)),
            );
            Line::from(spans)
        });
        let several = q
            .several
            .then(|| Line::styled(format!("    {SEVERAL}"), DIM));
        text.chain(choices).chain(several).collect::<Vec<_>>()
    };
    questions.iter().flat_map(question).collect()
}

/// The tool whose approval is a plan (`tool_input.plan`, markdown).
pub const PLAN_TOOL: &str = "ExitPlanMode";

/// A tool's input as Claude Code shows it: Bash as its command, Edit as a diff, Write as a
/// preview of the file, a path for the tools that read, anything else as indented JSON.
pub fn tool_input(name: &str, input: &Value, expanded: bool) -> Vec<Line<'static>> {
    let path_line = |path: &str| {
        Line::from(vec![
            Span::styled("  ", DIM),
            Span::styled(clean(path).into_owned(), BOLD),
        ])
    };
    if let Some(plan) = input.get("plan").and_then(Value::as_str) {
        if name == PLAN_TOOL {
            // The plan is what is approved: shown in full, as markdown.
            return crate::markdown::lines(&clean(plan))
                .into_iter()
                .map(|mut line| {
                    line.spans.insert(0, Span::styled("  │ ", DIM));
                    line
                })
                .collect();
        }
    }
    match ToolInput::of(name, input) {
        ToolInput::Bash {
            command,
            description,
        } => {
            let mut lines: Vec<Line<'static>> = command
                .lines()
                .enumerate()
                .map(|(i, l)| {
                    let lead = if i == 0 { "  $ " } else { "    " };
                    Line::from(vec![
                        Span::styled(lead, DIM),
                        Span::styled(l.to_owned(), Style::new().fg(Color::Yellow)),
                    ])
                })
                .collect();
            if let Some(d) = description {
                lines.push(Line::styled(format!("  # {d}"), DIM));
            }
            lines
        }
        ToolInput::Edit { path, edits, .. } => {
            let mut lines = vec![path_line(&path)];
            lines.extend(edits.iter().flatten().map(diff_line));
            collapse(lines, expanded)
        }
        ToolInput::Write { path, content } => {
            let mut lines = vec![path_line(&path)];
            lines.extend(content.lines().map(|l| {
                Line::from(vec![
                    Span::styled("  + ", Style::new().fg(Color::Green)),
                    Span::raw(l.to_owned()),
                ])
            }));
            collapse(lines, expanded)
        }
        ToolInput::Questions(questions) => asked(&questions),
        ToolInput::Other(_) if matches!(name, "Read" | "Glob" | "Grep" | "LS") => {
            let main = ["file_path", "pattern", "path"]
                .iter()
                .find_map(|k| input.get(k).and_then(Value::as_str))
                .unwrap_or_default();
            vec![path_line(main)]
        }
        ToolInput::Other(Value::Null) => Vec::new(),
        ToolInput::Other(input) => {
            let pretty = serde_json::to_string_pretty(&input).unwrap_or_default();
            let lines = clean(&pretty)
                .lines()
                .map(|l| Line::styled(format!("  {l}"), DIM))
                .collect();
            collapse(lines, expanded)
        }
    }
}

/// A line of an edit's diff, coloured as `git diff` does; `⋯` between distant changes.
fn diff_line(line: &DiffLine) -> Line<'static> {
    let (sign, style, text) = match line {
        DiffLine::Line(Change::Removed, text) => ("  - ", Style::new().fg(Color::Red), text),
        DiffLine::Line(Change::Added, text) => ("  + ", Style::new().fg(Color::Green), text),
        DiffLine::Line(Change::Same, text) => ("    ", DIM, text),
        DiffLine::Gap => return Line::styled("  ⋯", DIM),
    };
    Line::from(vec![
        Span::styled(sign, style),
        Span::styled(text.clone(), style),
    ])
}

/// `lines` cut to [`FOLD_LINES`] unless expanded, saying how many are hidden.
fn collapse(mut lines: Vec<Line<'static>>, expanded: bool) -> Vec<Line<'static>> {
    if !expanded && lines.len() > FOLD_LINES + 1 {
        let hidden = lines.len() - FOLD_LINES;
        lines.truncate(FOLD_LINES);
        lines.push(Line::styled(
            format!("  … {hidden} more lines (i expands)"),
            DIM,
        ));
    }
    lines
}

/// What a tool call's approval asks of the human.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Asks {
    Approval,
    Plan,
    Answer,
}

fn mark_line(mark: &Mark, asks: Asks) -> Line<'static> {
    let (text, color) = match mark.status {
        ApprovalStatus::Pending => (
            match asks {
                Asks::Plan => {
                    "⏳ plan waiting: a approve · A approve + accept edits · d keep planning"
                }
                Asks::Answer => "⏳ waiting for your answer (a answers)",
                Asks::Approval => "⏳ waiting for approval (a approves, d denies)",
            }
            .to_owned(),
            Color::Yellow,
        ),
        ApprovalStatus::Approved => ("✓ approved".to_owned(), Color::Green),
        ApprovalStatus::Denied => ("✗ denied".to_owned(), Color::Red),
        ApprovalStatus::Responded => ("✓ answered".to_owned(), Color::Green),
        // Nobody decided it here: a cloud approval answered in the cloud (its comment says
        // so), or one whose session ended first (the wording `hlyr` uses too).
        ApprovalStatus::Resolved if mark.comment.as_deref() == Some(ANSWERED_ELSEWHERE) => {
            ("– answered elsewhere".to_owned(), Color::Gray)
        }
        ApprovalStatus::Resolved => ("– ended with its session".to_owned(), Color::Gray),
        // A state this version does not know.
        other => (format!("? {}", other.as_str()), Color::Gray),
    };
    let mut spans = vec![Span::styled(format!("  {text}"), Style::new().fg(color))];
    if let Some(comment) = mark
        .comment
        .as_deref()
        .filter(|c| !c.is_empty() && *c != ANSWERED_ELSEWHERE)
    {
        // An answer to several questions is a line each: all of them, on one line.
        let comment: Vec<&str> = comment.lines().filter(|l| !l.trim().is_empty()).collect();
        spans.push(Span::styled(
            format!(": {}", clean(&comment.join(" · "))),
            DIM,
        ));
    }
    Line::from(spans)
}

fn tool_result(event: &ConversationEvent, options: Options) -> Vec<Line<'static>> {
    let content = clean(tool_result_text(event)).into_owned();
    let style = if event.is_error {
        Style::new().fg(Color::Red)
    } else {
        DIM
    };
    let mut lines: Vec<Line<'static>> = content
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let lead = if i == 0 { "  ⎿ " } else { "    " };
            Line::styled(format!("{lead}{l}"), style)
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled("  ⎿ (no output)", DIM));
    }
    collapse(lines, options.expanded)
}

/// The columns a wrapped line's continuations are indented by: its leading spaces, and the
/// marker after them (`⎿ `, `$ `, `• `, `│ `, `+ `…), so that text lines up under text.
fn hanging_indent(line: &Line<'_>, width: usize) -> usize {
    let text: String = line
        .spans
        .iter()
        .take(3)
        .map(|s| s.content.as_ref())
        .collect();
    let spaces = text.chars().take_while(|c| *c == ' ').count();
    let mut rest = text.chars().skip(spaces);
    let marker = match (rest.next(), rest.next()) {
        (Some('⎿' | '$' | '•' | '│' | '+' | '-' | '›' | '#'), Some(' ')) => 2,
        _ => 0,
    };
    (spaces + marker).min(width / 2)
}

/// `line` broken into at most `limit` lines of at most `width` columns, at spaces where it
/// can; continuations are indented to line up with the first line's text.
pub fn wrap(line: Line<'static>, width: usize, limit: usize) -> Vec<Line<'static>> {
    if line.width() <= width {
        return vec![line];
    }
    let indent = hanging_indent(&line, width);
    let mut out = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    // Ends the current line and starts an indented one; returns the columns used.
    let break_line = |out: &mut Vec<Line<'static>>, current: &mut Vec<Span<'static>>| {
        out.push(Line::from(std::mem::take(current)));
        if indent > 0 {
            current.push(Span::raw(" ".repeat(indent)));
        }
        indent
    };
    for span in line.spans {
        for word in span.content.split_inclusive(' ') {
            if out.len() >= limit {
                return out;
            }
            let w = word.width();
            if used + w > width && used > indent {
                used = break_line(&mut out, &mut current);
            }
            if used + w <= width {
                current.push(Span::styled(word.to_owned(), span.style));
                used += w;
                continue;
            }
            // A word longer than the line is cut wherever the columns run out.
            let mut piece = String::new();
            for c in word.chars() {
                let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                if used + cw > width && used > indent {
                    current.push(Span::styled(std::mem::take(&mut piece), span.style));
                    used = break_line(&mut out, &mut current);
                    if out.len() >= limit {
                        return out;
                    }
                }
                piece.push(c);
                used += cw;
            }
            current.push(Span::styled(piece, span.style));
        }
    }
    if used > indent && out.len() < limit {
        out.push(Line::from(current));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn wrapping_breaks_at_spaces_and_cuts_long_words() {
        let lines = wrap(Line::from("aaa bbb ccc"), 7, 10);
        assert_eq!(text(&lines), ["aaa ", "bbb ccc"]);
        let lines = wrap(Line::from("abcdefghij"), 4, 10);
        assert_eq!(text(&lines), ["abcd", "efgh", "ij"]);
        assert!(lines.iter().all(|l| l.width() <= 4));
        assert_eq!(wrap(Line::from("abcdefghij"), 4, 2).len(), 2);
        let lines = wrap(Line::from("  ⎿ aaa bbb ccc"), 10, 10);
        assert_eq!(text(&lines), ["  ⎿ aaa ", "    bbb ", "    ccc"]);
    }

    #[test]
    fn an_edit_reads_as_a_diff() {
        let input = serde_json::json!({"file_path": "/x.rs", "old_string": "a\nb\n", "new_string": "a\nc\n"});
        let lines = tool_input("Edit", &input, false);
        assert_eq!(text(&lines), ["  /x.rs", "    a", "  - b", "  + c"]);
    }

    #[test]
    fn long_input_is_collapsed_unless_expanded() {
        let content: String = (0..50).map(|i| format!("line {i}\n")).collect();
        let input = serde_json::json!({"file_path": "/x", "content": content});
        let collapsed = tool_input("Write", &input, false);
        assert_eq!(collapsed.len(), FOLD_LINES + 1);
        assert!(collapsed
            .last()
            .unwrap()
            .to_string()
            .contains("41 more lines"));
        assert_eq!(tool_input("Write", &input, true).len(), 51);
    }

    #[test]
    fn a_tool_error_is_red_and_without_its_tags() {
        let event: ConversationEvent = serde_json::from_value(serde_json::json!({
            "id": 2, "session_id": "s", "claude_session_id": "c", "sequence": 2,
            "event_type": "tool_result", "created_at": "2026-11-30T09:00:00Z",
            "tool_result_content": "<tool_use_error>File does not exist.</tool_use_error>",
            "is_completed": true, "is_error": true,
        }))
        .unwrap();
        let options = Options {
            thinking: false,
            expanded: false,
        };
        let lines = tool_result(&event, options);
        assert_eq!(text(&lines), ["  ⎿ File does not exist."]);
        assert_eq!(lines[0].style.fg, Some(Color::Red));
    }

    #[test]
    fn a_pasted_message_is_collapsed_unless_expanded() {
        let paste: String = (0..3000).map(|i| format!("pasted {i}\n")).collect();
        let event: ConversationEvent = serde_json::from_value(serde_json::json!({
            "id": 1, "session_id": "s", "claude_session_id": "c", "sequence": 1,
            "event_type": "message", "created_at": "2026-11-30T09:00:00Z",
            "is_completed": true, "role": "user", "content": paste,
        }))
        .unwrap();
        let folded = |expanded| {
            let options = Options {
                thinking: false,
                expanded,
            };
            text(&message(&event, options))
        };
        let collapsed = folded(false);
        assert_eq!(collapsed.len(), FOLD_LINES + 1);
        assert_eq!(collapsed[0], "› pasted 0");
        assert!(collapsed[FOLD_LINES].contains("2990 more lines (i expands)"));
        assert_eq!(folded(true).len(), 3000);
    }
}
