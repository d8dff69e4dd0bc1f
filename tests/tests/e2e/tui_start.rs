//! `hld-tui` when this machine's daemon goes away under it: a launch from the form starts one
//! again where nothing listens, as `hlyr launch` does, and the dashboard reconnects to it.

use hld_client::protocol::{Health, ListSessions, NoParams, Shutdown};
use hld_e2e::closing::Closing;
use hld_e2e::{fake_claude, wait_for, workspace_bin, LineConn, WAIT};

use super::tui::{fresh_socket, pids_mentioning, Tui};

/// `hld-tui` at `socket`, starting the workspace's `hld` there with `fake-claude` as `claude`.
fn tui_starting_hld(socket: &std::path::Path) -> Tui {
    let hld = workspace_bin("hld");
    let (mut cmd, home) = Tui::command(socket, &["--no-bell", "--hld-path", hld.to_str().unwrap()]);
    cmd.env("HUMANLAYER_CLAUDE_PATH", fake_claude());
    Tui::run(cmd, home)
}

/// The processes of daemons started at `socket`: their command line names its log file.
fn daemons_at(socket: &std::path::Path) -> Vec<i32> {
    pids_mentioning(&socket.with_extension("log").display().to_string())
}

/// Asks the daemon at `socket` to stop, and waits until no process of it is left.
fn stop_daemon(socket: &std::path::Path) {
    let mut conn = LineConn::connect(socket).expect("the daemon's socket");
    conn.try_request::<Shutdown>(NoParams {}).expect("shutdown");
    let gone = wait_for(WAIT, || daemons_at(socket).is_empty().then_some(()));
    assert!(gone.is_some(), "still running: {:?}", daemons_at(socket));
}

/// `hld-tui` on `socket` once the daemon it started there has stopped.
fn after_its_daemon_stopped(socket: &std::path::Path) -> Tui {
    let tui = tui_starting_hld(socket);
    tui.wait_screen("No sessions yet");
    stop_daemon(socket);
    tui.wait_screen("daemon unreachable");
    tui
}

/// Launches `query` from a new form.
fn launch(tui: &mut Tui, query: &str) {
    tui.send("c");
    tui.wait_screen(" New session ");
    tui.send(query);
    tui.send("\r");
}

#[test]
fn a_launch_starts_the_local_daemon_again_after_it_stopped_and_runs_there() {
    let (_run, socket, _started) = fresh_socket();
    let mut tui = after_its_daemon_stopped(&socket);
    launch(&mut tui, "scenario:plain back again");
    // The session opens and runs in a daemon started for it; the link is back at once.
    tui.wait_screen("Hello! You asked: scenario:plain back again");
    let screen = tui.wait_screen("● connected");
    assert!(!screen.contains("Not connected"), "{screen}");
    let mut conn = LineConn::connect(&socket).expect("a daemon was started");
    assert_eq!(
        conn.try_request::<Health>(NoParams {}).unwrap().status,
        "ok"
    );
    let sessions = conn
        .try_request::<ListSessions>(NoParams {})
        .unwrap()
        .sessions;
    assert_eq!(sessions.len(), 1, "{sessions:#?}");
    assert_eq!(sessions[0].query, "scenario:plain back again");

    tui.send("q");
    tui.wait_screen(" Sessions (1)");
    tui.send("q");
    tui.assert_clean_exit();
    stop_daemon(&socket);
}

#[test]
fn a_launch_leaves_a_socket_that_listens_without_answering_to_its_process_and_loses_no_query() {
    let (_run, socket, _started) = fresh_socket();
    let mut tui = after_its_daemon_stopped(&socket);
    // Something else takes the socket: it is not replaced by a daemon of the launch's.
    let closing = Closing::listen(&socket);
    launch(&mut tui, "scenario:plain not here");
    let screen = tui.wait_screen("Not connected to the daemon");
    assert!(screen.contains("scenario:plain not here"), "{screen}");
    closing.wait_closed(1);
    assert_eq!(
        daemons_at(&socket),
        Vec::<i32>::new(),
        "a daemon was started"
    );

    // Esc cannot keep it as a draft: the form comes back with the query, saying so; a second
    // Esc closes it.
    tui.send("\x1b");
    let screen = tui.wait_screen("Not kept as a draft: not connected to the daemon");
    assert!(screen.contains("scenario:plain not here"), "{screen}");
    tui.send("\x1b");
    tui.wait_until("the form closed", WAIT, |s| !s.contains(" New session "));
    tui.send("q");
    tui.assert_clean_exit();
}
