//! The two list screens, sessions and approvals: columns by priority (the title and the
//! directory win when the terminal is narrow), and on a wide terminal a pane beside the list
//! with the selected row's detail.

use hld_client::protocol::{Approval, ApprovalType, SessionInfo};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Padding, Paragraph, Row as TableRow, Table, Wrap};
use ratatui::Frame;
use unicode_width::UnicodeWidthStr;

use crate::app::{Filter, Link, ListView, State, CHROME_ROWS};
use crate::columns::{ellipsize, ellipsize_spans, fit, home, short_dir, Column};
use crate::diffview::worktree_spans;
use crate::preview::{approval_detail, session_preview};
use crate::render::{first_line, wrap};
use crate::view::{age, model_of, modes_of, status_span, title_of, DIM, SELECTED};
use hld_client::view::{asked_together, clean, count, in_checkout};

/// From this many columns on, the lists show the selected row's detail beside them.
pub const WIDE: u16 = 140;
/// The share of a wide terminal the detail pane takes, in percent.
const PANE_PERCENT: u16 = 40;
/// The widest a directory column grows to fit its content.
const DIR_MAX: usize = 40;
/// What a directory column claims when the optional columns are placed: a directory is
/// shown by its last components, which is all that this leaves room for, and a deep one
/// (an isolated session's worktree) then does not hide the model and cost of every row.
const DIR_CLAIM: u16 = 20;
/// Columns of a session's title kept before the marks beside it (modes, branch).
const TITLE_LEAST: usize = 12;
/// The widest a model column grows.
const MODEL_MAX: usize = 30;
/// The widest the approvals' tool column grows.
const TOOL_MAX: usize = 16;
/// The widest the approvals' session-title column grows.
const SESSION_MAX: usize = 32;

/// The headers of the session list's columns (the first is the chain's marker).
const SESSION_COLUMNS: [&str; 10] = [
    "",
    "STATUS",
    "TITLE",
    "DIRECTORY",
    "AGE",
    "MODEL",
    "COST",
    "TURNS",
    "CTX",
    "⚑",
];
/// The headers of the approval list's columns.
const APPROVAL_COLUMNS: [&str; 5] = ["AGE", "TOOL", "INPUT", "SESSION", "DIRECTORY"];

/// `area` split into the list and, on a wide terminal, the detail pane beside it.
fn split(area: Rect) -> (Rect, Option<Rect>) {
    if area.width < WIDE {
        return (area, None);
    }
    let [list, pane] = Layout::horizontal([
        Constraint::Percentage(100 - PANE_PERCENT),
        Constraint::Percentage(PANE_PERCENT),
    ])
    .spacing(1)
    .areas(area);
    (list, Some(pane))
}

/// The detail pane: `lines` wrapped, behind a line that sets it apart from the list.
fn pane(frame: &mut Frame, area: Rect, lines: Vec<Line<'static>>) {
    // Wrapped here, not by the paragraph: a wrapped line's rows line up under its text.
    let width = usize::from(pane_block().inner(area).width).max(1);
    let lines: Vec<Line> = lines
        .into_iter()
        .flat_map(|line| wrap(line, width, usize::MAX))
        .collect();
    frame.render_widget(Paragraph::new(lines).block(pane_block()), area);
}

/// The line that sets the detail pane apart from the list, and the space after it.
fn pane_block() -> Block<'static> {
    Block::new()
        .borders(Borders::LEFT)
        .border_style(DIM)
        .padding(Padding::left(1))
}

/// A table of `rows` whose columns get `widths` (0: left out): the cells of a column left out
/// are dropped from each row and from the header.
fn table<'a>(widths: &[u16], header: &[&'a str], rows: Vec<(Vec<Line<'a>>, Style)>) -> Table<'a> {
    let keep = |cells: Vec<Line<'a>>| -> Vec<Line<'a>> {
        cells
            .into_iter()
            .zip(widths)
            .filter(|(_, w)| **w > 0)
            .map(|(cell, _)| cell)
            .collect()
    };
    let header = keep(header.iter().map(|h| Line::from(*h)).collect());
    let rows = rows
        .into_iter()
        .map(|(cells, style)| TableRow::new(keep(cells)).style(style));
    let constraints = widths
        .iter()
        .filter(|w| **w > 0)
        .map(|w| Constraint::Length(*w));
    Table::new(rows, constraints).header(TableRow::new(header).style(DIM))
}

/// The width of the widest of `texts` and of the column's `header`, at most `max`.
fn widest<'a>(header: &str, texts: impl Iterator<Item = &'a str>, max: usize) -> usize {
    texts
        .map(UnicodeWidthStr::width)
        .fold(header.width(), usize::max)
        .min(max)
}

/// The directory column under `header` of `dirs` (each as `short_dir` shows it), at least
/// `min` columns wide.
fn dir_column<'a>(min: u16, header: &str, dirs: impl Iterator<Item = &'a str>) -> Column {
    let shown: Vec<String> = dirs.map(|d| short_dir(d, home(), DIR_MAX)).collect();
    Column::flexible(
        min,
        widest(header, shown.iter().map(String::as_str), DIR_MAX),
    )
    .claiming(DIR_CLAIM)
}

pub fn sessions(state: &State, frame: &mut Frame, area: Rect) {
    let rows = state.rows();
    // A chain counts once, however many of its sessions are shown.
    let chains = rows.iter().filter(|r| r.depth == 0).count();
    let mut heading = match state.list.view {
        ListView::Sessions => format!(" Sessions ({chains})"),
        ListView::Archived => format!(" Archived sessions ({chains}) · Tab: drafts"),
        ListView::Drafts => format!(
            " Drafts ({}) · Enter: edit, launch · X: discard · Tab: sessions",
            rows.len()
        ),
    };
    if state.list.filter != Filter::All {
        heading.push_str(&format!(" · status: {} (f)", state.list.filter.label()));
    }
    if let Some(q) = &state.list.search {
        let cursor = if state.list.searching { "▏" } else { "" };
        heading.push_str(&format!(" · /{}{cursor}", clean(q)));
    }
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    frame.render_widget(Line::styled(heading, Style::new().bold()), head);
    if rows.is_empty() {
        let unsearched = state.list.search.is_none() && state.list.filter == Filter::All;
        let text = if state.list.view == ListView::Drafts && state.list.search.is_none() {
            "No drafts. Esc on a launch form (c) with a query keeps it here."
        } else if state.list.view == ListView::Archived && unsearched {
            "No archived sessions: e archives the selected one. Tab shows the next view."
        } else if state.sessions.is_empty() && state.link != Link::Connected {
            "Waiting for the daemon: its sessions show once it answers."
        } else if state.sessions.is_empty() {
            "No sessions yet. Press c to launch one, or run `hlyr launch \"…\"`."
        } else {
            "No session matches. Esc clears the search and filter."
        };
        frame.render_widget(Paragraph::new(text).style(DIM), body);
        return;
    }
    let (list, detail) = split(body);
    // Only the visible rows are built, so a thousand sessions cost what a screenful does.
    let visible = usize::from(list.height.saturating_sub(1)).max(1);
    let offset = state.list.selected.saturating_sub(visible - 1);
    let shown: Vec<_> = rows.iter().enumerate().skip(offset).take(visible).collect();
    let titles: Vec<(Vec<Span>, String)> = shown
        .iter()
        .map(|(_, row)| {
            let title = title_of(row.session);
            let title = match row.depth {
                0 => title,
                d => format!("{}└ {title}", "  ".repeat(d - 1)),
            };
            let mut spans: Vec<Span> = crate::daemons::mark(state, &row.session.id)
                .into_iter()
                .collect();
            spans.extend(modes_of(row.session, state.now, true));
            spans.extend(worktree_spans(row.session, &state.stats));
            (spans, title)
        })
        .collect();
    let dirs: Vec<String> = shown.iter().map(|(_, row)| place(row.session)).collect();
    let models: Vec<String> = shown.iter().map(|(_, row)| model_of(row.session)).collect();
    let title_want = titles
        .iter()
        .map(|(modes, t)| modes.iter().map(Span::width).sum::<usize>() + t.width())
        .fold(SESSION_COLUMNS[2].width(), usize::max);
    // In the order of SESSION_COLUMNS.
    let columns = [
        Column::fixed(2),
        Column::fixed(13),
        Column::fill(20, title_want),
        dir_column(16, SESSION_COLUMNS[3], dirs.iter().map(String::as_str)),
        Column::fixed(4),
        Column::flexible(
            8,
            widest(
                SESSION_COLUMNS[5],
                models.iter().map(String::as_str),
                MODEL_MAX,
            ),
        ),
        Column::fixed(6),
        Column::fixed(5),
        Column::fixed(4),
        Column::fixed(4),
    ];
    let widths = fit(&columns, &[0, 1, 9, 2, 3, 4, 8], &[5, 6, 7], list.width);
    let table_rows = shown
        .iter()
        .zip(titles)
        .zip(dirs.iter().zip(&models))
        .map(|(((i, row), (modes, title)), (dir, model))| {
            let s = row.session;
            let marker = match (row.depth, row.chain, row.expanded) {
                (0, 1, _) | (1.., _, _) => "  ".to_owned(),
                (0, n, false) => format!("▸{n}"),
                (0, n, true) => format!("▾{n}"),
            };
            // The marks before the title give way to its first columns when both do not fit.
            let width = usize::from(widths[2]);
            let least = title.width().min(TITLE_LEAST);
            let mut title_spans = ellipsize_spans(modes, width.saturating_sub(least));
            let room = width.saturating_sub(title_spans.iter().map(Span::width).sum::<usize>());
            title_spans.push(Span::raw(ellipsize(&title, room)));
            let pending = state.pending_of(&s.id);
            let cost = s.cost_usd.or(s.result.as_ref().map(|r| r.total_cost_usd));
            let turns = s.result.as_ref().map(|r| r.num_turns.to_string());
            let cells = vec![
                Line::from(marker),
                Line::from(status_span(s, state.frame)),
                Line::from(title_spans),
                Line::from(short_dir(dir, home(), usize::from(widths[3]))),
                Line::from(age(state.now, &s.last_activity_at)),
                Line::from(ellipsize(model, usize::from(widths[5]))),
                Line::from(cost.map_or(String::new(), |c| format!("${c:.2}"))),
                Line::from(turns.unwrap_or_default()),
                Line::from(crate::usage::context_span(s).unwrap_or_default()),
                if pending > 0 {
                    Line::styled(format!("⚑{pending}"), Style::new().fg(Color::Yellow).bold())
                } else {
                    Line::default()
                },
            ];
            let style = if *i == state.list.selected {
                SELECTED
            } else {
                Style::new()
            };
            (cells, style)
        })
        .collect();
    frame.render_widget(table(&widths, &SESSION_COLUMNS, table_rows), list);
    if let (Some(area), Some(row)) = (detail, rows.get(state.list.selected)) {
        pane(frame, area, session_preview(state, row.session));
    }
}

pub fn approvals(state: &State, frame: &mut Frame, area: Rect) {
    if state.approvals.is_empty() {
        let text = "No pending approvals. New ones appear here (and ring the bell) as agents ask.";
        frame.render_widget(Paragraph::new(text).style(DIM), area);
        return;
    }
    let (list, detail) = approval_areas(state, area);
    let visible = usize::from(list.height.saturating_sub(1)).max(1);
    let offset = state.approval_selected.saturating_sub(visible - 1);
    let shown: Vec<(usize, &Approval)> = state
        .approvals
        .iter()
        .enumerate()
        .skip(offset)
        .take(visible)
        .collect();
    // What, input, session title and directory of each shown approval.
    let texts: Vec<[String; 4]> = shown
        .iter()
        .map(|(_, a)| {
            let session = state.sessions.iter().find(|s| s.id == a.session_id);
            [
                what(a),
                summary(a),
                session.map_or_else(|| a.session_id.clone(), title_of),
                session.map(place).unwrap_or_default(),
            ]
        })
        .collect();
    let want = |k: usize, max: usize| {
        widest(
            APPROVAL_COLUMNS[k + 1],
            texts.iter().map(|t| t[k].as_str()),
            max,
        )
    };
    // In the order of APPROVAL_COLUMNS.
    let columns = [
        Column::fixed(4),
        Column::flexible(8, want(0, TOOL_MAX)),
        Column::fill(20, want(1, usize::MAX)),
        Column::flexible(12, want(2, SESSION_MAX)),
        dir_column(12, APPROVAL_COLUMNS[4], texts.iter().map(|t| t[3].as_str())),
    ];
    let widths = fit(&columns, &[0, 1, 2], &[3, 4], list.width);
    let rows = shown
        .iter()
        .zip(&texts)
        .map(|((i, a), [what, input, session, dir])| {
            let mark = crate::daemons::mark(state, &a.session_id);
            let room = usize::from(widths[2]).saturating_sub(mark.as_ref().map_or(0, Span::width));
            let input: Vec<Span> = mark
                .into_iter()
                .chain([Span::raw(ellipsize(input, room))])
                .collect();
            let cells = vec![
                Line::from(age(state.now, &a.requested_at)),
                Line::from(ellipsize(what, usize::from(widths[1]))),
                Line::from(input),
                Line::from(ellipsize(session, usize::from(widths[3]))),
                Line::from(short_dir(dir, home(), usize::from(widths[4]))),
            ];
            let style = if *i == state.approval_selected {
                SELECTED
            } else {
                Style::new()
            };
            (cells, style)
        })
        .collect();
    frame.render_widget(table(&widths, &APPROVAL_COLUMNS, rows), list);
    if let Some(Detail {
        block,
        inner,
        text,
        past,
    }) = selected_detail(state, list, detail)
    {
        let scroll = state.approval_scroll.min(past);
        frame.render_widget(block, detail);
        frame.render_widget(text.scroll((scroll, 0)), inner);
        // Marked at the top right and the bottom right: the rows hidden each way and the keys
        // that reach them.
        if scroll > 0 {
            let note = format!(" ↑ {} · PgUp Home ", count(scroll.into(), "more line"));
            corner_note(frame, inner, inner.y, note);
        }
        if scroll < past {
            let note = format!(
                " ↓ {} · PgDn End ",
                count((past - scroll).into(), "more line")
            );
            corner_note(frame, inner, inner.bottom() - 1, note);
        }
    }
}

/// `note` drawn reversed at the right end of row `y` of `inner`.
fn corner_note(frame: &mut Frame, inner: Rect, y: u16, note: String) {
    let width = (note.width() as u16).min(inner.width);
    let at = Rect::new(inner.right() - width, y, width, 1);
    frame.render_widget(Span::styled(note, Style::new().reversed()), at);
}

/// The approvals screen's list and the selected approval's detail in `area`: beside the list
/// on a wide terminal, else below it.
fn approval_areas(state: &State, area: Rect) -> (Rect, Rect) {
    match split(area) {
        (list, Some(pane)) => (list, pane),
        (area, None) => {
            let list_rows = (state.approvals.len() as u16 + 1)
                .min(area.height / 3)
                .max(2);
            let [list, detail] =
                Layout::vertical([Constraint::Length(list_rows), Constraint::Min(0)]).areas(area);
            (list, detail)
        }
    }
}

/// The selected approval's detail as drawn in `area`, beside `list` or below it.
struct Detail {
    block: Block<'static>,
    /// The area inside the block.
    inner: Rect,
    text: Paragraph<'static>,
    /// Its wrapped rows that do not fit in `inner`.
    past: u16,
}

fn selected_detail(state: &State, list: Rect, area: Rect) -> Option<Detail> {
    let a = state.approvals.get(state.approval_selected)?;
    let block = match area.x > list.x {
        true => pane_block(),
        false => Block::new().borders(Borders::TOP),
    };
    let inner = block.inner(area);
    let text = Paragraph::new(approval_detail(state, a)).wrap(Wrap { trim: false });
    let rows = u16::try_from(text.line_count(inner.width)).unwrap_or(u16::MAX);
    Some(Detail {
        block,
        inner,
        text,
        past: rows.saturating_sub(inner.height),
    })
}

/// How far the selected approval's detail scrolls (until its last row is on screen), and the
/// rows it shows at once (a page).
pub fn approval_scroll(state: &State) -> (u16, u16) {
    let body = Rect::new(0, 1, state.width, state.height.saturating_sub(CHROME_ROWS));
    let (list, detail) = approval_areas(state, body);
    selected_detail(state, list, detail).map_or((0, 0), |d| (d.past, d.inner.height))
}

/// The tool an approval gates, or "question".
pub fn what(a: &Approval) -> String {
    match a.kind {
        ApprovalType::HumanContact => "question".into(),
        ApprovalType::FunctionCall => first_line(a.function_name.as_deref().unwrap_or("tool")),
        _ => first_line(a.kind.as_str()),
    }
}

/// One line of an approval's input: the command, the path, or compact JSON.
pub fn summary(a: &Approval) -> String {
    if a.kind == ApprovalType::HumanContact {
        let first = first_line(a.message.as_deref().unwrap_or(""));
        return match asked_together(a).len() {
            0 => first,
            n => format!("{n} questions: {first}"),
        };
    }
    let args = a.function_args.as_ref();
    let field = |k: &str| args.and_then(|v| v.get(k)).and_then(|v| v.as_str());
    let text = field("command")
        .or(field("file_path"))
        .or(field("pattern"))
        .or(field("plan"))
        .map(str::to_owned)
        .unwrap_or_else(|| args.map(|v| v.to_string()).unwrap_or_default());
    first_line(&text)
}

/// Where `s` works, cleaned: an isolated session's repository, as its branch is shown beside.
fn place(s: &SessionInfo) -> String {
    let dir = s.working_dir.as_deref().unwrap_or("");
    clean(&in_checkout(dir, s.worktree.as_ref())).into_owned()
}
