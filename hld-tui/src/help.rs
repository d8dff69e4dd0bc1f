//! The help screen (`?`): every binding of [`BINDINGS`], by scope, in two columns (one when
//! two do not fit side by side), scrolled when the screen is too short for them.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use crate::keys::{Scope, BINDINGS};
use crate::view::centered;

/// The help's columns in `inner`, each with its area: two, the bindings by scope cut in half
/// (a scope cut in two has its heading again atop the second), when each of their lines fits
/// its half; else one.
fn columns(inner: Rect) -> Vec<(Vec<Line<'static>>, Rect)> {
    let heading = |scope: Scope| Line::styled(scope.title(), Style::new().bold().fg(Color::Cyan));
    // Each line with the scope it belongs to and whether it is the scope's heading.
    let mut lines: Vec<(Scope, bool, Line)> = Vec::new();
    for b in BINDINGS {
        if lines.last().is_none_or(|(scope, _, _)| *scope != b.scope) {
            lines.push((b.scope, true, heading(b.scope)));
        }
        let line = Line::from(vec![
            Span::styled(format!(" {:<12}", b.label), Style::new().bold()),
            Span::raw(b.help),
        ]);
        lines.push((b.scope, false, line));
    }
    let column = |lines: Vec<(Scope, bool, Line<'static>)>| -> Vec<Line<'static>> {
        lines.into_iter().map(|l| l.2).collect()
    };
    let whole = lines.clone();
    let half = lines.len().div_ceil(2);
    let mut right = lines.split_off(half);
    if let Some(&(scope, false, _)) = right.first() {
        right.insert(0, (scope, true, heading(scope)));
    }
    // A column apart, so that a full line of the first does not run into the second.
    let [l, r] = Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)])
        .spacing(1)
        .areas(inner);
    let fits = |lines: &[(Scope, bool, Line)], area: Rect| {
        lines.iter().all(|l| l.2.width() <= usize::from(area.width))
    };
    match fits(&lines, l) && fits(&right, r) {
        true => vec![(column(lines), l), (column(right), r)],
        false => vec![(column(whole), inner)],
    }
}

/// The help's box on a screen `area` tall (and wide): all of it but a row and a column each
/// side.
fn rect_of(area: Rect) -> Rect {
    centered(
        area,
        area.width.saturating_sub(2),
        area.height.saturating_sub(1),
    )
}

/// How many rows the help scrolls on a screen `width` by `height`: those of its longest
/// column that its box cannot show.
pub(crate) fn overflow(width: u16, height: u16) -> usize {
    let inner = Block::bordered().inner(rect_of(Rect::new(0, 0, width, height)));
    let longest = columns(inner).iter().map(|(lines, _)| lines.len()).max();
    longest
        .unwrap_or(0)
        .saturating_sub(usize::from(inner.height))
}

/// The keys, in two columns (or one); scrolled from row `top` when the screen is too short for
/// them.
pub(crate) fn draw(frame: &mut Frame, area: Rect, top: usize) {
    let rect = rect_of(area);
    let overflow = overflow(area.width, area.height);
    let top = top.min(overflow);
    crate::view::clear(frame, rect);
    let mut block = Block::bordered().title(" Keys (? or Esc closes) ");
    if overflow > 0 {
        let more = match (top > 0, top < overflow) {
            (true, true) => " ↑↓ j k: more ",
            (false, _) => " ↓ j k: more ",
            (true, false) => " ↑ k: more ",
        };
        block = block.title_bottom(more);
    }
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let scroll = (u16::try_from(top).unwrap_or(u16::MAX), 0);
    for (lines, at) in columns(inner) {
        frame.render_widget(Paragraph::new(lines).scroll(scroll), at);
    }
}
