//! Notifications, usage limits and cost: the bell once per notification, the windows in the
//! title bar, a session stopped by a limit, context shares, and the usage view.

use crossterm::event::KeyCode;
use hld_client::protocol::{
    Event, GetUsageResult, Notification, NotificationKind, RateLimitKind, RateLimitStatus,
    RateLimitWindow, SessionStatus, UsageGroupBy, UsageLimit, UsageRow, UsageTotals,
};
use hld_tui::app::{update, Command, Msg, Screen, State, UsageTable};
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use ratatui::Terminal;

use super::fixtures::*;
use super::snap;

fn notification(id: &str, kind: NotificationKind, text: &str, answer: Option<&str>) -> Event {
    Event::Notification(Notification {
        id: id.into(),
        kind,
        session_id: "s-wait".into(),
        run_id: "run-s-wait".into(),
        title: "Fix the flaky test in ci".into(),
        text: text.into(),
        answer: answer.map(Into::into),
        approval_id: None,
        folded: 0,
    })
}

#[test]
fn a_notification_rings_once_per_id_and_not_once_the_bell_is_off() {
    let mut state = loaded(80, 24);
    let approval = notification(
        "n1",
        NotificationKind::Approval,
        "Bash: cargo test",
        Some("hlyr approve a1"),
    );
    assert_eq!(
        update(&mut state, timed(approval.clone())),
        [Command::Notify {
            title: "Fix the flaky test in ci".into(),
            text: "Bash: cargo test · hlyr approve a1".into(),
        }]
    );
    assert!(
        update(&mut state, timed(approval)).is_empty(),
        "the same notification rang twice"
    );
    let done = notification("n2", NotificationKind::Completed, "Completed", None);
    assert_eq!(
        update(&mut state, timed(done)),
        [Command::Notify {
            title: "Fix the flaky test in ci".into(),
            text: "Completed".into(),
        }]
    );
    keys(&mut state, "B");
    assert!(screen(&state, true).contains("bell for notifications off"));
    let failed = notification("n3", NotificationKind::Failed, "Failed", None);
    assert!(update(&mut state, timed(failed)).is_empty());
}

fn window(kind: RateLimitKind, status: RateLimitStatus, used: f64, at: &str) -> RateLimitWindow {
    RateLimitWindow {
        kind,
        status,
        utilization: Some(used),
        resets_at: None,
        updated_at: at.into(),
    }
}

/// The colour of the first cell of `text`, where it first shows on the screen.
fn colour(state: &State, text: &str) -> Color {
    let mut terminal = Terminal::new(TestBackend::new(state.width, state.height)).unwrap();
    terminal
        .draw(|f| hld_tui::view::draw(state, f, true))
        .unwrap();
    let buffer = terminal.backend().buffer();
    for y in 0..buffer.area.height {
        let row: Vec<&str> = (0..buffer.area.width)
            .map(|x| buffer[(x, y)].symbol())
            .collect();
        if let Some(at) = row.concat().find(text) {
            // The cell whose text starts at byte `at` of the row.
            let mut bytes = 0;
            let x = row.iter().position(|cell| {
                let here = bytes;
                bytes += cell.len();
                here == at
            });
            return buffer[(x.unwrap() as u16, y)].fg;
        }
    }
    panic!("{text:?} is not on the screen")
}

#[test]
fn the_title_bar_shows_each_window_and_warns_near_its_limit() {
    let mut state = loaded(120, 40);
    let early = "2026-11-27T11:00:00Z";
    update(
        &mut state,
        Msg::RateLimits(vec![
            window(
                RateLimitKind::FiveHour,
                RateLimitStatus::AllowedWarning,
                0.91,
                early,
            ),
            window(
                RateLimitKind::SevenDay,
                RateLimitStatus::Allowed,
                0.4,
                early,
            ),
        ]),
    );
    let top = screen(&state, true).lines().next().unwrap().to_owned();
    assert!(top.contains("5h 91% · 7d 40% ● connected"), "{top}");
    assert_eq!(colour(&state, "5h 91%"), Color::Yellow);
    assert_ne!(colour(&state, "7d 40%"), Color::Yellow);
    // A later report replaces the window; an older answer of getRateLimits does not.
    update(
        &mut state,
        timed(Event::RateLimitUpdated {
            session_id: "s-run".into(),
            run_id: "run-s-run".into(),
            window: window(
                RateLimitKind::SevenDay,
                RateLimitStatus::Allowed,
                0.85,
                "2026-11-27T11:30:00Z",
            ),
        }),
    );
    update(
        &mut state,
        Msg::RateLimits(vec![window(
            RateLimitKind::SevenDay,
            RateLimitStatus::Allowed,
            0.4,
            early,
        )]),
    );
    let top = screen(&state, true).lines().next().unwrap().to_owned();
    assert!(top.contains("5h 91% · 7d 85%"), "{top}");
    assert_eq!(colour(&state, "7d 85%"), Color::Yellow);
}

/// The fixture sessions with the failed one stopped by the five-hour limit, resetting in
/// 2h 13m, and context shares on two others.
fn limited(width: u16, height: u16) -> State {
    let mut state = loaded(width, height);
    let sessions = sessions()
        .into_iter()
        .map(|mut s| {
            match s.id.as_str() {
                "s-fail" => {
                    s.usage_limit = Some(UsageLimit {
                        kind: RateLimitKind::FiveHour,
                        resets_at: Some("2026-11-27T14:13:00Z".into()),
                    })
                }
                "s-run" => {
                    (s.effective_context_tokens, s.context_limit) = (Some(86_000), Some(100_000))
                }
                "s-wait" => {
                    (s.effective_context_tokens, s.context_limit) = (Some(43_000), Some(100_000))
                }
                _ => {}
            }
            s
        })
        .collect();
    update(&mut state, Msg::Sessions(sessions));
    state
}

#[test]
fn screen_sessions_with_a_limit_and_context_shares() {
    snap("sessions_limits", limited);
}

#[test]
fn a_limit_shows_as_a_limit_with_its_reset_not_as_a_failure() {
    let mut state = limited(120, 40);
    let shown = screen(&state, true);
    let row = shown
        .lines()
        .find(|l| l.contains("Deploy to prod"))
        .unwrap();
    assert!(row.contains("⊘ limit") && row.contains("↻2h 13m"), "{row}");
    assert!(!row.contains("failed"), "{row}");
    // The warning share of a context window nearly full, and an ordinary one.
    let running = shown.lines().find(|l| l.contains("Refactor")).unwrap();
    assert!(running.contains("86%"), "{running}");
    assert_eq!(colour(&state, "86%"), Color::Yellow);
    assert_ne!(colour(&state, "43%"), Color::Yellow);
    // The conversation says it in a line above the events.
    keys(&mut state, "G");
    update(&mut state, key(KeyCode::Enter));
    let shown = screen(&state, true);
    let second = shown.lines().nth(1).unwrap();
    assert_eq!(second, "⊘ usage limit (5h) · resets in 2h 13m", "{shown}");
    // Running again clears it at once, before the list is loaded again.
    update(
        &mut state,
        status_changed("s-fail", SessionStatus::Failed, SessionStatus::Running),
    );
    assert!(!screen(&state, true).contains("usage limit"));
    // And a limit the status event brings shows at once too.
    update(
        &mut state,
        timed(Event::SessionStatusChanged {
            session_id: "s-fail".into(),
            run_id: "run".into(),
            old_status: SessionStatus::Running,
            new_status: SessionStatus::Failed,
            parent_session_id: None,
            error: None,
            usage_limit: Some(UsageLimit {
                kind: RateLimitKind::SevenDay,
                resets_at: None,
            }),
            turn: None,
        }),
    );
    assert!(screen(&state, true).contains("⊘ usage limit (7d)"));
}

#[test]
fn the_conversation_header_shows_the_context_share() {
    let mut state = limited(120, 40);
    keys(&mut state, "j");
    update(&mut state, key(KeyCode::Enter));
    let top = screen(&state, true).lines().next().unwrap().to_owned();
    assert!(top.contains("opus-4-1 · ctx 43%"), "{top}");
    assert_ne!(colour(&state, "43%"), Color::Yellow);
    keys(&mut state, "1k");
    update(&mut state, key(KeyCode::Enter));
    assert_eq!(colour(&state, "86%"), Color::Yellow);
}

fn totals(input: i64, output: i64, write: i64, read: i64, cost_usd: f64) -> UsageTotals {
    UsageTotals {
        input_tokens: input,
        output_tokens: output,
        cache_creation_input_tokens: write,
        cache_read_input_tokens: read,
        cost_usd,
        sessions: 2,
        turns: 5,
    }
}

fn by_day() -> GetUsageResult {
    let row = |key: &str, cost| UsageRow {
        key: key.into(),
        totals: totals(100, 200, 300, 400, cost),
    };
    GetUsageResult {
        group_by: UsageGroupBy::Day,
        rows: vec![
            row("2026-11-20", 3.5),
            row("2026-11-25", 0.42),
            row("2026-11-27", 12.34),
        ],
        total: totals(300, 600, 900, 1200, 16.26),
    }
}

fn by_model() -> GetUsageResult {
    let row = |key: &str, t| UsageRow {
        key: key.into(),
        totals: t,
    };
    GetUsageResult {
        group_by: UsageGroupBy::Model,
        rows: vec![
            row(
                "claude-opus-4-1",
                totals(1_200, 54_000, 81_000, 6_400_000, 14.1),
            ),
            row("claude-haiku-4-5", totals(300, 900, 0, 12_000, 0.05)),
        ],
        total: totals(1_500, 54_900, 81_000, 6_412_000, 14.15),
    }
}

/// The usage view opened with `U`, its loads answered.
fn usage_view(width: u16, height: u16) -> State {
    let mut state = loaded(width, height);
    let commands = keys(&mut state, "U");
    assert_eq!(
        commands,
        [
            Command::LoadUsage {
                table: UsageTable::Days,
                since: Some("2026-10-29".into()),
            },
            Command::LoadUsage {
                table: UsageTable::Models,
                since: None,
            },
        ]
    );
    assert!(screen(&state, true).contains("Loading…"));
    for (table, result) in [
        (UsageTable::Days, by_day()),
        (UsageTable::Models, by_model()),
    ] {
        let result = Ok(result);
        update(&mut state, Msg::Usage { table, result });
    }
    state
}

#[test]
fn screen_usage() {
    snap("usage", usage_view);
}

#[test]
fn the_usage_view_shows_each_day_and_model_and_esc_leaves_it() {
    let mut state = usage_view(120, 40);
    assert_eq!(state.screen, Screen::Usage);
    let shown = screen(&state, true);
    assert!(
        shown.contains("last 30 days: $16.26 · 5 turns · 2 sessions"),
        "{shown}"
    );
    // The chart's title says which of those days its bars are.
    assert!(
        shown.contains("Cost per day, US$ · Nov 5 – Nov 27 (23 of 30 days)"),
        "{shown}"
    );
    // Today's bar and an earlier one, each with its cost (a bar under a row high has none).
    assert!(shown.contains("12.3") && shown.contains("3.50"), "{shown}");
    let opus = shown.lines().find(|l| l.contains("opus-4-1")).unwrap();
    for cell in ["1.2k", "54k", "81k", "6.4M", "$14.10", "5"] {
        assert!(opus.contains(cell), "{cell} not in {opus}");
    }
    assert!(shown.contains("total"), "{shown}");
    // A status change (a turn ended) loads the figures again; elsewhere it does not.
    let ended = || status_changed("s-run", SessionStatus::Running, SessionStatus::Completed);
    let commands = update(&mut state, ended());
    assert!(
        commands.iter().any(|c| matches!(
            c,
            Command::LoadUsage {
                table: UsageTable::Days,
                ..
            }
        )),
        "{commands:?}"
    );
    // A reconnect loads the open view again.
    let commands = update(&mut state, Msg::Connected);
    assert!(
        commands.iter().any(|c| matches!(
            c,
            Command::LoadUsage {
                table: UsageTable::Models,
                ..
            }
        )),
        "{commands:?}"
    );
    update(&mut state, key(KeyCode::Esc));
    assert_eq!(state.screen, Screen::Sessions);
    let commands = update(&mut state, ended());
    assert!(
        !commands
            .iter()
            .any(|c| matches!(c, Command::LoadUsage { .. })),
        "{commands:?}"
    );
}

#[test]
fn a_daemon_without_usage_says_so_in_the_view() {
    let mut state = loaded(80, 24);
    keys(&mut state, "U");
    update(
        &mut state,
        Msg::Usage {
            table: UsageTable::Models,
            result: Err("method not found: getUsage".into()),
        },
    );
    let shown = screen(&state, true);
    assert!(
        shown.contains("usage unavailable: method not found: getUsage"),
        "{shown}"
    );
    assert!(shown.contains("Loading…"), "the days' part: {shown}");
}

#[test]
fn a_failed_sessions_conversation_says_why_it_failed_above_its_events() {
    let mut state = loaded(100, 20);
    keys(&mut state, "G");
    update(&mut state, key(KeyCode::Enter));
    let open = |state: &mut State| {
        update(
            state,
            Msg::Conversation {
                session_id: "s-fail".into(),
                events: conversation("s-fail"),
                approvals: Vec::new(),
            },
        )
    };
    open(&mut state);
    let shown = screen(&state, true);
    assert_eq!(
        shown.lines().nth(1).unwrap().trim_end(),
        "✗ failed: claude exited 1"
    );
    // The body below it still follows its end.
    assert!(!shown.contains("G follows"), "{shown}");
    // Running again, it is gone.
    update(
        &mut state,
        status_changed("s-fail", SessionStatus::Failed, SessionStatus::Running),
    );
    assert!(!screen(&state, true).contains("✗ failed"));
}
