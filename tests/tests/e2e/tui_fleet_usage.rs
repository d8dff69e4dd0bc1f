//! The usage view in the fleet (`hld-tui --all-contexts`): every daemon's figures summed, the
//! titles naming the daemons counted; Ctrl+O each daemon's alone, named, then the total again;
//! a daemon stopped named as not counted while the other's figures are shown.

use hld_client::protocol::{
    GetUsage, GetUsageParams, GetUsageResult, LaunchSessionParams, UsageGroupBy, UsageTotals,
};
use hld_client::view::count;
use hld_e2e::{launch_params, DaemonOptions, TestDaemon, WAIT};

use crate::contexts::wss_daemon;
use crate::tui::workdir;
use crate::tui_fleet::{dashboard, home_with_box};

/// Runs a plain session of one turn on `d` to its end for each of `models` (`None`: the
/// default model).
fn turns(d: &TestDaemon, models: &[Option<&str>]) {
    let work = workdir();
    for model in models {
        let id = d.launch(LaunchSessionParams {
            model: model.map(str::to_owned),
            ..launch_params("scenario:plain say hello", work.path())
        });
        d.wait_ended(&id);
    }
}

fn by_model(d: &TestDaemon) -> GetUsageResult {
    d.request::<GetUsage>(GetUsageParams {
        since: None,
        group_by: UsageGroupBy::Model,
    })
}

/// The chart's total line for `total`.
fn total_line(total: &UsageTotals) -> String {
    format!(
        "last 30 days: ${:.2} · {} · {}",
        total.cost_usd,
        count(total.turns, "turn"),
        count(total.sessions, "session")
    )
}

/// The cells of the by-model table's line for `model` on `screen`, if it has one: model,
/// input, output, cache write, cache read, cost, turns.
fn cells<'a>(screen: &'a str, model: &str) -> Option<Vec<&'a str>> {
    screen
        .lines()
        .map(|line| {
            line.trim_matches(|c: char| c == '│' || c.is_whitespace())
                .split_whitespace()
                .collect::<Vec<_>>()
        })
        .find(|cells| cells.first() == Some(&model))
}

/// The by-model table's cost and turns on `screen` for each row of `expected`, and its total,
/// are those of `expected`.
fn shows(screen: &str, expected: &GetUsageResult) -> bool {
    let row_shown = |name: &str, totals: &UsageTotals| {
        cells(screen, name).is_some_and(|cells| {
            cells.len() == 7
                && cells[5] == format!("${:.2}", totals.cost_usd)
                && cells[6] == totals.turns.to_string()
        })
    };
    expected.rows.iter().all(|row| {
        let name = row.key.strip_prefix("claude-").unwrap_or(&row.key);
        row_shown(name, &row.totals)
    }) && row_shown("total", &expected.total)
        && screen.contains(&total_line(&expected.total))
}

#[test]
fn the_fleets_usage_view_shows_every_daemons_figures_summed_and_one_stopped_named() {
    let certs = tempfile::tempdir().unwrap();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (mut far, url, pin) = wss_daemon(certs.path(), 0);
    // A model both daemons used (their rows are summed), and one the box alone used.
    turns(&local, &[None]);
    turns(&far, &[None, Some("claude-opus-4-1")]);
    let (near, away) = (by_model(&local), by_model(&far));
    assert_eq!((near.rows.len(), away.rows.len()), (1, 2), "{away:#?}");
    let shared = &near.rows[0];
    let summed = away.rows.iter().find(|r| r.key == shared.key).unwrap();
    let sum = |a: &UsageTotals, b: &UsageTotals| UsageTotals {
        cost_usd: a.cost_usd + b.cost_usd,
        turns: a.turns + b.turns,
        sessions: a.sessions + b.sessions,
        ..UsageTotals::default()
    };
    let mut total = away.clone();
    for row in &mut total.rows {
        if row.key == shared.key {
            row.totals = sum(&summed.totals, &shared.totals);
        }
    }
    total.total = sum(&near.total, &away.total);
    assert_eq!(total.total.turns, 3);

    let home = home_with_box(&far, &url, pin);
    let args = ["--all-contexts", "--no-bell"];
    let mut tui = dashboard("hld-tui", home, &local.socket, &args, &[]);
    tui.wait_until("both daemons connected", WAIT, |screen| {
        screen.contains("⌂ local ●") && screen.contains("⌂ box ●")
    });
    let all = |screen: &str| {
        let both = ["⌂local + ⌂box (", "⌂box + ⌂local ("];
        both.iter().any(|counted| {
            screen.contains(&format!("By model, all time on all daemons: {counted}"))
        }) && shows(screen, &total)
    };
    tui.send("U");
    tui.wait_until("both daemons' figures summed", WAIT, all);

    // Ctrl+O: each daemon's figures alone, named, in the fleet's order; then the total.
    let one = |name: &str, figures: &GetUsageResult, screen: &str| {
        screen.contains(&format!("By model, all time on ⌂{name} (")) && shows(screen, figures)
    };
    tui.send("\x0f");
    let screen = tui.wait_until("one daemon's figures, named", WAIT, |screen| {
        one("local", &near, screen) || one("box", &away, screen)
    });
    let local_first = one("local", &near, &screen);
    tui.send("\x0f");
    tui.wait_until(
        "the other daemon's figures, named",
        WAIT,
        |screen| match local_first {
            true => one("box", &away, screen),
            false => one("local", &near, screen),
        },
    );
    tui.send("\x0f");
    tui.wait_until("the total again", WAIT, all);

    // The box stopped: its figures stay as last seen, marked; loaded again (Ctrl+O round to
    // the total), the box is named as not counted and the laptop's figures are shown.
    far.stop();
    tui.wait_until("the box marked", WAIT, |screen| {
        screen.contains("⌂ box ↯ disconnected") && screen.contains("⌂box ↯")
    });
    tui.send("\x0f\x0f\x0f");
    tui.wait_until("the laptop's figures, the box named", WAIT, |screen| {
        screen.contains("on all daemons: ⌂local; not counted: ⌂box (not connected)")
            && shows(screen, &near)
    });
}
