//! What agents cost and the limits they run into: the usage view (cost per day and by model,
//! from `getUsage`), the usage-limit windows of the title bar (`getRateLimits`, then
//! `rate_limit_updated`), and the daemon's notifications rung once each.

use chrono::{Days, Local, NaiveDate};
use hld_client::protocol::{GetUsageResult, Notification, RateLimitWindow};

use super::*;

/// Days the usage view's chart covers, today included.
pub const USAGE_DAYS: u64 = 30;

/// One of the usage view's two tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UsageTable {
    /// Cost per day over the last [`USAGE_DAYS`].
    Days,
    /// Tokens and cost per model, all time.
    Models,
}

/// Where a load of the usage view stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Loaded {
    Loading,
    Ready(GetUsageResult),
    /// The daemon's reason (an older daemon has no `getUsage`).
    Failed(String),
}

/// The usage view.
#[derive(Debug)]
pub struct UsageView {
    /// In a fleet, the daemon whose figures are shown (each stores its own sessions' turns):
    /// the selected row's when the view opens, Ctrl+O the next.
    pub daemon: usize,
    /// The chart's first day, in local time (the daemon groups days by its local time).
    pub since: NaiveDate,
    pub days: Loaded,
    pub models: Loaded,
}

/// Opens the usage view and loads it (again, when it was open before: what it showed stays
/// until the answers replace it, unless they come from another daemon of the fleet).
pub(super) fn open(state: &mut State) -> Vec<Command> {
    let today = state.now.with_timezone(&Local).date_naive();
    let since = today
        .checked_sub_days(Days::new(USAGE_DAYS - 1))
        .unwrap_or(today);
    let daemon = match state.selected_session() {
        Some(s) => state.fleet.origin(&s.id),
        None => state.usage.as_ref().map_or(0, |view| view.daemon),
    };
    match &mut state.usage {
        Some(view) if view.daemon == daemon => view.since = since,
        usage => {
            *usage = Some(UsageView {
                daemon,
                since,
                days: Loaded::Loading,
                models: Loaded::Loading,
            })
        }
    }
    state.screen = Screen::Usage;
    reload(state)
}

/// The loads of the usage view, when it is open; in a fleet, from the daemon it shows.
pub(super) fn reload(state: &State) -> Vec<Command> {
    let Some(view) = state
        .usage
        .as_ref()
        .filter(|_| state.screen == Screen::Usage)
    else {
        return Vec::new();
    };
    let loads = [
        Command::LoadUsage {
            table: UsageTable::Days,
            since: Some(view.since.to_string()),
        },
        Command::LoadUsage {
            table: UsageTable::Models,
            since: None,
        },
    ];
    loads
        .into_iter()
        .map(|load| fleet::on_daemon(state, view.daemon, load))
        .collect()
}

/// A load of the usage view answered by `daemon` (in a fleet; `None` outside): one from a
/// daemon the view no longer shows is dropped.
pub(super) fn loaded(
    state: &mut State,
    daemon: Option<usize>,
    table: UsageTable,
    result: Result<GetUsageResult, String>,
) {
    let Some(view) = state.usage.as_mut() else {
        return;
    };
    if daemon.is_some_and(|d| d != view.daemon) {
        return;
    }
    let loaded = match result {
        Ok(result) => Loaded::Ready(result),
        Err(reason) => Loaded::Failed(reason),
    };
    match table {
        UsageTable::Days => view.days = loaded,
        UsageTable::Models => view.models = loaded,
    }
}

/// The usage view's keys: Esc goes back; in a fleet, Ctrl+O shows the next daemon's figures.
pub(super) fn act(state: &mut State, action: Action) -> Vec<Command> {
    match action {
        Action::Back => state.screen = Screen::Sessions,
        Action::NextDaemon if state.fleet.is_fleet() => {
            if let Some(view) = &mut state.usage {
                view.daemon = (view.daemon + 1) % state.fleet.daemons.len();
                view.days = Loaded::Loading;
                view.models = Loaded::Loading;
            }
            return reload(state);
        }
        _ => {}
    }
    Vec::new()
}

/// The daily chart's days, oldest first, each with its cost: every day from `since` to
/// `today`, a day without turns at zero.
pub fn daily_costs(
    result: &GetUsageResult,
    since: NaiveDate,
    today: NaiveDate,
) -> Vec<(NaiveDate, f64)> {
    since
        .iter_days()
        .take_while(|day| *day <= today)
        .map(|day| {
            let key = day.to_string();
            let cost = result
                .rows
                .iter()
                .filter(|row| row.key == key)
                .map(|row| row.totals.cost_usd)
                .sum();
            (day, cost)
        })
        .collect()
}

/// Windows as the daemon reported them: each replaces the one of its kind unless that one is
/// newer (a `getRateLimits` answer may arrive after a `rate_limit_updated` it predates).
pub(super) fn merge_windows(state: &mut State, windows: Vec<RateLimitWindow>) {
    for window in windows {
        match state.windows.iter_mut().find(|w| w.kind == window.kind) {
            Some(known) if newer(&window, known) => *known = window,
            Some(_) => {}
            None => state.windows.push(window),
        }
    }
}

fn newer(window: &RateLimitWindow, than: &RateLimitWindow) -> bool {
    let at = |w: &RateLimitWindow| DateTime::parse_from_rfc3339(&w.updated_at).ok();
    match (at(window), at(than)) {
        (Some(a), Some(b)) => a >= b,
        _ => true,
    }
}

/// The daemon notified: rings once per notification, while the bell is on.
pub(super) fn notified(state: &mut State, notification: Notification) -> Vec<Command> {
    if !state.notified.insert(notification.id) || !state.bell {
        return Vec::new();
    }
    let text = match &notification.answer {
        Some(answer) => format!("{} · {answer}", notification.text),
        None => notification.text,
    };
    vec![Command::Notify {
        title: notification.title,
        text,
    }]
}

#[cfg(test)]
mod tests {
    use hld_client::protocol::{RateLimitKind, RateLimitStatus, UsageRow, UsageTotals};

    use super::*;

    fn window(kind: RateLimitKind, used: f64, at: &str) -> RateLimitWindow {
        RateLimitWindow {
            kind,
            status: RateLimitStatus::Allowed,
            utilization: Some(used),
            resets_at: None,
            updated_at: at.into(),
        }
    }

    #[test]
    fn a_window_is_replaced_by_a_newer_report_only() {
        let mut state = State::new(Utc::now(), 80, 24, true);
        let early = "2026-11-29T10:00:00Z";
        let late = "2026-11-29T11:00:00Z";
        merge_windows(&mut state, vec![window(RateLimitKind::FiveHour, 0.5, late)]);
        merge_windows(
            &mut state,
            vec![
                window(RateLimitKind::FiveHour, 0.2, early),
                window(RateLimitKind::SevenDay, 0.1, early),
            ],
        );
        let used: Vec<_> = state.windows.iter().map(|w| w.utilization).collect();
        assert_eq!(used, [Some(0.5), Some(0.1)]);
        merge_windows(&mut state, vec![window(RateLimitKind::FiveHour, 0.9, late)]);
        assert_eq!(state.windows[0].utilization, Some(0.9));
    }

    #[test]
    fn every_day_of_the_chart_has_a_bar() {
        let row = |key: &str, cost_usd| UsageRow {
            key: key.into(),
            totals: UsageTotals {
                cost_usd,
                ..Default::default()
            },
        };
        let result = GetUsageResult {
            rows: vec![row("2026-11-27", 1.5), row("2026-11-29", 0.25)],
            ..Default::default()
        };
        let day = |d: &str| d.parse::<NaiveDate>().unwrap();
        let costs = daily_costs(&result, day("2026-11-26"), day("2026-11-29"));
        assert_eq!(
            costs,
            [
                (day("2026-11-26"), 0.0),
                (day("2026-11-27"), 1.5),
                (day("2026-11-28"), 0.0),
                (day("2026-11-29"), 0.25)
            ]
        );
    }
}
