//! What a hostile local user or client cannot do: read the daemon's secrets through an agent,
//! slip into its socket or run directories, forge its log, or store a session no process could
//! run; and that lost data is reported as a failure, not as success.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use hld_client::protocol::{
    InterruptSession, ListSessions, NoParams, SessionIdParams, SessionStatus,
};
use hld_e2e::{launch_params, wait_for, DaemonOptions, TestDaemon, WAIT};
use serde_json::json;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A fresh directory for a daemon of the test's own making.
fn scratch() -> tempfile::TempDir {
    hld_e2e::short_tempdir()
}

#[test]
fn the_api_key_reaches_only_humanlayers_own_approvals_server() {
    const KEY: &str = "hl-secret-key-for-the-test";
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("HUMANLAYER_API_KEY", KEY)
            // Nothing answers there: the cloud poller fails quietly.
            .arg("--api-base-url")
            .arg("http://127.0.0.1:9"),
    );
    let id = d.launch(hld_client::protocol::LaunchSessionParams {
        mcp_config: Some(
            serde_json::from_value(json!({"mcpServers": {
                "humanlayer": {"command": "/nonexistent/humanlayer",
                               "args": ["mcp", "claude_approvals"]},
                "other": {"command": "/nonexistent/other", "env": {"KEEP": "1"}},
            }}))
            .unwrap(),
        ),
        ..launch_params("hello", "/tmp")
    });
    let s = d.wait_ended(&id);
    let inv = d.fake_invocation(s.claude_session_id.as_deref().unwrap());
    assert_eq!(
        inv["env"].get("HUMANLAYER_API_KEY"),
        None,
        "claude's own env"
    );
    let servers = &inv["mcp_config"]["mcpServers"];
    assert_eq!(servers["humanlayer"]["env"]["HUMANLAYER_API_KEY"], KEY);
    assert_eq!(servers["other"]["env"].get("HUMANLAYER_API_KEY"), None);
    assert_eq!(servers["other"]["env"]["KEEP"], "1", "the user's env stays");
    assert_eq!(servers["approvals"]["env"].get("HUMANLAYER_API_KEY"), None);
    assert!(!d.log_text().contains(KEY), "the key is never logged");
}

#[test]
fn a_socket_directory_others_can_write_is_refused_with_the_fix() {
    let dir = scratch();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    chmod(&shared, 0o777);
    let d = TestDaemon::spawn(DaemonOptions {
        socket: Some(shared.join("hld.sock")),
        ..Default::default()
    });
    let (status, stderr) = d.wait_failure();
    assert!(!status.success());
    assert!(stderr.contains("writable by others (mode 777)"), "{stderr}");
    assert!(stderr.contains("chmod go-w"), "{stderr}");
    assert!(!shared.join("hld.sock").exists());
}

#[test]
fn a_database_others_could_read_or_change_is_refused_or_made_private() {
    let dir = scratch();
    let own = dir.path().join("own");
    std::fs::create_dir(&own).unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    chmod(&shared, 0o777);
    let options = || DaemonOptions {
        socket: Some(own.join("hld.sock")),
        dir: Some(shared.clone()),
        ..Default::default()
    };
    let (status, stderr) = TestDaemon::spawn(options()).wait_failure();
    assert!(!status.success());
    assert!(stderr.contains("the database's directory"), "{stderr}");
    assert!(stderr.contains("writable by others (mode 777)"), "{stderr}");
    assert!(!shared.join("hld.db").exists());
    // A database of the user's own that others could read is made private.
    chmod(&shared, 0o755);
    let db = shared.join("hld.db");
    std::fs::write(&db, b"").unwrap();
    chmod(&db, 0o644);
    drop(TestDaemon::start_with(options()));
    let mode = std::fs::metadata(&db).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // Another user's database is refused (giving a file away takes root, as CI runs).
    if nix::unistd::chown(&db, Some(nix::unistd::Uid::from_raw(65534)), None).is_ok() {
        let (_, stderr) = TestDaemon::spawn(options()).wait_failure();
        assert!(
            stderr.contains("belongs to another user (uid 65534"),
            "{stderr}"
        );
    }
}

#[test]
fn a_symlinked_socket_directory_is_refused() {
    let dir = scratch();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let d = TestDaemon::spawn(DaemonOptions {
        socket: Some(link.join("hld.sock")),
        ..Default::default()
    });
    let (status, stderr) = d.wait_failure();
    assert!(!status.success());
    assert!(stderr.contains("is a symbolic link"), "{stderr}");
}

#[test]
fn another_users_socket_is_reported_as_theirs_not_as_a_running_daemon() {
    let dir = scratch();
    let socket = dir.path().join("hld.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let nobody = nix::unistd::Uid::from_raw(65534);
    if let Err(e) = nix::unistd::chown(&socket, Some(nobody), None) {
        // Only root (as CI runs) can give a file away; anyone else owns only their own.
        assert!(!nix::unistd::geteuid().is_root(), "root cannot chown: {e}");
        return;
    }
    let d = TestDaemon::spawn(DaemonOptions {
        socket: Some(socket.clone()),
        ..Default::default()
    });
    let (status, stderr) = d.wait_failure();
    assert!(!status.success());
    assert!(
        stderr.contains("belongs to another user (uid 65534"),
        "{stderr}"
    );
    assert!(!stderr.contains("already running"), "{stderr}");
    drop(listener);
}

#[test]
fn a_run_directory_others_can_write_is_refused_and_leftovers_are_removed() {
    let dir = scratch();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    chmod(&run, 0o777);
    let d = TestDaemon::spawn(DaemonOptions {
        dir: Some(dir.path().to_owned()),
        ..Default::default()
    });
    let (status, stderr) = d.wait_failure();
    assert!(!status.success());
    assert!(stderr.contains("writable by others"), "{stderr}");

    // A killed daemon's configs are gone once the next one has started; other files stay.
    chmod(&run, 0o700);
    let leftover = run.join("mcp-config-0f9e.json");
    std::fs::write(&leftover, "{}").unwrap();
    std::fs::write(run.join("notes.txt"), "mine").unwrap();
    let _d = TestDaemon::start_with(DaemonOptions {
        dir: Some(dir.path().to_owned()),
        ..Default::default()
    });
    assert!(!leftover.exists());
    assert!(run.join("notes.txt").exists());
}

#[test]
fn nothing_a_client_sends_can_forge_a_log_line() {
    let d = TestDaemon::start();
    let mut conn = d.conn();
    let forged = "x\n2000-01-01T00:00:00Z  INFO FORGED approval granted\u{1b}[2J";
    let reply = conn.call(&json!({"jsonrpc":"2.0","method":forged,"id":1}).to_string());
    assert_eq!(reply["error"]["code"], -32601);
    let log = wait_for(WAIT, || {
        let log = d.log_text();
        log.contains("FORGED").then_some(log)
    })
    .expect("the request is logged");
    assert!(
        log.lines().all(|l| !l.starts_with("2000-01-01")),
        "a forged line: {log}"
    );
    assert!(!log.contains('\u{1b}'), "no raw ESC in the log");
}

#[test]
fn a_nul_in_launch_params_is_invalid_params_and_stores_nothing() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let reply = d.call(
        "launchSession",
        json!({"query": "a\u{0}b", "working_dir": "/tmp"}),
    );
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert_eq!(reply["error"]["data"]["param"], "query", "{reply}");
    assert!(d.request::<ListSessions>(NoParams {}).sessions.is_empty());
    assert!(!d.log_text().contains(" ERROR "), "{}", d.log_text());
}

#[test]
fn a_request_repeating_a_member_gets_its_own_id_back() {
    let d = TestDaemon::start();
    let reply = d
        .conn()
        .call(r#"{"jsonrpc":"2.0","method":"health","method":"version","id":41}"#);
    assert_eq!(reply["error"]["code"], -32600);
    assert_eq!(reply["id"], 41);
}

#[test]
fn output_that_cannot_be_stored_fails_the_session_and_its_outcome_is_retried() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_COUNT", "400")
            .env("FAKE_CLAUDE_DELAY_MS", "25"),
    );
    let id = d.launch(launch_params("scenario:slow", "/tmp"));
    wait_for(WAIT, || (d.conversation(&id).len() >= 3).then_some(())).expect("the stream starts");
    // Another connection holds the write lock past the daemon's busy timeout: every write
    // fails, as on a full disk, until it lets go.
    let lock = rusqlite::Connection::open(d.dir.join("hld.db")).unwrap();
    lock.execute_batch("BEGIN EXCLUSIVE").unwrap();
    wait_for(Duration::from_secs(30), || {
        d.log_text()
            .contains("cannot store how the session ended; retrying")
            .then_some(())
    })
    .expect("the outcome's write fails and is retried");
    // Still live and interruptible meanwhile (there is no process left to stop).
    assert_eq!(d.state(&id).status, SessionStatus::Running);
    d.request::<InterruptSession>(SessionIdParams {
        session_id: id.clone(),
    });
    lock.execute_batch("ROLLBACK").unwrap();
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Failed);
    let error = s.error_message.unwrap_or_default();
    assert!(error.contains("conversation is incomplete"), "{error}");
    // Said as the user can act on it, for as many lines as were lost.
    assert!(
        error.contains("(the database is locked by another process)"),
        "{error}"
    );
    let counted = error
        .split_once("incomplete: ")
        .and_then(|(_, rest)| rest.split_once(" of claude's output"))
        .and_then(|(count, _)| count.split_once(' '))
        .and_then(|(n, word)| Some((n.parse::<u64>().ok()?, word)));
    assert!(
        counted.is_some_and(|(n, word)| word == if n == 1 { "line" } else { "lines" }),
        "{error}"
    );
    let log = d.log_text();
    assert_eq!(
        log.matches("cannot store claude output").count(),
        1,
        "{log}"
    );
    // The interrupt needed no write (the session was not archived): it was not held up.
    assert!(!log.contains("cannot unarchive"), "{log}");
    // The agent was stopped: far from all of its 400 lines were stored.
    assert!(d.conversation(&id).len() < 400);
}
