//! `hld-tui` end to end: the real binary in a real pseudo-terminal, read back through a
//! terminal emulator, against a real daemon running `fake-claude` — launching a session from
//! the form, approving and denying tool calls, decisions made elsewhere, the daemon's
//! auto-start and restart, and a terminal left as it was found however the program quits.

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::time::Duration;

use hld_client::protocol::{
    ConversationEventType, Health, InterruptSession, ListQueuedMessages, ListSessions, NoParams,
    SendDecision, SendDecisionParams, SessionIdParams, SessionStatus, Shutdown,
};
use hld_e2e::closing::Closing;
use hld_e2e::pty::{self, Terminal, CTRL_C};
use hld_e2e::{launch_params, wait_for, workspace_bin, DaemonOptions, LineConn, TestDaemon, WAIT};

const ROWS: u16 = 30;
const COLS: u16 = 100;
/// Ctrl+S as a terminal in raw mode sends it.
const CTRL_S: &str = "\x13";
/// What the approvals screen says under the selected tool call.
pub(super) const APPROVAL_DETAIL: &str = "d/n deny (with an optional comment)";

/// A running `hld-tui` on a pseudo-terminal of [`ROWS`]×[`COLS`], with a home of its own.
pub(super) struct Tui {
    term: Terminal,
    /// `HOME`, `XDG_CONFIG_HOME` and the working directory of the program (and of a daemon it
    /// starts).
    home: tempfile::TempDir,
}

impl Deref for Tui {
    type Target = Terminal;

    fn deref(&self) -> &Terminal {
        &self.term
    }
}

impl DerefMut for Tui {
    fn deref_mut(&mut self) -> &mut Terminal {
        &mut self.term
    }
}

impl Tui {
    /// Starts `hld-tui --daemon-socket SOCKET ARGS…` with a private home and a clean
    /// environment, in that home.
    pub(super) fn spawn(socket: &Path, args: &[&str]) -> Tui {
        Tui::started(socket, args, None)
    }

    /// Starts `hld-tui --daemon-socket SOCKET --no-bell` as [`Tui::spawn`] does, in `dir`.
    pub(super) fn spawn_in(socket: &Path, dir: &Path) -> Tui {
        Tui::started(socket, &["--no-bell"], Some(dir))
    }

    fn started(socket: &Path, args: &[&str], dir: Option<&Path>) -> Tui {
        let (mut cmd, home) = Tui::command(socket, args);
        if let Some(dir) = dir {
            cmd.cwd(dir);
        }
        Tui::run(cmd, home)
    }

    /// What [`Tui::spawn`] runs, `hld-tui --daemon-socket SOCKET ARGS…` with a clean
    /// environment, and the private home it runs in, for [`Tui::run`].
    pub(super) fn command(
        socket: &Path,
        args: &[&str],
    ) -> (portable_pty::CommandBuilder, tempfile::TempDir) {
        let home = tempfile::Builder::new()
            .prefix("hld-tui-home-")
            .tempdir_in("/tmp")
            .expect("tempdir");
        let mut cmd = pty::command(&workspace_bin("hld-tui"), home.path());
        cmd.arg("--daemon-socket");
        cmd.arg(socket);
        cmd.args(args);
        (cmd, home)
    }

    /// Runs `cmd` (made with [`pty::command`] on `home`) as the dashboard.
    pub(super) fn run(cmd: portable_pty::CommandBuilder, home: tempfile::TempDir) -> Tui {
        Tui {
            term: Terminal::spawn(cmd, ROWS, COLS),
            home,
        }
    }

    /// Waits for exit and checks that it was a success that left the terminal as it found
    /// it: the main screen back, the cursor shown, raw mode off.
    #[track_caller]
    pub(super) fn assert_clean_exit(&mut self) {
        let status = self.wait_exit(Duration::from_secs(5));
        let screen = self.screen_text();
        assert!(
            status.success(),
            "exit status {status}; the screen:\n{screen}"
        );
        assert_eq!(status.exit_code(), 0);
        let emulator = self.emulator();
        assert!(
            !emulator.screen().alternate_screen(),
            "the alternate screen was not left:\n{screen}"
        );
        assert!(
            !emulator.screen().hide_cursor(),
            "the cursor is still hidden"
        );
        drop(emulator);
        let cooked = libc::ICANON | libc::ECHO;
        assert_eq!(self.local_flags() & cooked, cooked, "raw mode is still on");
    }
}

/// A fresh directory for a session to work in.
pub(super) fn workdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("hld-tui-work-")
        .tempdir_in("/tmp")
        .expect("tempdir")
}

pub(super) fn fake() -> TestDaemon {
    TestDaemon::start_with(DaemonOptions::fake_claude())
}

/// `hld-tui` on `d`'s socket, once it shows the session list and is connected.
pub(super) fn tui_on(d: &TestDaemon) -> Tui {
    let tui = Tui::spawn(&d.socket, &["--no-bell"]);
    tui.wait_screen(" Sessions (");
    tui.wait_screen("● connected");
    tui
}

#[test]
fn a_session_launched_from_the_form_streams_is_approved_and_completes_then_q_quits_cleanly() {
    let d = fake();
    let work = workdir();
    // Started in the project, as `claude` is.
    let mut tui = Tui::spawn_in(&d.socket, work.path());
    // Shown once connected (a launch before that is refused as not connected).
    tui.wait_screen("No sessions yet");

    // The form: the query, Tab to the working directory (the one the dashboard was started
    // in), Enter.
    tui.send("c");
    tui.wait_screen(" New session ");
    tui.send("scenario:tool write the hello file");
    tui.send("\t");
    tui.wait_screen(&work.path().display().to_string());
    tui.send("\r");

    // Its conversation opens and streams up to the tool call, which waits for approval.
    tui.wait_screen("I'll create that file for you.");
    tui.wait_screen("● Write");
    let screen = tui.wait_screen("waiting for approval");
    assert!(screen.contains("hello.txt"), "{screen}");
    let id = d.only_session();
    let state = d.state(&id);
    assert_eq!(
        state.working_dir.as_deref(),
        Some(work.path().to_str().unwrap()),
        "{state:#?}"
    );
    let pending = d.wait_approvals(Some(&id), |a| a.len() == 1);
    assert_eq!(pending[0].function_name.as_deref(), Some("Write"));

    // The approvals screen lists it; `a` approves it.
    tui.send("2");
    let screen = tui.wait_screen(APPROVAL_DETAIL);
    assert!(screen.contains("Write"), "{screen}");
    assert!(screen.contains("hello.txt"), "{screen}");
    tui.send("a");
    tui.wait_screen("No pending approvals");

    // The session completes: on screen, in the daemon, and on disk.
    tui.send("1");
    tui.wait_screen("✓ completed");
    let state = d.wait_session(&id, |s| s.status == SessionStatus::Completed);
    assert!(state.error_message.is_none(), "{state:#?}");
    let hello = work.path().join("hello.txt");
    assert_eq!(
        std::fs::read_to_string(&hello).unwrap_or_else(|e| panic!("{}: {e}", hello.display())),
        "Hello, world!\n"
    );
    assert!(d.approvals(None).is_empty());

    // Its conversation shows the approval and the agent's last word.
    tui.send("\r");
    tui.wait_screen("✓ approved");
    tui.wait_screen("Done - the file hello.txt now contains");

    // `q` goes back to the sessions first, then quits.
    tui.send("q");
    tui.wait_screen(" Sessions (1)");
    tui.send("q");
    tui.assert_clean_exit();
}

#[test]
fn a_denial_typed_on_the_approvals_screen_reaches_the_agent_with_its_comment() {
    let d = fake();
    let work = workdir();
    let mut tui = tui_on(&d);
    let id = d.launch(launch_params(
        "scenario:tool write the hello file",
        work.path(),
    ));
    let pending = d.wait_approvals(Some(&id), |a| a.len() == 1);
    assert_eq!(pending[0].function_name.as_deref(), Some("Write"));

    tui.send("2");
    tui.wait_screen("⚑ 1 pending");
    let screen = tui.wait_screen(APPROVAL_DETAIL);
    assert!(screen.contains("Write"), "{screen}");
    tui.send("d");
    tui.wait_screen("Deny Write");
    let comment = "Use notes.txt instead";
    tui.send(comment);
    let screen = tui.wait_screen(comment);
    // The box's hint stays while one types.
    assert!(screen.contains("Why not? Optional"), "{screen}");
    tui.send("\r");
    tui.wait_screen("No pending approvals");
    // The message and the key hints share the last line.
    let screen = tui.wait_screen("decision sent");
    let footer = screen.lines().last().unwrap_or_default();
    assert!(footer.contains("decision sent"), "{screen}");
    assert!(footer.contains("j/k move"), "{screen}");

    // The agent got the comment as the tool's (failed) result, and wrote nothing.
    let state = d.wait_ended(&id);
    assert_eq!(state.status, SessionStatus::Completed, "{state:#?}");
    let conversation = d.conversation(&id);
    let result = conversation
        .iter()
        .find(|e| e.event_type == ConversationEventType::ToolResult)
        .unwrap_or_else(|| panic!("no tool_result: {conversation:#?}"));
    assert!(result.is_error, "{result:#?}");
    assert_eq!(result.tool_result_content.as_deref(), Some(comment));
    let call = conversation
        .iter()
        .find(|e| e.event_type == ConversationEventType::ToolCall)
        .unwrap_or_else(|| panic!("no tool_call: {conversation:#?}"));
    assert_eq!(call.approval_status.as_deref(), Some("denied"));
    assert!(!work.path().join("hello.txt").exists());

    // The conversation on screen says so too.
    tui.send("1");
    tui.wait_screen("✓ completed");
    tui.send("\r");
    tui.wait_screen(&format!("✗ denied: {comment}"));
    // Once: the tool's result, which only repeats the reason, is not shown again.
    let screen = tui.wait_screen(&format!("I couldn't create hello.txt: {comment}"));
    assert!(!screen.contains(&format!("⎿ {comment}")), "{screen}");
}

#[test]
fn an_approval_decided_elsewhere_leaves_the_approvals_screen_at_once() {
    let d = fake();
    let work = workdir();
    let mut tui = tui_on(&d);
    tui.send("2");
    tui.wait_screen("No pending approvals");
    let id = d.launch(launch_params(
        "scenario:tool write the hello file",
        work.path(),
    ));
    let pending = d.wait_approvals(Some(&id), |a| a.len() == 1);

    // It arrives on the open screen by itself...
    tui.wait_screen("⚑ 1 pending");
    let screen = tui.wait_screen(APPROVAL_DETAIL);
    assert!(screen.contains("Write"), "{screen}");

    // ...and leaves it by itself when another client decides it.
    let reply = d.request::<SendDecision>(SendDecisionParams {
        call_id: Some(pending[0].id.clone()),
        kind: Some("function_call".into()),
        decision: Some("approve".into()),
        comment: None,
    });
    assert!(reply.success, "{reply:?}");
    let screen = tui.wait_screen("No pending approvals");
    assert!(!screen.contains("⚑ 1 pending"), "{screen}");
    d.wait_session(&id, |s| s.status == SessionStatus::Completed);
    assert!(work.path().join("hello.txt").exists());
}

#[test]
fn an_api_retry_shows_the_error_the_attempt_and_the_delay() {
    let d = fake();
    let work = workdir();
    let id = d.launch(launch_params("scenario:retry", work.path()));
    d.wait_ended(&id);
    let mut tui = tui_on(&d);
    tui.wait_screen("✗ failed");
    tui.send("\r");
    let screen =
        tui.wait_screen("· API error 401 (authentication_failed), retrying (3/3) in 0.2 s");
    assert!(
        screen.contains("· API error 401 (authentication_failed), retrying (1/3) in 0.2 s"),
        "{screen}"
    );
    assert!(!screen.contains("api_retry"), "{screen}");
}

#[test]
fn an_approval_that_ended_with_its_session_says_so_with_its_stored_comment() {
    let d = fake();
    let work = workdir();
    let id = d.launch(launch_params(
        "scenario:tool write the hello file",
        work.path(),
    ));
    d.wait_approvals(Some(&id), |a| a.len() == 1);
    d.request::<InterruptSession>(SessionIdParams {
        session_id: id.clone(),
    });
    d.wait_ended(&id);

    // Opened afterwards, the conversation shows how the approval ended and why.
    let mut tui = tui_on(&d);
    tui.wait_screen("■ interrupted");
    tui.send("\r");
    let screen = tui.wait_screen("– ended with its session: the session ended before a decision");
    assert!(screen.contains("● Write"), "{screen}");
    assert!(!screen.contains("resolved elsewhere"), "{screen}");
}

#[test]
fn agents_in_two_repositories_are_told_apart_and_a_wide_terminal_shows_a_pane() {
    let d = fake();
    let (alpha, beta) = (workdir(), workdir());
    for dir in [&alpha, &beta] {
        let id = d.launch(launch_params("scenario:plain say hello", dir.path()));
        d.wait_session(&id, |s| s.status == SessionStatus::Completed);
    }
    let name =
        |dir: &tempfile::TempDir| dir.path().file_name().unwrap().to_str().unwrap().to_owned();
    let tui = tui_on(&d);
    let screen = tui.wait_screen(" Sessions (2)");
    assert!(screen.contains("DIRECTORY"), "{screen}");
    assert!(screen.contains(&name(&alpha)), "{screen}");
    assert!(screen.contains(&name(&beta)), "{screen}");

    // At 160 columns the selected session's query and result are beside the list.
    let mut cmd = pty::command(&workspace_bin("hld-tui"), tui.home.path());
    cmd.args(["--no-bell", "--daemon-socket"]);
    cmd.arg(&d.socket);
    let wide = Terminal::spawn(cmd, ROWS, 160);
    let screen = wide.wait_screen("Result");
    let header = screen
        .lines()
        .find(|l| l.contains("STATUS"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(header.contains("│ scenario:plain say hello"), "{screen}");
    assert!(screen.contains("Query"), "{screen}");
}

/// Process ids whose command line mentions `marker`.
pub(super) fn pids_mentioning(marker: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .collect()
}

/// Kills on drop whatever still runs with this socket on its command line: the daemon a test
/// made `hld-tui` start, should the test fail before stopping it.
pub(super) struct StartedDaemon(PathBuf);

impl Drop for StartedDaemon {
    fn drop(&mut self) {
        for pid in pids_mentioning(&self.0.display().to_string()) {
            let pid = nix::unistd::Pid::from_raw(pid);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// A socket in a fresh directory, with a guard that kills a daemon started there.
pub(super) fn fresh_socket() -> (tempfile::TempDir, PathBuf, StartedDaemon) {
    let run = tempfile::Builder::new()
        .prefix("hld-tui-run-")
        .tempdir_in("/tmp")
        .expect("tempdir");
    let socket = run.path().join("hld.sock");
    let started = StartedDaemon(socket.clone());
    (run, socket, started)
}

/// `hld-tui` at `socket`, allowed to start the workspace's `hld` there.
fn may_start(socket: &Path) -> Tui {
    let hld = workspace_bin("hld");
    Tui::spawn(socket, &["--no-bell", "--hld-path", hld.to_str().unwrap()])
}

#[test]
fn it_waits_for_a_process_that_listens_without_answering_rather_than_start_one() {
    let (_run, socket, _started) = fresh_socket();
    let closing = Closing::listen(&socket);
    let mut tui = may_start(&socket);
    tui.wait_screen("reconnecting");
    closing.wait_closed(1);
    let screen = tui.screen_text();
    assert!(!screen.contains("starting hld"), "{screen}");
    assert!(!socket.with_extension("log").exists());
    tui.send("q");
    tui.assert_clean_exit();
}

#[test]
fn it_starts_a_daemon_when_none_answers_and_leaves_it_running() {
    let (_run, socket, _started) = fresh_socket();
    let mut tui = may_start(&socket);
    tui.wait_screen("● connected");
    tui.wait_screen("No sessions yet");
    // A daemon answers there, with its log beside the socket and its database in HOME.
    let health = LineConn::connect(&socket)
        .expect("the started daemon's socket")
        .try_request::<Health>(NoParams {})
        .expect("health");
    assert_eq!(health.status, "ok");
    assert!(socket.with_extension("log").exists());
    assert!(tui.home.path().join(".humanlayer/daemon.db").exists());

    tui.send("q");
    tui.assert_clean_exit();
    let screen = tui.screen_text();
    assert!(screen.contains("starting hld"), "{screen}");

    // The daemon outlives the dashboard; stopping it leaves nothing running.
    let mut conn = LineConn::connect(&socket).expect("the daemon outlives hld-tui");
    assert_eq!(
        conn.try_request::<Health>(NoParams {}).unwrap().status,
        "ok"
    );
    conn.try_request::<Shutdown>(NoParams {}).expect("shutdown");
    let marker = socket.display().to_string();
    let left = wait_for(WAIT, || {
        let pids = pids_mentioning(&marker);
        pids.is_empty().then_some(())
    });
    assert!(
        left.is_some(),
        "the started daemon is still running: {:?}",
        pids_mentioning(&marker)
    );
}

#[test]
fn it_reconnects_after_a_daemon_restart_and_shows_the_database_sessions() {
    let base = hld_e2e::short_tempdir();
    let dir = base.path().to_path_buf();
    let options = || DaemonOptions {
        dir: Some(dir.clone()),
        ..DaemonOptions::fake_claude()
    };
    let work = workdir();
    let mut d = TestDaemon::start_with(options());
    let done = d.launch(launch_params("scenario:plain finished before", work.path()));
    d.wait_session(&done, |s| s.status == SessionStatus::Completed);
    let waiting = d.launch(launch_params("scenario:tool cut short", work.path()));
    d.wait_approvals(Some(&waiting), |a| a.len() == 1);

    let tui = tui_on(&d);
    tui.wait_screen("finished before");
    tui.wait_screen("cut short");
    tui.wait_screen("✓ completed");

    d.kill9();
    drop(d);
    tui.wait_screen("○ reconnecting");
    tui.wait_screen("daemon unreachable");

    // A new daemon on the same socket and database: the orphan it finds has failed, which
    // only a list reloaded from it can show.
    let d = TestDaemon::start_with(options());
    let failed = d.wait_ended(&waiting);
    assert_eq!(failed.status, SessionStatus::Failed, "{failed:#?}");
    let screen = tui.wait_screen("● connected");
    assert!(!screen.contains("reconnecting"), "{screen}");
    tui.wait_screen("✗ failed");
    let screen = tui.wait_screen(" Sessions (2)");
    assert!(screen.contains("finished before"), "{screen}");
    assert!(screen.contains("cut short"), "{screen}");
    assert!(screen.contains("✓ completed"), "{screen}");
}

#[test]
fn ctrl_c_twice_quits_from_inside_a_form_and_restores_the_terminal() {
    let d = fake();
    let mut tui = tui_on(&d);
    tui.send("c");
    tui.wait_screen(" New session ");
    // `q` in a text field is text, not a way out...
    tui.send("quit now");
    tui.wait_screen("quit now");
    // ...Ctrl+C is, from anywhere, pressed twice: the first press says so.
    tui.send(CTRL_C);
    tui.wait_screen("Ctrl+C again quits (the sessions keep running)");
    tui.send(CTRL_C);
    tui.assert_clean_exit();
    assert!(
        d.request::<ListSessions>(NoParams {}).sessions.is_empty(),
        "the unfinished form launched a session"
    );
}

#[test]
fn enter_launches_a_multi_line_query_from_the_query_field() {
    let d = fake();
    let work = workdir();
    let mut tui = tui_on(&d);
    tui.send("c");
    tui.wait_screen(" New session ");
    // Alt+Enter in the query is a new line; the directory is typed after Tab, then back with
    // Shift+Tab, and Enter launches from the query, as it sends in Claude Code.
    tui.send("scenario:plain first line\x1b\rsecond line");
    tui.send("\t\x15");
    tui.send(&work.path().display().to_string());
    tui.send("\x1b[Z");
    tui.wait_screen("second line");
    tui.send("\r");
    tui.wait_screen("✓ completed");
    let id = d.only_session();
    let state = d.wait_session(&id, |s| s.status == SessionStatus::Completed);
    assert_eq!(state.query, "scenario:plain first line\nsecond line");
    assert_eq!(
        state.working_dir.as_deref(),
        Some(work.path().to_str().unwrap())
    );
}

#[test]
fn a_refused_launch_keeps_the_form_and_says_why_in_its_words() {
    let d = fake();
    let work = workdir();
    let missing = work.path().join("does/not/exist");
    let mut tui = tui_on(&d);
    tui.send("c");
    tui.wait_screen(" New session ");
    tui.send("scenario:plain kept through a refusal");
    // Tab, Ctrl+U, the directory, Ctrl+S.
    tui.send("\t\x15");
    tui.send(&missing.display().to_string());
    tui.send(CTRL_S);
    let screen = tui.wait_screen("Working directory does not exist:");
    assert!(screen.contains(" New session "), "{screen}");
    assert!(screen.contains("kept through a refusal"), "{screen}");
    assert!(!screen.contains("RPC error"), "{screen}");
    assert!(!screen.contains("working_dir"), "{screen}");
    // The directory put right, the same form launches.
    tui.send("\x15");
    tui.send(&work.path().display().to_string());
    tui.send(CTRL_S);
    tui.wait_screen("✓ completed");
    let id = d.only_session();
    let state = d.wait_session(&id, |s| s.status == SessionStatus::Completed);
    assert_eq!(state.query, "scenario:plain kept through a refusal");
}

/// The reply box sends into the session: while the agent works the message is queued (the box
/// and the message line say so) and listed above the box, `x` cancels the newest one, and
/// the one left is delivered when the turn ends, in the same session.
#[test]
fn a_reply_is_queued_while_the_agent_works_x_cancels_one_and_the_other_is_delivered() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "100")
            .env("FAKE_CLAUDE_COUNT", "150"),
    );
    let work = workdir();
    let id = d.launch(launch_params("scenario:slow", work.path()));
    let mut tui = tui_on(&d);
    tui.wait_screen("running");
    tui.send("\r");
    tui.wait_screen("chunk 2");

    tui.send("r");
    tui.wait_screen("Message (queued until the agent's turn ends)");
    tui.send("scenario:plain from the tui");
    tui.send("\r");
    tui.wait_screen("queued: sent when the agent's turn ends");
    tui.wait_screen("⧗ scenario:plain from the tui");
    tui.send("r");
    tui.send("scenario:plain take this back");
    tui.send("\r");
    let screen = tui.wait_screen("⧗ scenario:plain take this back");
    assert!(screen.contains("Queued for the next turn"), "{screen}");
    let queued = |d: &TestDaemon| {
        d.request::<ListQueuedMessages>(SessionIdParams {
            session_id: id.clone(),
        })
        .messages
    };
    assert_eq!(queued(&d).len(), 2);

    tui.send("x");
    tui.wait_screen("queued message cancelled");
    tui.wait_until("the cancelled message gone", WAIT, |s| {
        !s.contains("take this back") && s.contains("⧗ scenario:plain from the tui")
    });
    let left = queued(&d);
    assert_eq!(left.len(), 1, "{left:#?}");
    assert_eq!(left[0].text, "scenario:plain from the tui");

    // The turn ends; the queued message starts the next one, in this session.
    let screen = tui.wait_screen("You said: scenario:plain from the tui");
    assert!(!screen.contains('⧗'), "{screen}");
    let sessions = d.request::<ListSessions>(NoParams {}).sessions;
    assert_eq!(sessions.len(), 1, "{sessions:#?}");
    tui.send("q");
    tui.send("q");
    tui.assert_clean_exit();
}
