//! Talking to a live session from `hlyr`: `launch` on a terminal holds a conversation (a
//! prompt after each turn; lines typed while the agent works are queued, or steer it), and
//! `send`, `queue` and `queue --cancel` from a script, all in one session. Esc interrupts a
//! turn and the conversation goes on; Up recalls the lines sent.

use std::path::Path;

use hld_client::protocol::{ConversationEventType, SessionStatus};
use hld_e2e::pty::{self, Terminal};
use hld_e2e::{launch_params, wait_for, workspace_bin, DaemonOptions, TestDaemon, WAIT};

use crate::hlyr::{assert_in_order, fake, hlyr, hlyr_command, slow_daemon, workdir, Running};
use crate::hlyr_restart::restartable;

/// What the prompt for the next message says while nothing is typed.
pub(crate) const PROMPT_HINT: &str = "(Enter sends · empty line or Ctrl-D ends)";

/// `hlyr launch -w <work> QUERY` on a new terminal against `d`.
pub(crate) fn launch_on_terminal(d: &TestDaemon, query: &str) -> Terminal {
    hlyr_on_terminal(d, &["launch", "-w", &workdir(d), query], 120)
}

/// `hlyr ARGS` on a new terminal `columns` wide against `d`.
fn hlyr_on_terminal(d: &TestDaemon, args: &[&str], columns: u16) -> Terminal {
    let mut cmd = pty::command(&workspace_bin("hlyr"), &d.dir);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &d.socket);
    cmd.args(args);
    Terminal::spawn(cmd, 50, columns)
}

/// The exit code of `hlyr launch` on `term` once its session's turn ended: the conversation
/// it holds on a terminal is ended with Ctrl-D at the prompt for the next message.
#[track_caller]
pub(crate) fn ended(term: &mut Terminal) -> u32 {
    term.wait_screen(PROMPT_HINT);
    term.send("\x04");
    term.wait_exit(WAIT).exit_code()
}

/// The user messages of `session_id`'s conversation, in order.
pub(super) fn user_messages(d: &TestDaemon, session_id: &str) -> Vec<String> {
    d.conversation(session_id)
        .into_iter()
        .filter(|e| {
            e.event_type == ConversationEventType::Message && e.role.as_deref() == Some("user")
        })
        .map(|e| e.content.unwrap_or_default())
        .collect()
}

#[test]
fn launch_on_a_terminal_holds_a_two_turn_conversation_in_one_session() {
    let d = fake();
    let mut term = launch_on_terminal(&d, "first question");
    term.wait_screen("Hello! You asked: first question");
    term.wait_screen(PROMPT_HINT);
    let id = d.only_session();
    term.send("second question\r");
    let screen = term.wait_screen("You said: second question");
    assert!(screen.contains("> second question"), "{screen}");
    // The second turn ends at the prompt again; an empty line ends the conversation.
    term.wait_count("✓ completed", 2);
    term.wait_screen(PROMPT_HINT);
    term.send("\r");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
    assert_eq!(d.only_session(), id, "one session, not a fork");
    assert_eq!(
        user_messages(&d, &id),
        ["first question", "second question"]
    );
    let cooked = libc::ICANON | libc::ECHO;
    assert_eq!(term.local_flags() & cooked, cooked, "line mode given back");
}

#[test]
fn a_line_typed_while_the_agent_works_is_shown_queued_and_delivered_after_the_turn() {
    // Ten lines half a second apart: the screen holds the whole conversation.
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "500")
            .env("FAKE_CLAUDE_COUNT", "10"),
    );
    let mut term = launch_on_terminal(&d, "scenario:slow");
    term.wait_screen("chunk 2");
    let id = d.only_session();
    // Typed beside the spinner, it is queued, not sent into the running turn.
    term.send("scenario:plain then this\r");
    let screen = term.wait_screen("⧗ queued: scenario:plain then this");
    assert!(!screen.contains("You said"), "{screen}");
    let queued = hlyr(&d, &["--json", "queue", &id]);
    assert_eq!(
        queued.assert_code(0).json_as("queue")[0]["text"],
        "scenario:plain then this"
    );
    // Delivered when the slow turn ends, in the same session.
    let screen = term.wait_screen("You said: scenario:plain then this");
    crate::hlyr::assert_in_order(
        &screen,
        &[
            "⧗ queued",
            "chunk 10",
            "> scenario:plain then this",
            "You said",
        ],
    );
    term.wait_screen(PROMPT_HINT);
    term.send("\x04");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
    assert_eq!(
        user_messages(&d, &id),
        ["scenario:slow", "scenario:plain then this"]
    );
}

/// The `✓ completed` lines on `screen`, each cut after the mark: `N turn(s) · $C · Ds`.
fn completed_lines(screen: &str) -> Vec<&str> {
    let lines = screen.lines().filter_map(|l| l.split_once("✓ completed"));
    lines.map(|(_, figures)| figures).collect()
}

/// The cost and the seconds a `✓ completed` line's figures say.
#[track_caller]
fn cost_and_seconds(figures: &str) -> (f64, f64) {
    let parts: Vec<&str> = figures.split(" · ").map(str::trim).collect();
    let cost = parts.iter().find_map(|p| p.strip_prefix('$')?.parse().ok());
    let seconds = parts.iter().find_map(|p| p.strip_suffix('s')?.parse().ok());
    match (cost, seconds) {
        (Some(cost), Some(seconds)) => (cost, seconds),
        _ => panic!("no cost and duration in {figures:?}"),
    }
}

/// The turn a queued message follows ends with its own `✓ completed` line before the message
/// starts the next turn, and each turn's line tells that turn's cost and duration, not the
/// session's.
#[test]
fn each_turn_ends_with_its_own_figures_when_a_queued_message_follows() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "300")
            .env("FAKE_CLAUDE_COUNT", "6"),
    );
    let mut term = launch_on_terminal(&d, "scenario:slow usage:100000,1000,0,0");
    term.wait_screen("chunk 2");
    term.send("scenario:plain usage:200000,2000,0,0 next\r");
    term.wait_screen("⧗ queued: scenario:plain");
    let screen = term.wait_count("✓ completed", 2);
    crate::hlyr::assert_in_order(
        &screen,
        &[
            "chunk 6",
            "✓ completed",
            "> scenario:plain",
            "You said",
            "✓ completed",
        ],
    );
    let lines = completed_lines(&screen);
    let (first, second) = (cost_and_seconds(lines[0]), cost_and_seconds(lines[1]));
    // The second turn used twice the first's tokens, in a moment: its own figures.
    assert!(
        (second.0 - 2.0 * first.0).abs() < 0.0001,
        "{first:?} {second:?}\n{screen}"
    );
    assert!(
        first.1 >= 1.5 && second.1 < first.1,
        "{first:?} {second:?}\n{screen}"
    );
    assert!(lines.iter().all(|l| l.contains("1 turn")), "{screen}");
    // The session's figures are both turns'.
    let id = d.only_session();
    let shown = hlyr(&d, &["--json", "show", &id])
        .assert_code(0)
        .json_as("session");
    let total = shown["cost_usd"].as_f64().unwrap();
    assert!((total - 3.0 * first.0).abs() < 0.0001, "{shown}");
    assert_eq!(ended(&mut term), 0);
}

#[test]
fn tab_steers_the_agent_with_the_line_typed() {
    let d = slow_daemon(60);
    let mut term = launch_on_terminal(&d, "scenario:slow");
    term.wait_screen("chunk 2");
    let id = d.only_session();
    term.send("scenario:plain change of plan\t");
    // The minute-long turn is cut short: the message is answered long before it would end.
    let screen = term.wait_screen("You said: scenario:plain change of plan");
    assert!(!screen.contains("chunk 600"), "{screen}");
    assert!(!screen.contains("⧗ queued"), "{screen}");
    term.wait_screen(PROMPT_HINT);
    term.send("\x04");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
    assert_eq!(d.only_session(), id);
}

#[test]
fn send_queue_and_cancel_from_a_script() {
    let d = slow_daemon(30);
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    d.wait_session(&id, |s| s.status == SessionStatus::Running);
    let short = &id[..8];
    // A follower in a pipe, as a script reads it: one JSON line per update, messages included.
    let mut follow = hlyr_command(&d.socket, &d.dir);
    follow.args(["--json", "conversation", short, "--follow"]);
    let follower = Running::spawn(follow);
    follower.wait_for("chunk 1", 1);

    let sent = hlyr(&d, &["send", short, "scenario:plain", "first", "later"]);
    assert!(
        sent.assert_code(0).stdout.starts_with("queued "),
        "{}",
        sent.stdout
    );
    assert!(
        sent.stdout
            .contains(&format!("`hlyr queue {short} --cancel ")),
        "{}",
        sent.stdout
    );
    let second = hlyr(&d, &["--json", "send", short, "scenario:plain second"]);
    let second = second.assert_code(0).json_as("sent");
    assert_eq!(second["queued"], true);
    assert_eq!(second["session_id"], id.as_str());

    let listed = hlyr(&d, &["queue", short]);
    let rows: Vec<&str> = listed.assert_code(0).stdout.lines().collect();
    assert_eq!(rows.len(), 3, "a header and two rows: {}", listed.stdout);
    assert!(
        rows[1].contains("scenario:plain first later"),
        "{}",
        listed.stdout
    );
    assert!(
        rows[2].contains("scenario:plain second"),
        "{}",
        listed.stdout
    );

    let message = second["message_id"].as_str().unwrap();
    let cancelled = hlyr(&d, &["--json", "queue", short, "--cancel", &message[..8]]);
    assert_eq!(
        cancelled.assert_code(0).json_as("unqueued")["message_id"],
        message
    );
    let left = hlyr(&d, &["--json", "queue", short]).json_as("queue");
    assert_eq!(left.as_array().unwrap().len(), 1, "{left}");
    // Cancelled already, or never queued: a usage error naming it.
    let again = hlyr(&d, &["queue", short, "--cancel", &message[..8]]);
    assert!(
        again.assert_code(2).stderr.contains("no queued message"),
        "{}",
        again.stderr
    );
    hlyr(&d, &["send", short, " "]).assert_code(2);

    // Steering cuts the slow turn short; the queued message follows in its own turn.
    let steered = hlyr(&d, &["send", "--steer", short, "scenario:plain steer"]);
    assert!(
        steered.assert_code(0).stdout.contains("✓ steered"),
        "{}",
        steered.stdout
    );
    // (Claude records the interrupt itself as a user message between them.)
    let delivered = |m: &Vec<String>| {
        ["scenario:plain steer", "scenario:plain first later"]
            .iter()
            .all(|text| m.iter().any(|said| said == text))
    };
    let messages = wait_for(WAIT, || Some(user_messages(&d, &id)).filter(delivered))
        .unwrap_or_else(|| panic!("both delivered: {:?}", user_messages(&d, &id)));
    assert_eq!(messages[0], "scenario:slow");
    // The follower stopped at the end of the steered turn, having told each message's status.
    let followed = follower.finish();
    let statuses: Vec<(String, String)> = followed
        .json_lines_as("update")
        .into_iter()
        .filter(|line| line["type"] == "message")
        .map(|line| {
            let text = line["data"]["text"].as_str().unwrap().to_owned();
            (text, line["data"]["status"].as_str().unwrap().to_owned())
        })
        .collect();
    for expected in [
        ("scenario:plain first later", "queued"),
        ("scenario:plain second", "queued"),
        ("scenario:plain second", "cancelled"),
    ] {
        let expected = (expected.0.to_owned(), expected.1.to_owned());
        assert!(statuses.contains(&expected), "{expected:?} in {statuses:?}");
    }
    let ended = d.wait_ended(&id);
    assert_eq!(ended.status, SessionStatus::Completed);

    // After the turn: sent at once, and the same session goes on.
    let after = hlyr(&d, &["send", short, "scenario:plain", "once", "more"]);
    let told = format!("✓ sent · session {short} is on a new turn\n");
    assert!(
        after.assert_code(0).stdout.contains(&told),
        "{}",
        after.stdout
    );
    wait_for(WAIT, || {
        user_messages(&d, &id)
            .contains(&"scenario:plain once more".to_owned())
            .then_some(())
    })
    .expect("delivered into the same session");
    assert_eq!(d.only_session(), id);
}

#[test]
fn ctrl_c_takes_back_the_lines_queued_as_it_stops_the_session() {
    let d = slow_daemon(60);
    let mut term = launch_on_terminal(&d, "scenario:slow");
    term.wait_screen("chunk 2");
    let id = d.only_session();
    term.send("scenario:plain do this later\r");
    term.wait_screen("⧗ queued: scenario:plain do this later");
    // A line typed beside the spinner is cleared first, as in Claude Code: the turn goes on.
    term.send("a draft");
    term.wait_screen("a draft");
    term.send("\x03");
    term.wait_until("the draft cleared", WAIT, |s| !s.contains("a draft"));
    assert_eq!(d.state(&id).status, SessionStatus::Running);
    term.send("\x03");
    term.wait_screen("not sent, taken back: scenario:plain do this later");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 130);
    let ended = d.wait_ended(&id);
    assert!(ended.interrupted, "{ended:?}");
    // Nothing queued went on unattended.
    let queue = hlyr(&d, &["--json", "queue", &id]);
    assert_eq!(queue.assert_code(0).json_as("queue"), serde_json::json!([]));
    let said = user_messages(&d, &id);
    assert!(
        !said.iter().any(|m| m.contains("do this later")),
        "{said:?}"
    );
}

#[test]
fn continue_on_a_terminal_holds_the_conversation_and_a_line_not_sent_stays_typed() {
    let mut d = fake();
    let parent = d.launch(launch_params("first", workdir(&d)));
    d.wait_ended(&parent);
    let mut term = hlyr_on_terminal(&d, &["continue", &parent, "second"], 120);
    term.wait_screen("You said: second");
    term.wait_screen(PROMPT_HINT);
    // The daemon gone (the prompt says so by itself), a line sent is not lost: its sending
    // fails, said, and it is on the prompt still.
    d.kill9();
    let said = |s: &str| s.matches("closed the connection").count();
    let before = said(&term.wait_screen("the conversation connects again"));
    term.send("third\r");
    term.wait_until("the line kept after its sending failed", WAIT, |s| {
        said(s) > before && s.lines().any(|l| l.contains("› third"))
    });
    // Ctrl-C clears the line, then ends.
    term.send("\x03");
    term.wait_until("the line cleared", WAIT, |s| !s.contains("› third"));
    term.send("\x03");
    term.wait_exit(WAIT);
}

#[test]
fn a_line_longer_than_the_terminal_is_edited_in_place() {
    let d = fake();
    let mut term = hlyr_on_terminal(&d, &["launch", "-w", &workdir(&d), "first"], 40);
    term.wait_screen(PROMPT_HINT);
    let long = "abcdefghij".repeat(10);
    term.send(&long);
    term.wait_screen("abcdefghij");
    // Home, then a letter: the three rows are drawn again where they were, once.
    term.send("\x1b[HX");
    let screen = term.wait_screen("› Xabcdefghij");
    assert_eq!(screen.matches('›').count(), 1, "{screen}");
    assert_eq!(screen.matches("abcdefghij").count(), 10, "{screen}");
    term.send("\r");
    term.wait_screen("You said: Xabcdefghij");
    // Ctrl-C at the prompt clears a line typed, as Claude Code's does; a second one ends.
    // (At the second turn's prompt: typed while the agent works, Ctrl-C would stop it.)
    term.wait_count(PROMPT_HINT, 2);
    term.send("not this");
    term.wait_screen("› not this");
    term.send("\x03");
    term.wait_until("the line cleared", WAIT, |s| !s.contains("not this"));
    term.send("\x03");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
}

#[test]
fn a_turn_interrupted_with_a_message_queued_elsewhere_ends_interrupted() {
    let d = slow_daemon(60);
    let mut term = launch_on_terminal(&d, "scenario:slow");
    term.wait_screen("chunk 2");
    let id = d.only_session();
    hlyr(&d, &["send", &id, "scenario:plain queued elsewhere"]).assert_code(0);
    term.wait_screen("⧗ queued: scenario:plain queued elsewhere");
    term.send("\x1b");
    // The interrupted turn says so, though the message queued starts the next at once.
    term.wait_screen("You said: scenario:plain queued elsewhere");
    let screen = term.wait_count("✓ completed", 1);
    assert_in_order(
        &screen,
        &[
            "■ interrupted",
            "> scenario:plain queued elsewhere",
            "✓ completed",
        ],
    );
    assert_eq!(screen.matches("✓ completed").count(), 1, "{screen}");
    // The conversation's exit is its last turn's.
    term.wait_screen(PROMPT_HINT);
    assert_eq!(ended(&mut term), 0);
}

#[test]
fn esc_interrupts_the_turn_and_the_conversation_goes_on_with_up_recalling_lines() {
    let d = slow_daemon(60);
    let mut term = launch_on_terminal(&d, "scenario:slow");
    term.wait_screen("chunk 2");
    let id = d.only_session();
    term.send("scenario:plain after that\r");
    term.wait_screen("⧗ queued: scenario:plain after that");
    term.send("and this\r");
    term.wait_screen("⧗ queued: and this");
    term.send("and more");
    term.wait_screen("and more");
    // Esc stops the minute-long turn, as Claude Code's does with a line typed; what was
    // queued comes back to the line, in order and before what is typed, not sent.
    term.send("\x1b");
    term.wait_screen("what was queued is back on the line");
    // The prompt's help line is written before the prompt line under it.
    let screen = term.wait_until("the prompt with what was queued", WAIT, |s| {
        s.contains(PROMPT_HINT) && s.contains("› scenario:plain after that and this and more")
    });
    assert!(!screen.contains("chunk 600"), "{screen}");
    assert!(d.wait_ended(&id).interrupted);
    // Enter sends it into the same session, as the next turn.
    term.send("\r");
    term.wait_screen("You said: scenario:plain after that and this and more");
    term.wait_count(PROMPT_HINT, 2);
    // Up recalls the lines sent, newest first, the query last; Down comes back.
    term.send("\x1b[A");
    term.wait_screen("› scenario:plain after that and this and more");
    term.send("\x1b[A\x1b[A\x1b[A");
    term.wait_screen("› scenario:slow");
    term.send("\x1b[B");
    term.wait_until("the newer line", WAIT, |s| {
        let last = s.lines().rev().find(|l| !l.trim().is_empty());
        last.is_some_and(|l| l.ends_with("› scenario:plain after that"))
    });
    term.send("\x15\x04");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
    assert_eq!(d.only_session(), id);
    // Claude's own note of the interrupt aside, the line was sent once, after the interrupt.
    let said = user_messages(&d, &id);
    let said: Vec<_> = said.iter().filter(|m| !m.starts_with("[Request")).collect();
    assert_eq!(
        said,
        [
            "scenario:slow",
            "scenario:plain after that and this and more"
        ]
    );
}

#[test]
fn a_conversation_waits_out_a_daemon_restart_and_goes_on_with_the_session() {
    let base = hld_e2e::short_tempdir();
    let start = restartable(&base, || {
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "100")
            .env("FAKE_CLAUDE_COUNT", "600")
    });
    let mut d = start();
    let mut term = launch_on_terminal(&d, "scenario:slow");
    term.wait_screen("chunk 2");
    let id = d.only_session();
    // The daemon dies mid-turn: the conversation stays, at its prompt.
    d.kill9();
    drop(d);
    term.wait_screen("the conversation connects again");
    term.wait_screen(PROMPT_HINT);
    let d = start();
    // Tab asks the daemon that replaced it what completes the word.
    term.send("/mo\t");
    term.wait_screen("› /model");
    term.send("\x15");
    // The next line reaches it too, in the same session.
    term.send("scenario:plain where were we\r");
    term.wait_screen("You said: scenario:plain where were we");
    term.wait_count(PROMPT_HINT, 2);
    term.send("\x04");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
    assert_eq!(d.only_session(), id);
    let said = user_messages(&d, &id);
    assert_eq!(
        said.last().map(String::as_str),
        Some("scenario:plain where were we")
    );
}

#[test]
fn a_daemon_gone_while_the_prompt_waits_is_said_at_once() {
    let base = hld_e2e::short_tempdir();
    let start = restartable(&base, DaemonOptions::fake_claude);
    let mut d = start();
    let mut term = launch_on_terminal(&d, "scenario:plain first");
    term.wait_screen(PROMPT_HINT);
    term.send("half typed");
    term.wait_screen("› half typed");
    let id = d.only_session();
    // Nothing is sent: the prompt tells of the loss by itself, and keeps what was typed.
    d.kill9();
    drop(d);
    let screen = term.wait_screen("the conversation connects again");
    assert!(
        screen.contains("lost the connection to the daemon"),
        "{screen}"
    );
    term.wait_screen("› half typed");
    let d = start();
    term.send(" and done\r");
    term.wait_screen("You said: half typed and done");
    // The turn's own figures, though it may have ended before it was followed.
    let screen = term.wait_count("✓ completed · 1 turn ·", 2);
    assert!(!screen.contains("2 turns"), "{screen}");
    term.send("\x04");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
    assert_eq!(d.only_session(), id);
}

#[test]
fn esc_at_an_approval_denies_it_and_stops_the_turn_and_the_conversation_goes_on() {
    let d = fake();
    let mut term = launch_on_terminal(&d, "scenario:tool make a file");
    term.wait_screen("allow Write?");
    let id = d.only_session();
    term.send("\x1b");
    term.wait_screen("✗ denied");
    term.wait_screen(PROMPT_HINT);
    assert!(!Path::new(&workdir(&d)).join("hello.txt").exists());
    // The turn was asked to stop (fake-claude, without a model to wait for, may have ended
    // it first), and the conversation holds its prompt for what to do instead.
    wait_for(WAIT, || {
        d.log_text()
            .contains("method=interruptSession")
            .then_some(())
    })
    .expect("an interrupt asked for");
    term.send("scenario:plain do this instead\r");
    term.wait_screen("You said: scenario:plain do this instead");
    term.wait_count(PROMPT_HINT, 2);
    term.send("\x04");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
    assert_eq!(d.only_session(), id);
}
