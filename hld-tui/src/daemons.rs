//! How the daemons show: the title bar's link (each daemon's, in a fleet) and, in a fleet,
//! the mark of the daemon on each row, dimmed with a `↯` while that daemon is disconnected, and
//! the daemons whose figures the usage view shows.

use ratatui::style::{Color, Style, Stylize};
use ratatui::text::Span;

use crate::app::{away, LaunchForm, Link, Missing, State, Total};

/// The title bar's right end: the context and its link; in a fleet, each daemon's.
pub fn links(state: &State) -> Vec<Span<'static>> {
    if !state.fleet.is_fleet() {
        let mut spans = Vec::new();
        if let Some(context) = &state.context {
            spans.push(Span::styled(format!(" ⌂ {context}"), Style::new().bold()));
        }
        spans.push(match &state.link {
            Link::Connecting => Span::styled(" ○ connecting ", Style::new().fg(Color::Yellow)),
            Link::Connected => Span::styled(" ● connected ", Style::new().fg(Color::Green)),
            Link::Reconnecting { retry_in_ms, .. } => Span::styled(
                format!(" ○ reconnecting ({}) ", seconds(*retry_in_ms)),
                Style::new().fg(Color::Red).bold(),
            ),
        });
        return spans;
    }
    let mut spans: Vec<Span<'static>> = state
        .fleet
        .daemons
        .iter()
        .map(|d| match &d.link {
            Link::Connecting => Span::styled(
                format!(" ⌂ {} ○ connecting", d.name),
                Style::new().fg(Color::Yellow),
            ),
            Link::Connected => {
                Span::styled(format!(" ⌂ {} ●", d.name), Style::new().fg(Color::Green))
            }
            Link::Reconnecting { retry_in_ms, .. } => Span::styled(
                format!(
                    " ⌂ {} ↯ disconnected (retry {})",
                    d.name,
                    seconds(*retry_in_ms)
                ),
                Style::new().fg(Color::Red).bold(),
            ),
        })
        .collect();
    spans.push(Span::raw(" "));
    spans
}

/// In a fleet, the mark of `session_id`'s daemon on its row: `⌂NAME `, or `⌂NAME ↯ ` while
/// that daemon is disconnected (the row is as it was last seen).
pub fn mark(state: &State, session_id: &str) -> Option<Span<'static>> {
    let daemon = state.fleet.daemon_of(session_id)?;
    Some(match daemon.link {
        Link::Connected => Span::styled(format!("⌂{} ", daemon.name), Style::new().fg(Color::Cyan)),
        _ => Span::styled(
            format!("⌂{} ↯ ", daemon.name),
            Style::new().fg(Color::Red).dim(),
        ),
    })
}

/// The launch form's title; in a fleet, it names the daemon the session is launched on.
pub fn launch_title(state: &State, form: &LaunchForm) -> String {
    match state.fleet.daemons.get(form.daemon) {
        Some(daemon) if state.fleet.is_fleet() && form.draft.is_none() => format!(
            " New session on ⌂ {} (Ctrl+O: next daemon, Enter launches, Esc cancels) ",
            daemon.name
        ),
        Some(daemon) if state.fleet.is_fleet() => {
            format!(" Draft on ⌂ {} (Enter launches, Esc cancels) ", daemon.name)
        }
        _ => " New session (Enter launches, Esc cancels) ".to_owned(),
    }
}

/// In a fleet, the usage view's daemon for its titles: ` on ⌂NAME (Ctrl+O: next daemon)`;
/// empty with one daemon.
pub fn usage_of(state: &State, daemon: usize) -> String {
    match state.fleet.daemons.get(daemon) {
        Some(d) if state.fleet.is_fleet() => format!(" on ⌂{} (Ctrl+O: next daemon)", d.name),
        _ => String::new(),
    }
}

/// In a fleet, whose figures the usage view's total counts, for its titles: ` on all daemons:
/// ⌂laptop + ⌂box ↯; not counted: ⌂far (not connected) (Ctrl+O: next daemon)`, a daemon that
/// dropped out after answering marked `↯` (its figures as last seen).
pub fn usage_of_all(state: &State, total: &Total) -> String {
    let name = |daemon: usize| {
        state
            .fleet
            .daemons
            .get(daemon)
            .map_or("", |d| d.name.as_str())
    };
    let counted: Vec<String> = total
        .counted
        .iter()
        .map(|&daemon| match away(state, daemon) {
            Some(_) => format!("⌂{} ↯", name(daemon)),
            None => format!("⌂{}", name(daemon)),
        })
        .collect();
    let mut text = " on all daemons".to_owned();
    if !counted.is_empty() {
        text.push_str(&format!(": {}", counted.join(" + ")));
    }
    let missing: Vec<String> = total
        .missing
        .iter()
        .map(|(daemon, why)| {
            // A failure's reason is for the daemon's own view (Ctrl+O), the title being short.
            let why = match why {
                Missing::NotConnected => "not connected",
                Missing::Loading => "loading",
                Missing::Failed(_) => "usage unavailable",
            };
            format!("⌂{} ({why})", name(*daemon))
        })
        .collect();
    if !missing.is_empty() {
        text.push_str(&format!("; not counted: {}", missing.join(", ")));
    }
    text.push_str(" (Ctrl+O: next daemon)");
    text
}

/// Milliseconds as `1.5s`.
fn seconds(ms: u64) -> String {
    format!("{:.1}s", ms as f64 / 1000.0)
}
