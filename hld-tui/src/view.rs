//! `draw`: the state as a screen. It reads the state and writes cells, nothing else.

use chrono::{DateTime, Utc};
use hld_client::mode::Mode;
use hld_client::protocol::{ApprovalType, PermissionMode, SessionInfo, SessionStatus};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use crate::app::{Link, Modal, Screen, State, CHROME_ROWS, QUEUE_LINES, REPLY_ROWS};
use crate::keys::{fit_hints, hints};
use crate::render::{first_line, PLAN_TOOL};
use hld_client::view::{asked_together, clean, count};

/// The most rows an error too long for the footer takes, the footer's included.
const ERROR_ROWS: usize = 4;

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
pub(crate) const DIM: Style = Style::new().add_modifier(Modifier::DIM);
pub(crate) const SELECTED: Style = Style::new().add_modifier(Modifier::REVERSED);

/// Draws the whole screen; without `color`, only bold, dim and reverse remain (NO_COLOR).
pub fn draw(state: &State, frame: &mut Frame, color: bool) {
    let area = frame.area();
    if area.width < 20 || area.height < 5 {
        frame.render_widget(Paragraph::new("hld-tui: the terminal is too small"), area);
        return;
    }
    let [top, body, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(CHROME_ROWS - 1),
    ])
    .areas(area);
    title_bar(state, frame, top);
    match state.screen {
        Screen::Sessions => crate::lists::sessions(state, frame, body),
        Screen::Conversation => conversation(state, frame, body),
        Screen::Approvals => crate::lists::approvals(state, frame, body),
        Screen::Review => crate::diffview::review(state, frame, body),
        Screen::Usage => crate::usage::view(state, frame, body),
    }
    footer(state, frame, bottom);
    match &state.modal {
        None => {}
        Some(Modal::Help { top }) => crate::help::draw(frame, area, *top),
        Some(Modal::ConfirmInterrupt { session_id }) => {
            let title = state
                .sessions
                .iter()
                .find(|s| &s.id == session_id)
                .map_or_else(|| session_id.clone(), title_of);
            let text = vec![
                Line::from(format!("Interrupt “{title}”?")),
                Line::default(),
                Line::from("y / Enter: interrupt    n / Esc: keep it running").style(DIM),
            ];
            let area = centered(area, 60, 5);
            clear(frame, area);
            frame.render_widget(
                Paragraph::new(text).block(Block::bordered().title(" Interrupt ")),
                area,
            );
        }
        Some(Modal::Decide {
            approval_id,
            kind,
            input,
        }) => {
            let approval = state.approvals.iter().find(|a| &a.id == approval_id);
            // The hint stays below the text while one types.
            let mut hint = match kind {
                ApprovalType::HumanContact => " Alt+Enter new line · Enter sends · Esc cancels ",
                _ => " Why not? Optional · Enter denies · Esc cancels ",
            };
            let title = match (kind, approval) {
                // Several questions at once are answered a line each: the title asks the one
                // of the cursor's line, and Enter moves on to the next.
                (ApprovalType::HumanContact, Some(a)) => match asked_together(a) {
                    several if !several.is_empty() => {
                        let at = input.cursor().0.min(several.len() - 1);
                        hint = match at + 1 < several.len() {
                            true => " Enter: the next question · Esc cancels ",
                            false => " Enter sends · Esc cancels ",
                        };
                        format!(
                            " Answer {} of {}: {} ",
                            at + 1,
                            several.len(),
                            first_line(&several[at])
                        )
                    }
                    _ => format!(
                        " Answer: {} ",
                        first_line(a.message.as_deref().unwrap_or(""))
                    ),
                },
                (ApprovalType::HumanContact, None) => " Answer ".to_owned(),
                (_, Some(a)) if a.function_name.as_deref() == Some(PLAN_TOOL) => {
                    " Keep planning: what should change? ".to_owned()
                }
                // A tool call, or a kind this version does not know.
                (_, a) => format!(
                    " Deny {} ",
                    a.and_then(|a| a.function_name.as_deref())
                        .unwrap_or("the call")
                ),
            };
            let area = answer_box(state, area);
            clear(frame, area);
            let block = Block::bordered()
                .title(title)
                .title_bottom(Line::styled(hint, DIM));
            let inner = block.inner(area);
            frame.render_widget(block, area);
            frame.render_widget(&**input, inner);
        }
        Some(Modal::Launch(form)) => crate::launch::form(state, form, frame, area),
        Some(Modal::Rename { input, .. }) => {
            text_box(frame, area, " Rename (Enter saves, Esc cancels) ", input);
        }
        Some(Modal::Bypass { input, .. }) => text_box(
            frame,
            area,
            " Bypass permissions for how long? 30s, 15m, 2h; empty: until turned off ",
            input,
        ),
        Some(Modal::Model(picker)) => crate::pickers::model(picker, frame, area),
        Some(Modal::Merge {
            session_id,
            strategy,
        }) => crate::diffview::merge(state, frame, area, session_id, strategy),
        Some(Modal::ConfirmDiscard {
            session_id,
            refused,
        }) => crate::diffview::discard(state, frame, area, session_id, refused.as_deref()),
    }
    if !color {
        for cell in frame.buffer_mut().content.iter_mut() {
            cell.set_fg(Color::Reset).set_bg(Color::Reset);
        }
    }
}

fn title_bar(state: &State, frame: &mut Frame, area: Rect) {
    let tab = |label: &str, on: bool| {
        let style = if on {
            Style::new().bold().reversed()
        } else {
            DIM
        };
        Span::styled(format!(" {label} "), style)
    };
    let pending = state.approvals.len();
    let mut spans = vec![
        Span::styled(" hld ", Style::new().bold().fg(Color::Cyan)),
        tab("1 Sessions", state.screen == Screen::Sessions),
        tab("2 Approvals", state.screen == Screen::Approvals),
    ];
    if state.screen == Screen::Usage {
        spans.push(tab("U Usage", true));
    }
    if pending > 0 {
        spans.push(Span::styled(
            format!(" ⚑ {pending} pending "),
            Style::new().bold().fg(Color::Black).bg(Color::Yellow),
        ));
    }
    if state.screen == Screen::Conversation {
        if let Some(c) = &state.conversation {
            let session = state.sessions.iter().find(|s| s.id == c.session_id);
            spans.push(Span::raw(" "));
            if let Some(s) = session {
                spans.extend(crate::daemons::mark(state, &s.id));
                spans.push(status_span(s, state.frame));
                spans.push(Span::raw(" "));
                spans.push(mode_span(s));
                let model = model_of(s);
                if !model.is_empty() {
                    spans.push(Span::styled(format!(" · {model}"), DIM));
                }
                if let Some(share) = crate::usage::context_span(s) {
                    spans.push(Span::styled(" · ctx ", DIM));
                    spans.push(share);
                }
                spans.push(Span::raw(" "));
                spans.extend(modes_of(s, state.now, false));
                spans.push(Span::raw(title_of(s)));
            }
        }
    }
    let mut right = crate::usage::window_spans(&state.windows, state.now);
    right.extend(crate::daemons::links(state));
    let right = Line::from(right);
    let [left, right_area] =
        Layout::horizontal([Constraint::Min(0), Constraint::Length(right.width() as u16)])
            .spacing(1)
            .areas(area);
    // The title, last, is cut with an ellipsis to what the rest leaves of the left side.
    let fixed: usize = spans.iter().rev().skip(1).map(Span::width).sum();
    if let Some(last) = spans.last_mut() {
        let room = usize::from(left.width).saturating_sub(fixed);
        last.content = crate::columns::ellipsize(&last.content, room).into();
    }
    frame.render_widget(Line::from(spans), left);
    frame.render_widget(right, right_area);
}

/// The key-help line, after the latest one-line message (or the lost link) when there is one.
fn footer(state: &State, frame: &mut Frame, area: Rect) {
    let message = match (&state.flash, &state.link) {
        // An error is read whole: what went wrong is often in its later lines.
        (Some(flash), _) if flash.error => {
            let lines: Vec<_> = flash.text.lines().map(|l| clean(l.trim())).collect();
            Some((lines.join(" "), Color::Red))
        }
        (Some(flash), _) => Some((first_line(&flash.text), Color::Green)),
        (None, Link::Reconnecting { error, .. }) => Some((
            format!("daemon unreachable: {}", first_line(error)),
            Color::Red,
        )),
        (None, _) => None,
    };
    let mut spans = vec![Span::raw(" ")];
    let width = usize::from(area.width);
    if let Some((text, color)) = message {
        let too_wide = unicode_width::UnicodeWidthStr::width(text.as_str()) + 4 > width;
        // An error the line cannot hold is read whole, in rows it takes above the footer.
        if too_wide && color == Color::Red {
            let band = Paragraph::new(format!(" {text}"))
                .style(Style::new().fg(color))
                .wrap(Wrap { trim: false });
            let rows = band.line_count(area.width).clamp(1, ERROR_ROWS);
            let rows = u16::try_from(rows).unwrap_or(1);
            let top = area.y.saturating_sub(rows - 1);
            let area = Rect::new(area.x, top, area.width, area.bottom() - top);
            frame.render_widget(Clear, area);
            frame.render_widget(band, area);
            return;
        }
        // Any other message the line cannot hold beside the hints takes it all, cut with `…`.
        if too_wide {
            let cut = crate::columns::ellipsize(&text, width.saturating_sub(1));
            spans.push(Span::styled(cut, Style::new().fg(color)));
            frame.render_widget(Line::from(spans), area);
            return;
        }
        spans.push(Span::styled(text, Style::new().fg(color)));
        spans.push(Span::styled(" │ ", DIM));
    }
    let room = width.saturating_sub(Line::from(spans.clone()).width());
    spans.push(Span::styled(fit_hints(hints(state.screen), room), DIM));
    frame.render_widget(Line::from(spans), area);
}

/// A session's title: the one it was given, else its query's first line.
pub fn title_of(s: &SessionInfo) -> String {
    let text = [&s.control.title, &s.summary, &s.query]
        .into_iter()
        .find(|t| !t.is_empty())
        .unwrap_or(&s.query);
    first_line(text)
}

/// A session's modes, as short badges before its title: `↻` the time until the usage limit
/// that stopped it resets, `⚠` the bypass with the time it has left (`⚠∞` without an expiry),
/// `◉` a warm process, and with `mode`, `⏸` plan mode and `✎` auto-accept of edits.
pub fn modes_of(s: &SessionInfo, now: DateTime<Utc>, mode: bool) -> Vec<Span<'static>> {
    let mut spans: Vec<Span<'static>> = crate::usage::limit_badge(s, now).into_iter().collect();
    if let Some(left) = crate::app::bypass_left(s, now) {
        let left = left.map_or_else(
            || "∞".to_owned(),
            |d| {
                let secs = d.num_seconds().max(0);
                match secs {
                    0..60 => format!("{secs}s"),
                    60..3600 => format!("{}m", (secs + 59) / 60),
                    _ => format!("{}h", secs / 3600),
                }
            },
        );
        spans.push(Span::styled(
            format!("⚠{left} "),
            Style::new().fg(Color::Red).bold(),
        ));
    }
    if mode && s.control.permission_mode == PermissionMode::Plan {
        spans.push(Span::styled("⏸ ", Style::new().fg(Color::Magenta).bold()));
    }
    if mode && s.control.auto_accept_edits {
        spans.push(Span::styled("✎ ", Style::new().fg(Color::Cyan)));
    }
    if s.live && !s.status.is_active() {
        // Its process is warm: a reply starts at once.
        spans.push(Span::styled("◉ ", Style::new().fg(Color::Green)));
    }
    spans
}

/// A session's mode (plan, accept edits, default) as Claude Code words it.
pub(crate) fn mode_span(s: &SessionInfo) -> Span<'static> {
    match Mode::of(&s.control) {
        Mode::Plan => Span::styled("⏸ plan", Style::new().fg(Color::Magenta).bold()),
        Mode::AcceptEdits => Span::styled("⏵⏵ accept edits", Style::new().fg(Color::Cyan)),
        Mode::Default => Span::styled("default", DIM),
    }
}

/// A session's model, without the `claude-` every id starts with.
pub(crate) fn model_of(s: &SessionInfo) -> String {
    let model = s.model.as_deref().unwrap_or("");
    first_line(hld_client::view::short_model(model))
}

pub(crate) fn status_span(s: &SessionInfo, frame: u64) -> Span<'static> {
    if let Some(limit) = crate::usage::limit_status(s) {
        return limit;
    }
    if s.control.draft.is_some() {
        return Span::styled("✎ draft", Style::new().fg(Color::Cyan));
    }
    let spin = SPINNER[(frame as usize) % SPINNER.len()];
    match &s.status {
        SessionStatus::Starting => {
            Span::styled(format!("{spin} starting"), Style::new().fg(Color::Blue))
        }
        SessionStatus::Running => {
            Span::styled(format!("{spin} running"), Style::new().fg(Color::Green))
        }
        SessionStatus::WaitingInput => {
            Span::styled("⚑ waiting", Style::new().fg(Color::Yellow).bold())
        }
        SessionStatus::Completing => {
            Span::styled(format!("{spin} stopping"), Style::new().fg(Color::Magenta))
        }
        SessionStatus::Completed if s.interrupted => {
            Span::styled("■ interrupted", Style::new().fg(Color::Yellow))
        }
        SessionStatus::Completed => {
            Span::styled("✓ completed", Style::new().fg(Color::Green).dim())
        }
        SessionStatus::Failed => Span::styled("✗ failed", Style::new().fg(Color::Red)),
        // A status this version does not know (from a newer daemon), as it came.
        other => Span::styled(format!("? {other}"), Style::new().fg(Color::Gray)),
    }
}

/// How long ago `rfc3339` was, in the largest whole unit.
pub fn age(now: DateTime<Utc>, rfc3339: &str) -> String {
    let Ok(then) = DateTime::parse_from_rfc3339(rfc3339) else {
        return "?".into();
    };
    let secs = (now - then.with_timezone(&Utc)).num_seconds().max(0);
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86400),
    }
}

fn conversation(state: &State, frame: &mut Frame, area: Rect) {
    let Some(c) = &state.conversation else { return };
    let reply = c.reply.is_some();
    let limit = state
        .sessions
        .iter()
        .find(|s| s.id == c.session_id)
        .and_then(|s| stopped_line(s, state.now));
    let [banner, body, queue_area, reply_area] = Layout::vertical([
        Constraint::Length(limit.is_some().into()),
        Constraint::Min(0),
        Constraint::Length(c.queue_rows()),
        Constraint::Length(if reply { REPLY_ROWS } else { 0 }),
    ])
    .areas(area);
    if let Some(line) = limit {
        frame.render_widget(line, banner);
    }
    queue(c, frame, queue_area);
    if c.events.is_empty() {
        let text = if c.loaded {
            "No events yet."
        } else {
            "Loading…"
        };
        frame.render_widget(Paragraph::new(text).style(DIM), body);
    } else {
        let top = state.conversation_top();
        let lines: Vec<Line> = c
            .blocks
            .iter()
            .flatten()
            .skip(top)
            .take(usize::from(body.height))
            .cloned()
            .collect();
        frame.render_widget(Paragraph::new(lines), body);
        let below = c
            .total_lines()
            .saturating_sub(top + usize::from(body.height));
        if !c.follow && below > 0 {
            let note = format!(" ↓ {} · G follows ", count(below as u64, "more line"));
            let width = (note.chars().count() as u16).min(body.width);
            let at = Rect::new(body.right() - width, body.bottom() - 1, width, 1);
            frame.render_widget(Span::styled(note, Style::new().reversed()), at);
        }
    }
    if let Some(input) = &c.reply {
        let title = if crate::app::working(state) {
            " Message (queued until the agent's turn ends) "
        } else {
            " Reply (the session goes on) "
        };
        let block = Block::new().borders(Borders::TOP).title(title);
        let inner = block.inner(reply_area);
        frame.render_widget(block, reply_area);
        frame.render_widget(input, inner);
        if let Some(open) = &c.complete.open {
            crate::pickers::completion(open, frame, body);
        }
    }
}

/// The line above a failed session's conversation that says why it stopped: its usage limit
/// and reset, or its error (a failed turn's events end where it failed, saying nothing).
fn stopped_line(s: &SessionInfo, now: DateTime<Utc>) -> Option<Line<'static>> {
    if s.status != SessionStatus::Failed {
        return None;
    }
    crate::usage::limit_line(s, now).or_else(|| {
        let why = s.error.as_deref().filter(|e| !e.is_empty());
        let text = why.map_or("✗ failed".into(), |e| {
            format!("✗ failed: {}", first_line(e))
        });
        Some(Line::styled(text, Style::new().fg(Color::Red)))
    })
}

/// The messages waiting for the session's turn to end, oldest first.
fn queue(c: &crate::app::Conversation, frame: &mut Frame, area: Rect) {
    if c.queue.is_empty() {
        return;
    }
    let block = Block::new()
        .borders(Borders::TOP)
        .title(" Queued for the next turn (x cancels the last) ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let shown = c.queue.len().min(QUEUE_LINES);
    let mut lines: Vec<Line> = c.queue[..shown]
        .iter()
        .map(|m| {
            let text = first_line(&m.text);
            Line::from(vec![
                Span::styled("⧗ ", Style::new().fg(Color::Yellow)),
                Span::raw(text),
            ])
        })
        .collect();
    if c.queue.len() > shown {
        let more = c.queue.len() - shown + 1;
        lines.pop();
        lines.push(Line::styled(format!("… and {more} more"), DIM));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// Where the answer (or deny) box goes: clear of what is asked. That is above the box on
/// the approvals screen (the detail) and in a conversation that leaves room below its end;
/// below it in a conversation whose end, where the question is, reaches the bottom.
fn answer_box(state: &State, area: Rect) -> Rect {
    let mut rect = centered(area, 70, 6);
    let low = area.bottom().saturating_sub(rect.height + 1);
    rect.y = match &state.conversation {
        Some(c) if state.screen == Screen::Conversation => {
            let shown = c.total_lines().saturating_sub(state.conversation_top());
            let room = state.conversation_height().saturating_sub(shown);
            if room > usize::from(rect.height) {
                low
            } else {
                area.y + 1
            }
        }
        _ => low,
    };
    rect
}

/// A one-line text box in the middle of the screen.
fn text_box(frame: &mut Frame, area: Rect, title: &str, input: &tui_textarea::TextArea) {
    let rect = centered(area, 76, 3);
    clear(frame, rect);
    let block = Block::bordered().title(title.to_owned());
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    frame.render_widget(input, inner);
}

/// Clears `area` for a popup. A wide character just left of it (a CJK title) would cover
/// its first column, and ratatui, skipping the cell a wide character covers, would never draw
/// the popup's left border there: that character becomes a space.
pub(crate) fn clear(frame: &mut Frame, area: Rect) {
    frame.render_widget(Clear, area);
    let Some(left) = area.x.checked_sub(1) else {
        return;
    };
    for y in area.top()..area.bottom() {
        if let Some(cell) = frame.buffer_mut().cell_mut((left, y)) {
            if unicode_width::UnicodeWidthStr::width(cell.symbol()) > 1 {
                cell.set_symbol(" ");
            }
        }
    }
}

/// A `width`×`height` rectangle in the middle of `area`, clipped to it.
pub(crate) fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    )
}
