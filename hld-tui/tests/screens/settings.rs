//! The session's settings from the keyboard: archive and rename, auto-accept (Alt+A) and the
//! bypass (Alt+Y) with its duration as typed.

use chrono::Duration;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use hld_client::protocol::Event;
use hld_tui::app::{update, Command, Msg};

use super::fixtures::*;

/// The settings change `commands` is, alone.
pub fn settings_of(commands: Vec<Command>) -> hld_client::protocol::UpdateSessionSettingsParams {
    match commands.as_slice() {
        [Command::Settings(p)] => p.clone(),
        other => panic!("{other:?}"),
    }
}

fn alt(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT))
}

#[test]
fn archive_rename_and_the_archived_view() {
    let mut state = loaded(80, 24);
    // Empty, the archived view says how a session gets there.
    update(&mut state, key(KeyCode::Tab));
    assert!(screen(&state, false).contains("No archived sessions: e archives"));
    update(&mut state, key(KeyCode::Esc));
    assert_eq!(
        keys(&mut state, "e"),
        [Command::Archive {
            session_id: "s-run".into(),
            archived: true
        }]
    );
    // The daemon says so, and the row moves to the archived view.
    let mut archived = state.sessions[0].control.clone();
    archived.archived = true;
    update(
        &mut state,
        timed(Event::SessionSettingsChanged {
            session_id: "s-run".into(),
            run_id: "run-s-run".into(),
            control: archived,
            model: None,
            reason: "updated".into(),
        }),
    );
    assert!(state.rows().iter().all(|r| r.session.id != "s-run"));
    update(&mut state, key(KeyCode::Tab));
    let ids: Vec<_> = state.rows().iter().map(|r| r.session.id.clone()).collect();
    assert_eq!(ids, ["s-run"]);
    assert!(screen(&state, true).contains("Archived sessions (1)"));

    keys(&mut state, "R");
    for _ in 0..40 {
        update(&mut state, key(KeyCode::Backspace));
    }
    keys(&mut state, "Parser");
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [Command::Rename {
            session_id: "s-run".into(),
            title: "Parser".into()
        }]
    );
}

#[test]
fn alt_a_toggles_auto_accept_and_alt_y_asks_how_long_to_bypass() {
    let mut state = loaded(80, 24);
    let p = settings_of(update(&mut state, alt('a')));
    assert_eq!(p.auto_accept_edits, Some(true));
    assert!(update(&mut state, alt('y')).is_empty());
    assert!(screen(&state, true).contains("Bypass permissions for how long"));
    // What is typed replaces the 15 minutes offered.
    keys(&mut state, "2h");
    let p = settings_of(update(&mut state, key(KeyCode::Enter)));
    assert_eq!(p.dangerously_skip_permissions, Some(true));
    assert_eq!(p.dangerously_skip_permissions_timeout_ms, Some(7_200_000));

    // With the bypass on, the row says so and how long it has left; Alt+Y turns it off.
    let mut on = state.sessions[0].control.clone();
    on.auto_accept_edits = true;
    on.dangerously_skip_permissions = true;
    on.dangerously_skip_permissions_expires_at = Some((now() + Duration::minutes(14)).to_rfc3339());
    update(
        &mut state,
        timed(Event::SessionSettingsChanged {
            session_id: "s-run".into(),
            run_id: "run-s-run".into(),
            control: on,
            model: None,
            reason: "updated".into(),
        }),
    );
    let shown = screen(&state, true);
    assert!(shown.contains("⚠14m ✎ Refactor"), "{shown}");
    let p = settings_of(update(&mut state, alt('y')));
    assert_eq!(p.dangerously_skip_permissions, Some(false));
}

#[test]
fn alt_r_toggles_resuming_at_the_limit_reset() {
    let mut state = loaded(80, 24);
    let p = settings_of(update(&mut state, alt('r')));
    assert_eq!(
        (p.session_id.as_str(), p.resume_on_reset),
        ("s-run", Some(true))
    );
    assert!(screen(&state, false).contains("resumes when its usage limit resets"));
    state.sessions[0].control.resume_on_reset = true;
    let p = settings_of(update(&mut state, alt('r')));
    assert_eq!(p.resume_on_reset, Some(false));
}

#[test]
fn durations_are_read_as_a_person_types_them() {
    use hld_tui::app::parse_duration;
    assert_eq!(parse_duration("30s"), Ok(Some(30_000)));
    assert_eq!(parse_duration(" 15M "), Ok(Some(900_000)));
    assert_eq!(parse_duration("5"), Ok(Some(300_000)));
    assert_eq!(parse_duration(""), Ok(None));
    assert_eq!(parse_duration("until off"), Ok(None));
    assert!(parse_duration("soon").is_err());
    assert!(parse_duration("-5m").is_err());
}
