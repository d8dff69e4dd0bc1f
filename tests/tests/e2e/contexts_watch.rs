//! `hlyr watch --context` and `--all-contexts` (issue 42): two daemons, one on this
//! machine's socket and one on `wss://` (loopback, self-signed, with its token), on one
//! board, each line marked with its context; the `wss://` daemon stopped while watching is
//! said to be down while the local one keeps showing, and is watched again once it is back.
//! On a terminal, a daemon that cannot be reached is said under the block.

use std::path::Path;

use hld_e2e::pty::{self, Terminal};
use hld_e2e::{launch_params, wait_for, workspace_bin, DaemonOptions, TestDaemon, WAIT};
use serde_json::Value;

use crate::contexts::{add_box, hlyr, restart_wss, wss_daemon};
use crate::hlyr::{hlyr_command, Running};

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
