//! The fleet (several daemons): each daemon's rows joined into one list and marked with its
//! context, a daemon's reload replacing its rows alone, commands routed to the daemon their
//! row came from, a daemon that drops out shown disconnected while its rows stay (a decision
//! on its approvals not sent, the approval kept), and the launch form's choice of daemon.

use crossterm::event::KeyCode;
use hld_client::protocol::SessionInfo;
use hld_tui::app::{route, update, Command, Fleet, Link, Msg, Route, State};
use serde_json::json;

use super::fixtures::*;

pub(super) fn from(daemon: usize, msg: Msg) -> Msg {
    Msg::From {
        daemon,
        msg: Box::new(msg),
    }
}

fn plain(id: &str, query: &str, secs_ago: i64) -> SessionInfo {
    session(id, "running", query, secs_ago, json!({}))
}

/// `laptop` (0) and `box` (1), both connected, each with a session and an approval.
pub(super) fn fleet() -> State {
    let mut state = State::new(now(), 120, 30, true);
    state.fleet = Fleet::new(vec!["laptop".into(), "box".into()]);
    for daemon in 0..2 {
        update(&mut state, from(daemon, Msg::Connected));
    }
    let on = |daemon: usize, msg| (daemon, msg);
    for (daemon, msg) in [
        on(
            0,
            Msg::Sessions(vec![plain("s-near", "Tidy the laptop", 20)]),
        ),
        on(
            1,
            Msg::Sessions(vec![plain("s-far", "Build on the box", 10)]),
        ),
        on(
            0,
            Msg::Approvals(vec![approval(
                "a-near",
                "s-near",
                "Bash",
                json!({"command": "ls near"}),
                5,
            )]),
        ),
        on(
            1,
            Msg::Approvals(vec![approval(
                "a-far",
                "s-far",
                "Bash",
                json!({"command": "ls far"}),
                3,
            )]),
        ),
    ] {
        update(&mut state, from(daemon, msg));
    }
    state
}

#[test]
fn each_daemons_rows_are_joined_and_marked_and_a_reload_replaces_its_own() {
    let mut state = fleet();
    let shown = screen(&state, false);
    assert!(
        shown.contains("⌂laptop") && shown.contains("Tidy the laptop"),
        "{shown}"
    );
    assert!(
        shown.contains("⌂box") && shown.contains("Build on the box"),
        "{shown}"
    );
    assert!(
        shown.contains("⌂ laptop ●") && shown.contains("⌂ box ●"),
        "{shown}"
    );
    assert_eq!(state.approvals.len(), 2);

    // The box's sessions again, one new: the laptop's row stays, the box's is replaced.
    let again = vec![plain("s-far2", "Second on the box", 1)];
    update(&mut state, from(1, Msg::Sessions(again)));
    let ids: Vec<&str> = state.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["s-far2", "s-near"]);
    update(&mut state, from(0, Msg::Approvals(Vec::new())));
    let ids: Vec<&str> = state.approvals.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["a-far"]);
}

#[test]
fn commands_go_to_the_daemon_their_row_came_from_and_loads_to_all() {
    let mut state = fleet();
    keys(&mut state, "2");
    // Oldest first: the laptop's, then the box's.
    keys(&mut state, "j");
    let decide = keys(&mut state, "a");
    let [Command::Decide(params)] = decide.as_slice() else {
        panic!("{decide:?}");
    };
    assert_eq!(params.call_id.as_deref(), Some("a-far"));
    assert_eq!(route(&state, &decide[0]), Route::One(1));
    let near = Command::Interrupt("s-near".into());
    assert_eq!(route(&state, &near), Route::One(0));
    assert_eq!(
        route(&state, &Command::LoadConversation("s-far".into())),
        Route::One(1)
    );
    assert_eq!(route(&state, &Command::LoadSessions), Route::All);
    assert_eq!(route(&state, &Command::LoadApprovals), Route::All);
}

#[test]
fn a_daemon_that_drops_out_is_shown_disconnected_and_reloads_when_back() {
    let mut state = fleet();
    let lost = Msg::Disconnected {
        error: "connection refused".into(),
        retry_in_ms: 1000,
    };
    assert_eq!(update(&mut state, from(1, lost)), []);
    assert_eq!(state.fleet.daemons[0].link, Link::Connected);
    let shown = screen(&state, false);
    assert!(shown.contains("⌂ box ↯ disconnected"), "{shown}");
    assert!(
        shown.contains("⌂box ↯") && shown.contains("Build on the box"),
        "{shown}"
    );
    assert!(shown.contains("box: connection refused"), "{shown}");
    assert!(shown.contains("⌂ laptop ●"), "{shown}");

    // An action on the box's row while it is away says which daemon failed.
    update(
        &mut state,
        from(1, Msg::Failed("not connected to the daemon".into())),
    );
    let flash = state.flash.as_ref().map(|f| f.text.as_str());
    assert_eq!(flash, Some("box: not connected to the daemon"));
    update(&mut state, key(KeyCode::Esc));

    let back = update(&mut state, from(1, Msg::Connected));
    assert!(back.contains(&Command::LoadSessions), "{back:?}");
    let shown = screen(&state, false);
    assert!(shown.contains("⌂ box ●") && !shown.contains('↯'), "{shown}");
}

#[test]
fn the_launch_form_launches_on_the_daemon_chosen_with_ctrl_o() {
    let mut state = fleet();
    keys(&mut state, "c");
    let shown = screen(&state, false);
    assert!(shown.contains("New session on ⌂ laptop"), "{shown}");
    update(&mut state, ctrl('o'));
    let shown = screen(&state, false);
    assert!(shown.contains("New session on ⌂ box"), "{shown}");
    keys(&mut state, "run far");
    let commands = update(&mut state, ctrl('s'));
    let [Command::On { daemon: 1, command }] = commands.as_slice() else {
        panic!("{commands:?}");
    };
    assert!(matches!(**command, Command::Launch(ref p) if p.query == "run far"));
    assert_eq!(route(&state, &commands[0]), Route::One(1));
    // Opened on the box, its conversation loads from there.
    let opened = update(&mut state, from(1, Msg::Opened("s-new".into())));
    assert_eq!(route(&state, &opened[0]), Route::One(1));
    assert_eq!(update(&mut state, key(KeyCode::Esc)), []);
}

#[test]
fn a_decision_on_a_disconnected_daemons_approval_is_not_sent_and_the_approval_stays() {
    let mut state = fleet();
    let lost = Msg::Disconnected {
        error: "connection refused".into(),
        retry_in_ms: 1000,
    };
    update(&mut state, from(1, lost));
    keys(&mut state, "2");
    keys(&mut state, "j");
    let unsent = "⌂box is not connected: the decision was not sent, it stays pending";
    // Approving, approving with edits accepted, and denying (the comment kept in its box).
    for typed in ["a", "A"] {
        assert_eq!(keys(&mut state, typed), [], "{typed}");
        let flash = state.flash.as_ref().map(|f| (f.text.as_str(), f.error));
        assert_eq!(flash, Some((unsent, true)), "{typed}");
        assert_eq!(state.approvals.len(), 2, "{typed}");
        let shown = screen(&state, false);
        assert!(shown.contains("ls far"), "{typed}:\n{shown}");
        state.flash = None;
    }
    assert_eq!(keys(&mut state, "dnot now"), []);
    assert_eq!(update(&mut state, key(KeyCode::Enter)), []);
    assert_eq!(state.flash.as_ref().map(|f| f.text.as_str()), Some(unsent));
    assert!(state.modal.is_some(), "the denial's box stays open");
    let shown = screen(&state, false);
    assert!(shown.contains("not now"), "{shown}");
    update(&mut state, key(KeyCode::Esc));
    assert_eq!(state.approvals.len(), 2);

    // The laptop's approval is decided as ever; the box's once it is back.
    keys(&mut state, "k");
    let near = keys(&mut state, "a");
    assert!(matches!(near.as_slice(), [Command::Decide(_)]), "{near:?}");
    assert_eq!(route(&state, &near[0]), Route::One(0));
    update(&mut state, from(1, Msg::Connected));
    let far = keys(&mut state, "a");
    let [Command::Decide(params)] = far.as_slice() else {
        panic!("{far:?}");
    };
    assert_eq!(params.call_id.as_deref(), Some("a-far"));
    assert!(state.approvals.is_empty());
}

#[test]
fn with_one_daemon_a_decision_while_it_is_away_is_not_sent_either() {
    let mut state = State::new(now(), 120, 30, true);
    let approval = approval("a-1", "s-1", "Bash", json!({"command": "ls"}), 5);
    update(&mut state, Msg::Approvals(vec![approval]));
    let lost = Msg::Disconnected {
        error: "connection refused".into(),
        retry_in_ms: 1000,
    };
    update(&mut state, lost);
    keys(&mut state, "2");
    assert_eq!(keys(&mut state, "a"), []);
    let flash = state.flash.as_ref().map(|f| f.text.as_str());
    assert_eq!(
        flash,
        Some("the daemon is not connected: the decision was not sent, it stays pending")
    );
    assert_eq!(state.approvals.len(), 1);
    update(&mut state, Msg::Connected);
    assert!(matches!(
        keys(&mut state, "a").as_slice(),
        [Command::Decide(_)]
    ));
}
