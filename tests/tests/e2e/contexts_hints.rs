//! Hints name the daemon they are about: a command `hlyr` suggests carries `--context NAME`
//! when the daemon in use was chosen by `--context` or `HLD_CONTEXT` and a bare command would
//! reach another one; run as printed, in a shell without that choice, it acts on the right
//! daemon. In `hlyr watch --all-contexts`, what is said of a line names that line's context.
//! A command given `--daemon-socket PATH` hints with it too. Two daemons: one on the local
//! socket, and one on `wss://` (loopback, self-signed) or on a socket of its own.

use std::fs::File;
use std::path::Path;
use std::process::Stdio;

use hld_client::protocol::{ApprovalStatus, SessionStatus};
use hld_e2e::{wait_for, DaemonOptions, TestDaemon, WAIT};

use crate::contexts::{add_box, hlyr, wss_daemon, wss_daemon_with};
use crate::contexts_watch::{pick, wait_question, waiting_approval, watch_on_terminal};
use crate::hlyr::{hlyr_command, wait_decided};

/// `hlyr ARGS launch scenario:tool` on `daemon` with `env`, without a terminal: waits until
/// its stderr says how to decide the tool call, runs the approve command it names with
/// nothing in the environment choosing a context, and checks that this approved the call on
/// `daemon` and that the launch then ended. Returns that command.
fn approve_as_told(
    local: &TestDaemon,
    home: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    daemon: &TestDaemon,
) -> String {
    let said = home.join("launch.stderr");
    let mut cmd = hlyr_command(&local.socket, home);
    cmd.args(args)
        .args([
            "launch",
            "-w",
            daemon.dir.to_str().unwrap(),
            "scenario:tool",
        ])
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(File::create(&said).unwrap());
    let mut launch = cmd.spawn().unwrap();
    let told = wait_for(WAIT, || {
        let text = std::fs::read_to_string(&said).ok()?;
        let line = text.lines().find(|l| l.contains("left pending"))?;
        line.split('`').nth(1).map(str::to_owned)
    });
    let told = told.unwrap_or_else(|| {
        let _ = launch.kill();
        panic!(
            "never said how to decide it: {:?}",
            std::fs::read_to_string(&said)
        )
    });
    let pending = daemon.approvals(None);
    assert_eq!(pending.len(), 1, "{pending:#?}");
    let words: Vec<&str> = told.split_whitespace().collect();
    assert_eq!(words.first(), Some(&"hlyr"), "{told}");
    assert!(
        words.len() >= 3 && words[words.len() - 2] == "approve",
        "{told}"
    );
    assert!(pending[0].id.starts_with(words[words.len() - 1]), "{told}");

    let run = hlyr(local, home, &words[1..], &[]);
    assert_eq!(run.code, 0, "`{told}`: {run:#?}");
    let decided = wait_decided(daemon, &pending[0].id);
    assert_eq!(decided.status, ApprovalStatus::Approved, "`{told}`");
    let ended = wait_for(WAIT, || launch.try_wait().unwrap());
    let ended = ended.unwrap_or_else(|| {
        let _ = launch.kill();
        panic!("the launch never ended after `{told}`")
    });
    assert_eq!(
        ended.code(),
        Some(0),
        "{:?}",
        std::fs::read_to_string(&said)
    );
    let session = daemon.wait_ended(&pending[0].session_id);
    assert_eq!(session.status, SessionStatus::Completed);
    told
}

#[test]
fn a_hint_names_the_context_a_bare_command_would_not_reach() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (far, url, pin) = wss_daemon(home, 0);
    add_box(&local, home, &far, &url, pin);

    let told = approve_as_told(&local, home, &[], &[], &local);
    assert!(told.starts_with("hlyr approve "), "{told}");
    let told = approve_as_told(&local, home, &["--context", "box"], &[], &far);
    assert!(told.starts_with("hlyr --context box approve "), "{told}");

    // Once `context use box` made box the default, a bare command reaches it, and local is
    // the one to name (here chosen by HLD_CONTEXT).
    let run = hlyr(&local, home, &["context", "use", "box"], &[]);
    assert_eq!(run.code, 0, "{run:#?}");
    let told = approve_as_told(&local, home, &[], &[], &far);
    assert!(told.starts_with("hlyr approve "), "{told}");
    let local_env = [("HLD_CONTEXT", "local")];
    let told = approve_as_told(&local, home, &[], &local_env, &local);
    assert!(told.starts_with("hlyr --context local approve "), "{told}");
}

#[test]
fn watch_all_contexts_says_how_to_decide_a_skipped_approval_on_its_lines_daemon() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (far, url, pin) = wss_daemon(home, 0);
    add_box(&local, home, &far, &url, pin);
    let (local_id, local_approval) = waiting_approval(&local);
    let (far_id, far_approval) = waiting_approval(&far);

    let mut term = watch_on_terminal(&local, home);
    for (id, approval, told) in [
        (&far_id, &far_approval, "`hlyr --context box approve "),
        (&local_id, &local_approval, "`hlyr approve "),
    ] {
        pick(&mut term, id);
        term.send("\r");
        wait_question(&term, "the approval asked");
        term.send("s");
        let said = format!("left pending: decide it with {told}{}", &approval[..8]);
        term.wait_until(&said, WAIT, |screen| {
            screen.lines().any(|l| l.contains(&said))
        });
    }
    term.send("q");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
}

#[test]
fn a_hint_gives_the_daemon_socket_the_command_was_given() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let other = TestDaemon::start_with(DaemonOptions::fake_claude());
    let socket = other.socket.to_str().unwrap();

    // The environment the hint is run in reaches `local`: only the socket it names reaches
    // `other`.
    let told = approve_as_told(&local, home, &["--daemon-socket", socket], &[], &other);
    let expected = format!("hlyr --daemon-socket {socket} approve ");
    assert!(told.starts_with(&expected), "{told}");
}

#[test]
fn a_remote_daemons_hint_is_for_its_machine_not_this_shell() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let nowhere = home.join("nowhere/claude");
    let options = DaemonOptions::default()
        .arg("--claude-path")
        .arg(nowhere.to_str().unwrap());
    let (far, url, pin) = wss_daemon_with(home, 0, options);
    add_box(&local, home, &far, &url, pin);

    // This shell finds a claude; the daemon on the other machine does not, and a restart
    // from here would not reach it.
    let fake = hld_e2e::fake_claude().display().to_string();
    let env = [("HUMANLAYER_CLAUDE_PATH", fake.as_str())];
    let run = hlyr(&local, home, &["--context", "box", "launch", "hi"], &env);
    assert_eq!(run.code, 1, "{run:#?}");
    assert_eq!(
        run.stderr,
        "error: the daemon cannot find the claude CLI\nhint: on the daemon's machine, install \
         Claude Code (npm install -g @anthropic-ai/claude-code) or set HUMANLAYER_CLAUDE_PATH, \
         then run `hlyr daemon restart` there\n"
    );
}
