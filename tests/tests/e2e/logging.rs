//! The daemon's logging: colour only on a terminal and never with `NO_COLOR`/`--no-color`,
//! the log file sink, start-up fields, and no request bodies in the log.

use std::process::Command;

use hld_client::protocol::{Health, NoParams, Shutdown};
use hld_e2e::{launch_params, wait_for, workspace_bin, DaemonOptions, LineConn, TestDaemon, WAIT};
use serde_json::json;

/// Runs `hld` under a pseudo-terminal (util-linux `script`) until it has started, stops it
/// with `shutdown`, and returns what it printed on the terminal.
fn run_on_a_terminal(extra: &str, env: &[(&str, &str)]) -> String {
    let dir = hld_e2e::short_tempdir();
    let socket = dir.path().join("s.sock");
    let cmd = format!(
        "{} --socket {} --database {} {extra}",
        workspace_bin("hld").display(),
        socket.display(),
        dir.path().join("db").display()
    );
    let mut script = Command::new("script");
    script
        .args(["-qfec", &cmd, "/dev/null"])
        .env_remove("NO_COLOR")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    for (k, v) in env {
        script.env(k, v);
    }
    let child = script.spawn().unwrap();
    let mut serving = wait_for(WAIT, || {
        let mut conn = LineConn::connect(&socket).ok()?;
        conn.try_request::<Health>(NoParams {}).ok()?;
        Some(conn)
    })
    .expect("hld did not start");
    serving
        .try_request::<Shutdown>(NoParams {})
        .expect("shutdown is accepted");
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn colour_on_a_terminal_only_and_never_with_no_color() {
    let coloured = run_on_a_terminal("", &[]);
    assert!(coloured.contains("daemon started"), "{coloured}");
    assert!(coloured.contains("\u{1b}["), "ANSI colour on a terminal");

    let plain = run_on_a_terminal("", &[("NO_COLOR", "1")]);
    assert!(plain.contains("daemon started"));
    assert!(
        !plain.contains("\u{1b}["),
        "no colour with NO_COLOR: {plain:?}"
    );

    let plain = run_on_a_terminal("--no-color", &[]);
    assert!(plain.contains("daemon started"));
    assert!(!plain.contains("\u{1b}["), "no colour with --no-color");
}

#[test]
fn the_log_file_gets_start_up_fields_and_never_request_bodies() {
    let d = TestDaemon::start_with(DaemonOptions::default());
    let mut c = d.conn();
    c.send(r#"{"jsonrpc":"2.0","method":"health","params":{"token":"SECRET-TOKEN-1"},"id":1,"#);
    assert_eq!(c.recv()["error"]["code"], -32700);
    let reply = c.request(
        "setLogLevel",
        json!({"level": 7, "pad": "SECRET-TOKEN-2"}),
        json!(2),
    );
    assert_eq!(reply["error"]["code"], -32602);
    let log = d.log_text();
    assert!(log.contains("hld starting"), "{log}");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&d.log).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "the log file is private");
    for field in ["version=", "pid=", "level=", "sink="] {
        assert!(log.contains(field), "start-up logs {field}");
    }
    assert!(log.contains("WARN"), "client errors are logged at warn");
    assert!(!log.contains("SECRET-TOKEN"), "no request body in the log");
    assert!(!log.contains("\u{1b}["), "no colour in a log file");
}

#[test]
fn a_first_start_logs_one_migration_line_and_fields_hold_plain_values() {
    // No idle window: each process closes after its turn and logs its end.
    let options = DaemonOptions::fake_claude().arg("--live-idle-ms").arg("0");
    let mut d = TestDaemon::start_with(options);
    for query in ["scenario:error", "scenario:malformed"] {
        let id = d.launch(launch_params(query, &d.dir));
        d.wait_ended(&id);
    }
    let log = wait_for(WAIT, || {
        let log = d.log_text();
        (log.matches("session ended").count() == 2).then_some(log)
    })
    .expect("both sessions logged their end");
    let migrations: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("INFO") && l.contains("migration"))
        .collect();
    assert_eq!(migrations.len(), 1, "{migrations:#?}");
    assert!(
        migrations[0].contains("applied database migrations") && migrations[0].contains("from=0"),
        "{}",
        migrations[0]
    );
    assert!(log.contains("status=failed"), "{log}");
    assert!(log.contains("kind=mystery_event"), "{log}");
    for line in log.lines() {
        for debug_form in ["Some(", "=None"] {
            assert!(!line.contains(debug_form), "{debug_form} in {line}");
        }
        assert!(!quoted_field(line), "a quoted field in {line}");
    }

    // The same database again: nothing left to apply, nothing said.
    d.stop();
    let again = TestDaemon::start_with(DaemonOptions {
        dir: Some(d.dir.clone()),
        ..Default::default()
    });
    let log = again.log_text();
    assert_eq!(
        log.matches("applied database migrations").count(),
        1,
        "{log}"
    );
}

/// Whether `line` has a field whose value is quoted (`kind="x"`, a string's `Debug` form): a
/// lower-case name, then `="`. (Upper case is prose such as `export PATH="…"`.)
fn quoted_field(line: &str) -> bool {
    line.match_indices("=\"").any(|(at, _)| {
        let name = &line[..at];
        let start = name
            .rfind(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .map_or(0, |i| i + 1);
        start < at && line[..start].ends_with(' ')
    })
}
