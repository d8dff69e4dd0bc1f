//! What a followed session says while it runs: a question asked readably, and, when stdin is
//! no terminal to ask on, how to answer an approval from elsewhere; and what Ctrl-C leaves on
//! the screen. (The spinner's words are in `hlyr_follow`.)

use hld_client::protocol::ApprovalStatus;
use hld_e2e::pty::{self, Terminal, CTRL_C};
use hld_e2e::{workspace_bin, DaemonOptions, TestDaemon, WAIT};

use crate::hlyr::{
    answer_blue_then_large, assert_told_blue_large, hlyr, hlyr_command, wait_decided, workdir,
    Running,
};

/// The session id `hlyr` printed in `text` (`Session <id>`).
fn session_in(text: &str) -> String {
    let id = text.lines().find_map(|l| l.strip_prefix("Session "));
    id.unwrap_or_else(|| panic!("no session id in {text:?}"))
        .trim()
        .to_owned()
}

/// The only pending approval of `session_id` once it is asked: its id.
fn pending(d: &TestDaemon, session_id: &str) -> String {
    d.wait_approvals(Some(session_id), |a| a.len() == 1)[0]
        .id
        .clone()
}

/// Stdin is not a terminal (`hlyr launch … | cat` from a script): nothing can be asked, so
/// each approval is followed by what `s` says, how to decide it with `hlyr`. A question
/// (contact_human) is its readable line, without the raw tool call before it.
#[test]
fn without_a_terminal_each_approval_says_how_to_answer_it_and_a_question_reads_plainly() {
    // fake-claude's question goes to the approvals server's `contact_human`.
    let d = TestDaemon::start_with(DaemonOptions::fake_claude_with_approvals_server());
    let wd = workdir(&d);
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["launch", "-w", &wd, "scenario:tool in a pipe"]);
    let follower = Running::spawn(cmd);
    follower.wait_for("? approval", 1);
    let write = pending(&d, &session_in(&follower.stdout()));
    let short = &write[..14];
    let how = format!(
        "  left pending: decide it with `hlyr approve {short}` or `hlyr deny {short} \
         [--comment …]`, or in another front end\n"
    );
    hlyr(&d, &["deny", short]).assert_code(0);
    let run = follower.finish();
    run.assert_code(0);
    assert!(run.stderr.contains(&how), "{}", run.stderr);
    assert!(
        run.stdout.contains(&format!("✗ denied {short}")),
        "{}",
        run.stdout
    );

    question_in_a_pipe(&d, &wd, "scenario:ask");
}

/// A question Claude asks before its tool call reaches the daemon (`question_first` holds
/// the call back until the question is listed) still reads after the text before it, once.
#[test]
fn a_question_asked_before_its_tool_call_is_stored_reads_in_order_and_once() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude_with_approvals_server());
    question_in_a_pipe(&d, &workdir(&d), "scenario:question_first");
}

/// Launches `query` (an `ask` agent) with stdout a pipe, answers its question with `hlyr
/// respond`, and checks what was printed live and again by `hlyr conversation`.
fn question_in_a_pipe(d: &TestDaemon, wd: &str, query: &str) {
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["launch", "-w", wd, query]);
    let follower = Running::spawn(cmd);
    follower.wait_for("? question", 1);
    let question = pending(d, &session_in(&follower.stdout()));
    let short = &question[..14];
    let how = format!(
        "  left pending: decide it with `hlyr respond {short} --comment …`, or in another \
         front end\n"
    );
    hlyr(d, &["respond", short, "--comment", "blue"]).assert_code(0);
    assert_eq!(wait_decided(d, &question).status, ApprovalStatus::Responded);
    let run = follower.finish();
    run.assert_code(0);
    assert!(run.stderr.contains(&how), "{}", run.stderr);
    // The question after the text before it, once, by its approval; then its answer.
    let told = format!(
        "I need to ask a human about this.\n? question {short}: What colour should the \
         button be?\n✓ answered {short}: blue\n  ← blue\nThe human answered: blue\n"
    );
    assert!(run.stdout.contains(&told), "{}", run.stdout);
    assert!(!run.stdout.contains("contact_human"), "{}", run.stdout);
    // Printed again once over: the question, by its approval, then the answer.
    let again = hlyr(d, &["conversation", &session_in(&run.stdout)]);
    assert!(
        again.assert_code(0).stdout.contains(&told),
        "{}",
        again.stdout
    );
    assert!(!again.stdout.contains("contact_human"), "{}", again.stdout);
}

/// Without the approvals server (no API key), the agent asks with Claude Code's own
/// `AskUserQuestion` over the control channel: hlyr shows the question and its choices, not
/// the tool's raw input, takes the answer given elsewhere, and `hlyr conversation` tells it
/// the same way.
#[test]
fn a_question_asked_over_the_control_channel_shows_its_choices() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let wd = workdir(&d);
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["launch", "-w", &wd, "scenario:ask"]);
    let follower = Running::spawn(cmd);
    follower.wait_for("? question", 1);
    let question = pending(&d, &session_in(&follower.stdout()));
    let short = &question[..14];
    // A number that names no choice is refused, as at the terminal; one that does is sent
    // as its choice's label, and said so.
    let refused = hlyr(&d, &["respond", short, "--comment", "3"]);
    refused.assert_code(2);
    assert!(refused.stderr.contains("choose 1–2"), "{refused:#?}");
    let answered = hlyr(&d, &["respond", short, "--comment", "1"]);
    assert!(
        answered
            .assert_code(0)
            .stdout
            .contains(&format!("✓ answered {question}: Blue")),
        "{answered:#?}"
    );
    let decided = wait_decided(&d, &question);
    assert_eq!(decided.status, ApprovalStatus::Responded);
    assert_eq!(decided.comment.as_deref(), Some("Blue"));
    let run = follower.finish();
    run.assert_code(0);
    let asked = format!(
        "I need to ask a human about this.\n? question {short}: What colour should the button \
         be?\n  1. Blue — like the sky\n  2. Red — like a cherry\n✓ answered {short}: Blue\n"
    );
    assert!(run.stdout.contains(&asked), "{}", run.stdout);
    assert!(
        run.stdout.contains("The human answered: Blue"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("\"questions\""), "{}", run.stdout);
    let again = hlyr(&d, &["conversation", &session_in(&run.stdout)]);
    assert!(
        again.assert_code(0).stdout.contains(&asked),
        "{}",
        again.stdout
    );
}

/// Two questions asked at once (one `AskUserQuestion`) are asked on the terminal one after
/// the other, each by its text, a choice picked by its number, and their answers reach the
/// agent each as its own.
#[test]
fn two_questions_at_once_are_asked_in_turn_on_a_terminal() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude().env("FAKE_CLAUDE_QUESTIONS", "2"));
    let mut cmd = pty::command(&workspace_bin("hlyr"), &d.dir);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &d.socket);
    cmd.args(["launch", "-w", &workdir(&d), "scenario:ask"]);
    let mut term = Terminal::spawn(cmd, 30, 120);
    let screen = term.wait_screen("your answer to “What colour should the button be?”");
    assert!(screen.contains("  1. Small — fits a phone"), "{screen}");
    term.send("Blue\r");
    term.wait_screen("your answer to “What size should it be?” (empty to answer later):");
    // A choice's number picks it.
    term.send("2\r");
    let screen = term.wait_screen("The human answered: Blue, Large");
    assert!(
        screen.contains(r#""What size should it be?"="Large""#),
        "{screen}"
    );
    assert_eq!(crate::hlyr_converse::ended(&mut term), 0);
}

/// An answer given as a choice's number is echoed as that choice's label, and one in words as
/// typed: as the agent is told them.
#[test]
fn an_answer_by_number_is_echoed_as_its_label() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude().env("FAKE_CLAUDE_QUESTIONS", "2"));
    let mut cmd = pty::command(&workspace_bin("hlyr"), &d.dir);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &d.socket);
    cmd.args(["launch", "-w", &workdir(&d), "scenario:ask"]);
    let mut term = Terminal::spawn(cmd, 30, 120);
    term.wait_screen("your answer to “What colour should the button be?”");
    term.send("2\r");
    term.wait_screen("your answer to “What size should it be?”");
    term.send("as big as it gets\r");
    let screen = term.wait_screen("The human answered: Red, as big as it gets");
    let echo = screen.lines().find(|l| l.starts_with("✓ answered"));
    assert!(
        echo.is_some_and(|l| l.ends_with(": Red · as big as it gets")),
        "{screen}"
    );
    assert_eq!(crate::hlyr_converse::ended(&mut term), 0);
}

/// `hlyr respond ID` without `--comment`: on a terminal it shows the questions with their
/// choices and asks each in turn (a number picks a choice); in a pipe it is a usage error.
#[test]
fn respond_without_an_answer_asks_for_it_on_a_terminal() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude().env("FAKE_CLAUDE_QUESTIONS", "2"));
    let id = d.launch(hld_e2e::launch_params("scenario:ask", workdir(&d)));
    let question = pending(&d, &id);
    let piped = hlyr(&d, &["respond", &question]);
    piped.assert_code(2);
    assert!(piped.stderr.contains("--comment"), "{}", piped.stderr);
    let mut cmd = pty::command(&workspace_bin("hlyr"), &d.dir);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &d.socket);
    cmd.args(["respond", &question[..14]]);
    let mut term = Terminal::spawn(cmd, 30, 120);
    answer_blue_then_large(&mut term);
    term.wait_screen("✓ answered");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
    // Kept as it was read: the choice's number as its label.
    assert_eq!(
        wait_decided(&d, &question).comment.as_deref(),
        Some("Blue\nLarge")
    );
    assert_told_blue_large(&d, &id);
}

/// A daemon whose `scenario:slow` sessions run for 30 s and take 5 s to stop once interrupted.
fn slow_to_stop() -> TestDaemon {
    let options = DaemonOptions {
        args: vec![
            "--claude-path".into(),
            hld_e2e::fake_claude().display().to_string(),
            "--interrupt-grace-ms".into(),
            "30000".into(),
        ],
        ..Default::default()
    };
    TestDaemon::start_with(
        options
            .env("FAKE_CLAUDE_DELAY_MS", "100")
            .env("FAKE_CLAUDE_COUNT", "300")
            .env("FAKE_CLAUDE_INTERRUPT_DELAY_MS", "5000"),
    )
}

/// Asserts that `screen` holds no `^C` and no spinner row.
#[track_caller]
fn assert_no_echo_or_spinner(screen: &str) {
    assert!(!screen.contains("^C"), "{screen}");
    let spinner = |row: &str| row.starts_with(|c: char| ('\u{2800}'..='\u{28ff}').contains(&c));
    assert!(
        !screen.lines().any(spinner),
        "a spinner is left on screen:\n{screen}"
    );
}

/// While a session is followed, the terminal does not echo `^C` where the cursor is: with no
/// spinner to clear it (stderr elsewhere), it would start the next line of output. Ctrl-C
/// twice in quick succession leaves neither an echo nor a spinner behind, and the terminal
/// echoes control characters again once hlyr exits.
#[test]
fn ctrl_c_leaves_no_echo_or_spinner_on_the_screen() {
    let d = slow_to_stop();
    let launch = format!(
        "exec {} launch -w {} scenario:slow 2>/dev/null",
        workspace_bin("hlyr").display(),
        workdir(&d)
    );
    let mut cmd = pty::command(std::path::Path::new("/bin/sh"), &d.dir);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &d.socket);
    cmd.args(["-c", &launch]);
    let mut term = Terminal::spawn(cmd, 30, 100);
    term.wait_screen("chunk 2");
    term.send(CTRL_C);
    let screen = term.wait_screen("■ interrupted");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 130);
    assert_no_echo_or_spinner(&screen);
    assert_ne!(term.local_flags() & libc::ECHOCTL, 0, "ECHOCTL given back");

    let mut cmd = pty::command(&workspace_bin("hlyr"), &d.dir);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &d.socket);
    cmd.args(["launch", "-w", &workdir(&d), "scenario:slow"]);
    let mut term = Terminal::spawn(cmd, 30, 100);
    term.wait_screen("> scenario:slow");
    term.send(CTRL_C);
    term.wait_screen("interrupting the session");
    term.send(CTRL_C);
    assert_eq!(term.wait_exit(WAIT).exit_code(), 130);
    let screen = term.screen_text();
    assert!(screen.contains("\nstopped waiting;"), "{screen}");
    assert_no_echo_or_spinner(&screen);
    assert_ne!(term.local_flags() & libc::ECHOCTL, 0, "ECHOCTL given back");
}
