//! What agents cost and the limits they meet, drawn: the usage view (a bar chart of the cost
//! per day, a table of tokens and cost per model), the usage-limit windows of the title bar,
//! a session's context share, and a session stopped by a limit.

use std::borrow::Cow;

use chrono::{DateTime, Local, NaiveDate, Utc};
use hld_client::protocol::{
    GetUsageResult, RateLimitStatus, RateLimitWindow, SessionInfo, SessionStatus, UsageLimit,
    UsageTotals,
};
use hld_client::view::usage::{
    context_share, limit_text, until, window_current, window_text, window_warns, CONTEXT_WARNING,
};
use hld_client::view::{clean, count};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Bar, BarChart, BarGroup, Block, Paragraph, Row, Table};
use ratatui::Frame;

use crate::app::{
    away, daily_costs, standing, total, Missing, Shown, State, UsageTable, UsageView, USAGE_DAYS,
};
use crate::view::DIM;

/// The columns a day of the chart takes: its bar and the gap after it.
const BAR_WIDTH: u16 = 4;
const BAR_GAP: u16 = 1;
/// The headers of the by-model table.
const MODEL_COLUMNS: [&str; 7] = [
    "MODEL",
    "INPUT",
    "OUTPUT",
    "CACHE WRITE",
    "CACHE READ",
    "COST",
    "TURNS",
];

/// A window near its limit, a context window nearly full.
const WARNING: Style = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
/// A session stopped by a usage limit, and a window at its limit.
const LIMIT: Style = Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD);

/// The usage view: the cost per day over the last days, and what each model used; in a fleet,
/// those of the daemon named in the titles, or of all daemons summed.
pub fn view(state: &State, frame: &mut Frame, area: Rect) {
    let Some(usage) = &state.usage else { return };
    let chart_rows = (area.height / 2).max(8);
    let [chart, models] =
        Layout::vertical([Constraint::Length(chart_rows), Constraint::Min(0)]).areas(area);
    match figures(state, usage, UsageTable::Days) {
        (on, Ok(result)) => {
            let today = state.now.with_timezone(&Local).date_naive();
            let days = daily_costs(&result, usage.since, today);
            daily_chart(frame, chart, &days, &result, &on);
        }
        (on, Err(why)) => not_ready(frame, chart, &format!(" Cost per day{on} "), why),
    }
    match figures(state, usage, UsageTable::Models) {
        (on, Ok(result)) => model_table(frame, models, &result, &on),
        (on, Err(why)) => not_ready(frame, models, &format!(" By model{on} "), why),
    }
}

/// One table's figures: whose they are, for its title (empty outside a fleet), and the answer
/// (all daemons' summed, when the view shows them all); or, while there is none, why, a line
/// per daemon.
fn figures<'a>(
    state: &State,
    usage: &'a UsageView,
    table: UsageTable,
) -> (String, Result<Cow<'a, GetUsageResult>, Vec<Line<'static>>>) {
    match usage.shown {
        Shown::Daemon(daemon) => {
            let on = crate::daemons::usage_of(state, daemon);
            let answer = usage.answers(table).get(daemon);
            match answer.map_or(Err(Missing::Loading), |a| standing(state, daemon, a)) {
                Ok(result) => (on, Ok(Cow::Borrowed(result))),
                Err(why) => (on, Err(vec![why_line(state, daemon, &why, false)])),
            }
        }
        Shown::All => {
            let total = total(state, table);
            let on = crate::daemons::usage_of_all(state, &total);
            match total.sum {
                Some(sum) => (on, Ok(Cow::Owned(sum))),
                None => {
                    let lines = total.missing.iter();
                    let lines = lines.map(|(daemon, why)| why_line(state, *daemon, why, true));
                    (on, Err(lines.collect()))
                }
            }
        }
    }
}

/// Why `daemon`'s figures are not shown: still loading, the daemon not connected, or unable
/// to give them; the line starts with the daemon's name when `named` (several are told of).
fn why_line(state: &State, daemon: usize, why: &Missing, named: bool) -> Line<'static> {
    let of = match state.fleet.daemons.get(daemon) {
        Some(d) if named => format!("⌂{}: ", d.name),
        _ => String::new(),
    };
    match why {
        Missing::Failed(reason) => Line::styled(
            format!("{of}usage unavailable: {}", clean(reason)),
            Style::new().fg(Color::Red),
        ),
        Missing::NotConnected => {
            let name = away(state, daemon).unwrap_or_else(|| "the daemon".into());
            Line::styled(
                format!("{name} is not connected: its figures load once it is back"),
                Style::new().fg(Color::Red),
            )
        }
        Missing::Loading => Line::styled(format!("{of}Loading…"), DIM),
    }
}

/// A part of the view still loading (or waiting for its daemon to be back), or that the
/// daemon could not give: `why`, a line per daemon.
fn not_ready(frame: &mut Frame, area: Rect, title: &str, why: Vec<Line<'static>>) {
    frame.render_widget(
        Paragraph::new(why).block(Block::bordered().title(title.to_owned())),
        area,
    );
}

/// A bar per day, as many of the latest days as fit, each with its cost.
fn daily_chart(
    frame: &mut Frame,
    area: Rect,
    days: &[(NaiveDate, f64)],
    result: &GetUsageResult,
    on: &str,
) {
    let fit = usize::from(area.width.saturating_sub(2) / (BAR_WIDTH + BAR_GAP)).max(1);
    let shown = &days[days.len().saturating_sub(fit)..];
    let bars: Vec<Bar> = shown
        .iter()
        .map(|(day, cost)| {
            Bar::default()
                .value((cost * 100.0).round() as u64)
                .text_value(short_cost(*cost))
                .label(Line::from(day.format("%d").to_string()))
        })
        .collect();
    // The days shown, and which part they are of the days the total (below) counts.
    let part = match shown.len() {
        n if n < days.len() => format!("{n} of {USAGE_DAYS} days"),
        _ => format!("{USAGE_DAYS} days"),
    };
    let range = match (shown.first(), shown.last()) {
        (Some((first, _)), Some((last, _))) => {
            let (first, last) = (first.format("%b %-d"), last.format("%b %-d"));
            format!("{first} – {last} ({part})")
        }
        _ => String::new(),
    };
    let total = format!(" last {USAGE_DAYS} days: {} ", totals_text(&result.total));
    let block = Block::bordered()
        .title(format!(" Cost per day, US$ · {range}{on} "))
        .title_bottom(total);
    let chart = BarChart::default()
        .block(block)
        .data(BarGroup::default().bars(&bars))
        .bar_width(BAR_WIDTH)
        .bar_gap(BAR_GAP)
        .bar_style(Style::new().fg(Color::Cyan))
        .value_style(Style::new().fg(Color::Black).bg(Color::Cyan))
        .label_style(DIM);
    frame.render_widget(chart, area);
}

/// Tokens and cost of each model, highest cost first, and their total.
fn model_table(frame: &mut Frame, area: Rect, result: &GetUsageResult, on: &str) {
    // The figures right-aligned, under right-aligned headers.
    let right = |text: String| Line::from(text).right_aligned();
    let cells = |name: String, t: &UsageTotals| {
        let mut cells = vec![Line::from(name)];
        cells.extend(
            [
                tokens(t.input_tokens),
                tokens(t.output_tokens),
                tokens(t.cache_creation_input_tokens),
                tokens(t.cache_read_input_tokens),
                format!("${:.2}", t.cost_usd),
                t.turns.to_string(),
            ]
            .map(right),
        );
        cells
    };
    let mut rows: Vec<Row> = result
        .rows
        .iter()
        .map(|r| {
            let model = clean(&r.key);
            let model = hld_client::view::short_model(&model).to_owned();
            Row::new(cells(model, &r.totals))
        })
        .collect();
    if result.rows.is_empty() {
        rows.push(Row::new(["No turns stored yet."]).style(DIM));
    } else {
        rows.push(Row::new(cells("total".into(), &result.total)).bold());
    }
    let widths = [
        Constraint::Min(12),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(11),
        Constraint::Length(10),
        Constraint::Length(9),
        Constraint::Length(5),
    ];
    let header = MODEL_COLUMNS.iter().enumerate().map(|(i, h)| match i {
        0 => Line::from(*h),
        _ => Line::from(*h).right_aligned(),
    });
    let table = Table::new(rows, widths)
        .header(Row::new(header).style(DIM))
        .block(Block::bordered().title(format!(" By model, all time{on} ")));
    frame.render_widget(table, area);
}

/// `total`'s cost, turns and sessions in a few words.
fn totals_text(total: &UsageTotals) -> String {
    format!(
        "${:.2} · {} · {}",
        total.cost_usd,
        count(total.turns, "turn"),
        count(total.sessions, "session")
    )
}

/// A cost in at most four characters, for a bar: `0.42`, `12.3`, `123`, `12k`.
pub fn short_cost(cost: f64) -> String {
    match cost {
        c if c < 9.995 => format!("{c:.2}"),
        c if c < 99.95 => format!("{c:.1}"),
        c if c < 9999.5 => format!("{c:.0}"),
        c => format!("{:.0}k", c / 1000.0),
    }
}

/// A token count in a few characters: `950`, `12.3k`, `640k`, `1.2M`.
pub fn tokens(n: i64) -> String {
    let n = n.max(0) as f64;
    match n {
        n if n < 1e3 => format!("{n}"),
        n if n < 1e4 => format!("{:.1}k", n / 1e3),
        n if n < 1e6 => format!("{:.0}k", n / 1e3),
        n if n < 1e7 => format!("{:.1}M", n / 1e6),
        n if n < 1e9 => format!("{:.0}M", n / 1e6),
        n => format!("{:.1}G", n / 1e9),
    }
}

/// The usage-limit windows as the title bar shows them: `5h 91% · 7d 40%`, a window near or
/// at its limit in a warning style; one whose reset passed is over and not shown.
pub fn window_spans(windows: &[RateLimitWindow], now: DateTime<Utc>) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    let current = windows.iter().filter(|w| window_current(w, now));
    for (i, window) in current.enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", DIM));
        }
        let style = match window.status {
            RateLimitStatus::Rejected => LIMIT,
            _ if window_warns(window) => WARNING,
            _ => DIM,
        };
        spans.push(Span::styled(window_text(window), style));
    }
    spans
}

/// A session's context share, `43%`, in a warning style near the window's end.
pub fn context_span(s: &SessionInfo) -> Option<Span<'static>> {
    let share = context_share(s.effective_context_tokens, s.context_limit)?;
    let style = if share >= CONTEXT_WARNING {
        WARNING
    } else {
        Style::new()
    };
    Some(Span::styled(format!("{:.0}%", share * 100.0), style))
}

/// The usage limit that stopped a session, when it did.
pub fn limit_of(s: &SessionInfo) -> Option<&UsageLimit> {
    s.usage_limit
        .as_ref()
        .filter(|_| s.status == SessionStatus::Failed)
}

/// The status of a session stopped by a usage limit: `⊘ limit`.
pub fn limit_status(s: &SessionInfo) -> Option<Span<'static>> {
    limit_of(s).map(|_| Span::styled("⊘ limit", LIMIT))
}

/// A badge before a limited session's title: how long until its limit resets, `↻2h 13m`.
pub fn limit_badge(s: &SessionInfo, now: DateTime<Utc>) -> Option<Span<'static>> {
    let left = limit_of(s)?
        .resets_at
        .as_deref()
        .and_then(|at| until(at, now))?;
    Some(Span::styled(format!("↻{left} "), LIMIT))
}

/// A limited session's limit in a line: `⊘ usage limit (5h) · resets in 2h 13m`.
pub fn limit_line(s: &SessionInfo, now: DateTime<Utc>) -> Option<Line<'static>> {
    let limit = limit_of(s)?;
    Some(Line::styled(format!("⊘ {}", limit_text(limit, now)), LIMIT))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_and_tokens_are_short() {
        assert_eq!(short_cost(0.424), "0.42");
        assert_eq!(short_cost(12.34), "12.3");
        assert_eq!(short_cost(123.4), "123");
        assert_eq!(short_cost(12_345.0), "12k");
        for cost in [0.0, 9.999, 99.99, 9999.9, 99_999.0] {
            assert!(short_cost(cost).len() <= 4, "{cost}: {}", short_cost(cost));
        }
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(12_345), "12k");
        assert_eq!(tokens(1_234), "1.2k");
        assert_eq!(tokens(640_000), "640k");
        assert_eq!(tokens(1_260_000), "1.3M");
        assert_eq!(tokens(-5), "0");
    }
}
