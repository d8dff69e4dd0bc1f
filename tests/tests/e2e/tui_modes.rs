//! `hld-tui` changing a session's course, end to end over the real daemon and `fake-claude`:
//! Shift+Tab cycles the mode and `M` the model through `updateSessionSettings`, the reply box
//! completes `/` commands and `@` files from the daemon, and a compaction and attached images
//! read as such in the conversation.

use hld_client::protocol::{
    PermissionMode, UpdateSessionSettings, UpdateSessionSettingsParams, TITLE_MAX_CHARS,
};
use hld_e2e::images::red_png;
use hld_e2e::{launch_params, TestDaemon, WAIT};

use super::inputs::{project, send_images, wait_reply};
use super::tui::{fake, tui_on, workdir, Tui};

/// Shift+Tab as a terminal sends it.
const SHIFT_TAB: &str = "\x1b[Z";
const ESC: &str = "\x1b";

/// A session of `fake-claude` that answered `prompt` and ended, in `dir`; its id.
fn ended_session(d: &TestDaemon, prompt: &str, dir: &std::path::Path) -> String {
    let id = d.launch(launch_params(prompt, dir));
    d.wait_ended(&id);
    id
}

/// `tui` with the only session's conversation open (Enter on the list's first row).
fn open_first(tui: &mut Tui, shows: &str) {
    tui.wait_screen("✓ completed");
    tui.send("\r");
    tui.wait_screen(shows);
}

/// Waits until the session's row shows `badge` (or, for `None`, no mode badge) before its
/// title.
#[track_caller]
fn wait_badge(tui: &Tui, badge: Option<char>) {
    tui.wait_until(&format!("{badge:?} in the row"), WAIT, |screen| {
        screen.lines().any(|l| {
            l.split_once("scenario:plain hello")
                .is_some_and(|(before, _)| match badge {
                    Some(badge) => before.contains(badge),
                    None => !before.contains('⏸') && !before.contains('✎'),
                })
        })
    });
}

#[test]
fn shift_tab_cycles_accept_edits_plan_default_in_the_daemon_and_shows_what_it_says() {
    let d = fake();
    let work = workdir();
    let id = ended_session(&d, "scenario:plain hello", work.path());
    let mut tui = tui_on(&d);
    tui.wait_screen("✓ completed");

    // On the list: each press is the next mode, as in Claude Code, in the daemon and as the
    // row's badge.
    tui.send(SHIFT_TAB);
    d.wait_session(&id, |s| {
        s.control.permission_mode == PermissionMode::Default && s.control.auto_accept_edits
    });
    wait_badge(&tui, Some('✎'));
    tui.send(SHIFT_TAB);
    let s = d.wait_session(&id, |s| s.control.permission_mode == PermissionMode::Plan);
    assert!(!s.control.auto_accept_edits, "{s:#?}");
    wait_badge(&tui, Some('⏸'));
    tui.send(SHIFT_TAB);
    d.wait_session(&id, |s| {
        s.control.permission_mode == PermissionMode::Default && !s.control.auto_accept_edits
    });
    wait_badge(&tui, None);

    // In the conversation the title bar says the mode; a change made elsewhere shows too.
    open_first(&mut tui, "Hello! You asked: scenario:plain hello");
    tui.wait_screen("✓ completed default");
    d.request::<UpdateSessionSettings>(UpdateSessionSettingsParams {
        session_id: id.clone(),
        permission_mode: Some(PermissionMode::Plan),
        ..Default::default()
    });
    tui.wait_screen("✓ completed ⏸ plan");
}

#[test]
fn m_switches_the_model_from_the_picker_and_the_title_bar_shows_it() {
    let d = fake();
    let work = workdir();
    let id = ended_session(&d, "scenario:plain hello", work.path());
    let mut tui = tui_on(&d);
    open_first(&mut tui, "Hello! You asked: scenario:plain hello");

    tui.send("M");
    let screen = tui.wait_screen(" Model (Enter picks");
    for alias in ["opus", "sonnet", "haiku"] {
        assert!(screen.contains(alias), "{screen}");
    }
    tui.send("claude-haiku-9");
    tui.send("\r");
    d.wait_session(&id, |s| s.model.as_deref() == Some("claude-haiku-9"));
    tui.wait_screen("· haiku-9");
}

#[test]
fn the_reply_box_completes_slash_commands_and_at_files_from_the_daemon() {
    let d = fake();
    let work = project(&d);
    ended_session(&d, "scenario:plain hello", &work);
    let mut tui = tui_on(&d);
    open_first(&mut tui, "Hello! You asked: scenario:plain hello");

    // `/` at the start: the commands the session's claude reported.
    tui.send("r");
    tui.send("/compa");
    let screen = tui.wait_screen("/compact  Free up context by summarizing");
    assert!(screen.contains(" Commands (Tab takes"), "{screen}");
    tui.send("\t");
    tui.wait_until("the command taken", WAIT, |s| {
        s.lines().any(|l| l.trim_end() == "/compact") && !s.contains(" Commands (")
    });
    // With the list closed, Esc closes the box. (The screen is waited for: a terminal's Esc
    // and the next key in one read are that key with Alt.)
    tui.send(ESC);
    tui.wait_until("no reply box", WAIT, |s| {
        !s.contains(" Reply (the session goes on) ")
    });

    // The box opens again with what was typed and not sent; Ctrl+U erases it.
    tui.send("r");
    tui.wait_until("the unsent text kept", WAIT, |s| {
        s.contains(" Reply (the session goes on) ") && s.lines().any(|l| l.trim_end() == "/compact")
    });
    tui.send("\x15");

    // `@`: the files of the working directory, the ignored ones left out.
    tui.send("look at @mai");
    // The answer for all that was typed (not a shorter query's, shown meanwhile).
    tui.wait_until("the files for `mai`", WAIT, |s| {
        s.contains(" Files (Tab takes") && s.contains("@src/main.rs")
    });
    let screen = tui.screen_text();
    assert!(!screen.contains("main_out"), "{screen}");
    tui.send("\r");
    tui.wait_until("the file taken", WAIT, |s| {
        s.lines().any(|l| l.trim_end() == "look at @src/main.rs") && !s.contains(" Files")
    });
}

#[test]
fn compact_sent_from_the_reply_box_shows_as_one_line() {
    let d = fake();
    let work = workdir();
    let id = ended_session(&d, "scenario:plain hello", work.path());
    // Claude compacts nothing before a second turn.
    send_images(&d, &id, "scenario:plain again", &[]);
    wait_reply(&d, &id, "You said: scenario:plain again");
    d.wait_ended(&id);
    let mut tui = tui_on(&d);
    open_first(&mut tui, "You said: scenario:plain again");
    tui.send("r");
    tui.send("/compact");
    tui.wait_screen("/compact  Free up context");
    // The token is complete: Enter sends it.
    tui.send("\r");
    let screen = tui.wait_screen("──── Conversation compacted (");
    assert!(screen.contains(" tokens before) ────"), "{screen}");
}

#[test]
fn an_image_sent_with_a_message_shows_as_an_attachment() {
    let d = fake();
    let work = workdir();
    let id = ended_session(&d, "scenario:plain hello", work.path());
    let png = red_png(work.path(), "shot.png");
    let mut tui = tui_on(&d);
    open_first(&mut tui, "Hello! You asked: scenario:plain hello");
    send_images(&d, &id, "scenario:plain what is this", &[&png]);
    let screen = tui.wait_screen("[image] shot.png");
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let at = lines
        .iter()
        .position(|l| *l == "› scenario:plain what is this");
    let at = at.unwrap_or_else(|| panic!("{screen}"));
    assert_eq!(lines[at + 1], "  [image] shot.png", "{screen}");
}

/// Launches fake-claude's `plan` scenario in `work` from the launch form, in plan mode.
fn launch_planning_from_the_form(tui: &mut Tui, work: &std::path::Path) {
    tui.send("c");
    tui.wait_screen(" New session ");
    tui.send("scenario:plan");
    // The directory field holds where the dashboard started: erased, then typed.
    tui.send("\t\x15");
    tui.send(&work.display().to_string());
    // Model, then approvals: two steps right of "ask here" is plan mode.
    tui.send("\t\t");
    tui.send("\x1b[C\x1b[C");
    tui.wait_screen("plan mode: approve a plan first");
    tui.send("\r");
    // The plan's mark can show before the approval and the session's row have arrived.
    tui.wait_screen("plan waiting");
    tui.wait_screen("⚑ 1 pending");
    tui.wait_screen("⏸ plan");
}

#[test]
fn a_plan_shows_as_markdown_and_capital_a_approves_it_and_accepts_edits() {
    let d = fake();
    let work = workdir();
    let mut tui = tui_on(&d);
    launch_planning_from_the_form(&mut tui, work.path());

    // The conversation opens on the plan, as markdown, in plan mode.
    let screen = tui.wait_screen("plan waiting: a approve · A approve + accept edits");
    for line in ["│ # Plan", "│ 1. Create hello.txt with Hello, world!"] {
        assert!(screen.contains(line), "{line}:\n{screen}");
    }
    assert!(!screen.contains("\"plan\""), "not as JSON:\n{screen}");
    let id = d.only_session();
    assert_eq!(d.state(&id).control.permission_mode, PermissionMode::Plan);

    // A: the plan approved, plan mode left for accept edits; the Write is then approved by
    // the daemon's auto-accept, with nobody asked.
    tui.send("A");
    let s = d.wait_ended(&id);
    assert_eq!(s.control.permission_mode, PermissionMode::Default, "{s:#?}");
    assert!(s.control.auto_accept_edits, "{s:#?}");
    assert_eq!(
        std::fs::read_to_string(work.path().join("hello.txt")).unwrap(),
        "Hello, world!\n"
    );
    tui.wait_screen("⏵⏵ accept edits");
    tui.wait_screen("Done - hello.txt now contains");
}

#[test]
fn d_on_a_plan_keeps_planning_and_claude_reads_what_to_change() {
    let d = fake();
    let work = workdir();
    let mut tui = tui_on(&d);
    launch_planning_from_the_form(&mut tui, work.path());
    tui.send("d");
    tui.wait_screen("Keep planning: what should change?");
    tui.send("Add a test first");
    tui.send("\r");
    tui.wait_screen("The plan was not approved: Add a test first");
    let id = d.only_session();
    let s = d.wait_ended(&id);
    assert_eq!(s.control.permission_mode, PermissionMode::Plan, "{s:#?}");
    assert!(!work.path().join("hello.txt").exists());
    tui.wait_screen("⏸ plan");
}

#[test]
fn a_refused_title_stays_in_the_rename_box_with_the_reason_and_a_fixed_one_is_saved() {
    let d = fake();
    let work = workdir();
    let id = ended_session(&d, "scenario:plain hello", work.path());
    let mut tui = tui_on(&d);
    tui.wait_screen("✓ completed");
    tui.send("R");
    tui.wait_screen(" Rename (Enter saves");
    // Ctrl+U erases the title the box opened with.
    tui.send("\x15");
    tui.send(&"x".repeat(TITLE_MAX_CHARS + 1));
    tui.send("\r");
    let screen = tui.wait_screen("not renamed: title too long: 201 characters (at most 200)");
    assert!(screen.contains(" Rename (Enter saves"), "{screen}");
    assert_eq!(d.state(&id).control.title, "scenario:plain hello");

    tui.send("\x15");
    tui.send("release notes");
    tui.send("\r");
    d.wait_session(&id, |s| s.control.title == "release notes");
    tui.wait_until("the list says it is renamed", WAIT, |screen| {
        screen.contains("renamed")
            && !screen.contains("not renamed")
            && !screen.contains(" Rename (")
            && screen.contains("release notes")
    });
}
