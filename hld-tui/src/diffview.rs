//! Isolated sessions on screen: the branch and +/− counts of a row, the review screen (the
//! changed files beside the selected one's hunks) and the merge and discard dialogs.

use std::collections::HashMap;

use hld_client::protocol::{DiffFile, DiffStatus, MergeStrategy, SessionInfo, WorktreeState};
use hld_client::view::clean;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use unicode_width::UnicodeWidthStr;

use crate::app::{DiffStat, Review, State};
use crate::columns::ellipsize;
use crate::view::{centered, title_of, DIM, SELECTED};

const ADDED: Style = Style::new().fg(Color::Green);
const REMOVED: Style = Style::new().fg(Color::Red);
const BRANCH: Style = Style::new().fg(Color::Magenta);

/// An isolated session's branch and its +/− counts (or how its worktree ended), for its row.
pub fn worktree_spans(
    s: &SessionInfo,
    stats: &HashMap<String, Option<DiffStat>>,
) -> Vec<Span<'static>> {
    let Some(w) = &s.worktree else {
        return Vec::new();
    };
    let mut spans = vec![Span::styled(format!("⎇ {} ", clean(&w.branch)), BRANCH)];
    match (&w.state, stats.get(&s.id)) {
        (WorktreeState::Active, Some(Some(stat))) => spans.extend([
            Span::styled(format!("+{}", stat.additions), ADDED),
            Span::raw(" "),
            Span::styled(format!("−{} ", stat.deletions), REMOVED),
        ]),
        (WorktreeState::Active, _) => {}
        (state, _) => spans.push(Span::styled(format!("{state} "), DIM)),
    }
    spans
}

/// How a file changed, as one letter (`R` for renames, `B` for binary files).
fn status_letter(status: &DiffStatus) -> (&'static str, Style) {
    match status {
        DiffStatus::Added => ("A", ADDED),
        DiffStatus::Deleted => ("D", REMOVED),
        DiffStatus::Renamed => ("R", Style::new().fg(Color::Cyan)),
        DiffStatus::Binary => ("B", Style::new().fg(Color::Yellow)),
        _ => ("M", Style::new().fg(Color::Yellow)),
    }
}

/// A file's path, with where a rename came from.
fn path_of(f: &DiffFile) -> String {
    match &f.old_path {
        Some(old) => format!("{} → {}", clean(old), clean(&f.path)),
        None => clean(&f.path).into_owned(),
    }
}

/// The lines shown for `file` ([`crate::app::shown_lines`] counts them).
fn file_lines(f: &DiffFile) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(vec![
        Span::styled(path_of(f), Style::new().bold()),
        Span::styled(format!("  +{}", f.additions), ADDED),
        Span::styled(format!(" −{}", f.deletions), REMOVED),
    ])];
    if f.hunks.is_empty() {
        let why = match f.status {
            _ if f.hunks_omitted => "diff too large to show here: the file is in the worktree",
            DiffStatus::Binary => "binary file: no text to show",
            DiffStatus::Renamed => "renamed, content unchanged",
            _ => "no text changes",
        };
        lines.push(Line::styled(why, DIM));
    }
    for h in &f.hunks {
        lines.push(Line::styled(clean(&h.header).into_owned(), Color::Cyan));
        for l in &h.lines {
            let style = match l.chars().next() {
                Some('+') => ADDED,
                Some('-') => REMOVED,
                Some('\\') => DIM,
                _ => Style::new(),
            };
            lines.push(Line::styled(clean(l).into_owned(), style));
        }
    }
    lines
}

/// The review screen.
pub fn review(state: &State, frame: &mut Frame, area: Rect) {
    let Some(r) = &state.review else {
        return;
    };
    let session = state.sessions.iter().find(|s| s.id == r.session_id);
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    frame.render_widget(heading(r, session, usize::from(head.width)), head);
    // Merged, what is left to do: as `hlyr merge` says it.
    let worktree = session.and_then(|s| s.worktree.as_ref());
    let body = match worktree.is_some_and(|w| w.state == WorktreeState::Merged) {
        true => {
            let [note, rest] =
                Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(body);
            let text = " Merged: its worktree and branch stay until discarded (X discards them).";
            frame.render_widget(Line::styled(text, DIM), note);
            rest
        }
        false => body,
    };
    if let Some(reason) = &r.refused {
        let lines = vec![
            Line::from("The diff could not be read:"),
            Line::styled(clean(reason).into_owned(), REMOVED),
            Line::default(),
            Line::styled("Esc goes back.", DIM),
        ];
        let text = Paragraph::new(lines).wrap(ratatui::widgets::Wrap { trim: false });
        frame.render_widget(text, body);
        return;
    }
    if !r.loaded {
        let text = match r.loading {
            true => "loading the diff…",
            false => "The diff could not be read (the reason is below). Esc goes back.",
        };
        frame.render_widget(Paragraph::new(text).style(DIM), body);
        return;
    }
    if r.files.is_empty() {
        let text = "No changes on this branch yet.";
        frame.render_widget(Paragraph::new(text).style(DIM), body);
        return;
    }
    let [list, hunks] =
        Layout::horizontal([Constraint::Percentage(35), Constraint::Percentage(65)]).areas(body);
    let visible = usize::from(list.height).max(1);
    let offset = r.selected.saturating_sub(visible - 1);
    let width = usize::from(list.width.saturating_sub(1));
    let mut rows: Vec<Line> = r
        .files
        .iter()
        .enumerate()
        .skip(offset)
        .take(visible)
        .map(|(i, f)| {
            let (letter, style) = status_letter(&f.status);
            let counts = format!(" +{} −{} ", f.additions, f.deletions);
            let room = width.saturating_sub(2 + counts.chars().count());
            let mut line = Line::from(vec![
                Span::styled(format!("{letter} "), style),
                Span::raw(ellipsize(&path_of(f), room)),
                Span::styled(counts, DIM),
            ]);
            if i == r.selected {
                line = line.style(if r.hunks_focused { DIM } else { SELECTED });
            }
            line
        })
        .collect();
    if r.next_offset.is_some() {
        rows.push(Line::styled("… more below", DIM));
    }
    let border = if r.hunks_focused {
        Style::new().fg(Color::Cyan)
    } else {
        DIM
    };
    frame.render_widget(Paragraph::new(rows), list);
    let block = Block::new().borders(Borders::LEFT).border_style(border);
    let lines = r.files.get(r.selected).map(file_lines).unwrap_or_default();
    let top = u16::try_from(r.scroll).unwrap_or(u16::MAX);
    frame.render_widget(Paragraph::new(lines).block(block).scroll((top, 0)), hunks);
}

/// The review's heading in `width` columns: its base branch, state and counts kept whole, the
/// title and then the branch cut with `…` when they do not fit.
fn heading(r: &Review, session: Option<&SessionInfo>, width: usize) -> Line<'static> {
    let files = if r.stat.files == 1 { "file" } else { "files" };
    let counts = [
        Span::raw(format!("· {} {files} ", r.stat.files)),
        Span::styled(format!("+{}", r.stat.additions), ADDED),
        Span::raw(" "),
        Span::styled(format!("−{}", r.stat.deletions), REMOVED),
    ];
    let mut spans = vec![Span::styled(" Review ", Style::new().bold())];
    let Some(s) = session else {
        spans.extend(counts);
        return Line::from(spans);
    };
    let worktree = s.worktree.as_ref();
    let base = worktree.map(|w| format!("→ {} ", clean(&w.base_branch)));
    let state = worktree
        .filter(|w| w.state != WorktreeState::Active)
        .map(|w| Span::styled(format!("({}) ", w.state), DIM));
    // What is never cut: the label, `⎇ ` and ` → base `, the state, the counts.
    let fixed = spans[0].width()
        + base.as_ref().map_or(0, |b| 3 + b.width())
        + state.as_ref().map_or(0, Span::width)
        + counts.iter().map(Span::width).sum::<usize>();
    let room = width.saturating_sub(fixed);
    let title = title_of(s);
    let branch = worktree.map(|w| clean(&w.branch).into_owned());
    // The title, quoted, gives way first, down to a few columns; the branch has the rest.
    let branch_wants = branch.as_ref().map_or(0, |b| b.width());
    let title_room = (title.width() + 3).min(room.saturating_sub(branch_wants).max(12));
    let quoted = ellipsize(&title, title_room.saturating_sub(3));
    spans.push(Span::raw(format!("“{quoted}” ")));
    if let (Some(branch), Some(base)) = (branch, base) {
        let branch = ellipsize(&branch, room.saturating_sub(title_room));
        spans.push(Span::styled(format!("⎇ {branch} {base}"), BRANCH));
    }
    spans.extend(state);
    spans.extend(counts);
    Line::from(spans)
}

/// The branch and base of `session_id`, for a dialog.
fn branch_of(state: &State, session_id: &str) -> (String, String) {
    let w = state
        .sessions
        .iter()
        .find(|s| s.id == session_id)
        .and_then(|s| s.worktree.as_ref());
    match w {
        Some(w) => (
            clean(&w.branch).into_owned(),
            clean(&w.base_branch).into_owned(),
        ),
        None => (session_id.to_owned(), "its base branch".to_owned()),
    }
}

/// The width of a dialog, borders included.
const DIALOG_WIDTH: u16 = 72;

/// A dialog of `lines` (wrapped) in the middle of `area`.
fn dialog(frame: &mut Frame, area: Rect, title: &str, lines: Vec<Line<'static>>) {
    let inner = usize::from(DIALOG_WIDTH.min(area.width).saturating_sub(2)).max(1);
    let rows: usize = lines.iter().map(|l| l.width().div_ceil(inner).max(1)).sum();
    let height = u16::try_from(rows).unwrap_or(u16::MAX).saturating_add(2);
    let rect = centered(area, DIALOG_WIDTH, height);
    crate::view::clear(frame, rect);
    let block = Block::bordered().title(title.to_owned());
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(ratatui::widgets::Wrap { trim: false }),
        rect,
    );
}

/// The merge dialog: how, and the confirmation.
pub fn merge(state: &State, frame: &mut Frame, area: Rect, id: &str, strategy: &MergeStrategy) {
    let (branch, base) = branch_of(state, id);
    let how = match strategy {
        MergeStrategy::Squash => "one new commit with all of the branch's changes",
        MergeStrategy::Rebase => "the branch's commits replayed onto the base",
        _ => "a merge commit",
    };
    let lines = vec![
        Line::from(format!("Merge ⎇ {branch} into {base}?")),
        Line::from(vec![
            Span::raw("How: "),
            Span::styled(format!("◂ {strategy} ▸"), Style::new().bold()),
            Span::styled(format!("  {how}"), DIM),
        ]),
        Line::default(),
        Line::styled(
            "←/→ or m s r: how · y / Enter: merge · n / Esc: cancel",
            DIM,
        ),
    ];
    dialog(frame, area, " Merge ", lines);
}

/// The discard dialog; once the daemon refused, its reason and the forced confirmation.
pub fn discard(state: &State, frame: &mut Frame, area: Rect, id: &str, refused: Option<&str>) {
    let (branch, _) = branch_of(state, id);
    let mut lines = vec![Line::from(format!(
        "Discard the worktree and branch ⎇ {branch}?"
    ))];
    if let Some(reason) = refused {
        lines.push(Line::styled(format!("Refused: {}", clean(reason)), REMOVED));
        lines.push(Line::from("Discard it anyway, losing that work?"));
    }
    lines.push(Line::default());
    let yes = if refused.is_some() {
        "y / Enter: discard anyway"
    } else {
        "y / Enter: discard"
    };
    lines.push(Line::styled(format!("{yes} · n / Esc: keep it"), DIM));
    dialog(frame, area, " Discard ", lines);
}
