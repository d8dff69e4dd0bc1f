//! The selected row's detail: a session's latest state and activity beside the session list
//! on a wide terminal, and an approval's tool call under (or beside) the approvals list.

use std::collections::{HashMap, VecDeque};

use hld_client::protocol::{
    Approval, ApprovalType, ConversationEvent, ConversationEventType, SessionInfo,
};
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::app::State;
use crate::lists::{summary, what};
use crate::render::{asked, tool_input, PLAN_TOOL};
use crate::view::{age, model_of, status_span, title_of, DIM};
use hld_client::view::{clean, count, questions_of, tool_result_text};

/// Lines of a session's query or final result shown at most.
const TEXT_LINES: usize = 12;
/// Events of a session's latest activity kept, and the characters kept of each.
const ACTIVITY_EVENTS: usize = 10;
const ACTIVITY_CHARS: usize = 120;

/// Each session's latest events seen streaming, one line each, by event id: an event stored
/// again (a tool call whose approval changed) replaces its line.
#[derive(Debug, Default)]
pub struct Activity(HashMap<String, VecDeque<(i64, Line<'static>)>>);

impl Activity {
    /// Adds `event` of `session_id`, forgetting the oldest beyond `ACTIVITY_EVENTS`.
    pub fn record(&mut self, session_id: &str, event: &ConversationEvent) {
        let lines = self.0.entry(session_id.to_owned()).or_default();
        let line = activity_line(event);
        match lines.iter_mut().find(|(id, _)| *id == event.id) {
            Some(seen) => seen.1 = line,
            None => {
                lines.push_back((event.id, line));
                if lines.len() > ACTIVITY_EVENTS {
                    lines.pop_front();
                }
            }
        }
    }

    fn of(&self, session_id: &str) -> impl Iterator<Item = &Line<'static>> {
        self.0.get(session_id).into_iter().flatten().map(|(_, l)| l)
    }
}

/// One event as one line: who said what, which tool on what, or the first line of a result.
fn activity_line(event: &ConversationEvent) -> Line<'static> {
    // Cut before it is cleaned: a result's first line may be megabytes long.
    let text = |t: Option<&str>| {
        let line = t.unwrap_or("").trim_start().lines().next().unwrap_or("");
        clean(&line.chars().take(ACTIVITY_CHARS).collect::<String>()).into_owned()
    };
    match event.event_type {
        ConversationEventType::Message if event.role.as_deref() == Some("user") => Line::styled(
            format!("› {}", text(event.content.as_deref())),
            Style::new().fg(Color::Cyan),
        ),
        ConversationEventType::Message => Line::raw(text(event.content.as_deref())),
        ConversationEventType::Thinking => Line::styled("thinking…", DIM.italic()),
        ConversationEventType::ToolCall => {
            let input: Value = event
                .tool_input_json
                .as_deref()
                .and_then(|j| serde_json::from_str(j).ok())
                .unwrap_or(Value::Null);
            let main = ["command", "file_path", "pattern", "path"]
                .iter()
                .find_map(|k| input.get(k).and_then(Value::as_str));
            Line::from(vec![
                Span::styled("● ", Style::new().fg(Color::Magenta)),
                Span::styled(text(event.tool_name.as_deref()), Style::new().bold()),
                Span::raw(format!(" {}", text(main))),
            ])
        }
        ConversationEventType::ToolResult => {
            let style = if event.is_error {
                Style::new().fg(Color::Red)
            } else {
                DIM
            };
            Line::styled(
                format!("  ⎿ {}", text(Some(tool_result_text(event)))),
                style,
            )
        }
        // A notice, or a kind this version does not know.
        _ => Line::styled(
            format!(
                "· {}",
                text(event.content.as_deref().or(event.subtype.as_deref()))
            ),
            DIM,
        ),
    }
}

/// A heading inside a pane.
fn heading(text: &str) -> Line<'static> {
    Line::styled(text.to_owned(), Style::new().bold().fg(Color::Cyan))
}

/// `text`'s first [`TEXT_LINES`] lines, indented, saying how many more there are.
fn text_lines(text: &str, style: Style) -> Vec<Line<'static>> {
    let text = clean(text);
    let mut lines: Vec<Line<'static>> = text
        .lines()
        .take(TEXT_LINES)
        .map(|l| Line::styled(format!("  {l}"), style))
        .collect();
    let more = text.lines().count().saturating_sub(TEXT_LINES);
    if more > 0 {
        lines.push(Line::styled(
            format!("  … {} (Enter opens)", count(more as u64, "more line")),
            DIM,
        ));
    }
    lines
}

/// What is known of a session without opening it: its status, where and how it runs, what it
/// was asked, what it waits for, and how it ended.
pub fn session_preview(state: &State, s: &SessionInfo) -> Vec<Line<'static>> {
    let mut facts = vec![status_span(s, state.frame)];
    let model = model_of(s);
    if !model.is_empty() {
        facts.push(Span::raw(format!(" · {model}")));
    }
    facts.push(Span::styled(
        format!(" · active {} ago", age(state.now, &s.last_activity_at)),
        DIM,
    ));
    if let Some(cost) = s.cost_usd.or(s.result.as_ref().map(|r| r.total_cost_usd)) {
        facts.push(Span::raw(format!(" · ${cost:.2}")));
    }
    if let Some(r) = &s.result {
        facts.push(Span::raw(format!(
            " · {}",
            count(u64::try_from(r.num_turns).unwrap_or(0), "turn")
        )));
    }
    if let Some(share) = crate::usage::context_span(s) {
        facts.push(Span::raw(" · ctx "));
        facts.push(share);
    }
    let mut lines = vec![
        Line::styled(title_of(s), Style::new().bold()),
        Line::from(facts),
        Line::styled(
            clean(
                s.working_dir
                    .as_deref()
                    .unwrap_or("(the daemon's directory)"),
            )
            .into_owned(),
            DIM,
        ),
        Line::styled(format!("id {}", s.id), DIM),
        Line::default(),
        heading("Query"),
    ];
    // Under the facts: why it stopped, and when it can go on.
    if let Some(limit) = crate::usage::limit_line(s, state.now) {
        lines.insert(2, limit);
    }
    lines.extend(text_lines(&s.query, Style::new()));
    let activity: Vec<Line<'static>> = state.activity.of(&s.id).cloned().collect();
    if !activity.is_empty() {
        lines.push(Line::default());
        lines.push(heading("Latest"));
        lines.extend(activity);
    }
    let pending: Vec<&Approval> = state
        .approvals
        .iter()
        .filter(|a| a.session_id == s.id)
        .collect();
    if !pending.is_empty() {
        lines.push(Line::default());
        lines.push(heading("Waiting for you (2 lists them)"));
        for a in pending {
            lines.push(Line::from(vec![
                Span::styled(format!("  ⚑ {} ", what(a)), Style::new().fg(Color::Yellow)),
                Span::raw(summary(a)),
            ]));
        }
    }
    if let Some(error) = s.error.as_deref().filter(|e| !e.is_empty()) {
        lines.push(Line::default());
        lines.push(heading("Error"));
        lines.extend(text_lines(error, Style::new().fg(Color::Red)));
    }
    if let Some(result) = s.result.as_ref().filter(|r| !r.result.is_empty()) {
        lines.push(Line::default());
        lines.push(heading("Result"));
        lines.extend(text_lines(&result.result, Style::new()));
    }
    lines
}

/// An approval's detail: the call with its input in full, or the question, and the keys.
pub fn approval_detail(state: &State, a: &Approval) -> Vec<Line<'static>> {
    let session = state.sessions.iter().find(|s| s.id == a.session_id);
    let mut lines = vec![Line::from(vec![
        Span::styled(what(a), Style::new().bold()),
        Span::styled(
            format!(
                "  in {}{}",
                session.map(title_of).unwrap_or_default(),
                session
                    .and_then(|s| s.working_dir.as_deref())
                    .map(|d| format!(" ({})", clean(d)))
                    .unwrap_or_default()
            ),
            DIM,
        ),
    ])];
    match a.kind {
        ApprovalType::FunctionCall => {
            let input = a.function_args.clone().unwrap_or_default();
            lines.extend(tool_input(&what(a), &input, true));
            lines.push(Line::default());
            lines.push(Line::styled(
                if what(a) == PLAN_TOOL {
                    "a/y approve (leaves plan mode) · A approve + accept edits · d/n keep planning (say what to change)"
                } else {
                    "a/y approve · d/n deny (with an optional comment) · Enter opens the session"
                },
                DIM,
            ));
        }
        ApprovalType::HumanContact => {
            let questions = questions_of(a).unwrap_or_default();
            lines.extend(asked(&questions));
            lines.push(Line::default());
            let each = if questions.len() > 1 {
                ", a line each"
            } else {
                ""
            };
            let pick = match questions.iter().any(|q| !q.choices.is_empty()) {
                true => " (a choice's number picks it)",
                false => "",
            };
            lines.push(Line::styled(format!("r answer{each}{pick}"), DIM));
        }
        // A kind this version does not know: nothing more to show.
        _ => {}
    }
    lines
}
