//! The pickers drawn over a screen: the model picker (a text box over the recent models and
//! aliases) and the reply box's completion list (slash commands or files), just above it.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;
use unicode_width::UnicodeWidthStr;

use crate::app::{Completion, ModelPicker, Trigger};
use crate::columns::ellipsize;
use crate::view::{centered, DIM, SELECTED};
use hld_client::view::clean;

/// The most entries a list shows at once; the chosen one is always among them.
const LIST_ROWS: usize = 8;

/// The first row to show of `len` rows so that `selected` is among `rows` shown.
fn first_shown(selected: usize, len: usize, rows: usize) -> usize {
    selected
        .saturating_sub(rows.saturating_sub(1))
        .min(len.saturating_sub(rows))
}

pub(crate) fn model(picker: &ModelPicker, frame: &mut Frame, area: Rect) {
    let choices = picker.choices();
    let rows = choices.len().clamp(1, LIST_ROWS);
    let rect = centered(area, 60, rows as u16 + 4);
    crate::view::clear(frame, rect);
    let block = Block::bordered()
        .title(" Model (Enter picks, ↑/↓ choose, Esc cancels) ")
        .title_bottom(Line::styled(
            " any model id works: it goes to claude as typed ",
            DIM,
        ));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let [input, _, list] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(inner);
    frame.render_widget(&picker.input, input);
    if choices.is_empty() {
        frame.render_widget(Line::styled("  type a model", DIM), list);
        return;
    }
    let width = usize::from(list.width);
    let first = first_shown(picker.selected, choices.len(), rows);
    let lines: Vec<Line> = choices
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, m)| {
            let current = picker.current.as_deref() == Some(m.as_str());
            let mark = if current { "● " } else { "  " };
            // The typed text, last, when it is no model listed: it goes as typed.
            let note = match (current, picker.models.contains(m)) {
                (true, _) => "  (now)",
                (false, false) => "  (as typed)",
                (false, true) => "",
            };
            let text = ellipsize(&format!("{mark}{}{note}", clean(m)), width);
            let line = Line::from(text);
            if i == picker.selected {
                line.style(SELECTED)
            } else {
                line
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), list);
}

/// The completion list, over the bottom of `body` (the conversation above the reply box).
pub(crate) fn completion(open: &Completion, frame: &mut Frame, body: Rect) {
    let (title, empty) = match (open.trigger, open.loading) {
        (Trigger::Command, _) => (" Commands (Tab takes, Esc closes) ", "no such command"),
        (Trigger::File, false) => (" Files (Tab takes, Esc closes) ", "no such file"),
        (Trigger::File, true) => (" Files… (Tab takes, Esc closes) ", "looking…"),
    };
    let rows = open.choices.len().clamp(1, LIST_ROWS);
    let height = (rows as u16 + 2).min(body.height);
    let width = body.width.min(72);
    if height < 3 {
        return;
    }
    let rect = Rect::new(body.x, body.bottom() - height, width, height);
    crate::view::clear(frame, rect);
    let block = Block::bordered().title(title).border_style(DIM);
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    if open.choices.is_empty() {
        frame.render_widget(Line::styled(format!(" {empty}"), DIM), inner);
        return;
    }
    let sigil = open.trigger.sigil();
    let room = usize::from(inner.width);
    let first = first_shown(open.selected, open.choices.len(), usize::from(inner.height));
    let lines: Vec<Line> = open
        .choices
        .iter()
        .enumerate()
        .skip(first)
        .take(usize::from(inner.height))
        .map(|(i, choice)| {
            let name = ellipsize(&format!("{sigil}{}", clean(&choice.text)), room);
            let left = room.saturating_sub(name.width() + 2);
            let detail = ellipsize(&clean(&choice.detail), left);
            let line = Line::from(vec![
                Span::styled(name, Style::new().bold().fg(Color::Cyan)),
                Span::styled(format!("  {detail}"), DIM),
            ]);
            if i == open.selected {
                line.style(SELECTED)
            } else {
                line
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}
