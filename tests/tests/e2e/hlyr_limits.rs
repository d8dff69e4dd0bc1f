//! Usage limits in `hlyr`, over `fake-claude`'s `limit` and `near_limit` scenarios: a session
//! stopped by a limit reads as the limit and its reset (not an ordinary failure) at the end of
//! `launch`, in `sessions`, `show` and `watch`; `watch` shows the windows, in the warning colour
//! near a limit.

use hld_e2e::{launch_params, DaemonOptions, TestDaemon, WAIT};

use crate::hlyr::{hlyr, hlyr_command, printed_session, run_command, workdir};
use crate::hlyr_watch::on_terminal;

/// A daemon whose limits reset two hours from when they are hit.
fn daemon() -> TestDaemon {
    TestDaemon::start_with(DaemonOptions::fake_claude().env("FAKE_CLAUDE_RESET_MS", "7200000"))
}

/// What every front end says of the limit: its window and the time left (1h 59m or 2h 0m,
/// as the minute turns).
const LIMIT: &str = "usage limit (5h) · resets in ";
/// The same in a table's status column, which one such session must not widen much.
const CELL: &str = "5h limit ↻";

#[test]
fn a_limited_session_reads_as_its_limit_at_the_end_of_launch_in_sessions_and_show() {
    let d = daemon();
    let wd = workdir(&d);
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["launch", "-w", &wd, "scenario:limit write the report"]);
    let run = run_command(cmd);
    run.assert_code(1);
    let id = printed_session(&run);
    let end = run.stdout.lines().last().unwrap_or_default();
    assert!(end.starts_with(&format!("✗ stopped: {LIMIT}")), "{run:#?}");
    assert!(!run.stdout.contains("✗ failed"), "{run:#?}");

    let sessions = hlyr(&d, &["sessions"]).assert_code(0).stdout.clone();
    let row = sessions.lines().find(|l| l.contains(&id[..8])).unwrap();
    assert!(row.contains(CELL), "{sessions}");
    let show = hlyr(&d, &["show", &id]).assert_code(0).stdout.clone();
    let status = show.lines().find(|l| l.starts_with("Status")).unwrap();
    assert!(status.contains(LIMIT), "{show}");
    let json = hlyr(&d, &["show", &id, "--json"])
        .assert_code(0)
        .json_as("session");
    assert_eq!(json["status"], "failed");
    assert_eq!(json["usage_limit"]["kind"], "five_hour");
}

#[test]
fn watch_shows_the_windows_with_a_warning_and_a_limited_sessions_line() {
    let d = daemon();
    let wd = workdir(&d);
    let near = d.launch(launch_params("scenario:near_limit hello", &wd));
    d.wait_ended(&near);
    let limited = d.launch(launch_params("scenario:limit write the report", &wd));
    d.wait_ended(&limited);
    let mut term = on_terminal(&d, &["watch"]);
    let screen = term.wait_screen(CELL);
    let windows = screen.lines().next().unwrap();
    assert!(windows.starts_with("limits  5h "), "{screen}");
    let line = screen.lines().find(|l| l.contains(&limited[..8])).unwrap();
    assert!(line.contains(CELL), "{screen}");
    // The window near its limit is in the warning colour (bold yellow).
    let at = windows.find("5h").unwrap() as u16;
    let cell = term.emulator().screen().cell(0, at).unwrap().clone();
    assert_eq!(cell.fgcolor(), vt100::Color::Idx(3), "{screen}");
    assert!(cell.bold(), "{screen}");
    term.send("q");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
}

#[test]
fn resume_on_reset_is_set_at_launch_and_changed_with_settings() {
    let d = daemon();
    let wd = workdir(&d);
    let launched = hlyr(
        &d,
        &[
            "launch",
            "-w",
            &wd,
            "--detach",
            "--resume-on-reset",
            "hello",
        ],
    )
    .assert_code(0)
    .stdout
    .clone();
    let id = launched
        .lines()
        .find_map(|l| l.strip_prefix("Session").map(|rest| rest.trim().to_owned()))
        .expect("the session id");
    assert!(d.state(&id).control.resume_on_reset);
    let shown = hlyr(&d, &["settings", &id]).assert_code(0).stdout.clone();
    assert!(shown.contains("resumed when it resets"), "{shown}");
    hlyr(&d, &["settings", &id, "--resume-on-reset", "off"]).assert_code(0);
    assert!(!d.state(&id).control.resume_on_reset);
    hlyr(&d, &["settings", &id, "--resume-on-reset", "maybe"]).assert_code(2);
}
