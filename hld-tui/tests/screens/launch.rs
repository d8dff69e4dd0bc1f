//! The launch form and the launch it sends: it waits for the daemon's answer, sending no
//! second launch meanwhile; a refused launch leaves it open with all that was typed and says
//! why, under the field concerned when the daemon named one (until that field changes); a
//! launched session closes it; a hidden form's refusal goes to the footer, naming its daemon.

use crossterm::event::KeyCode;
use hld_tui::app::{update, Command, Field, Modal, Msg, Screen, State};

use super::fixtures::*;

const QUERY: &str = "Add a --verbose flag";
const MISSING: &str = "/tmp/does/not/exist";

/// The form filled with [`QUERY`] and the directory [`MISSING`], and its launch sent.
fn launching(width: u16, height: u16) -> State {
    let mut state = loaded(width, height);
    keys(&mut state, &format!("c{QUERY}"));
    update(&mut state, key(KeyCode::Tab));
    update(&mut state, ctrl('u'));
    keys(&mut state, MISSING);
    let commands = update(&mut state, ctrl('s'));
    let [Command::Launch(params)] = commands.as_slice() else {
        panic!("{commands:?}")
    };
    assert_eq!(params.working_dir.as_deref(), Some(MISSING));
    state
}

/// What the daemon answers a launch in a directory that does not exist.
fn no_such_directory() -> Msg {
    Msg::LaunchFailed {
        message: format!("working_dir does not exist: {MISSING}"),
        param: Some("working_dir".into()),
    }
}

fn form(state: &State) -> &hld_tui::app::LaunchForm {
    match &state.modal {
        Some(Modal::Launch(form)) => form,
        other => panic!("no launch form: {other:?}"),
    }
}

#[test]
fn the_form_waits_for_its_launch_and_sends_no_second_one() {
    let mut state = launching(80, 24);
    assert!(form(&state).launching);
    assert!(screen(&state, false).contains("launching…"));
    // Ctrl+S again, and typing, change nothing: what is shown is what was sent.
    assert_eq!(update(&mut state, ctrl('s')), []);
    assert_eq!(keys(&mut state, "x"), []);
    assert_eq!(form(&state).working_dir.lines().join(""), MISSING);
    // The launch answered: the form closes and the session opens.
    let opened = update(&mut state, Msg::Opened("s-run".into()));
    assert!(opened.contains(&Command::LoadConversation("s-run".into())));
    assert!(state.modal.is_none());
    assert_eq!(state.screen, Screen::Conversation);
    assert!(!screen(&state, false).contains("launching…"));
}

#[test]
fn a_refused_launch_keeps_the_form_and_what_was_typed_and_says_why_at_its_field() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut state = launching(w, h);
        update(&mut state, no_such_directory());
        let shown = screen(&state, true);
        insta::assert_snapshot!(format!("launch_refused_{w}x{h}"), shown);
        let form = form(&state);
        assert!(!form.launching);
        assert_eq!(form.query.lines().join("\n"), QUERY);
        assert_eq!(form.field, Field::WorkingDir);
        // In the form's words, under the directory's box; the footer says nothing of it.
        let said = format!("Working directory does not exist: {MISSING}");
        let under = shown.lines().skip_while(|l| !l.contains(MISSING)).nth(2);
        assert!(under.is_some_and(|l| l.contains(&said)), "{shown}");
        assert!(!shown.contains("working_dir"), "{shown}");
        assert!(!shown.contains("launching…"), "{shown}");
    }
}

#[test]
fn a_corrected_launch_goes_and_the_error_goes_with_the_edit() {
    let mut state = launching(80, 24);
    update(&mut state, no_such_directory());
    update(&mut state, ctrl('u'));
    keys(&mut state, "/home/me/project");
    assert_eq!(form(&state).error, None);
    let commands = update(&mut state, ctrl('s'));
    let [Command::Launch(params)] = commands.as_slice() else {
        panic!("{commands:?}")
    };
    assert_eq!(params.query, QUERY);
    assert_eq!(params.working_dir.as_deref(), Some("/home/me/project"));
}

#[test]
fn a_refusal_of_no_field_is_said_at_the_forms_bottom() {
    let mut state = launching(80, 24);
    let message = "claude was not found: install Claude Code, or set claude_path";
    update(
        &mut state,
        Msg::LaunchFailed {
            message: message.into(),
            param: None,
        },
    );
    let shown = screen(&state, false);
    let form = form(&state);
    assert_eq!(form.field, Field::WorkingDir, "the focus stays");
    assert_eq!(form.query.lines().join("\n"), QUERY);
    // Below the branch, the last field.
    let after = shown.lines().skip_while(|l| !l.contains(" Branch")).nth(1);
    assert!(
        after.is_some_and(|l| l.contains("Claude was not found: install")),
        "{shown}"
    );
}

#[test]
fn a_hidden_forms_launch_is_told_in_the_footer() {
    let mut state = launching(80, 24);
    // Esc hides the waiting form: nothing more is sent, and no draft is kept of it.
    assert_eq!(update(&mut state, key(KeyCode::Esc)), []);
    assert!(state.modal.is_none());
    assert!(screen(&state, false).contains("launching…"));
    update(&mut state, no_such_directory());
    let shown = screen(&state, false);
    assert!(
        shown.contains(&format!("working_dir does not exist: {MISSING}")),
        "{shown}"
    );
    // A new form is not the one that launched: it is left as it is.
    keys(&mut state, "c");
    update(&mut state, no_such_directory());
    assert_eq!(form(&state).error, None);
}

#[test]
fn a_choice_changed_by_the_arrows_clears_the_error_about_it() {
    let mut state = launching(80, 24);
    update(
        &mut state,
        Msg::LaunchFailed {
            message: "model is not one this claude knows: opus-9".into(),
            param: Some("model".into()),
        },
    );
    assert_eq!(form(&state).field, Field::Model);
    assert!(form(&state).error.is_some());
    update(&mut state, key(KeyCode::Right));
    assert_eq!(form(&state).error, None);
    assert!(!screen(&state, false).contains("opus-9"));
}

#[test]
fn in_a_fleet_a_hidden_forms_refusal_names_its_daemon() {
    let mut state = super::fleet::fleet();
    keys(&mut state, &format!("c{QUERY}"));
    let commands = update(&mut state, ctrl('s'));
    assert_eq!(commands.len(), 1, "{commands:?}");
    update(&mut state, key(KeyCode::Esc));
    assert!(state.modal.is_none());
    update(&mut state, super::fleet::from(1, no_such_directory()));
    let shown = screen(&state, false);
    assert!(
        shown.contains(&format!("box: working_dir does not exist: {MISSING}")),
        "{shown}"
    );
}

/// The working directory of a new session is where the dashboard was started, as for `hlyr
/// launch` and `claude` (an isolated session's worktree stands for its repository); the
/// recent directories are on ↑/↓; started nowhere known, the most recent one.
#[test]
fn the_form_starts_in_the_directory_the_dashboard_was_started_in() {
    let dir_of = |state: &State| {
        let Some(Modal::Launch(form)) = &state.modal else {
            panic!("{:?}", state.modal)
        };
        form.working_dir.lines().join("")
    };
    let mut state = loaded(80, 24);
    state.here = Some("/srv/elsewhere".into());
    keys(&mut state, "c");
    assert_eq!(dir_of(&state), "/srv/elsewhere");
    update(&mut state, key(KeyCode::Tab));
    update(&mut state, key(KeyCode::Down));
    assert_eq!(dir_of(&state), "/home/me/project");
    update(&mut state, key(KeyCode::Esc));
    // Started inside an isolated session's worktree: its repository.
    let mut sessions = sessions();
    sessions[0].worktree = serde_json::from_value(serde_json::json!({
        "repository": "/home/me/repo", "path": "/home/me/.wt/add-parser",
        "branch": "add-parser", "base_branch": "main", "base_commit": "0123", "state": "active"}))
    .unwrap();
    update(&mut state, Msg::Sessions(sessions));
    state.here = Some("/home/me/.wt/add-parser/src".into());
    keys(&mut state, "c");
    assert_eq!(dir_of(&state), "/home/me/repo");
    update(&mut state, key(KeyCode::Esc));
    state.here = None;
    keys(&mut state, "c");
    assert_eq!(dir_of(&state), "/home/me/repo");
}

#[test]
fn turning_isolation_off_clears_what_was_said_of_the_worktree() {
    let mut state = launching(80, 24);
    // A branch taken is said at the branch; a directory in no repository at the directory.
    for (message, param, at) in [
        ("branch main already exists", "worktree", Field::Branch),
        (
            "not a git repository: the working directory is in no git repository",
            "working_dir",
            Field::WorkingDir,
        ),
    ] {
        let failed = Msg::LaunchFailed {
            message: message.into(),
            param: Some(param.into()),
        };
        update(&mut state, failed);
        assert_eq!(form(&state).field, at);
        assert!(form(&state).error.is_some());
        while form(&state).field != Field::Worktree {
            update(&mut state, key(KeyCode::Tab));
        }
        update(&mut state, key(KeyCode::Left));
        assert_eq!(form(&state).error, None, "{message}");
        assert!(!screen(&state, false).contains(message), "{message}");
        // Launched again, for the next refusal.
        update(&mut state, ctrl('s'));
    }
}
