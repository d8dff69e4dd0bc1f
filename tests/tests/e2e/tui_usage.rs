//! `hld-tui`'s usage view and notifications end to end: the real binary on a pseudo-terminal
//! against a daemon running `fake-claude`, whose turns cost known amounts, and the bell rung
//! once per notification of the daemon.

use hld_client::protocol::{
    Event, EventType, GetUsage, GetUsageParams, ListSessions, NoParams, NotificationKind,
    SubscribeParams, UsageGroupBy,
};
use hld_client::view::usage::context_share;
use hld_e2e::{launch_params, wait_for, DaemonOptions, TestDaemon, WAIT};

use super::tui::{fake, tui_on, workdir, Tui};

/// A plain `fake-claude` turn: 4 input tokens, 15 873 written to the cache and 13 output
/// tokens, at Sonnet rates.
const TURN_COST: f64 = (4.0 * 3.0 + 15_873.0 * 3.75 + 13.0 * 15.0) / 1_000_000.0;

/// Runs one plain session to its end.
fn one_turn(d: &TestDaemon, work: &tempfile::TempDir) {
    let id = d.launch(launch_params("scenario:plain say hello", work.path()));
    d.wait_ended(&id);
}

#[test]
fn the_usage_view_shows_what_the_turns_cost_and_follows_new_ones() {
    let d = fake();
    let work = workdir();
    one_turn(&d, &work);
    let mut tui = tui_on(&d);
    tui.send("U");
    let one = format!("last 30 days: ${TURN_COST:.2} · 1 turn · 1 session");
    // Both tables load at once, each answer as it comes.
    let screen = tui.wait_until("the day's total and the models", WAIT, |screen| {
        screen.contains(&one) && screen.contains("By model, all time")
    });
    // The model's row: its tokens and cost, as the daemon counted them.
    let models = d.request::<GetUsage>(GetUsageParams {
        since: None,
        group_by: UsageGroupBy::Model,
    });
    let [row] = models.rows.as_slice() else {
        panic!("{models:#?}")
    };
    assert!((row.totals.cost_usd - TURN_COST).abs() < 1e-9, "{row:#?}");
    let model = row.key.strip_prefix("claude-").unwrap_or(&row.key);
    let line = screen
        .lines()
        .find(|l| l.contains(model))
        .unwrap_or_else(|| panic!("no row of {model}:\n{screen}"));
    // Model, input, output, cache write, cache read, cost, turns.
    let cells: Vec<&str> = line
        .trim_matches(|c: char| c == '│' || c.is_whitespace())
        .split_whitespace()
        .collect();
    let cost = format!("${TURN_COST:.2}");
    assert_eq!(cells, [model, "4", "13", "16k", "0", &cost, "1"], "{line}");
    // Today's bar carries its cost.
    assert!(screen.contains(&format!("{TURN_COST:.2}")), "{screen}");

    // A turn that ends while the view is open is counted at once.
    one_turn(&d, &work);
    let two = format!(
        "last 30 days: ${:.2} · 2 turns · 2 sessions",
        2.0 * TURN_COST
    );
    tui.wait_screen(&two);
    tui.send("\x1b");
    tui.wait_screen(" Sessions (2)");
    // Each row's context share, as the daemon's figures give it.
    for s in d.request::<ListSessions>(NoParams {}).sessions {
        let share = context_share(s.effective_context_tokens, s.context_limit)
            .unwrap_or_else(|| panic!("no context figures: {s:#?}"));
        let ctx = format!(" {:.0}% ", share * 100.0);
        tui.wait_until(&format!("{ctx} on both rows"), WAIT, |screen| {
            let rows = screen.lines().filter(|l| l.contains("scenario:plain"));
            rows.filter(|l| l.contains(&ctx)).count() == 2
        });
    }
}

#[test]
fn each_notification_of_the_daemon_rings_the_terminal_once() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .arg("--notify-desktop=false")
            .arg("--notify-quiet-ms=200"),
    );
    let mut notes = d.subscribe(SubscribeParams::types([EventType::Notification]));
    let work = workdir();
    let mut tui = Tui::spawn(&d.socket, &[]);
    tui.wait_screen("● connected");
    let bells = |tui: &Tui| tui.emulator().screen().audible_bell_count();

    // A call waits for approval: the daemon notifies once (not for the approval and again for
    // its notification).
    let id = d.launch(launch_params(
        "scenario:tool write the hello file",
        work.path(),
    ));
    let mut seen = Vec::new();
    let mut next = |kind: NotificationKind| loop {
        if let Event::Notification(n) = notes.next_event().event {
            let last = n.kind == kind;
            seen.push(n.id);
            if last {
                return seen.len();
            }
        }
    };
    let rung = next(NotificationKind::Approval);
    assert_eq!(rung, 1);
    tui.wait_screen("⚑ 1 pending");
    let count = wait_for(WAIT, || Some(bells(&tui)).filter(|&n| n >= rung));
    assert_eq!(count, Some(rung), "{}", tui.screen_text());

    // Approved here, the session completes: one more.
    tui.send("2");
    tui.wait_screen("d/n deny (with an optional comment)");
    tui.send("a");
    d.wait_ended(&id);
    let rung = next(NotificationKind::Completed);
    let count = wait_for(WAIT, || Some(bells(&tui)).filter(|&n| n >= rung));
    assert_eq!(count, Some(rung), "{}", tui.screen_text());
    let ids: std::collections::HashSet<_> = seen.iter().collect();
    assert_eq!(
        ids.len(),
        seen.len(),
        "a notification was sent twice: {seen:?}"
    );
}
