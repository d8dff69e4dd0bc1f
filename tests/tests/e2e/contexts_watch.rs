//! `hlyr watch --context` and `--all-contexts` (issue 42): two daemons, one on this
//! machine's socket and one on `wss://` (loopback, self-signed, with its token), on one
//! board, each line marked with its context; the `wss://` daemon stopped while watching is
//! said to be down while the local one keeps showing, and is watched again once it is back.
//! On a terminal, a daemon that cannot be reached is said under the block, and the keys of
//! `hlyr watch` answer the picked line's approval on that line's daemon.

use std::path::Path;

use hld_client::protocol::{ApprovalStatus, SessionStatus};
use hld_e2e::pty::{self, Terminal};
use hld_e2e::{launch_params, wait_for, workspace_bin, DaemonOptions, TestDaemon, WAIT};
use serde_json::Value;

use crate::contexts::{add_box, hlyr, restart_wss, wss_daemon};
use crate::hlyr::{approval, hlyr_command, wait_decided, Running};

/// The JSON lines `watch` printed after the first `skip`, the first that `wanted` takes.
#[track_caller]
fn wait_line(watch: &Running, skip: usize, what: &str, wanted: impl Fn(&Value) -> bool) -> usize {
    let found = wait_for(WAIT, || {
        let stdout = watch.stdout();
        let lines = stdout.lines().enumerate().skip(skip);
        lines
            .filter_map(|(at, l)| Some((at, serde_json::from_str::<Value>(l).ok()?)))
            .find(|(_, line)| wanted(line))
            .map(|(at, _)| at)
    });
    found.unwrap_or_else(|| panic!("never printed: {what}:\n{}", watch.stdout()))
}

/// Whether `line` is `context`'s line of session `id`, waiting for exactly `waiting`.
fn session_line(line: &Value, context: &str, id: &str, waiting: &[&str]) -> bool {
    let data = &line["data"];
    let waits: Vec<&str> = data["waiting"]
        .as_array()
        .map(|w| w.iter().filter_map(|a| a["approval_id"].as_str()).collect())
        .unwrap_or_default();
    line["type"] == "session"
        && data["context"] == context
        && data["session"]["id"] == id
        && waits == waiting
}

fn context_line(line: &Value, context: &str, connected: bool) -> bool {
    line["type"] == "context"
        && line["data"]["context"] == context
        && line["data"]["connected"] == connected
}

/// `hlyr watch --all-contexts ARGS` with `home`'s contexts, running.
fn watch_all(local: &TestDaemon, home: &Path, args: &[&str]) -> Running {
    let mut cmd = hlyr_command(&local.socket, home);
    cmd.args(["watch", "--all-contexts"]).args(args);
    Running::spawn(cmd)
}

/// A `tool` session on `daemon` waiting on its one approval: (the session's id, the approval's).
pub(super) fn waiting_approval(daemon: &TestDaemon) -> (String, String) {
    let id = daemon.launch(launch_params("scenario:tool", &daemon.dir));
    let approvals = daemon.wait_approvals(Some(&id), |a| a.len() == 1);
    (id, approvals[0].id.clone())
}

#[test]
fn watch_all_contexts_shows_both_daemons_and_one_lost_and_back_while_the_other_shows() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (mut far, url, pin) = wss_daemon(home, 0);
    let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
    add_box(&local, home, &far, &url, pin);
    let mut sessions = Vec::new();
    for daemon in [&local, &far] {
        let id = daemon.launch(launch_params("scenario:tool", &daemon.dir));
        let approvals = daemon.wait_approvals(Some(&id), |a| a.len() == 1);
        sessions.push((id, approvals[0].id.clone()));
    }
    let [(local_id, local_approval), (far_id, far_approval)] = &sessions[..] else {
        unreachable!()
    };

    // `--context box`: that daemon alone.
    let mut cmd = hlyr_command(&local.socket, home);
    cmd.args(["--context", "box", "watch", "--json"]);
    let one = Running::spawn(cmd);
    wait_line(&one, 0, "the box session", |l| {
        l["data"]["session"]["id"] == far_id.as_str()
    });
    one.interrupt();
    let run = one.finish();
    assert!(!run.stdout.contains(local_id.as_str()), "{run:#?}");

    // As text: one table, a column naming each line's context.
    let text = watch_all(&local, home, &[]);
    text.wait_for(&far_id[..8], 1);
    text.wait_for(&local_id[..8], 1);
    text.interrupt();
    let run = text.finish();
    assert_eq!(run.code, 130, "{run:#?}");
    assert!(run.stdout.contains("CONTEXT"), "{}", run.stdout);
    let far_row = run
        .stdout
        .lines()
        .find(|l| l.contains(&far_id[..8]))
        .unwrap();
    assert!(far_row.contains("box"), "{}", run.stdout);
    assert!(far_row.contains("approve Write"), "{}", run.stdout);

    let watch = watch_all(&local, home, &["--json"]);
    wait_line(&watch, 0, "the local session", |l| {
        session_line(l, "local", local_id, &[local_approval])
    });
    wait_line(&watch, 0, "the box session", |l| {
        session_line(l, "box", far_id, &[far_approval])
    });

    far.stop();
    let lost = wait_line(&watch, 0, "box lost", |l| context_line(l, "box", false));
    // The local daemon keeps showing while box is down.
    let approve = hlyr(&local, home, &["approve", local_approval], &[]);
    assert_eq!(approve.code, 0, "{approve:#?}");
    wait_line(&watch, lost, "the local approval decided", |l| {
        session_line(l, "local", local_id, &[])
    });

    let far = restart_wss(&far, home, port);
    let back = wait_line(&watch, lost, "box back", |l| context_line(l, "box", true));
    let new_id = far.launch(launch_params("scenario:tool", &far.dir));
    wait_line(&watch, back, "a new session on box", |l| {
        l["data"]["context"] == "box" && l["data"]["session"]["id"] == new_id.as_str()
    });
    watch.interrupt();
    let run = watch.finish();
    assert_eq!(run.code, 130, "{run:#?}");
    run.json_lines_as("watch");
}

#[test]
fn on_a_terminal_a_daemon_that_cannot_be_reached_is_said_under_the_others_lines() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let gone = home.join("gone.sock");
    let add = ["context", "add", "gone", gone.to_str().unwrap()];
    assert_eq!(hlyr(&local, home, &add, &[]).code, 0);
    let id = local.launch(launch_params("scenario:tool", &local.dir));
    local.wait_approvals(Some(&id), |a| a.len() == 1);

    let mut cmd = pty::command(&workspace_bin("hlyr"), home);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &local.socket);
    cmd.args(["watch", "--all-contexts"]);
    let term = Terminal::spawn(cmd, 30, 120);
    let screen = term.wait_until("both contexts", WAIT, |screen| {
        screen.contains(&id[..8]) && screen.contains("gone: down")
    });
    let row = screen.lines().find(|l| l.contains(&id[..8])).unwrap();
    assert!(row.trim_start().starts_with("local"), "{screen}");
    assert!(row.contains("approve Write"), "{screen}");
    assert!(screen.contains("CONTEXT"), "{screen}");
    let said = screen.lines().find(|l| l.contains("gone: down")).unwrap();
    assert!(said.contains("gone.sock"), "names what it tried: {screen}");
}

/// `hlyr watch --all-contexts` on a new terminal, `local` the local context's daemon.
pub(super) fn watch_on_terminal(local: &TestDaemon, home: &Path) -> Terminal {
    let mut cmd = pty::command(&workspace_bin("hlyr"), home);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &local.socket);
    cmd.args(["watch", "--all-contexts"]);
    Terminal::spawn(cmd, 40, 140)
}

/// The lines of the block last drawn (below its last header), on `screen`.
fn last_block(screen: &str) -> Vec<&str> {
    let lines: Vec<&str> = screen.lines().collect();
    let header = lines.iter().rposition(|l| l.contains("WAITS FOR"));
    lines[header.map_or(lines.len(), |h| h + 1)..].to_vec()
}

/// Picks the line of session `id` with k and j (up to the top, then down to it).
pub(super) fn pick(term: &mut Terminal, id: &str) {
    let screen = term.wait_screen(&id[..8]);
    let at = last_block(&screen)
        .iter()
        .position(|l| l.contains(&id[..8]));
    let at = at.unwrap_or_else(|| panic!("no line of {id}:\n{screen}"));
    term.send(&format!("{}{}", "k".repeat(10), "j".repeat(at)));
    term.wait_until("the line picked", WAIT, |screen| {
        let block = last_block(screen);
        let picked = block.iter().find(|l| l.contains(&id[..8]));
        picked.is_some_and(|l| l.trim_start().starts_with('›'))
    });
}

/// Waits until a question is asked: its prompt is the last line written.
pub(super) fn wait_question(term: &Terminal, what: &str) -> String {
    term.wait_until(what, WAIT, |screen| {
        let last = screen.lines().rfind(|l| !l.trim().is_empty());
        last.is_some_and(|l| l.contains("[s]kip"))
    })
}

#[test]
fn on_a_terminal_enter_answers_the_picked_line_on_its_own_daemon_and_one_down_is_said() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (mut far, url, pin) = wss_daemon(home, 0);
    add_box(&local, home, &far, &url, pin);
    let (local_id, local_approval) = waiting_approval(&local);
    let (far_id, far_approval) = waiting_approval(&far);
    let (other_id, other_approval) = waiting_approval(&far);

    let mut term = watch_on_terminal(&local, home);
    let screen = term.wait_until("every session and the keys", WAIT, |screen| {
        [&local_id, &far_id, &other_id]
            .iter()
            .all(|id| screen.contains(&id[..8]))
            && screen.contains("Enter answers what waits")
    });
    assert!(screen.contains("CONTEXT"), "{screen}");

    // The box line picked, Enter asks its approval; `a` approves it on box alone.
    pick(&mut term, &far_id);
    term.send("\r");
    let screen = wait_question(&term, "the box approval asked");
    assert!(screen.contains("allow Write?"), "{screen}");
    term.send("a");
    assert_eq!(
        wait_decided(&far, &far_approval).status,
        ApprovalStatus::Approved
    );
    assert_eq!(far.wait_ended(&far_id).status, SessionStatus::Completed);
    let untouched = approval(&local, &local_approval);
    assert_eq!(untouched.status, ApprovalStatus::Pending, "{untouched:#?}");
    assert_eq!(
        approval(&far, &other_approval).status,
        ApprovalStatus::Pending
    );
    term.wait_until("the box session completed", WAIT, |screen| {
        last_block(screen)
            .iter()
            .any(|l| l.contains(&far_id[..8]) && l.contains("completed"))
    });

    // Box asked, then gone: the answer is said not to have reached it, and watching goes on.
    pick(&mut term, &other_id);
    term.send("\r");
    wait_question(&term, "the other box approval asked");
    far.kill9();
    term.send("a");
    term.wait_screen("box: not answered");
    term.wait_until("box said down under the block", WAIT, |screen| {
        last_block(screen).iter().any(|l| l.contains("box: down"))
    });

    // The local line is still answered on the local daemon.
    term.send("\r");
    let screen = wait_question(&term, "the local approval asked");
    assert!(screen.contains(&local_id[..8]), "{screen}");
    term.send("a");
    assert_eq!(
        wait_decided(&local, &local_approval).status,
        ApprovalStatus::Approved
    );
    assert_eq!(local.wait_ended(&local_id).status, SessionStatus::Completed);
    term.send("q");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
}
