//! `hlyr watch`, `hlyr conversation --follow` and `hlyr events` wait out a daemon restart: the
//! daemon is killed (`kill -9`) while they run and started again on the same socket and
//! database; each says once on stderr that it lost the daemon and is reconnecting, then goes on
//! (in a pipe, as scripts run them, and on a terminal), and Ctrl-C (or `watch`'s q) ends it at
//! once while it waits.

use hld_e2e::pty::CTRL_C;
use hld_e2e::{launch_params, DaemonOptions, TestDaemon, WAIT};

use crate::hlyr::{hlyr_command, wait_subscribed, workdir, Running};

/// What a watcher says as it loses the daemon.
const LOST: &str = "daemon unreachable: ";
/// What it says once the daemon is back.
const BACK: &str = "reconnected to the daemon";

/// A daemon in `base` with `options`, started again there after it was killed: same socket,
/// same database.
pub(crate) fn restartable(
    base: &tempfile::TempDir,
    options: impl Fn() -> DaemonOptions,
) -> impl Fn() -> TestDaemon {
    let dir = base.path().to_path_buf();
    move || {
        TestDaemon::start_with(DaemonOptions {
            dir: Some(dir.clone()),
            ..options()
        })
    }
}

/// `hlyr ARGS` against `d`, in pipes.
fn spawn(d: &TestDaemon, args: &[&str]) -> Running {
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(args);
    Running::spawn(cmd)
}

/// The loss was said once, and the return once: one line each, however many attempts.
#[track_caller]
fn assert_said_once(running: &Running) {
    let stderr = running.stderr();
    assert_eq!(stderr.matches(LOST).count(), 1, "{stderr}");
    assert_eq!(stderr.matches(BACK).count(), 1, "{stderr}");
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
}

#[test]
fn watch_waits_out_a_daemon_restart_and_shows_what_comes_after() {
    let base = hld_e2e::short_tempdir();
    let start = restartable(&base, DaemonOptions::fake_claude);
    let mut d = start();
    let wd = workdir(&d);
    let first = d.launch(launch_params("scenario:bash list", &wd));
    d.wait_approvals(Some(&first), |a| a.len() == 1);
    let text = spawn(&d, &["watch"]);
    let json = spawn(&d, &["watch", "--json"]);
    let stopped = spawn(&d, &["watch"]);
    for watch in [&text, &json, &stopped] {
        watch.wait_for("approve Bash: ls", 1);
    }

    d.kill9();
    drop(d);
    for watch in [&text, &json, &stopped] {
        watch.wait_for_stderr(LOST, 1);
    }
    // Ctrl-C ends a watch at once while it waits.
    stopped.interrupt();
    assert_eq!(stopped.finish().code, 130);

    let d = start();
    for watch in [&text, &json] {
        watch.wait_for_stderr(BACK, 1);
    }
    // Read again: the daemon that replaced the killed one failed the session it found
    // running.
    text.wait_for("failed", 1);
    json.wait_for("\"failed\"", 1);
    // And subscribed again: a new approval shows.
    let second = d.launch(launch_params("scenario:bash list", &wd));
    text.wait_for("approve Bash: ls", 2);
    json.wait_for("approve Bash: ls", 2);
    let printed = text.stdout();
    assert!(
        printed
            .lines()
            .any(|l| l.starts_with(&second[..8]) && l.contains("approve Bash: ls")),
        "{printed}"
    );
    assert_said_once(&text);
    assert_said_once(&json);
    text.interrupt();
    json.interrupt();
    assert_eq!(text.finish().code, 130);
    assert_eq!(json.finish().code, 130);
}

#[test]
fn watch_on_a_terminal_waits_out_a_daemon_restart_below_its_block() {
    let base = hld_e2e::short_tempdir();
    let start = restartable(&base, DaemonOptions::fake_claude);
    let mut d = start();
    let wd = workdir(&d);
    let mut term = crate::hlyr_watch::on_terminal(&d, &["watch"]);
    term.wait_screen("no sessions");
    d.kill9();
    drop(d);
    term.wait_screen(LOST);
    let d = start();
    term.wait_screen(BACK);
    d.launch(launch_params("scenario:bash list", &wd));
    let screen = term.wait_screen("approve Bash: ls");
    // The block drawn again below the two notes, once.
    let notes = screen.find(BACK).unwrap();
    assert!(screen[notes..].contains("WAITS FOR"), "{screen}");
    assert_eq!(screen.matches(LOST).count(), 1, "{screen}");
    assert_eq!(screen[notes..].matches("WAITS FOR").count(), 1, "{screen}");
    term.send(CTRL_C);
    assert_eq!(term.wait_exit(WAIT).exit_code(), 130);
}

/// While `hlyr watch` on a terminal waits for the daemon, its keys are read as in the view:
/// q quits at once.
#[test]
fn watch_on_a_terminal_quits_with_q_while_it_waits_for_the_daemon() {
    let mut d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let mut term = crate::hlyr_watch::on_terminal(&d, &["watch"]);
    term.wait_screen("no sessions");
    d.kill9();
    term.wait_screen(LOST);
    // It says which keys stop the wait.
    term.wait_screen("(q or Ctrl-C stops)");
    term.send("q");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
}

/// `hlyr events` waits out a daemon restart like `watch`: it says so once, subscribes again
/// once the daemon is back, and prints what comes then.
#[test]
fn events_waits_out_a_daemon_restart_and_subscribes_again() {
    let base = hld_e2e::short_tempdir();
    let start = restartable(&base, DaemonOptions::fake_claude);
    let mut d = start();
    let wd = workdir(&d);
    let events = spawn(&d, &["events", "--type", "session_status_changed"]);
    wait_subscribed(&d);
    let first = d.launch(launch_params("scenario:plain", &wd));
    events.wait_for(&first, 1);
    d.kill9();
    drop(d);
    events.wait_for_stderr(LOST, 1);
    let d = start();
    events.wait_for_stderr(BACK, 1);
    let second = d.launch(launch_params("scenario:plain", &wd));
    events.wait_for(&second, 1);
    assert_said_once(&events);
    events.interrupt();
    let run = events.finish();
    assert_eq!(run.code, 130);
    let printed = run.json_lines_as("event");
    assert!(
        printed.iter().all(|e| e["type"].is_string()),
        "{}",
        run.stdout
    );
}

/// The chunk numbers `scenario:slow` printed, in order.
fn chunks(printed: &str, prefix: &str) -> Vec<u32> {
    printed
        .lines()
        .filter_map(|l| l.split_once(prefix))
        .filter_map(|(_, n)| {
            let digits: String = n.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect()
}

#[test]
fn conversation_follow_waits_out_a_daemon_restart_and_prints_the_rest_and_the_end() {
    let base = hld_e2e::short_tempdir();
    let slow = || {
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "100")
            .env("FAKE_CLAUDE_COUNT", "600")
    };
    let start = restartable(&base, slow);
    let mut d = start();
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    let text = spawn(&d, &["conversation", "--follow", &id]);
    let json = spawn(&d, &["conversation", "--follow", "--json", &id]);
    let stopped = spawn(&d, &["conversation", "--follow", &id]);
    text.wait_for("chunk 2\n", 1);
    json.wait_for("chunk 2", 1);
    stopped.wait_for("chunk 2\n", 1);

    d.kill9();
    drop(d);
    for follower in [&text, &json, &stopped] {
        follower.wait_for_stderr(LOST, 1);
    }
    // Ctrl-C ends following at once while it waits.
    stopped.interrupt();
    let run = stopped.finish();
    run.assert_code(130);
    assert!(run.stderr.contains("stopped following"), "{}", run.stderr);

    // The daemon back ended the session it found running: what was stored and not printed
    // yet comes, then the end, as with any session that ends.
    let d = start();
    let run = text.finish();
    run.assert_code(1);
    assert!(run.stdout.contains("daemon restarted"), "{}", run.stdout);
    // Each chunk once, in order, none skipped.
    let printed = chunks(&run.stdout, "chunk ");
    assert!(printed.len() >= 2, "{}", run.stdout);
    assert_eq!(
        printed,
        (1..=printed.len() as u32).collect::<Vec<_>>(),
        "{}",
        run.stdout
    );
    assert_eq!(run.stderr.matches(LOST).count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains(BACK), "{}", run.stderr);

    let run = json.finish();
    run.assert_code(1);
    let end = run.stdout.lines().last().unwrap_or_default();
    assert!(
        end.contains("\"failed\"") && end.contains("daemon restarted"),
        "{}",
        run.stdout
    );
    let printed = chunks(&run.stdout, "chunk ");
    assert_eq!(
        printed,
        (1..=printed.len() as u32).collect::<Vec<_>>(),
        "{}",
        run.stdout
    );
    drop(d);
}
