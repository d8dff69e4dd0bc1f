//! The launch form on screen: its fields, the recent directories, and what became of the
//! launch it sent: "launching…" while the daemon has not answered, and why it refused, under
//! the field concerned when there is one, else at the form's bottom.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::Frame;
use unicode_width::UnicodeWidthStr;

use crate::app::{Field, LaunchForm, State, MODELS};
use crate::columns::{ellipsize, home, short_dir};
use crate::view::{centered, clear, DIM};
use hld_client::view::clean;

/// What the form says while its launch waits for the daemon.
const LAUNCHING: &str = "launching… (Esc hides the form; the session opens once started)";
/// How a refused launch is said.
const REFUSED: Style = Style::new().fg(Color::Red);

pub fn form(state: &State, form: &LaunchForm, frame: &mut Frame, area: Rect) {
    let rect = centered(area, 76, 20);
    clear(frame, rect);
    let block = Block::bordered().title(crate::daemons::launch_title(state, form));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let error = form.error.as_ref();
    let dir_error = error
        .filter(|e| e.field == Some(Field::WorkingDir))
        .map(|e| e.text.as_str());
    let status = match (form.launching, error) {
        (true, _) => Some((LAUNCHING.to_owned(), DIM)),
        (false, Some(e)) if dir_error.is_none() => Some((e.text.clone(), REFUSED)),
        _ => None,
    };
    let rows = |text: Option<&str>| {
        text.map_or(0, |t| match t.width() + 1 > usize::from(inner.width) {
            true => 2,
            false => 1,
        })
    };
    let [query, dir, note, model, approvals, worktree, branch, bottom] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(3),
        Constraint::Length(rows(dir_error).max(1)),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(rows(status.as_ref().map(|(t, _)| t.as_str()))),
    ])
    .areas(inner);
    let focus = |f: Field| {
        if form.field == f {
            Style::new().fg(Color::Cyan).bold()
        } else {
            DIM
        }
    };
    let boxed =
        |title: &'static str, f: Field| Block::bordered().title(title).border_style(focus(f));
    let b = boxed(" Query ", Field::Query);
    frame.render_widget(b.clone(), query);
    frame.render_widget(&form.query, b.inner(query));
    let b = boxed(" Working directory (↑/↓ recent) ", Field::WorkingDir);
    frame.render_widget(b.clone(), dir);
    frame.render_widget(&form.working_dir, b.inner(dir));
    match dir_error {
        Some(text) => said(frame, note, text, REFUSED),
        None => recent(state, frame, note),
    }
    let choice = |label: &str, value: &str, f: Field| {
        Line::from(vec![
            Span::styled(format!(" {label:<11}"), focus(f)),
            Span::styled(
                format!("◂ {value} ▸"),
                if form.field == f {
                    Style::new().bold()
                } else {
                    Style::new()
                },
            ),
        ])
    };
    frame.render_widget(
        choice(
            "Model",
            MODELS[form.model].unwrap_or("default"),
            Field::Model,
        ),
        model,
    );
    frame.render_widget(
        choice("Approvals", form.approvals.label(), Field::Approvals),
        approvals,
    );
    let isolation = match form.worktree {
        true => "own git worktree and branch",
        false => "off: works in the directory",
    };
    frame.render_widget(choice("Isolation", isolation, Field::Worktree), worktree);
    let [label, input] =
        Layout::horizontal([Constraint::Length(12), Constraint::Min(0)]).areas(branch);
    frame.render_widget(Span::styled(" Branch", focus(Field::Branch)), label);
    frame.render_widget(&form.branch, input);
    if let Some((text, style)) = status {
        said(frame, bottom, &text, style);
    }
}

/// The recent directories, for ↑/↓ in the directory's box.
fn recent(state: &State, frame: &mut Frame, area: Rect) {
    let recents = crate::app::recent_dirs(state);
    let hint = if recents.is_empty() {
        "no recent directories; empty means the daemon's own".to_owned()
    } else {
        // Each keeps its last components, so that three fit; the line ends in `…` if not.
        let each = usize::from(area.width.saturating_sub(10) / 3).max(12);
        format!(
            "recent: {}",
            recents
                .iter()
                .take(3)
                .map(|d| short_dir(&clean(d), home(), each))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let hint = ellipsize(&format!(" {hint}"), usize::from(area.width));
    frame.render_widget(Line::styled(hint, DIM), area);
}

/// `text` in `area`, wrapped, every line one column in from the form's border.
fn said(frame: &mut Frame, area: Rect, text: &str, style: Style) {
    let [_, inside] = Layout::horizontal([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    let paragraph = Paragraph::new(text).style(style).wrap(Wrap { trim: true });
    frame.render_widget(paragraph, inside);
}
