//! What agents cost and the limits they run into: the usage view (cost per day and by model,
//! from `getUsage`; in a fleet, each daemon's or all summed), the usage-limit windows of the title bar (`getRateLimits`, then
//! `rate_limit_updated`), and the daemon's notifications rung once each.

use chrono::{Days, Local, NaiveDate};
use hld_client::protocol::{GetUsageResult, Notification, RateLimitWindow};

use super::*;

mod total;

pub use total::{standing, total, Missing, Total};

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

/// Whose figures the usage view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// One daemon's (the only one outside a fleet).
    Daemon(usize),
    /// In a fleet, every daemon's, summed.
    All,
}

/// The usage view.
#[derive(Debug)]
pub struct UsageView {
    /// In a fleet, all daemons' summed when the view first opens (a fleet is watched as one,
    /// so what it spends in all comes first); Ctrl+O shows each daemon's in the fleet's order,
    /// then all again. Reopened, the view shows whose it showed.
    pub shown: Shown,
    /// The chart's first day, in local time (the daemon groups days by its local time).
    pub since: NaiveDate,
    /// Each daemon's answer by day and by model, by its index (one daemon outside a fleet).
    pub days: Vec<Loaded>,
    pub models: Vec<Loaded>,
}

impl UsageView {
    /// Each daemon's answer for `table`, by its index.
    pub fn answers(&self, table: UsageTable) -> &[Loaded] {
        match table {
            UsageTable::Days => &self.days,
            UsageTable::Models => &self.models,
        }
    }

    /// Every answer loading again (whose figures are shown changed).
    fn forget(&mut self) {
        for loaded in self.days.iter_mut().chain(&mut self.models) {
            *loaded = Loaded::Loading;
        }
    }
}

/// Opens the usage view and loads it (again, when it was open before: what it showed stays
/// until the answers replace it).
pub(super) fn open(state: &mut State) -> Vec<Command> {
    let today = state.now.with_timezone(&Local).date_naive();
    let since = today
        .checked_sub_days(Days::new(USAGE_DAYS - 1))
        .unwrap_or(today);
    match &mut state.usage {
        Some(view) => view.since = since,
        usage => {
            let (shown, daemons) = match state.fleet.is_fleet() {
                true => (Shown::All, state.fleet.daemons.len()),
                false => (Shown::Daemon(0), 1),
            };
            *usage = Some(UsageView {
                shown,
                since,
                days: vec![Loaded::Loading; daemons],
                models: vec![Loaded::Loading; daemons],
            })
        }
    }
    state.screen = Screen::Usage;
    reload(state)
}

/// The loads of the usage view, when it is open; in a fleet, from the daemon it shows, or
/// from each daemon for their total.
pub(super) fn reload(state: &State) -> Vec<Command> {
    let Some(view) = state
        .usage
        .as_ref()
        .filter(|_| state.screen == Screen::Usage)
    else {
        return Vec::new();
    };
    let daemons = match view.shown {
        Shown::Daemon(daemon) => daemon..daemon + 1,
        Shown::All => 0..state.fleet.daemons.len(),
    };
    let loads = || {
        [
            Command::LoadUsage {
                table: UsageTable::Days,
                since: Some(view.since.to_string()),
            },
            Command::LoadUsage {
                table: UsageTable::Models,
                since: None,
            },
        ]
    };
    daemons
        .flat_map(|daemon| loads().map(|load| fleet::on_daemon(state, daemon, load)))
        .collect()
}

/// A load of the usage view answered by `daemon` (in a fleet; `None` outside): one from a
/// daemon whose figures the view no longer shows is dropped.
pub(super) fn loaded(
    state: &mut State,
    daemon: Option<usize>,
    table: UsageTable,
    result: Result<GetUsageResult, String>,
) {
    let Some(view) = state.usage.as_mut() else {
        return;
    };
    let daemon = daemon.unwrap_or(0);
    if matches!(view.shown, Shown::Daemon(shown) if shown != daemon) {
        return;
    }
    let answers = match table {
        UsageTable::Days => &mut view.days,
        UsageTable::Models => &mut view.models,
    };
    if let Some(answer) = answers.get_mut(daemon) {
        *answer = match result {
            Ok(result) => Loaded::Ready(result),
            Err(reason) => Loaded::Failed(reason),
        };
    }
}

/// The usage view's keys: Esc goes back; in a fleet, Ctrl+O shows the next daemon's figures,
/// after the last daemon's all daemons' summed, then the first daemon's again.
pub(super) fn act(state: &mut State, action: Action) -> Vec<Command> {
    match action {
        Action::Back => state.screen = Screen::Sessions,
        Action::NextDaemon if state.fleet.is_fleet() => {
            let daemons = state.fleet.daemons.len();
            if let Some(view) = &mut state.usage {
                view.shown = match view.shown {
                    Shown::Daemon(d) if d + 1 < daemons => Shown::Daemon(d + 1),
                    Shown::Daemon(_) => Shown::All,
                    Shown::All => Shown::Daemon(0),
                };
                view.forget();
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
