//! `hlyr watch`, end to end against a real daemon running `fake-claude`: on a pseudo-terminal
//! read back through a terminal emulator, a session's line shows what it waits for and is
//! redrawn in place once it is approved, and Enter answers it with `launch`'s prompt; without
//! a terminal, a line per change; with `--json`, a JSON line per change.

use hld_client::protocol::{ApprovalStatus, Health, NoParams, SessionStatus};
use hld_e2e::pty::{self, Terminal, CTRL_C};
use hld_e2e::{launch_params, wait_for, workspace_bin, DaemonOptions, TestDaemon, WAIT};

use crate::hlyr::{
    answer_blue_then_large, assert_told_blue_large, fake, hlyr, hlyr_command, wait_decided,
    workdir, Running,
};

const ROWS: u16 = 30;
const COLS: u16 = 120;
/// The prompt of a tool call's approval, after `allow TOOL?`.
const CHOICES: &str = "[a]pprove  [e] approve, auto-accept edits  [d]eny  [s]kip";

/// `hlyr ARGS` on a new terminal against `d`.
pub(crate) fn on_terminal(d: &TestDaemon, args: &[&str]) -> Terminal {
    let mut cmd = pty::command(&workspace_bin("hlyr"), &d.dir);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &d.socket);
    cmd.args(args);
    Terminal::spawn(cmd, ROWS, COLS)
}

/// The screen's row that holds `text`.
#[track_caller]
fn row<'a>(screen: &'a str, text: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no row holds {text:?}:\n{screen}"))
}

/// The short id `hlyr` shows of a session: any leading word (`local-`) and 8 more
/// characters.
fn short(id: &str) -> &str {
    let word = match id.split_once('-') {
        Some((word, _)) if !word.chars().all(|c| c.is_ascii_hexdigit()) => word.len() + 1,
        _ => 0,
    };
    &id[..word + 8]
}

/// How many subscribers the daemon has (its own notifier among them).
fn subscribers(d: &TestDaemon) -> u64 {
    d.request::<Health>(NoParams {}).subscribers
}

/// The only pending approval of `session_id`.
fn pending(d: &TestDaemon, session_id: &str) -> String {
    let approvals = d.wait_approvals(Some(session_id), |a| a.len() == 1);
    approvals[0].id.clone()
}

#[test]
fn a_waiting_approval_shows_on_its_line_which_is_redrawn_in_place_once_approved() {
    let d = fake();
    let wd = workdir(&d);
    let mut term = on_terminal(&d, &["watch"]);
    term.wait_screen("no sessions");
    let id = d.launch(launch_params("scenario:bash list", &wd));
    let screen = term.wait_screen("approve Bash: ls");
    let line = row(&screen, short(&id));
    assert!(line.contains("approve Bash: ls"), "{screen}");
    assert!(line.contains("scenario:bash list"), "{screen}");
    assert!(screen.contains("WAITS FOR"), "{screen}");

    let approval = pending(&d, &id);
    hlyr(&d, &["approve", &approval]).assert_code(0);
    let screen = term.wait_until("the session completed", WAIT, |screen| {
        screen
            .lines()
            .any(|l| l.contains(short(&id)) && l.contains("completed"))
    });
    assert!(!screen.contains("approve Bash"), "{screen}");
    // Drawn again in place: one block, not one per change.
    assert_eq!(screen.matches("WAITS FOR").count(), 1, "{screen}");
    assert_eq!(screen.matches(short(&id)).count(), 1, "{screen}");

    term.send("q");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
}

#[test]
fn enter_answers_the_waiting_approval_with_the_prompt_of_launch() {
    let d = fake();
    let wd = workdir(&d);
    let mut term = on_terminal(&d, &["watch"]);
    term.wait_screen("no sessions");
    let id = d.launch(launch_params("scenario:bash list", &wd));
    term.wait_screen("approve Bash: ls");
    let approval = pending(&d, &id);
    term.send("\r");
    let screen = term.wait_screen(CHOICES);
    assert!(screen.contains("allow Bash?"), "{screen}");
    assert!(screen.contains("$ ls"), "{screen}");
    term.send("a");
    term.wait_screen("✓ approved");
    assert_eq!(wait_decided(&d, &approval).status, ApprovalStatus::Approved);
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
    term.wait_until("the block drawn again", WAIT, |screen| {
        let below = screen.split("✓ approved").nth(1).unwrap_or_default();
        below.contains("WAITS FOR")
            && below
                .lines()
                .any(|l| l.contains(short(&id)) && l.contains("completed"))
    });

    // Nothing waits now: Enter says so.
    term.send("\r");
    term.wait_screen("nothing waits for you");
    term.send(CTRL_C);
    assert_eq!(term.wait_exit(WAIT).exit_code(), 130);
}

/// Enter on a session that asks two questions at once (one `AskUserQuestion`) shows each
/// with its numbered choices and asks them in turn, as `launch` does; a number picks a choice.
#[test]
fn enter_asks_two_questions_in_turn_with_their_choices() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude().env("FAKE_CLAUDE_QUESTIONS", "2"));
    let wd = workdir(&d);
    let mut term = on_terminal(&d, &["watch"]);
    term.wait_screen("no sessions");
    let id = d.launch(launch_params("scenario:ask", &wd));
    term.wait_screen("What colour should the button be?");
    let approval = pending(&d, &id);
    term.send("\r");
    answer_blue_then_large(&mut term);
    let decided = wait_decided(&d, &approval);
    assert_eq!(decided.status, ApprovalStatus::Responded);
    assert_told_blue_large(&d, &id);
    term.send("q");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
}

#[test]
fn without_a_terminal_a_line_is_printed_per_change_and_json_too() {
    let d = fake();
    let wd = workdir(&d);
    let before = subscribers(&d);
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["watch"]);
    let text = Running::spawn(cmd);
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["watch", "--json"]);
    let json = Running::spawn(cmd);
    text.wait_for("WAITS FOR", 1);
    wait_for(WAIT, || (subscribers(&d) == before + 2).then_some(()))
        .expect("both watches subscribed");

    let id = d.launch(launch_params("scenario:bash list", &wd));
    text.wait_for("approve Bash: ls", 1);
    json.wait_for("approve Bash: ls", 1);
    let approval = pending(&d, &id);
    hlyr(&d, &["approve", &approval]).assert_code(0);
    text.wait_for("completed", 1);
    json.wait_for("\"completed\"", 1);

    let printed = text.stdout();
    let line = printed
        .lines()
        .find(|l| l.contains("approve Bash: ls"))
        .unwrap();
    assert!(line.starts_with(short(&id)), "{printed}");
    assert!(
        !printed.contains('\x1b'),
        "no styles in a pipe: {printed:?}"
    );
    let lines = json.stdout();
    let lines: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for line in &lines {
        crate::schema::check("watch", line);
        if line["type"] == "session" {
            assert_eq!(line["data"]["session"]["id"], id.as_str(), "{line}");
        }
    }
    let waiting = serde_json::json!([{"approval_id": approval, "text": "approve Bash: ls"}]);
    assert!(
        lines.iter().any(|l| l["data"]["waiting"] == waiting),
        "{lines:#?}"
    );
    text.interrupt();
    json.interrupt();
    assert_eq!(text.finish().code, 130);
    assert_eq!(json.finish().code, 130);
}

/// A title that holds escapes (here a query's first line) shows them as `�`: none reaches the
/// terminal, in `watch` nor in `sessions`.
#[test]
fn a_title_with_escapes_is_shown_cleaned() {
    let d = fake();
    let wd = workdir(&d);
    // The daemon refuses a title with control characters; a query's first line is the title
    // shown when none was given, and a query may hold anything.
    let id = d.launch(launch_params(
        "scenario:plain evil\x1b]0;pwned\x07\x1b[2J title",
        &wd,
    ));
    d.wait_ended(&id);
    let mut term = on_terminal(&d, &["watch"]);
    let screen = term.wait_screen("evil�]0;pwned��[2J title");
    assert!(row(&screen, short(&id)).contains("completed"), "{screen}");
    assert!(
        !term.output().contains("\x1b]0;pwned"),
        "{:?}",
        term.output()
    );
    term.send("q");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);

    let mut sessions = on_terminal(&d, &["sessions"]);
    assert_eq!(sessions.wait_exit(WAIT).exit_code(), 0);
    assert!(sessions.screen_text().contains("evil�]0;pwned��[2J title"));
    assert!(!sessions.output().contains("\x1b]0;pwned"));
}
