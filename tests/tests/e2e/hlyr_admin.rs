//! `hlyr` as a tool to run the daemon with and to script against: session statuses and ages in
//! lists, each exit code, `--json` output checked against its schema (`tests/schemas/`), the
//! `daemon` commands (stop, restart, status, logs), a daemon that finds no `claude`, shell
//! completions with live ids, the manual page, and tables cut to the terminal's width.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hld_client::protocol::{ApprovalStatus, SessionStatus};
use hld_e2e::{fake_claude, launch_params, wait_for, workspace_bin, WAIT};
use serde_json::{json, Value};

use crate::hlyr::{
    approval, ask_human, ask_tool, assert_in_order, fake, hlyr, hlyr_at, hlyr_command, no_daemon,
    printed_session, run_command, slow_daemon, terminal_at, wait_decided, workdir, Run, Running,
    StopOnDrop,
};
use crate::schema;

/// Whether process `pid` has exited: gone, or a zombie its parent has not reaped yet.
fn exited(pid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Starts a daemon through `hlyr daemon start` at `socket`; returns its `--json` outcome.
fn start_at(socket: &Path, home: &Path, env: &[(&str, &str)]) -> Value {
    hlyr_at(socket, home, &["daemon", "start", "--json"], env)
        .assert_code(0)
        .json_as("daemon-start")
}

#[test]
fn every_schema_builds_and_rejects_what_breaks_it() {
    let kinds = schema::kinds();
    assert_eq!(kinds.len(), 28, "{kinds:?}");
    let session = json!({
        "id": "s", "run_id": "r", "status": "interrupted", "query": "q", "summary": "q",
        "created_at": "2025-06-12T09:14:05.118Z", "last_activity_at": "2025-06-12T09:14:05.118Z",
        "title": "", "archived": false, "auto_accept_edits": false,
        "dangerously_skip_permissions": false
    });
    schema::check("session", &session);
    schema::check("sessions", &json!([session]));
    let mut bad = session.clone();
    bad["status"] = json!("paused");
    assert!(!schema::violations("session", &bad).is_empty());
    let mut extra = session.clone();
    extra["start_time"] = json!("2025-06-12T09:14:05.118Z");
    assert!(!schema::violations("session", &extra).is_empty());
    assert!(!schema::violations("sessions", &json!([bad])).is_empty());
    let finished = json!({"type": "finished", "data": session});
    schema::check("update", &finished);
    assert!(!schema::violations("update", &json!({"type": "finished", "data": {}})).is_empty());
    let error = json!({"error": {"message": "m", "hint": null, "kind": "usage", "exit_code": 2}});
    schema::check("error", &error);
    let no_kind = json!({"error": {"message": "m", "hint": null, "exit_code": 2}});
    assert!(!schema::violations("error", &no_kind).is_empty());
    schema::check(
        "merge",
        &json!({"merged": true, "conflicts": [], "commit": "3f2a9c1"}),
    );
    assert!(!schema::violations("merge", &json!({"merged": true})).is_empty());
    assert!(
        !schema::violations("discard", &json!({"session_id": "s", "discarded": false})).is_empty()
    );
    let queued = json!({"type": "message_queued", "timestamp": "2025-06-12T09:14:05.118Z",
        "data": {"session_id": "s", "run_id": "r", "message": {}}});
    assert!(!schema::violations("event", &queued).is_empty());
}

#[test]
fn sessions_show_interrupted_and_failed_apart_newest_activity_first() {
    let d = slow_daemon(30);
    let wd = workdir(&d);
    // The oldest session, still at work when the others have ended.
    let running = d.launch(launch_params("scenario:slow", &wd));
    d.wait_session(&running, |s| s.status == SessionStatus::Running);
    let completed = d.launch(launch_params("scenario:plain done", &wd));
    d.wait_ended(&completed);
    let failed = d.launch(launch_params("scenario:error", &wd));
    d.wait_ended(&failed);
    let interrupted = d.launch(launch_params("scenario:slow", &wd));
    d.wait_session(&interrupted, |s| s.status == SessionStatus::Running);
    hlyr(&d, &["interrupt", &interrupted]).assert_code(0);
    let ended = d.wait_ended(&interrupted);

    let status_of = |json: &Value, id: &str| -> String {
        let session = json
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap_or_else(|| panic!("{id} not listed: {json:#}"));
        session["status"].as_str().unwrap().to_owned()
    };
    let json = hlyr(&d, &["sessions", "--json"]).json_as("sessions");
    assert_eq!(status_of(&json, &completed), "completed");
    assert_eq!(status_of(&json, &failed), "failed");
    assert_eq!(status_of(&json, &interrupted), "interrupted");
    assert_eq!(status_of(&json, &running), "running");
    let table = hlyr(&d, &["sessions"]);
    let row = |id: &str| -> String {
        table
            .stdout
            .lines()
            .find(|l| l.starts_with(&id[..8]))
            .unwrap_or_else(|| panic!("{id} not listed:\n{}", table.stdout))
            .to_owned()
    };
    assert!(
        row(&interrupted).contains(" interrupted "),
        "{}",
        table.stdout
    );
    assert!(row(&failed).contains(" failed "), "{}", table.stdout);
    assert!(row(&completed).contains(" completed "), "{}", table.stdout);

    // The first session, still writing, is the most recently active: listed first, though
    // it was created first.
    let json = wait_for(WAIT, || {
        let json = hlyr(&d, &["sessions", "--json"]).json_as("sessions");
        (json[0]["id"] == running.as_str()
            && json[0]["last_activity_at"].as_str() > ended.completed_at.as_deref())
        .then_some(json)
    })
    .expect("the running session's activity puts it first");
    let activity: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["last_activity_at"].as_str().unwrap())
        .collect();
    let mut sorted = activity.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(activity, sorted, "newest activity first");
    let created: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["created_at"].as_str().unwrap())
        .collect();
    assert_eq!(created[0], created.iter().min().copied().unwrap());
    let table = hlyr(&d, &["sessions"]);
    let first = table.stdout.lines().nth(1).unwrap();
    assert!(first.starts_with(&running[..8]), "{}", table.stdout);
    // Its age counts from its last line, not from its start.
    let age: Vec<&str> = first.split_whitespace().collect();
    assert!(matches!(age[2], "0s" | "1s" | "2s"), "{first}");
    hlyr(&d, &["interrupt", &running]).assert_code(0);
}

#[test]
fn a_session_has_one_shape_in_show_sessions_search_prune_and_a_followed_end() {
    let d = fake();
    let wd = workdir(&d);
    let launch = hlyr(
        &d,
        &["--json", "launch", "-w", &wd, "scenario:plain shape check"],
    );
    let lines = launch.assert_code(0).json_lines_as("update");
    let finished = &lines.last().unwrap()["data"];
    let id = finished["id"].as_str().unwrap().to_owned();

    let show = hlyr(&d, &["show", &id, "--json"]).json_as("session");
    let listed = hlyr(&d, &["sessions", "--json"]).json_as("sessions")[0].clone();
    let found = hlyr(&d, &["search", "--json", "shape"]).json_as("sessions")[0].clone();
    assert_eq!(show, listed);
    assert_eq!(show, found);
    assert_eq!(show, *finished);
    hlyr(&d, &["archive", &id]).assert_code(0);
    let pruned = hlyr(
        &d,
        &["prune", "--json", "--archived", "--older-than", "0s", "-n"],
    )
    .json_as("sessions");
    let mut archived = show.clone();
    archived["archived"] = json!(true);
    assert_eq!(pruned, json!([archived]));
}

#[test]
fn stream_and_list_outputs_fit_their_schemas() {
    let d = slow_daemon(30);
    let wd = workdir(&d);
    let id = d.launch(launch_params("scenario:slow", &wd));
    let mut events = hlyr_command(&d.socket, &d.dir);
    events.args([
        "events",
        "--json",
        "--type",
        "new_approval,approval_resolved",
        "-n",
        "4",
    ]);
    let events = Running::spawn(events);
    wait_for(WAIT, || {
        (d.request::<hld_client::protocol::Health>(hld_client::protocol::NoParams {})
            .subscribers
            > 0)
        .then_some(())
    })
    .expect("events subscribed");
    let write = ask_tool(&d, &id, "Write", json!({"file_path": "/tmp/schema.txt"}));
    let approvals = hlyr(&d, &["approvals", "--json"]).json_as("approvals");
    assert_eq!(approvals[0]["id"], write.as_str());
    let decided = hlyr(&d, &["approve", &write[..14], "--json"]).json_as("decision");
    assert_eq!(decided["call_id"], write.as_str());
    let question = ask_human(&d, &id, "Which colour?");
    hlyr(&d, &["respond", &question, "--comment", "blue", "--json"]).json_as("decision");
    let lines = events.finish().assert_code(0).json_lines_as("event");
    assert_eq!(lines.len(), 4);
    let settings = hlyr(&d, &["settings", &id, "--json"]).json_as("settings");
    assert_eq!(settings["session_id"], id.as_str());
    let renamed = hlyr(&d, &["rename", &id, "Schema work", "--json"]).json_as("rename");
    assert_eq!(renamed["title"], "Schema work");
    let interrupted = hlyr(&d, &["interrupt", &id, "--json"]).json_as("interrupt");
    assert_eq!(interrupted["session_id"], id.as_str());
    d.wait_ended(&id);
    let conversation = hlyr(&d, &["conversation", &id, "--json"]).json_lines_as("update");
    assert!(conversation.iter().all(|l| l["type"] == "event"));
    hlyr(&d, &["conversation", &id, "--follow", "--json"]).json_lines_as("update");
    let archived = hlyr(&d, &["archive", &id, "--json"]).json_as("archive");
    assert_eq!(archived["archived"], true);
    hlyr(&d, &["unarchive", &id, "--json"]).json_as("archive");
    let continued = hlyr(&d, &["continue", &id, "more", "--json"]);
    let lines = continued.assert_code(0).json_lines_as("update");
    assert_eq!(lines[0]["data"]["parent_session_id"], id.as_str());
}

#[test]
fn unknown_and_ambiguous_ids_exit_2_with_their_kind() {
    let d = slow_daemon(30);
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    let unknown_session = hlyr(&d, &["show", "--json", "ffff"]);
    let error = unknown_session.assert_code(2).error_json();
    assert_eq!(error["kind"], "not_found");
    assert_eq!(error["message"], "session not found: ffff");
    assert_eq!(unknown_session.stdout, "");

    // An approval named in full or by a prefix, with or without `local-`.
    for unknown in [
        "local-00000000-0000-4000-8000-000000000000",
        "local-0000",
        "0000",
    ] {
        let run = hlyr(&d, &["approve", unknown]);
        run.assert_code(2);
        assert_eq!(
            run.stderr,
            format!(
                "error: approval not found: {unknown}\nhint: `hlyr approvals` lists the pending ones\n"
            )
        );
        let json = hlyr(&d, &["deny", unknown, "--comment", "no", "--json"]);
        assert_eq!(json.assert_code(2).error_json()["kind"], "not_found");
    }

    // Two pending approvals share `local-`; once decided, they still do.
    let one = ask_tool(&d, &id, "Read", json!({}));
    let two = ask_tool(&d, &id, "Read", json!({}));
    let ambiguous = hlyr(&d, &["approve", "local-", "--json"]);
    let error = ambiguous.assert_code(2).error_json();
    assert_eq!(error["kind"], "ambiguous");
    assert!(
        error["message"].as_str().unwrap().contains(&one[..14]),
        "{error}"
    );
    for approval in [&one, &two] {
        hlyr(&d, &["approve", approval]).assert_code(0);
    }
    let ambiguous = hlyr(&d, &["approve", "local-"]);
    ambiguous.assert_code(2);
    assert!(
        ambiguous.stderr.contains("is ambiguous"),
        "{}",
        ambiguous.stderr
    );
    hlyr(&d, &["interrupt", &id]).assert_code(0);
}

#[test]
fn an_approval_decided_already_exits_1_by_full_id_or_by_prefix() {
    let d = slow_daemon(30);
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    let write = ask_tool(&d, &id, "Write", json!({"file_path": "/tmp/once.txt"}));
    hlyr(&d, &["approve", &write]).assert_code(0);
    assert_eq!(approval(&d, &write).status, ApprovalStatus::Approved);
    let bare = write.strip_prefix("local-").unwrap();
    for named in [write.as_str(), &write[..14], &bare[..6]] {
        let run = hlyr(&d, &["deny", named]);
        run.assert_code(1);
        assert_eq!(
            run.stderr,
            format!("error: approval {write} was already decided: approved\n"),
            "{named}"
        );
        let json = hlyr(&d, &["approve", named, "--json"]);
        assert_eq!(json.assert_code(1).error_json()["kind"], "already_decided");
    }
    assert_eq!(approval(&d, &write).status, ApprovalStatus::Approved);

    // An approval its session's end resolved: nothing waits for it any more.
    let question = ask_human(&d, &id, "Which colour?");
    hlyr(&d, &["interrupt", &id]).assert_code(0);
    d.wait_ended(&id);
    assert_eq!(wait_decided(&d, &question).status, ApprovalStatus::Resolved);
    let run = hlyr(&d, &["respond", &question[..14], "--comment", "blue"]);
    run.assert_code(1);
    assert!(
        run.stderr.contains("was resolved without a decision"),
        "{}",
        run.stderr
    );
}

#[test]
fn errors_under_json_are_one_object_on_stderr() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    let not_running = hlyr_at(&socket, home, &["--json", "sessions"], &[]);
    let error = not_running.assert_code(3).error_json();
    assert_eq!(error["kind"], "daemon_unreachable");
    assert_eq!(error["hint"], "start it with `hlyr daemon start`");
    assert_eq!(not_running.stdout, "");
    // Refused by clap, before any command runs.
    let usage = hlyr_at(&socket, home, &["sessions", "--json", "--bogus"], &[]);
    let error = usage.assert_code(2).error_json();
    assert_eq!(error["kind"], "usage");
    assert!(
        error["message"].as_str().unwrap().contains("--bogus"),
        "{error}"
    );
    // Without --json, clap's own report.
    let plain = hlyr_at(&socket, home, &["sessions", "--bogus"], &[]);
    assert!(plain
        .assert_code(2)
        .stderr
        .starts_with("error: unexpected argument"));
    // `--json` as a value is not the option.
    let value = hlyr_at(&socket, home, &["launch", "--bogus", "--", "--json"], &[]);
    assert!(value.assert_code(2).stderr.starts_with("error: "));
}

#[test]
fn daemon_status_and_stop_without_a_daemon() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    let status = hlyr_at(&socket, home, &["daemon", "status", "--json"], &[]);
    let json = status.assert_code(3).json_as("daemon-status");
    assert_eq!(
        json,
        json!({"running": false, "socket": socket.display().to_string()})
    );
    assert_eq!(status.stderr, "");

    let stop = hlyr_at(&socket, home, &["daemon", "stop"], &[]);
    assert_eq!(
        stop.assert_code(0).stdout,
        format!(
            "no daemon is running on {}; nothing to stop\n",
            socket.display()
        )
    );
    let stop = hlyr_at(&socket, home, &["daemon", "stop", "--json"], &[]);
    let json = stop.assert_code(0).json_as("daemon-stop");
    assert_eq!(json["stopped"], false);
    // A socket left behind by a daemon that died is no daemon either.
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    let stale = hlyr_at(&socket, home, &["daemon", "stop"], &[]);
    assert!(stale.assert_code(0).stdout.contains("nothing to stop"));
}

#[test]
fn daemon_status_shows_pid_uptime_files_claude_and_load() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    let _stop = StopOnDrop(&socket, home);
    let started = start_at(&socket, home, &[]);
    let json = hlyr_at(&socket, home, &["daemon", "status", "--json"], &[])
        .assert_code(0)
        .json_as("daemon-status");
    assert_eq!(json["running"], true);
    assert_eq!(json["pid"], started["pid"]);
    assert_eq!(json["socket"], socket.display().to_string());
    assert_eq!(
        json["database"],
        home.join("daemon.db").display().to_string()
    );
    assert_eq!(json["log_file"], started["log"]);
    assert!(json["uptime_seconds"].as_i64().unwrap() >= 0);
    assert_eq!(json["claude"]["path"], fake_claude().display().to_string());
    assert_eq!(json["active_sessions"], 0);
    assert!(json.get("claude_found_by_hlyr").is_none());

    let text = hlyr_at(&socket, home, &["daemon", "status"], &[]);
    assert_in_order(
        &text.assert_code(0).stdout,
        &[
            "hld          ",
            &format!("pid          {}\n", started["pid"]),
            "uptime       ",
            &format!("socket       {}\n", socket.display()),
            &format!("database     {}\n", home.join("daemon.db").display()),
            &format!("log          {}\n", started["log"].as_str().unwrap()),
            "claude       available 2.1.197 (Claude Code)",
            "sessions     0 running\n",
            "subscribers  0\n",
            // No session bus and no webhook in the tests' environment.
            "notify       desktop off · webhook off\n",
        ],
    );
}

#[test]
fn daemon_status_counts_a_finished_sessions_warm_process_apart() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    let _stop = StopOnDrop(&socket, home);
    start_at(&socket, home, &[]);
    let launched = hlyr_at(
        &socket,
        home,
        &["launch", "--detach", "scenario:plain"],
        &[],
    );
    let id = printed_session(launched.assert_code(0));
    // The turn is over and its process stays, ready for the next message.
    let status = || {
        hlyr_at(&socket, home, &["daemon", "status", "--json"], &[])
            .assert_code(0)
            .json_as("daemon-status")
    };
    wait_for(WAIT, || {
        let shown = hlyr_at(&socket, home, &["show", &id, "--json"], &[]).json_as("session");
        (shown["status"] == "completed").then_some(())
    })
    .expect("the session completes");
    let json = status();
    assert_eq!(json["active_sessions"], 1, "{json}");
    assert_eq!(json["sessions_running"], 0, "{json}");
    let text = hlyr_at(&socket, home, &["daemon", "status"], &[]);
    assert!(
        text.assert_code(0)
            .stdout
            .contains("sessions     0 running · 1 warm (idle, ready for a message)\n"),
        "{}",
        text.stdout
    );
}

#[test]
fn daemon_stop_names_running_sessions_and_returns_once_the_daemon_exited() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    let _stop = StopOnDrop(&socket, home);
    let slow = [
        ("FAKE_CLAUDE_COUNT", "600"),
        ("FAKE_CLAUDE_DELAY_MS", "100"),
    ];
    let started = start_at(&socket, home, &slow);
    let pid = started["pid"].as_u64().unwrap();
    let launched = hlyr_at(&socket, home, &["launch", "--detach", "scenario:slow"], &[]);
    let id = printed_session(launched.assert_code(0));

    // Not on a terminal: nothing is asked, the sessions are named on stderr.
    let stop = hlyr_at(&socket, home, &["daemon", "stop", "--json"], &[]);
    let json = stop.assert_code(0).json_as("daemon-stop");
    assert!(
        exited(pid),
        "the daemon's process is gone when stop returns"
    );
    assert!(!socket.exists(), "and so is its socket");
    assert_eq!(json["stopped"], true);
    assert_eq!(json["pid"], pid);
    assert_eq!(json["interrupted"], json!([id]));
    assert!(
        stop.stderr
            .starts_with("1 session is running; stopping the daemon interrupts it:\n"),
        "{}",
        stop.stderr
    );
    assert!(stop
        .stderr
        .contains(&format!("  {}  scenario:slow", &id[..8])));

    // The session ended interrupted, as the next daemon lists it.
    let show = hlyr_at(&socket, home, &["launch", "--detach", "again"], &[]);
    show.assert_code(0);
    let shown = hlyr_at(&socket, home, &["show", &id, "--json"], &[]).json_as("session");
    assert_eq!(shown["status"], "interrupted");
}

#[test]
fn daemon_stop_on_a_terminal_asks_first_unless_forced() {
    let mut d = slow_daemon(60);
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    d.wait_session(&id, |s| s.status == SessionStatus::Running);

    let mut term = terminal_at(&d.socket, &d.dir, "daemon stop", &[]);
    term.wait_for("[y/N]", 1);
    assert!(term.stdout().contains("Stop the daemon and interrupt it?"));
    assert!(term
        .stdout()
        .contains(&format!("  {}  scenario:slow", &id[..8])));
    term.type_line("n");
    let declined = term.finish();
    declined.assert_code(1);
    assert!(
        declined.stdout.contains("the daemon keeps running"),
        "{}",
        declined.stdout
    );
    assert!(declined.stdout.contains("--force"), "{}", declined.stdout);
    assert_eq!(d.state(&id).status, SessionStatus::Running);

    let forced = terminal_at(&d.socket, &d.dir, "daemon stop --force", &[]).finish();
    forced.assert_code(0);
    assert!(!forced.stdout.contains("[y/N]"), "{}", forced.stdout);
    assert!(
        forced.stdout.contains("stopped hld (pid "),
        "{}",
        forced.stdout
    );
    assert!(
        d.wait_exit(Duration::ZERO).is_some(),
        "the daemon had exited when stop returned"
    );
    assert!(!d.socket.exists());
}

#[test]
fn daemon_stop_ends_a_daemon_that_does_not_answer_only_when_forced() {
    let mut d = fake();
    let pid = d.pid();
    // Stopped: its socket takes connections, and nothing answers them.
    d.signal(nix::sys::signal::Signal::SIGSTOP);
    let refused = hlyr(&d, &["daemon", "stop"]);
    refused.assert_code(3);
    assert!(
        refused.stderr.contains(&format!("(pid {pid})")),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("stop --force"),
        "{}",
        refused.stderr
    );
    assert!(d.wait_exit(Duration::ZERO).is_none(), "nothing was sent");

    let forced = hlyr(&d, &["daemon", "stop", "--force", "--json"]);
    let json = forced.assert_code(0).json_as("daemon-stop");
    assert_eq!(json["pid"], pid);
    // Continued, it took SIGTERM and shut down as asked, socket and all.
    assert_eq!(json["signal"], "SIGTERM");
    let (status, _) = d.wait_exit(WAIT).expect("the daemon exited");
    assert!(status.success(), "{status:?}");
    assert!(!d.socket.exists());
}

/// A child killed and reaped when dropped, should the test fail before it ends.
struct KilledOnDrop(std::process::Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn daemon_stop_kills_what_ignores_sigterm_at_the_socket() {
    let (dir, socket) = no_daemon();
    // A process that takes each connection, answers nothing and ignores SIGTERM.
    let script = "import signal, socket, sys\n\
                  signal.signal(signal.SIGTERM, signal.SIG_IGN)\n\
                  s = socket.socket(socket.AF_UNIX)\n\
                  s.bind(sys.argv[1])\n\
                  s.listen(16)\n\
                  held = [s.accept() for _ in iter(int, 1)]";
    let wedged = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(&socket)
        .spawn()
        .expect("python3 runs");
    let mut wedged = KilledOnDrop(wedged);
    wait_for(WAIT, || socket.exists().then_some(())).expect("it listens");
    // 10 s without an answer, 15 s more after SIGTERM: waited for with room to spare.
    let mut stop = hlyr_command(&socket, dir.path());
    stop.args(["daemon", "stop", "--force", "--json"]);
    let stop = Running::spawn(stop).finish_within(Duration::from_secs(90));
    let json = stop.assert_code(0).json_as("daemon-stop");
    assert_eq!(json["pid"], wedged.0.id());
    assert_eq!(json["signal"], "SIGKILL");
    let status = wedged
        .0
        .try_wait()
        .unwrap()
        .expect("it was gone when stop returned");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
}

#[test]
fn daemon_restart_starts_a_new_daemon_with_this_shells_environment() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    let _stop = StopOnDrop(&socket, home);
    let first = start_at(&socket, home, &[]);
    let other_claude = home.join("bin").join("claude");
    std::fs::create_dir_all(other_claude.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(fake_claude(), &other_claude).unwrap();
    let other = other_claude.display().to_string();

    let restart = hlyr_at(
        &socket,
        home,
        &["daemon", "restart", "--json"],
        &[("HUMANLAYER_CLAUDE_PATH", &other)],
    );
    let json = restart.assert_code(0).json_as("daemon-restart");
    assert_eq!(json["stopped"]["pid"], first["pid"]);
    assert!(exited(first["pid"].as_u64().unwrap()));
    assert_eq!(json["started"]["started"], true);
    assert_ne!(json["started"]["pid"], first["pid"]);
    let status = hlyr_at(&socket, home, &["daemon", "status", "--json"], &[]);
    let status = status.json_as("daemon-status");
    assert_eq!(status["pid"], json["started"]["pid"]);
    assert_eq!(
        status["claude"]["path"], other,
        "the new daemon's environment"
    );

    let text = hlyr_at(&socket, home, &["daemon", "restart"], &[]);
    assert_in_order(
        &text.assert_code(0).stdout,
        &["stopped hld (pid ", "started hld ", "log: "],
    );
}

#[test]
fn daemon_restart_starts_the_daemon_as_it_was_started() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    let _stop = StopOnDrop(&socket, home);
    // Started by hand, in `home`: a flag hlyr never gives, a relative path, a variable.
    let mut first = std::process::Command::new(workspace_bin("hld"))
        .arg("--socket")
        .arg(&socket)
        .args(["--database", "by-hand.db", "--claude-path"])
        .arg(fake_claude())
        .env("HUMANLAYER_LOG_FILE", home.join("by-hand.log"))
        .env("FAKE_CLAUDE_HOME", home.join("fake-claude"))
        .current_dir(home)
        .spawn()
        .unwrap();
    let status = |extra: &[&str]| {
        let empty = home.join("empty-path");
        std::fs::create_dir_all(&empty).unwrap();
        let mut cmd = hlyr_command(&socket, home);
        cmd.args(["daemon", "--json"])
            .args(extra)
            .env_remove("HUMANLAYER_CLAUDE_PATH")
            .env_remove("HUMANLAYER_DATABASE_PATH")
            .env_remove("HUMANLAYER_LOG_FILE")
            .env("PATH", &empty)
            .current_dir(&empty);
        run_command(cmd)
    };
    wait_for(WAIT, || (status(&["status"]).code == 0).then_some(()))
        .expect("the daemon started by hand answers");
    let id = printed_session(
        hlyr_at(
            &socket,
            home,
            &["launch", "--detach", "scenario:plain kept"],
            &[],
        )
        .assert_code(0),
    );

    // From a shell with no claude and none of those settings.
    let restart = status(&["restart"])
        .assert_code(0)
        .json_as("daemon-restart");
    assert_eq!(restart["stopped"]["pid"], first.id());
    first.wait().unwrap();
    let now = status(&["status"]).assert_code(0).json_as("daemon-status");
    assert_eq!(now["pid"], restart["started"]["pid"]);
    assert_eq!(now["claude"]["path"], fake_claude().display().to_string());
    // The relative path still names the same file: the session is still there.
    assert_eq!(now["database"], "by-hand.db");
    let log = std::fs::read_to_string(home.join("by-hand.log")).unwrap();
    assert_eq!(log.matches("hld starting").count(), 2, "{log}");
    let shown = hlyr_at(&socket, home, &["show", &id, "--json"], &[]).json_as("session");
    assert_eq!(shown["id"], id);
}

/// `hlyr` with neither `HUMANLAYER_CLAUDE_PATH` nor a `claude` on its PATH.
fn without_claude(socket: &Path, home: &Path, args: &[&str]) -> Run {
    let empty = home.join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    let mut cmd = hlyr_command(socket, home);
    cmd.args(args)
        .env_remove("HUMANLAYER_CLAUDE_PATH")
        .env("PATH", &empty)
        .env("HUMANLAYER_DATABASE_PATH", home.join("daemon.db"));
    run_command(cmd)
}

#[test]
fn a_daemon_without_claude_is_told_where_hlyr_finds_it_and_restarted_on_a_terminal() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    let _stop = StopOnDrop(&socket, home);
    without_claude(&socket, home, &["daemon", "start"]).assert_code(0);
    let fake = fake_claude().display().to_string();

    // Neither finds one: what to install.
    let nowhere = without_claude(&socket, home, &["daemon", "status"]);
    assert!(
        nowhere
            .assert_code(0)
            .stdout
            .contains("claude       not found"),
        "{}",
        nowhere.stdout
    );
    assert!(nowhere
        .stdout
        .contains("npm install -g @anthropic-ai/claude-code"));
    let refused = without_claude(&socket, home, &["launch", "--json", "hi"]);
    let error = refused.assert_code(1).error_json();
    assert_eq!(error["kind"], "claude_not_found");
    assert!(error["hint"]
        .as_str()
        .unwrap()
        .contains("HUMANLAYER_CLAUDE_PATH"));

    // hlyr finds one: it says where, and that a restart makes the daemon find it too.
    let status = hlyr_at(&socket, home, &["daemon", "status", "--json"], &[]);
    let json = status.assert_code(0).json_as("daemon-status");
    assert_eq!(json["claude"]["available"], false);
    assert_eq!(json["claude_found_by_hlyr"], fake);
    let running = hlyr_at(&socket, home, &["daemon", "start"], &[]);
    assert!(
        running.assert_code(0).stdout.contains(&format!(
            "⚠ the daemon finds no claude: hlyr finds it at {fake}"
        )),
        "{}",
        running.stdout
    );
    let json = hlyr_at(&socket, home, &["daemon", "start", "--json"], &[]);
    assert_eq!(json.json_as("daemon-start")["claude_found_by_hlyr"], fake);
    let launch = hlyr_at(&socket, home, &["launch", "hi"], &[]);
    launch.assert_code(1);
    assert_eq!(
        launch.stderr,
        format!(
            "error: the daemon cannot find the claude CLI\nhint: hlyr finds it at {fake}; \
             `hlyr daemon restart` restarts the daemon with this shell's environment, where it \
             will find it too\n"
        )
    );

    // On a terminal the restart is offered; declined, nothing changes.
    let env = [("HUMANLAYER_CLAUDE_PATH", fake.as_str())];
    let mut term = terminal_at(&socket, home, "launch hi", &env);
    term.wait_for("Restart the daemon now, so that it finds", 1);
    term.type_line("");
    term.finish().assert_code(1);
    let json = hlyr_at(&socket, home, &["daemon", "status", "--json"], &[]).json();
    assert_eq!(json["claude"]["available"], false);
    // Accepted: the new daemon runs claude, and the launch goes on.
    let mut term = terminal_at(&socket, home, "launch hi", &env);
    term.wait_for("[y/N]", 1);
    term.type_line("y");
    term.wait_for("Ctrl-D ends)", 1);
    term.type_line("");
    let run = term.finish();
    run.assert_code(0);
    crate::hlyr::assert_in_order(
        &run.stdout,
        &["the daemon was restarted; going on", "Hello! You asked: hi"],
    );
}

#[test]
fn daemon_logs_prints_the_last_lines_and_follows_new_ones() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    let _stop = StopOnDrop(&socket, home);
    let missing = hlyr_at(&socket, home, &["daemon", "logs"], &[]);
    missing.assert_code(1);
    assert!(
        missing.stderr.contains("cannot read the log"),
        "{}",
        missing.stderr
    );
    start_at(&socket, home, &[]);
    // The daemon answers before it logs that it is ready, its last line until asked more.
    let log = wait_for(WAIT, || {
        let log = std::fs::read_to_string(home.join("d.log")).ok()?;
        log.contains(" INFO ready: ").then_some(log)
    })
    .expect("the daemon logged that it is ready");
    let all = hlyr_at(&socket, home, &["daemon", "logs"], &[]);
    assert_eq!(all.assert_code(0).stdout, log);
    let last = hlyr_at(&socket, home, &["daemon", "logs", "-n", "2"], &[]);
    let expected: Vec<&str> = log.lines().rev().take(2).collect();
    let shown: Vec<&str> = last.assert_code(0).stdout.lines().rev().collect();
    assert_eq!(shown, expected);
    let json = hlyr_at(&socket, home, &["daemon", "logs", "-n", "2", "--json"], &[]);
    let lines = json.assert_code(0).json_lines_as("log-line");
    assert_eq!(lines[1]["line"], expected[0]);

    // Following: the last line, then what is written next.
    let mut follow = hlyr_command(&socket, home);
    follow.args(["daemon", "logs", "-f", "-n", "1"]);
    let follower = Running::spawn(follow);
    follower.wait_for(expected[0], 1);
    let launched = hlyr_at(&socket, home, &["launch", "--detach", "followed"], &[]);
    let id = printed_session(launched.assert_code(0));
    follower.wait_for(&format!("session launched session={id}"), 1);
    // Stopped as Ctrl-C stops it.
    follower.interrupt();
    let run = follower.finish();
    let first = log.lines().next().unwrap();
    assert!(
        !run.stdout.contains(first),
        "only the last line: {}",
        run.stdout
    );
}

#[test]
fn completions_are_generated_for_each_shell() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    let hlyr_bin = workspace_bin("hlyr").display().to_string();
    for shell in ["bash", "zsh", "fish"] {
        let run = hlyr_at(&socket, home, &["completions", shell], &[]);
        run.assert_code(0);
        assert!(run.stdout.contains("COMPLETE="), "{shell}: {}", run.stdout);
        assert!(run.stdout.contains(&hlyr_bin), "{shell}: calls hlyr back");
    }
    let unknown = hlyr_at(&socket, home, &["completions", "tcsh"], &[]);
    assert!(unknown.assert_code(2).stderr.contains("possible values"));
    // bash takes it: `hlyr` gets a completion function.
    let script = format!("source <({hlyr_bin} completions bash) && complete -p hlyr");
    let mut bash = std::process::Command::new("bash");
    bash.args(["-c", &script]);
    let registered = bash.output().unwrap();
    let out = String::from_utf8_lossy(&registered.stdout);
    assert!(registered.status.success(), "{registered:?}");
    assert!(out.contains("-F _clap_complete_hlyr"), "{out}");
}

/// What the shell gets for `hlyr WORDS…` (the last one being completed), fish's way: one
/// candidate a line, its help after a tab.
pub(crate) fn complete_at(socket: &Path, home: &Path, words: &[&str]) -> Vec<(String, String)> {
    let mut cmd = hlyr_command(socket, home);
    cmd.env("COMPLETE", "fish").args(["--", "hlyr"]).args(words);
    let run = run_command(cmd);
    run.assert_code(0)
        .stdout
        .lines()
        .map(|l| match l.split_once('\t') {
            Some((value, help)) => (value.to_owned(), help.to_owned()),
            None => (l.to_owned(), String::new()),
        })
        .collect()
}

#[test]
fn the_dynamic_completer_offers_the_live_daemons_ids() {
    let d = slow_daemon(30);
    let wd = workdir(&d);
    let done = d.launch(launch_params("scenario:plain finished work", &wd));
    d.wait_ended(&done);
    let live = d.launch(launch_params("scenario:slow", &wd));
    d.wait_session(&live, |s| s.status == SessionStatus::Running);
    let asked = ask_tool(&d, &live, "Write", json!({"file_path": "/tmp/c.txt"}));

    let sessions = complete_at(&d.socket, &d.dir, &["show", ""]);
    let offered: Vec<&str> = sessions.iter().map(|(v, _)| v.as_str()).collect();
    assert!(offered.contains(&&done[..8]), "{sessions:?}");
    assert!(offered.contains(&&live[..8]), "{sessions:?}");
    let help = &sessions.iter().find(|(v, _)| *v == done[..8]).unwrap().1;
    assert_eq!(help, "completed scenario:plain finished work");
    // Only the ids that start with what is typed.
    let narrowed = complete_at(&d.socket, &d.dir, &["conversation", &done[..6]]);
    assert_eq!(narrowed[0].0, done[..8]);
    assert!(narrowed.iter().all(|(v, _)| v.starts_with(&done[..6])));
    // Flags that take a session id too.
    let flag = complete_at(&d.socket, &d.dir, &["events", "--session", &live[..4]]);
    assert!(flag.iter().any(|(v, _)| *v == live[..8]), "{flag:?}");

    let approvals = complete_at(&d.socket, &d.dir, &["approve", ""]);
    let ids: Vec<&(String, String)> = approvals
        .iter()
        .filter(|(v, _)| !v.starts_with('-'))
        .collect();
    assert_eq!(ids, [&(asked[..14].to_owned(), "Write".to_owned())]);
    let bare = complete_at(&d.socket, &d.dir, &["deny", &asked[6..9]]);
    assert_eq!(bare[0].0, asked[6..14]);

    // No daemon: no ids, and no daemon started.
    let (dir, socket) = no_daemon();
    let none = complete_at(&socket, dir.path(), &["show", ""]);
    assert!(
        none.iter().all(|(v, _)| v.starts_with('-')),
        "only flags: {none:?}"
    );
    assert!(!socket.exists());
    hlyr(&d, &["interrupt", &live]).assert_code(0);
}

#[test]
fn man_prints_the_page_and_writes_one_per_command() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    let page = hlyr_at(&socket, home, &["man"], &[]);
    assert!(
        page.assert_code(0).stdout.starts_with(".ie"),
        "{}",
        page.stdout
    );
    assert!(page.stdout.contains(".TH hlyr 1"), "{}", page.stdout);
    // The exit codes are a section, a tagged paragraph each, not text filled together.
    assert!(page
        .stdout
        .contains(".SH \"EXIT STATUS\"\n.TP\n\\fB0\\fR\nsuccess"));
    assert!(page.stdout.contains(".TP\n\\fB130\\fR\nCtrl\\-C:"));
    assert!(!page.stdout.contains("Exit codes:"), "{}", page.stdout);
    let out = home.join("man");
    let out_arg = out.display().to_string();
    let written = hlyr_at(&socket, home, &["man", "--dir", &out_arg, "--json"], &[]);
    let json = written.assert_code(0).json_as("man");
    let pages: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(json["pages"], pages.len());
    for name in [
        "hlyr.1",
        "hlyr-launch.1",
        "hlyr-daemon-stop.1",
        "hlyr-completions.1",
    ] {
        let page = std::fs::read_to_string(out.join(name)).unwrap();
        assert!(page.contains(".SH NAME"), "{name}");
    }
    let root = std::fs::read_to_string(out.join("hlyr.1")).unwrap();
    assert_eq!(root, page.stdout);
}

#[test]
fn tables_are_cut_to_the_width_never_wrapped() {
    let d = slow_daemon(30);
    let long = format!("scenario:slow {}", "a very long title ".repeat(6));
    let id = d.launch(launch_params(&long, workdir(&d)));
    ask_tool(&d, &id, "Bash", json!({"command": "echo ".repeat(40)}));
    for columns in ["60", "100"] {
        for command in ["sessions", "approvals"] {
            let mut cmd = hlyr_command(&d.socket, &d.dir);
            cmd.arg(command).env("COLUMNS", columns);
            let run = run_command(cmd);
            run.assert_code(0);
            let width: usize = columns.parse().unwrap();
            for line in run.stdout.lines() {
                assert!(
                    line.chars().count() <= width,
                    "{command} at {columns}: {line:?}"
                );
            }
            let row = run.stdout.lines().nth(1).unwrap();
            assert!(row.ends_with('…'), "{command} at {columns}: {row:?}");
        }
    }
    // Piped without COLUMNS: nothing is cut to a width.
    let full = hlyr(&d, &["sessions"]);
    let row = full.stdout.lines().nth(1).unwrap();
    assert!(row.chars().count() > 100, "{row:?}");
    hlyr(&d, &["interrupt", &id]).assert_code(0);
}

#[test]
fn help_lists_every_exit_code() {
    let d = fake();
    let help = hlyr(&d, &["--help"]);
    assert_in_order(
        &help.assert_code(0).stdout,
        &[
            "Exit codes:",
            "\n  0    success",
            "\n  1    failure",
            "decided already",
            "\n  2    usage",
            "an id that names nothing or several things",
            "\n  3    the daemon is not running",
            "\n  4    a followed session was interrupted from elsewhere",
            "\n  130  Ctrl-C",
            "{\"error\": {message, hint, kind, exit_code}}",
        ],
    );
}
