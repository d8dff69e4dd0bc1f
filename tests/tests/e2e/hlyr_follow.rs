//! `hlyr` following a session, end to end on a real pseudo-terminal read back through a
//! terminal emulator, against a real daemon running `fake-claude`: each approval's screen
//! (a Write's preview, an Edit's coloured diff, a Bash command, a long input cut short), its
//! keys, the spinner, Ctrl-C once and twice, `--keep-running`, the exit codes of a followed
//! session, `launch -` and `--notify`.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use hld_client::protocol::{
    ApprovalStatus, ConversationEventType, GetApproval, GetApprovalParams, ListSessions, NoParams,
    SendDecision, SendDecisionParams, SessionStatus,
};
use hld_e2e::pty::{self, Terminal, CTRL_C};
use hld_e2e::{launch_params, wait_for, workspace_bin, DaemonOptions, TestDaemon, WAIT};

use crate::hlyr::{
    assert_in_order, fake, hlyr, hlyr_command, printed_session, run_command, slow_daemon, workdir,
    Running,
};
use crate::hlyr_converse::ended;

const ROWS: u16 = 60;
const COLS: u16 = 120;
/// The prompt of a tool call's approval, after `allow TOOL?`.
const CHOICES: &str = "[a]pprove  [e] approve, auto-accept edits  [d]eny  [s]kip";
/// Esc, alone.
const ESC: &str = "\x1b";
/// What the `tool` and `asked_first` scenarios show after their query, up to the question's
/// prompt (`<work>`, `<approval>`: the working directory and the approval's short id).
const WRITE_HELLO: &str = "\
thinking: The user wants a new file hello.txt in the working directory with the text Hello, world!. The Write tool does \
this directly.
I'll create that file for you.
→ Write <work>/hello.txt
    1 Hello, world!
? approval <approval>: Write
";

/// `hlyr ARGS` on a new terminal, with `d`'s socket, `d`'s directory as its home and working
/// directory, and `env` on top.
fn on_terminal(d: &TestDaemon, args: &[&str], env: &[(&str, &str)]) -> Terminal {
    let mut cmd = pty::command(&workspace_bin("hlyr"), &d.dir);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &d.socket);
    cmd.args(args);
    for (key, value) in env {
        cmd.env(key, value);
    }
    Terminal::spawn(cmd, ROWS, COLS)
}

/// The exit code of the program on `term` (waited for).
#[track_caller]
fn exit_code(term: &mut Terminal) -> u32 {
    term.wait_exit(WAIT).exit_code()
}

/// The rows of `screen` from the first that starts with `from` to the first after it that
/// starts with `to`, without trailing blanks, with each `(text, placeholder)` of `replace`
/// replaced: the part of a screen a golden test compares, from the query on (the conversation
/// is shown in the session's order, whatever order the daemon published it in).
#[track_caller]
fn rows_between(screen: &str, from: &str, to: &str, replace: &[(&str, &str)]) -> String {
    let rows: Vec<&str> = screen.lines().collect();
    let start = rows
        .iter()
        .position(|r| r.starts_with(from))
        .unwrap_or_else(|| panic!("no row starts with {from:?}:\n{screen}"));
    let end = start
        + rows[start..]
            .iter()
            .position(|r| r.starts_with(to))
            .unwrap_or_else(|| panic!("no row starts with {to:?} after {from:?}:\n{screen}"));
    let mut text = rows[start..=end]
        .iter()
        .map(|r| r.trim_end())
        .collect::<Vec<_>>()
        .join("\n");
    for (from, to) in replace {
        text = text.replace(from, to);
    }
    text
}

/// The only pending approval of `session_id` once it is asked: its id.
fn pending(d: &TestDaemon, session_id: &str) -> String {
    d.wait_approvals(Some(session_id), |a| a.len() == 1)[0]
        .id
        .clone()
}

/// The session id `hlyr` printed on `screen`.
fn session_on(screen: &str) -> String {
    screen
        .lines()
        .find_map(|l| l.strip_prefix("Session "))
        .unwrap_or_else(|| panic!("no session id on screen:\n{screen}"))
        .trim()
        .to_owned()
}

/// Asserts that no row of `screen` is the spinner's (indicatif's spinner is braille).
#[track_caller]
fn assert_no_spinner(screen: &str) {
    let spinner = |row: &&str| row.starts_with(|c: char| ('\u{2800}'..='\u{28ff}').contains(&c));
    assert!(
        !screen.lines().any(|row| spinner(&row)),
        "a spinner is left on screen:\n{screen}"
    );
}

/// What an approval's id looks like on screen.
fn short(id: &str) -> &str {
    &id[..14]
}

#[test]
fn a_write_is_its_path_and_numbered_content_and_a_approves_it() {
    let d = fake();
    let wd = workdir(&d);
    let mut term = on_terminal(&d, &["launch", "-w", &wd, "scenario:tool write it"], &[]);
    let screen = term.wait_screen(CHOICES);
    let id = session_on(&screen);
    let approval = pending(&d, &id);
    assert_eq!(
        rows_between(
            &screen,
            "> ",
            "  allow",
            &[(&wd, "<work>"), (short(&approval), "<approval>")]
        ),
        format!("> scenario:tool write it\n{WRITE_HELLO}  allow Write? {CHOICES}")
    );

    term.send("a");
    let screen = term.wait_screen("✓ completed");
    assert_eq!(ended(&mut term), 0);
    assert!(
        screen.contains(&format!(
            "[s]kip approve\n✓ approved {}\n",
            short(&approval)
        )),
        "{screen}"
    );
    assert!(
        screen.contains("I'll create that file for you.\n"),
        "{screen}"
    );
    assert!(screen.contains("Done - the file hello.txt now contains"));
    assert_eq!(
        std::fs::read_to_string(Path::new(&wd).join("hello.txt")).unwrap(),
        "Hello, world!\n"
    );
    assert_no_spinner(&screen);
}

/// y approves and n denies, as in hld-tui.
#[test]
fn y_approves_and_n_denies_as_a_and_d_do() {
    let d = fake();
    let wd = workdir(&d);
    let mut term = on_terminal(&d, &["launch", "-w", &wd, "scenario:tool write it"], &[]);
    let screen = term.wait_screen(CHOICES);
    let approval = pending(&d, &session_on(&screen));
    term.send("y");
    term.wait_screen(&format!("✓ approved {}", short(&approval)));
    assert_eq!(ended(&mut term), 0);
    let mut term = on_terminal(&d, &["launch", "-w", &wd, "scenario:tool write it"], &[]);
    term.wait_screen(CHOICES);
    term.send("n");
    term.wait_screen("reason");
}

#[test]
fn an_edit_is_a_coloured_diff_and_e_approves_it_and_auto_accepts_edits() {
    let d = fake();
    let wd = workdir(&d);
    std::fs::write(Path::new(&wd).join("greeting.txt"), "Hello,\nworld!\n").unwrap();
    let mut term = on_terminal(&d, &["launch", "-w", &wd, "scenario:edit widen"], &[]);
    let screen = term.wait_screen(CHOICES);
    let id = session_on(&screen);
    let approval = pending(&d, &id);
    assert_eq!(
        rows_between(
            &screen,
            "> ",
            "  allow",
            &[(&wd, "<work>"), (short(&approval), "<approval>")]
        ),
        "\
> scenario:edit widen
I'll widen the greeting.
→ Edit <work>/greeting.txt
      Hello,
    - world!
    + wide world!
? approval <approval>: Edit
  allow Edit? [a]pprove  [e] approve, auto-accept edits  [d]eny  [s]kip"
    );

    // The removed line is red and the added one green, sign and text; the unchanged one
    // keeps the default colour.
    {
        let emulator = term.emulator();
        let screen = emulator.screen();
        let row = |text: &str| {
            (0..ROWS)
                .find(|&r| screen.contents_between(r, 0, r, COLS).starts_with(text))
                .unwrap_or_else(|| panic!("no row {text:?}"))
        };
        let colours = |r: u16, len: u16| -> Vec<vt100::Color> {
            (4..4 + len)
                .map(|c| screen.cell(r, c).unwrap().fgcolor())
                .collect()
        };
        let (red, green) = (vt100::Color::Idx(1), vt100::Color::Idx(2));
        assert_eq!(colours(row("    - world!"), 8), vec![red; 8]);
        assert_eq!(colours(row("    + wide world!"), 13), vec![green; 13]);
        let unchanged = colours(row("      Hello,"), 8);
        assert!(!unchanged.contains(&red) && !unchanged.contains(&green));
    }

    term.send("e");
    let screen = term.wait_screen("✓ completed");
    assert_eq!(ended(&mut term), 0);
    assert!(
        screen.contains("[s]kip approve, auto-accept edits\n"),
        "{screen}"
    );
    assert!(
        screen.contains("auto-accept of edits is on for this session"),
        "{screen}"
    );
    assert!(screen.contains("I'll widen the greeting.\n"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(Path::new(&wd).join("greeting.txt")).unwrap(),
        "Hello,\nwide world!\n"
    );
    let state = d.state(&id);
    assert!(state.control.auto_accept_edits, "{state:#?}");
    let decided = d.request::<GetApproval>(GetApprovalParams {
        approval_id: approval,
    });
    assert_eq!(decided.approval.status, ApprovalStatus::Approved);
    assert_eq!(decided.approval.decided_by, None, "a person approved it");
}

#[test]
fn bash_is_its_command_and_description_and_d_denies_it_with_a_reason() {
    let d = fake();
    let wd = workdir(&d);
    let mut term = on_terminal(&d, &["launch", "-w", &wd, "scenario:bash list"], &[]);
    let screen = term.wait_screen(CHOICES);
    let id = session_on(&screen);
    let approval = pending(&d, &id);
    assert_eq!(
        rows_between(
            &screen,
            "> ",
            "  allow",
            &[(short(&approval), "<approval>")]
        ),
        "\
> scenario:bash list
Let me list the files in the working directory.
→ Bash
    $ ls
    # List files in the working directory
? approval <approval>: Bash
  allow Bash? [a]pprove  [e] approve, auto-accept edits  [d]eny  [s]kip"
    );

    // Another key names the valid ones and asks again.
    term.send("x");
    term.wait_screen("press a (or y) to approve, e to approve and auto-accept edits from now on");
    term.send("d");
    term.wait_screen("reason for denying (Enter or Esc for none):");
    term.send("not nowX");
    term.wait_screen("none): not nowX");
    term.send("\x7f\r");
    let screen = term.wait_screen("✓ completed");
    assert_eq!(ended(&mut term), 0);
    assert!(
        screen.contains(&format!("✗ denied {}: not now\n", short(&approval))),
        "{screen}"
    );
    assert!(
        screen.contains("Let me list the files in the working directory.\n"),
        "{screen}"
    );
    let result = d
        .conversation(&id)
        .into_iter()
        .find(|e| e.event_type == ConversationEventType::ToolResult)
        .expect("a tool result");
    assert!(result.is_error);
    assert_eq!(result.tool_result_content.as_deref(), Some("not now"));
}

#[test]
fn a_long_input_is_cut_v_shows_all_of_it_and_esc_denies_without_a_reason() {
    let d = fake();
    let wd = workdir(&d);
    let mut term = on_terminal(
        &d,
        &["launch", "-w", &wd, "scenario:long write"],
        &[("NO_COLOR", "1")],
    );
    let screen = term.wait_screen(CHOICES);
    let id = session_on(&screen);
    let approval = pending(&d, &id);
    let expected: String = (1..=10)
        .map(|i| format!("    {i:>2} line {i}\n"))
        .collect::<String>()
        + "    … 30 more lines\n";
    assert_eq!(
        rows_between(
            &screen,
            "> ",
            "  allow",
            &[(&wd, "<work>"), (short(&approval), "<approval>")]
        ),
        format!(
            "> scenario:long write\nI'll write the long file.\n→ Write <work>/long.txt\n\
             {expected}? approval <approval>: Write\n  allow Write? {CHOICES}  [v]iew all"
        )
    );
    assert!(!screen.contains("line 11"), "{screen}");

    term.send("\r");
    term.wait_screen("s to skip, Esc to deny and stop the agent, v to view the whole input");
    term.send("v");
    let screen = term.wait_screen("    40 line 40");
    // The whole input, then the question again.
    assert!(
        screen.contains("[v]iew all view\n     1 line 1\n"),
        "{screen}"
    );
    assert!(
        screen.contains("    40 line 40\n  allow Write?"),
        "{screen}"
    );
    // NO_COLOR: not a cell in colour.
    {
        let emulator = term.emulator();
        let screen = emulator.screen();
        for r in 0..ROWS {
            for c in 0..COLS {
                let cell = screen.cell(r, c).unwrap();
                assert_eq!(cell.fgcolor(), vt100::Color::Default, "row {r} col {c}");
                assert!(!cell.bold(), "row {r} col {c}");
            }
        }
    }

    term.send("d");
    term.wait_screen("reason for denying");
    term.send("why");
    term.wait_screen("none): why");
    term.send(ESC);
    let screen = term.wait_screen("✓ completed");
    assert_eq!(ended(&mut term), 0);
    assert!(
        screen.contains(&format!("✗ denied {}\n", short(&approval))),
        "no reason shown: {screen}"
    );
    let decided = d.request::<GetApproval>(GetApprovalParams {
        approval_id: approval,
    });
    assert_eq!(decided.approval.status, ApprovalStatus::Denied);
    assert_eq!(
        decided.approval.comment.as_deref(),
        Some("The user denied this tool call.")
    );
    assert!(!Path::new(&wd).join("long.txt").exists());
}

#[test]
fn the_spinner_says_what_the_session_does_and_leaves_no_trace() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_COUNT", "3")
            .env("FAKE_CLAUDE_DELAY_MS", "2500")
            .env("FAKE_CLAUDE_COMMAND", "sleep 3; ls"),
    );
    let wd = workdir(&d);
    let mut term = on_terminal(&d, &["launch", "-w", &wd, "scenario:slow"], &[]);
    // While Claude's text streams, the spinner says so ("thinking" was wrong).
    term.wait_until("writing with its time", WAIT, |s| {
        s.lines()
            .map(str::trim_end)
            .any(|l| l.ends_with(" writing 1s") || l.ends_with(" writing 2s"))
    });
    let screen = term.wait_screen("✓ completed");
    assert_eq!(ended(&mut term), 0);
    assert_no_spinner(&screen);
    assert_eq!(screen.matches("chunk ").count(), 3, "{screen}");

    let mut term = on_terminal(
        &d,
        &[
            "launch",
            "-w",
            &wd,
            "--allowed-tools",
            "Bash",
            "scenario:bash",
        ],
        &[],
    );
    term.wait_screen("running Bash");
    let screen = term.wait_screen("✓ completed");
    assert_eq!(ended(&mut term), 0);
    assert_no_spinner(&screen);

    // Skipped, the approval waits for another front end, and the spinner says so.
    let mut term = on_terminal(&d, &["launch", "-w", &wd, "scenario:tool skip it"], &[]);
    let screen = term.wait_screen(CHOICES);
    let approval = pending(&d, &session_on(&screen));
    term.send("s");
    term.wait_screen("left pending: decide it with `hlyr approve");
    term.wait_screen("waiting for a decision on Write");
    hlyr(&d, &["approve", &approval]).assert_code(0);
    let screen = term.wait_screen("✓ completed");
    assert_eq!(ended(&mut term), 0);
    assert_no_spinner(&screen);
}

/// A daemon whose sessions run for about 30 s and take `interrupt_ms` to stop once
/// interrupted (the daemon waits 30 s before it kills one that does not).
fn slow_to_stop(interrupt_ms: u64) -> TestDaemon {
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
            .env("FAKE_CLAUDE_INTERRUPT_DELAY_MS", &interrupt_ms.to_string()),
    )
}

#[test]
fn ctrl_c_once_interrupts_the_session_and_waits_for_its_end() {
    let d = slow_to_stop(1000);
    let mut term = on_terminal(&d, &["launch", "-w", &workdir(&d), "scenario:slow"], &[]);
    let screen = term.wait_screen("chunk 3");
    let id = session_on(&screen);
    term.send(CTRL_C);
    term.wait_screen("interrupting the session (Ctrl-C again to stop waiting)");
    let screen = term.wait_screen("■ interrupted");
    assert_eq!(exit_code(&mut term), 130);
    let state = d.state(&id);
    assert!(state.interrupted, "{state:#?}");
    assert_eq!(state.status, SessionStatus::Completed);
    // Each line whole: the spinner and the terminal's `^C` left nothing behind.
    assert!(!screen.contains("^C"), "{screen}");
    assert_no_spinner(&screen);
}

#[test]
fn ctrl_c_twice_stops_waiting_for_the_interrupt() {
    let d = slow_to_stop(12_000);
    let mut term = on_terminal(&d, &["launch", "-w", &workdir(&d), "scenario:slow"], &[]);
    let screen = term.wait_screen("chunk 3");
    let id = session_on(&screen);
    term.send(CTRL_C);
    term.wait_screen("interrupting the session");
    d.wait_session(&id, |s| s.status == SessionStatus::Completing);
    term.send(CTRL_C);
    let screen = term.wait_screen("stopped waiting");
    assert_eq!(exit_code(&mut term), 130);
    assert!(
        screen.contains(&format!(
            "stopped waiting; the daemon is still interrupting the session (see `hlyr show {}`)",
            &id[..8]
        )),
        "{screen}"
    );
    // hlyr is gone; the interrupt goes on without it.
    assert_eq!(d.state(&id).status, SessionStatus::Completing);
    let ended = d.wait_ended(&id);
    assert!(ended.interrupted, "{ended:#?}");
}

#[test]
fn with_keep_running_ctrl_c_only_detaches_and_says_how_to_follow_again() {
    let d = slow_daemon(30);
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args([
        "launch",
        "--keep-running",
        "-w",
        &workdir(&d),
        "scenario:slow",
    ]);
    let follower = Running::spawn(cmd);
    follower.wait_for("chunk 2\n", 1);
    follower.interrupt();
    let run = follower.finish();
    run.assert_code(130);
    let id = printed_session(&run);
    assert!(
        run.stderr.contains(&format!(
            "detached; the session keeps running: follow it again with `hlyr conversation {0} \
             --follow`, stop it with `hlyr interrupt {0}`",
            &id[..8]
        )),
        "{}",
        run.stderr
    );
    assert_eq!(d.state(&id).status, SessionStatus::Running);

    // `conversation --follow` and `events` only stop watching as well.
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["conversation", "--follow", &id]);
    let follower = Running::spawn(cmd);
    follower.wait_for("chunk 3\n", 1);
    follower.interrupt();
    let run = follower.finish();
    run.assert_code(130);
    assert!(
        run.stderr.contains(&format!(
            "stopped following; the session keeps running (stop it with `hlyr interrupt {}`)",
            &id[..8]
        )),
        "{}",
        run.stderr
    );
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["events", "--session", &id]);
    let watcher = Running::spawn(cmd);
    watcher.wait_for("conversation_updated", 1);
    watcher.interrupt();
    let run = watcher.finish();
    run.assert_code(130);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    assert_eq!(d.state(&id).status, SessionStatus::Running);
    hlyr(&d, &["interrupt", &id]).assert_code(0);
}

#[test]
fn conversation_follow_goes_on_through_the_turn_a_queued_message_starts() {
    let d = slow_daemon(5);
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["conversation", "--follow", &id]);
    let follower = Running::spawn(cmd);
    follower.wait_for("chunk 1\n", 1);
    hlyr(&d, &["send", &id, "scenario:plain queued A"]).assert_code(0);
    let run = follower.finish();
    run.assert_code(0);
    // Each turn ends with its own line; the follow ends with the last.
    assert_in_order(
        &run.stdout,
        &[
            "chunk 1\n",
            "✓ completed",
            "> scenario:plain queued A",
            "You said: scenario:plain queued A",
            "✓ completed",
        ],
    );
}

#[test]
fn a_session_interrupted_elsewhere_exits_4() {
    let d = slow_daemon(30);
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["conversation", "--follow", &id]);
    let follower = Running::spawn(cmd);
    follower.wait_for("chunk 1\n", 1);
    hlyr(&d, &["interrupt", &id[..8]]).assert_code(0);
    let run = follower.finish();
    run.assert_code(4);
    assert!(run.stdout.contains("■ interrupted"), "{}", run.stdout);
    let help = hlyr(&d, &["--help"]);
    assert!(
        help.stdout
            .contains("  4    a followed session was interrupted from elsewhere"),
        "{}",
        help.stdout
    );
    let launch_help = hlyr(&d, &["launch", "--help"]);
    assert!(
        launch_help
            .stdout
            .contains("Ctrl-C interrupts the session, as it stops `claude`"),
        "{}",
        launch_help.stdout
    );
}

#[test]
fn a_query_over_the_daemons_limit_is_refused_as_such() {
    let d = fake();
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["launch", "-w", &workdir(&d), "--detach", "-"])
        .stdin(std::process::Stdio::piped());
    let mut running = Running::spawn(cmd);
    running.write_stdin(&format!("scenario:plain {}", "x".repeat(2 << 20)));
    let run = running.finish();
    // Not a call that waits out its timeout and blames the daemon (exit 3).
    run.assert_code(2);
    assert!(
        run.stderr.starts_with(
            "error: the request is larger than the daemon takes (1 MiB, unless hld runs with \
             --max-message-size)\nhint: put a long text in a file"
        ),
        "{run:#?}"
    );
    let sessions = d.request::<ListSessions>(NoParams {}).sessions;
    assert!(sessions.is_empty(), "{sessions:#?}");
}

#[test]
fn launch_dash_reads_the_query_from_stdin() {
    let d = fake();
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["launch", "-w", &workdir(&d), "-"])
        .stdin(std::process::Stdio::piped());
    let mut running = Running::spawn(cmd);
    running.write_stdin("from stdin\non two lines\n");
    let run = running.finish();
    run.assert_code(0);
    let id = printed_session(&run);
    assert_eq!(d.state(&id).query, "from stdin\non two lines");
    assert!(
        run.stdout.contains("> from stdin\n  on two lines\n"),
        "{}",
        run.stdout
    );

    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["launch", "-w", &workdir(&d), "-"]);
    let empty = run_command(cmd);
    empty.assert_code(2);
    assert!(
        empty.stderr.contains("the query read from stdin is empty"),
        "{}",
        empty.stderr
    );
}

/// A daemon that shows no desktop notification (no session bus): `--notify` rings for the
/// daemon's notification of the approval, and at the end of the turn, each time with a bell,
/// an OSC 9 and hlyr's own `notify-send`.
#[test]
fn notify_rings_and_runs_notify_send_when_an_approval_waits_and_at_the_end() {
    let d = fake();
    let (path, read_log) = crate::hlyr_notify::notify_send(&d);

    let mut term = on_terminal(
        &d,
        &[
            "launch",
            "--notify",
            "-w",
            &workdir(&d),
            "scenario:tool ring",
        ],
        &[("PATH", &path)],
    );
    term.wait_screen(CHOICES);
    let first = wait_for(WAIT, || Some(read_log()).filter(|l| l.lines().count() == 1))
        .unwrap_or_else(|| panic!("notify-send never ran: {:?}", read_log()));
    let wd = workdir(&d);
    assert_eq!(
        first,
        format!("--app-name|hlyr|hlyr|scenario:tool ring: Write: {wd}/hello.txt|\n")
    );
    // The terminal's output is read on its own thread: the bell that came before
    // notify-send ran may not have been read yet.
    crate::hlyr_notify::wait_bells(&term, 1);
    assert_eq!(term.emulator().screen().audible_bell_count(), 1);
    assert_eq!(
        term.output()
            .matches("\x1b]9;scenario:tool ring: Write: ")
            .count(),
        1
    );

    term.send("a");
    term.wait_screen("✓ completed");
    assert_eq!(ended(&mut term), 0);
    let both = wait_for(WAIT, || Some(read_log()).filter(|l| l.lines().count() == 2))
        .unwrap_or_else(|| panic!("notify-send did not run at the end: {:?}", read_log()));
    assert_eq!(
        both.lines().nth(1).unwrap(),
        "--app-name|hlyr|hlyr|scenario:tool ring: completed|"
    );
    assert_eq!(term.emulator().screen().audible_bell_count(), 2);
    let log = d.dir.join("notified.log");

    // Without --notify, neither.
    let _ = std::fs::remove_file(&log);
    let run = run_command({
        let mut cmd = hlyr_command(&d.socket, &d.dir);
        cmd.args(["launch", "-w", &workdir(&d), "plain"])
            .env("PATH", &path);
        cmd
    });
    run.assert_code(0);
    assert_eq!(read_log(), "");
}

/// The approval's event reaches `hlyr` before its tool call does (the `asked_first` agent
/// prints the tool_use line only once the daemon lists the approval): the live view still
/// shows the tool call first, then the approval without repeating the input, and asks once.
#[test]
fn an_approval_that_comes_before_its_tool_call_is_shown_after_it_and_asked_once() {
    let d = fake();
    let wd = workdir(&d);
    let mut term = on_terminal(
        &d,
        &["launch", "-w", &wd, "scenario:asked_first make a file"],
        &[],
    );
    let screen = term.wait_screen(CHOICES);
    let approval = pending(&d, &session_on(&screen));
    assert_eq!(
        rows_between(
            &screen,
            "> ",
            "  allow",
            &[(&wd, "<work>"), (short(&approval), "<approval>")]
        ),
        format!("> scenario:asked_first make a file\n{WRITE_HELLO}  allow Write? {CHOICES}")
    );
    term.send("a");
    let screen = term.wait_screen("✓ completed");
    assert_eq!(ended(&mut term), 0);
    assert!(Path::new(&wd).join("hello.txt").exists());
    assert_eq!(screen.matches("allow Write?").count(), 1, "{screen}");
    assert_eq!(screen.matches("? approval").count(), 1, "{screen}");
    crate::hlyr::assert_in_order(
        &screen,
        &[
            "thinking:",
            "I'll create that file for you.",
            "→ Write",
            "? approval",
            "allow Write?",
            "✓ approved",
            "Done - the file hello.txt",
            "✓ completed",
        ],
    );
}

/// Approvals made with `createApproval` have no tool call to show their input: the approval
/// line shows it. A question is answered with a line; decisions made elsewhere end the
/// question on screen.
#[test]
fn approvals_without_a_tool_call_questions_and_decisions_made_elsewhere() {
    let d = slow_daemon(60);
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    let mut term = on_terminal(&d, &["conversation", "--follow", &id], &[]);
    term.wait_screen("chunk 1");

    let write = crate::hlyr::ask_tool(
        &d,
        &id,
        "Write",
        serde_json::json!({"file_path": "/tmp/inline.txt", "content": "one\ntwo\n"}),
    );
    let screen = term.wait_screen(CHOICES);
    assert!(
        screen.contains(&format!(
            "? approval {}: Write /tmp/inline.txt\n    1 one\n    2 two\n  allow Write?",
            short(&write)
        )),
        "{screen}"
    );
    term.send("a");
    term.wait_screen(&format!("✓ approved {}", short(&write)));

    let question = crate::hlyr::ask_human(&d, &id, "Which colour?");
    term.wait_screen("your answer (empty to answer later):");
    term.send("blue\r");
    let answered = crate::hlyr::wait_decided(&d, &question);
    assert_eq!(answered.status, ApprovalStatus::Responded);
    assert_eq!(answered.comment.as_deref(), Some("blue"));

    // Decided elsewhere while asked: the question goes, the decision is shown.
    let bash = crate::hlyr::ask_tool(&d, &id, "Bash", serde_json::json!({"command": "make"}));
    term.wait_until("the Bash question", WAIT, |s| s.contains("allow Bash?"));
    let reply = d.request::<SendDecision>(SendDecisionParams {
        call_id: Some(bash.clone()),
        kind: Some("function_call".into()),
        decision: Some("deny".into()),
        comment: Some("decided elsewhere".into()),
    });
    assert!(reply.success, "{reply:?}");
    term.wait_screen(&format!("✗ denied {}: decided elsewhere", short(&bash)));

    hlyr(&d, &["interrupt", &id]).assert_code(0);
    term.wait_screen("■ interrupted");
    assert_eq!(exit_code(&mut term), 4);
    // Keys are read one at a time only while a question waits: the terminal is as it was.
    let cooked = libc::ICANON | libc::ECHO;
    assert_eq!(term.local_flags() & cooked, cooked);
}

/// Claude's API retries show live: on a terminal as one line that each retry rewrites, in a
/// pipe as a line each.
#[test]
fn api_retries_are_one_updating_line_on_a_terminal() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude().env("FAKE_CLAUDE_DELAY_MS", "100"));
    let wd = workdir(&d);
    let mut term = on_terminal(&d, &["launch", "-w", &wd, "scenario:retry hello"], &[]);
    let screen = term.wait_screen("✗ failed: Invalid API key");
    assert_eq!(ended(&mut term), 1);
    let retries: Vec<&str> = screen.lines().filter(|l| l.contains("retrying")).collect();
    assert_eq!(
        retries,
        ["↻ API error 401 (authentication_failed), retrying (3/3) in 0.1 s"],
        "{screen}"
    );

    let piped = hlyr(&d, &["launch", "-w", &wd, "scenario:retry hello"]);
    piped.assert_code(1);
    let lines: Vec<&str> = piped
        .stdout
        .lines()
        .filter(|l| l.contains("retrying"))
        .collect();
    assert_eq!(
        lines,
        [
            "↻ API error 401 (authentication_failed), retrying (1/3) in 0.1 s",
            "↻ API error 401 (authentication_failed), retrying (2/3) in 0.1 s",
            "↻ API error 401 (authentication_failed), retrying (3/3) in 0.1 s",
        ]
    );
    assert!(!piped.stdout.contains('\u{1b}'));
}

#[test]
fn the_session_shown_in_a_pipe_has_no_spinner_and_no_prompt() {
    let d = fake();
    let wd = workdir(&d);
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["launch", "-w", &wd, "scenario:tool in a pipe"]);
    let follower = Running::spawn(cmd);
    follower.wait_for("? approval", 1);
    let approval = pending(&d, &session_on(&follower.stdout()));
    d.request::<SendDecision>(SendDecisionParams {
        call_id: Some(approval),
        kind: Some("function_call".into()),
        decision: Some("approve".into()),
        comment: None,
    });
    let run = follower.finish();
    run.assert_code(0);
    assert!(!run.stderr.contains("allow Write?"), "{}", run.stderr);
    assert!(!run.stderr.contains("waiting for"), "{}", run.stderr);
    assert!(run.stdout.contains("✓ approved"), "{}", run.stdout);
}

/// A follower that fell behind loses nothing. `hlyr launch` writes to a pipe nobody reads until
/// the session is over: once the pipe is full it blocks, and reads no more events. The 20 000
/// events of a few hundred bytes each that the session publishes meanwhile cannot all wait in
/// the socket's buffers and the 4 the daemon keeps for a subscriber, so the daemon drops some
/// for it. It still prints every line, once, in order.
#[test]
fn a_follower_that_fell_behind_prints_every_line_once_in_order() {
    const LINES: usize = 20_000;
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .arg("--subscriber-buffer=4")
            .env("FAKE_CLAUDE_COUNT", &LINES.to_string()),
    );
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["launch", "-w", &workdir(&d), "scenario:many"]);
    let mut child = cmd.spawn().expect("spawn hlyr");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    let id = session_on(&first);
    d.wait_ended(&id);

    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(child.wait().unwrap().success(), "{stderr}");
    let printed: Vec<&str> = rest.lines().filter(|l| l.starts_with("line ")).collect();
    let out_of_place = (1..=LINES)
        .zip(&printed)
        .find(|(i, line)| **line != format!("line {i}"));
    assert_eq!(printed.len(), LINES, "every line once");
    assert_eq!(out_of_place, None, "in order");
    assert!(rest.contains("\n✓ completed"), "{stderr}");
}
