//! The usage view in a fleet: all daemons' figures summed first, row by row (the day, the
//! model), the titles naming the daemons counted and those not (not connected, failed, still
//! loading); Ctrl+O each daemon's in turn, then all again; a daemon answering later adding
//! to the sums.

use crossterm::event::KeyCode;
use hld_client::protocol::{GetUsageResult, UsageGroupBy, UsageRow, UsageTotals};
use hld_tui::app::{route, update, Command, Msg, Route, State, UsageTable};

use super::fixtures::*;
use super::fleet::{fleet, from};

/// What some turns used: `tokens` input tokens (and as many of each other kind), `cost`.
fn totals(tokens: i64, cost_usd: f64, turns: u64) -> UsageTotals {
    UsageTotals {
        input_tokens: tokens,
        output_tokens: tokens,
        cache_creation_input_tokens: tokens,
        cache_read_input_tokens: tokens,
        cost_usd,
        sessions: turns,
        turns,
    }
}

/// A `getUsage` answer for `table` of `rows` (key, tokens, cost, turns), with their total.
fn usage(table: UsageTable, rows: &[(&str, i64, f64, u64)]) -> Msg {
    let rows: Vec<UsageRow> = rows
        .iter()
        .map(|&(key, tokens, cost, turns)| UsageRow {
            key: key.into(),
            totals: totals(tokens, cost, turns),
        })
        .collect();
    let total = rows.iter().fold(totals(0, 0.0, 0), |sum, row| {
        let t = &row.totals;
        totals(
            sum.input_tokens + t.input_tokens,
            sum.cost_usd + t.cost_usd,
            sum.turns + t.turns,
        )
    });
    let group_by = match table {
        UsageTable::Days => UsageGroupBy::Day,
        UsageTable::Models => UsageGroupBy::Model,
    };
    Msg::Usage {
        table,
        result: Ok(GetUsageResult {
            group_by,
            rows,
            total,
        }),
    }
}

/// The laptop's figures: a turn of sonnet on the 25th.
fn laptop(table: UsageTable) -> Msg {
    let key = match table {
        UsageTable::Days => "2026-11-25",
        UsageTable::Models => "claude-sonnet-4-5",
    };
    usage(table, &[(key, 1_000, 1.25, 1)])
}

/// The box's figures: two turns of sonnet on the 25th, one of haiku on the 26th.
fn the_box(table: UsageTable) -> Msg {
    let rows = match table {
        UsageTable::Days => [("2026-11-25", 2_000, 7.5, 2), ("2026-11-26", 500, 0.5, 1)],
        UsageTable::Models => [
            ("claude-sonnet-4-5", 2_000, 7.5, 2),
            ("claude-haiku-4-5", 500, 0.5, 1),
        ],
    };
    usage(table, &rows)
}

/// Both tables answered by `daemon` with `figures`.
fn answer(state: &mut State, daemon: usize, figures: fn(UsageTable) -> Msg) {
    for table in [UsageTable::Days, UsageTable::Models] {
        update(state, from(daemon, figures(table)));
    }
}

/// `commands` are the usage view's two loads from each of `daemons`, in turn.
#[track_caller]
fn usage_loads_on(state: &State, commands: &[Command], daemons: &[usize]) {
    let routes: Vec<Route> = commands.iter().map(|c| route(state, c)).collect();
    let expected: Vec<Route> = daemons
        .iter()
        .flat_map(|&d| [Route::One(d), Route::One(d)])
        .collect();
    assert_eq!(routes, expected, "{commands:?}");
    for command in commands {
        let Command::On { command: load, .. } = command else {
            panic!("{command:?}");
        };
        assert!(matches!(**load, Command::LoadUsage { .. }), "{load:?}");
    }
}

/// The line of `screen` that has `text`.
#[track_caller]
fn line_of<'a>(screen: &'a str, text: &str) -> &'a str {
    let found = screen.lines().find(|l| l.contains(text));
    found.unwrap_or_else(|| panic!("no line with {text}:\n{screen}"))
}

/// The cells of a table's line.
fn cells(line: &str) -> Vec<&str> {
    line.trim_matches(|c: char| c == '│' || c.is_whitespace())
        .split_whitespace()
        .collect()
}

#[test]
fn the_fleets_usage_view_opens_on_all_daemons_summed_and_ctrl_o_shows_each_then_all() {
    let mut state = fleet();
    let loads = keys(&mut state, "U");
    usage_loads_on(&state, &loads, &[0, 1]);
    let shown = screen(&state, false);
    assert!(
        shown.contains("not counted: ⌂laptop (loading), ⌂box (loading)"),
        "{shown}"
    );
    assert!(
        shown.contains("⌂laptop: Loading…") && shown.contains("⌂box: Loading…"),
        "{shown}"
    );

    answer(&mut state, 0, laptop);
    answer(&mut state, 1, the_box);
    let shown = screen(&state, false);
    let all = "on all daemons: ⌂laptop + ⌂box (Ctrl+O: next daemon)";
    assert!(
        shown.contains(&format!("By model, all time {all}")),
        "{shown}"
    );
    // The days shown first, then whose they are.
    let title = line_of(&shown, "Cost per day, US$ · ");
    assert!(title.contains(&format!(" {all}")), "{shown}");
    assert!(!shown.contains("not counted"), "{shown}");
    // Each model's row summed over the daemons that have it, highest cost first.
    let k3 = "3.0k";
    let sonnet = ["sonnet-4-5", k3, k3, k3, k3, "$8.75", "3"];
    assert_eq!(cells(line_of(&shown, "sonnet-4-5")), sonnet);
    let haiku = ["haiku-4-5", "500", "500", "500", "500", "$0.50", "1"];
    assert_eq!(cells(line_of(&shown, "haiku-4-5")), haiku);
    assert!(
        shown.find("sonnet-4-5") < shown.find("haiku-4-5"),
        "{shown}"
    );
    let k35 = "3.5k";
    let total = ["total", k35, k35, k35, k35, "$9.25", "4"];
    assert_eq!(cells(line_of(&shown, "total")), total);
    // Each day's bar summed too: the 25th's 1.25 + 7.5.
    assert!(
        shown.contains("last 30 days: $9.25 · 4 turns · 4 sessions"),
        "{shown}"
    );
    assert!(shown.contains("8.75"), "{shown}");

    // Ctrl+O: the laptop's alone, then the box's, then all again.
    let loads = update(&mut state, ctrl('o'));
    usage_loads_on(&state, &loads, &[0]);
    answer(&mut state, 1, the_box);
    answer(&mut state, 0, laptop);
    let shown = screen(&state, false);
    assert!(
        shown.contains("By model, all time on ⌂laptop (Ctrl+O: next daemon)"),
        "{shown}"
    );
    assert!(
        shown.contains("$1.25") && !shown.contains("$9.25"),
        "{shown}"
    );
    let loads = update(&mut state, ctrl('o'));
    usage_loads_on(&state, &loads, &[1]);
    answer(&mut state, 1, the_box);
    let shown = screen(&state, false);
    assert!(shown.contains("By model, all time on ⌂box"), "{shown}");
    assert!(line_of(&shown, "total").contains("$8.00"), "{shown}");
    let loads = update(&mut state, ctrl('o'));
    usage_loads_on(&state, &loads, &[0, 1]);
    assert!(screen(&state, false).contains("not counted: ⌂laptop (loading)"));

    // Left and opened again, it shows what it showed, loading it again.
    answer(&mut state, 0, laptop);
    answer(&mut state, 1, the_box);
    update(&mut state, key(KeyCode::Esc));
    let loads = keys(&mut state, "U");
    usage_loads_on(&state, &loads, &[0, 1]);
    assert!(screen(&state, false).contains("$9.25"));
}

#[test]
fn a_daemon_down_or_without_usage_is_named_not_counted_and_one_answering_later_adds_up() {
    let mut state = fleet();
    let lost = Msg::Disconnected {
        error: "connection refused".into(),
        retry_in_ms: 1000,
    };
    update(&mut state, from(1, lost));
    keys(&mut state, "U");
    answer(&mut state, 0, laptop);
    let shown = screen(&state, false);
    let some = "on all daemons: ⌂laptop; not counted: ⌂box (not connected)";
    assert!(
        shown.contains(&format!("By model, all time {some}")),
        "{shown}"
    );
    // The days shown first, then whose they are.
    let title = line_of(&shown, "Cost per day, US$ · ");
    assert!(title.contains(&format!(" {some}")), "{shown}");
    assert!(line_of(&shown, "total").contains("$1.25"), "{shown}");

    // The box back: its figures load and are added.
    let back = update(&mut state, from(1, Msg::Connected));
    let loads: Vec<Command> = back
        .into_iter()
        .filter(|c| matches!(c, Command::On { daemon: 1, .. }))
        .collect();
    usage_loads_on(&state, &loads, &[1]);
    answer(&mut state, 1, the_box);
    let shown = screen(&state, false);
    assert!(
        shown.contains("on all daemons: ⌂laptop + ⌂box ("),
        "{shown}"
    );
    assert!(line_of(&shown, "total").contains("$9.25"), "{shown}");

    // The box drops out again: its figures stay, as last seen, marked.
    let lost = Msg::Disconnected {
        error: "connection refused".into(),
        retry_in_ms: 1000,
    };
    update(&mut state, from(1, lost));
    let shown = screen(&state, false);
    assert!(
        shown.contains("on all daemons: ⌂laptop + ⌂box ↯ ("),
        "{shown}"
    );

    // An older daemon, without getUsage: named with its reason, the other's figures shown.
    update(&mut state, from(1, Msg::Connected));
    let failed = |table| Msg::Usage {
        table,
        result: Err("Method not found: getUsage".into()),
    };
    update(&mut state, from(1, failed(UsageTable::Models)));
    let shown = screen(&state, false);
    assert!(
        shown.contains("⌂laptop; not counted: ⌂box (usage unavailable) (Ctrl+O: next daemon)"),
        "{shown}"
    );
    assert!(line_of(&shown, "total").contains("$1.25"), "{shown}");
    // No daemon's figures: each one's why.
    update(&mut state, from(0, failed(UsageTable::Models)));
    let shown = screen(&state, false);
    assert!(
        shown.contains("⌂laptop: usage unavailable: Method not found: getUsage"),
        "{shown}"
    );
    assert!(
        shown.contains("⌂box: usage unavailable: Method not found: getUsage"),
        "{shown}"
    );
}

#[test]
fn with_one_daemon_the_usage_view_has_no_total_and_ctrl_o_does_nothing() {
    let mut state = State::new(now(), 120, 30, true);
    update(&mut state, Msg::Connected);
    let loads = keys(&mut state, "U");
    assert_eq!(loads.len(), 2, "{loads:?}");
    assert!(loads.iter().all(|c| matches!(c, Command::LoadUsage { .. })));
    for table in [UsageTable::Days, UsageTable::Models] {
        update(&mut state, laptop(table));
    }
    assert_eq!(update(&mut state, ctrl('o')), []);
    let shown = screen(&state, false);
    assert!(shown.contains(" By model, all time "), "{shown}");
    assert!(
        !shown.contains("daemons") && !shown.contains('⌂'),
        "{shown}"
    );
}
