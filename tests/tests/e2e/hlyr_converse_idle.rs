//! A conversation held by `hlyr launch` between its turns: what another front end does to the
//! session shows as it happens, and a turn the daemon's loss cut short is told how it ended
//! once the daemon is back. Also how a replay and `hlyr conversation` tell a question and a
//! failure.

use hld_client::protocol::ApprovalStatus;
use hld_e2e::closing::Closing;
use hld_e2e::pty::Terminal;
use hld_e2e::{launch_params, DaemonOptions, TestDaemon, WAIT};

use crate::hlyr::{assert_in_order, fake, hlyr, wait_decided, workdir};
use crate::hlyr_converse::{ended, launch_on_terminal, user_messages, PROMPT_HINT};
use crate::hlyr_restart::restartable;

#[test]
fn the_prompt_shows_a_turn_another_front_end_starts_and_keeps_the_line_typed() {
    let d = fake();
    let mut term = launch_on_terminal(&d, "scenario:plain composer idle");
    term.wait_screen(PROMPT_HINT);
    term.send("half typed");
    term.wait_screen("› half typed");
    let id = d.only_session();
    hlyr(&d, &["send", &id, "scenario:plain sent from elsewhere"]).assert_code(0);
    // Told as it happens, with its end, and the prompt comes back with the line typed.
    term.wait_screen("You said: scenario:plain sent from elsewhere");
    term.wait_count("✓ completed", 2);
    let screen = term.wait_count(PROMPT_HINT, 2);
    assert_in_order(
        &screen,
        &[
            "You asked: scenario:plain composer idle",
            "> scenario:plain sent from elsewhere",
            "You said: scenario:plain sent from elsewhere",
            "✓ completed",
            "› half typed",
        ],
    );
    term.send(" and mine\r");
    term.wait_screen("You said: half typed and mine");
    term.wait_count("✓ completed", 3);
    assert_eq!(ended(&mut term), 0);
    assert_eq!(
        user_messages(&d, &id),
        [
            "scenario:plain composer idle",
            "scenario:plain sent from elsewhere",
            "half typed and mine"
        ]
    );
}

#[test]
fn a_turn_cut_short_by_the_daemon_is_told_how_it_ended_once_it_is_back() {
    let base = hld_e2e::short_tempdir();
    let start = restartable(&base, DaemonOptions::fake_claude);
    let mut d = start();
    let mut term = launch_on_terminal(&d, "scenario:tool make a file");
    term.wait_screen("allow Write?");
    let id = d.only_session();
    d.kill9();
    drop(d);
    term.wait_screen("the conversation connects again");
    // A key typed is the next line's, not an answer to the approval no daemon can take.
    term.send("x");
    let screen = term.wait_screen("› x");
    assert_eq!(screen.matches("the daemon closed").count(), 1, "{screen}");
    let d = start();
    term.send("\x15scenario:plain go on\r");
    let screen = term.wait_screen("You said: scenario:plain go on");
    assert_in_order(
        &screen,
        &[
            "allow Write?",
            "· ended with its session",
            "✗ failed: daemon restarted",
            "> scenario:plain go on",
        ],
    );
    term.wait_count(PROMPT_HINT, 2);
    term.send("\x04");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
    assert_eq!(d.only_session(), id);
}

#[test]
fn the_prompt_connects_again_by_itself_and_shows_what_came_meanwhile() {
    let base = hld_e2e::short_tempdir();
    let start = restartable(&base, DaemonOptions::fake_claude);
    let mut d = start();
    let mut term = launch_on_terminal(&d, "scenario:plain before");
    term.wait_screen(PROMPT_HINT);
    term.send("half typed");
    term.wait_screen("› half typed");
    let id = d.only_session();
    d.kill9();
    drop(d);
    term.wait_screen("the conversation connects again");
    // Back, with no key pressed: said, and a turn another front end starts is shown.
    let d = start();
    term.wait_screen("reconnected to the daemon");
    hlyr(&d, &["send", &id, "scenario:plain after the restart"]).assert_code(0);
    term.wait_screen("You said: scenario:plain after the restart");
    let screen = term.wait_count("✓ completed", 2);
    assert_in_order(
        &screen,
        &[
            "reconnected to the daemon",
            "> scenario:plain after the restart",
            "✓ completed",
        ],
    );
    term.wait_screen("› half typed");
    term.send("\x15");
    assert_eq!(ended(&mut term), 0);
}

/// A conversation whose daemon came back after a listener in its place closed each connection.
struct Back {
    term: Terminal,
    daemon: TestDaemon,
    session_id: String,
    _dir: tempfile::TempDir,
}

/// `hlyr launch QUERY` on a terminal until `shown`; its daemon is then killed, and replaced for
/// a while by a listener that closes each connection at its first request, until a daemon is
/// back and said to be.
fn back_after_a_daemon_that_closed(query: &str, shown: &str) -> Back {
    let base = hld_e2e::short_tempdir();
    let start = restartable(&base, DaemonOptions::fake_claude);
    let mut d = start();
    let term = launch_on_terminal(&d, query);
    term.wait_screen(shown);
    let session_id = d.only_session();
    let socket = d.socket.clone();
    d.kill9();
    drop(d);
    term.wait_screen("the conversation connects again");
    // Reached, then dropped as the session is read: not back yet, and tried again, unsaid.
    std::fs::remove_file(&socket).unwrap();
    let closing = Closing::listen(&socket);
    closing.wait_closed(2);
    let screen = term.screen_text();
    assert!(!term.output().contains("reconnected"), "{screen}");
    assert_eq!(screen.matches("error:").count(), 1, "{screen}");
    drop(closing);
    let daemon = start();
    term.wait_screen("reconnected to the daemon");
    Back {
        term,
        daemon,
        session_id,
        _dir: base,
    }
}

#[test]
fn the_prompt_waits_on_quietly_for_a_daemon_that_closes_the_connection_it_took() {
    let mut back = back_after_a_daemon_that_closed("scenario:plain before", PROMPT_HINT);
    let (term, d) = (&mut back.term, &back.daemon);
    hlyr(
        d,
        &["send", &back.session_id, "scenario:plain after the restart"],
    )
    .assert_code(0);
    term.wait_screen("You said: scenario:plain after the restart");
    term.wait_count("✓ completed", 2);
    assert_eq!(term.output().matches("reconnected").count(), 1);
    assert_eq!(ended(term), 0);
}

#[test]
fn a_cut_turn_is_told_once_a_daemon_that_closed_the_connection_is_back() {
    let mut back = back_after_a_daemon_that_closed("scenario:tool make a file", "allow Write?");
    let term = &mut back.term;
    let screen = term.wait_screen("✗ failed: daemon restarted");
    assert_in_order(
        &screen,
        &[
            "allow Write?",
            "reconnected to the daemon",
            "✗ failed: daemon restarted",
        ],
    );
    assert_eq!(term.output().matches("reconnected").count(), 1);
    // The last turn told failed: so does the conversation.
    assert_eq!(ended(term), 1);
}

#[test]
fn a_failed_sessions_conversation_ends_with_its_failure() {
    let d = fake();
    let id = d.launch(launch_params("scenario:error", workdir(&d)));
    d.wait_ended(&id);
    let run = hlyr(&d, &["conversation", &id]);
    let last = run
        .assert_code(0)
        .stdout
        .trim_end()
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned();
    assert!(last.starts_with("✗ failed: "), "{}", run.stdout);
    let json = hlyr(&d, &["--json", "conversation", &id]);
    assert_eq!(
        json.assert_code(0).json_lines_as("update").len(),
        d.conversation(&id).len()
    );
}

#[test]
fn continue_replays_a_question_before_its_answer() {
    let d = fake();
    let id = d.launch(launch_params("scenario:ask", workdir(&d)));
    let question = d.wait_approvals(Some(&id), |a| !a.is_empty())[0].id.clone();
    hlyr(&d, &["respond", &question, "--comment", "Blue"]).assert_code(0);
    assert_eq!(
        wait_decided(&d, &question).status,
        ApprovalStatus::Responded
    );
    d.wait_ended(&id);
    let run = hlyr(&d, &["continue", &id, "scenario:plain next"]);
    let printed = &run.assert_code(0).stdout;
    // Named by its approval's id, as when it was asked.
    let short = &question[..14];
    assert_in_order(
        printed,
        &[
            &format!("? question {short}: What colour should the button be?"),
            "✓ answered",
            "You said: scenario:plain next",
        ],
    );
}
