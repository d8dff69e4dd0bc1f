//! `hlyr` end to end: the real binary against a real daemon running `fake-claude` — following
//! sessions, every subcommand's text and `--json` output, id prefixes, the daemon's auto-start,
//! colour, and each error with its exit code. What a followed session shows on a terminal is
//! in `hlyr_follow`.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hld_client::protocol::{
    Approval, ApprovalStatus, CreateApproval, CreateApprovalParams, GetApproval, GetApprovalParams,
    Health, LaunchSessionParams, ListSessions, NoParams, SessionStatus,
};
use hld_e2e::closing::Closing;
use hld_e2e::{
    fake_claude, launch_params, wait_for, workspace_bin, DaemonOptions, TestDaemon, WAIT,
};
use serde_json::{json, Value};

/// What one `hlyr` run left behind.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// The stdout lines parsed as JSON.
    pub(crate) fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
            .collect()
    }

    /// The whole stdout parsed as one JSON document.
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON: {:?}: {e}", self.stdout))
    }

    /// The whole stdout as one JSON document of schema `kind` (see [`crate::schema`]).
    #[track_caller]
    pub(crate) fn json_as(&self, kind: &str) -> Value {
        let value = self.json();
        crate::schema::check(kind, &value);
        value
    }

    /// The stdout lines, each a JSON document of schema `kind`.
    #[track_caller]
    pub(crate) fn json_lines_as(&self, kind: &str) -> Vec<Value> {
        let lines = self.json_lines();
        for line in &lines {
            crate::schema::check(kind, line);
        }
        lines
    }

    /// The `--json` error on stderr, checked against its schema.
    #[track_caller]
    pub(crate) fn error_json(&self) -> Value {
        let error: Value = serde_json::from_str(&self.stderr)
            .unwrap_or_else(|e| panic!("stderr is not one JSON error: {e}: {self:#?}"));
        crate::schema::check("error", &error);
        assert_eq!(self.stderr.lines().count(), 1, "one line: {self:#?}");
        assert_eq!(error["error"]["exit_code"], self.code, "{self:#?}");
        error["error"].clone()
    }

    #[track_caller]
    pub(crate) fn assert_code(&self, code: i32) -> &Run {
        assert_eq!(self.code, code, "exit code; {self:#?}");
        self
    }
}

/// `hlyr` with a private home and the daemon's socket in the environment.
pub(crate) fn hlyr_command(socket: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(workspace_bin("hlyr"));
    cmd.env("HUMANLAYER_DAEMON_SOCKET", socket)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("HLD_PATH")
        .env_remove("HLD_CONTEXT")
        .env_remove("HUMANLAYER_APPROVALS_COMMAND")
        .env_remove("COLUMNS")
        .current_dir(home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// A pipe read to its end on a thread of its own, into a shared buffer.
struct Collected {
    buf: Arc<Mutex<Vec<u8>>>,
    reader: std::thread::JoinHandle<()>,
}

fn collect(mut pipe: impl Read + Send + 'static) -> Collected {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let sink = buf.clone();
    let reader = std::thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        while let Ok(n) = pipe.read(&mut chunk) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&chunk[..n]);
        }
    });
    Collected { buf, reader }
}

fn text(buf: &Arc<Mutex<Vec<u8>>>) -> String {
    String::from_utf8_lossy(&buf.lock().unwrap()).replace('\r', "")
}

/// A running `hlyr` whose output is collected as it comes.
pub(crate) struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl Running {
    pub(crate) fn spawn(mut cmd: Command) -> Running {
        let mut child = cmd.spawn().expect("spawn");
        let stdout = collect(child.stdout.take().unwrap());
        let stderr = collect(child.stderr.take().unwrap());
        Running {
            stdin: child.stdin.take(),
            child,
            stdout: stdout.buf,
            stderr: stderr.buf,
            readers: vec![stdout.reader, stderr.reader],
        }
    }

    pub(crate) fn stdout(&self) -> String {
        text(&self.stdout)
    }

    /// Waits until stdout holds `needle` `times` times.
    #[track_caller]
    pub(crate) fn wait_for(&self, needle: &str, times: usize) {
        let printed = wait_for(WAIT, || {
            (self.stdout().matches(needle).count() >= times).then_some(())
        });
        assert!(
            printed.is_some(),
            "{needle:?} ×{times} never printed:\n{}\nstderr:\n{}",
            self.stdout(),
            text(&self.stderr)
        );
    }

    pub(crate) fn stderr(&self) -> String {
        text(&self.stderr)
    }

    /// Waits until stderr holds `needle` `times` times.
    #[track_caller]
    pub(crate) fn wait_for_stderr(&self, needle: &str, times: usize) {
        let printed = wait_for(WAIT, || {
            (self.stderr().matches(needle).count() >= times).then_some(())
        });
        assert!(
            printed.is_some(),
            "{needle:?} ×{times} never on stderr:\n{}\nstdout:\n{}",
            self.stderr(),
            self.stdout()
        );
    }

    /// Writes `text` to stdin and closes it.
    pub(crate) fn write_stdin(&mut self, text: &str) {
        let mut stdin = self.stdin.take().expect("stdin piped");
        stdin.write_all(text.as_bytes()).unwrap();
    }

    /// Sends SIGINT, as Ctrl-C would.
    pub(crate) fn interrupt(&self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    }

    pub(crate) fn type_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin piped");
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Waits for the exit (30 s at most, then kills and panics).
    pub(crate) fn finish(self) -> Run {
        self.finish_within(Duration::from_secs(30))
    }

    /// Waits for the exit (`within` at most, then kills and panics).
    pub(crate) fn finish_within(mut self, within: Duration) -> Run {
        let Some(status) = wait_for(within, || self.child.try_wait().unwrap()) else {
            let _ = self.child.kill();
            panic!(
                "hlyr did not exit; stdout:\n{}\nstderr:\n{}",
                self.stdout(),
                text(&self.stderr)
            );
        };
        drop(self.stdin.take());
        // The readers end when the pipes close, having read everything. A daemon that hlyr
        // started is detached and never holds hlyr's pipes, so they close with hlyr.
        let drained = wait_for(Duration::from_secs(10), || {
            self.readers.iter().all(|r| r.is_finished()).then_some(())
        });
        assert!(
            drained.is_some(),
            "hlyr's pipes stayed open after it exited; stdout:\n{}",
            self.stdout()
        );
        Run {
            code: status.code().unwrap_or(-1),
            stdout: self.stdout(),
            stderr: text(&self.stderr),
        }
    }
}

/// A run still going when the test lets go of it (it failed first, or never asked for the end)
/// is killed and reaped: a `watch` or `events` would otherwise wait for its daemon forever.
impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub(crate) fn run_command(cmd: Command) -> Run {
    Running::spawn(cmd).finish()
}

/// Runs `hlyr ARGS` against `d`.
pub(crate) fn hlyr(d: &TestDaemon, args: &[&str]) -> Run {
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(args);
    run_command(cmd)
}

pub(crate) fn fake() -> TestDaemon {
    TestDaemon::start_with(DaemonOptions::fake_claude())
}

/// A daemon whose `scenario:slow` sessions run for about `seconds`.
pub(crate) fn slow_daemon(seconds: u64) -> TestDaemon {
    TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "100")
            .env("FAKE_CLAUDE_COUNT", &(seconds * 10).to_string()),
    )
}

pub(crate) fn workdir(d: &TestDaemon) -> String {
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    dir.display().to_string()
}

/// The session id printed by `launch`/`continue` (`Session <id>`).
pub(crate) fn printed_session(run: &Run) -> String {
    run.stdout
        .lines()
        .find_map(|l| l.strip_prefix("Session "))
        .unwrap_or_else(|| panic!("no session id printed: {run:#?}"))
        .trim()
        .to_owned()
}

/// Asserts that `needles` appear in `haystack` in this order.
#[track_caller]
pub(crate) fn assert_in_order(haystack: &str, needles: &[&str]) {
    let mut from = 0;
    for needle in needles {
        match haystack[from..].find(needle) {
            Some(at) => from += at + needle.len(),
            None => panic!("{needle:?} missing (or out of order) in:\n{haystack}"),
        }
    }
}

/// Asks, for `session_id`, for permission to run `tool` with `input`; returns the approval id.
pub(crate) fn ask_tool(d: &TestDaemon, session_id: &str, tool: &str, input: Value) -> String {
    d.request::<CreateApproval>(CreateApprovalParams {
        session_id: Some(session_id.to_owned()),
        tool_name: Some(tool.to_owned()),
        tool_input: Some(input),
        ..Default::default()
    })
    .approval_id
}

/// Asks, for `session_id`, the human a question; returns the approval id.
pub(crate) fn ask_human(d: &TestDaemon, session_id: &str, message: &str) -> String {
    d.request::<CreateApproval>(CreateApprovalParams {
        session_id: Some(session_id.to_owned()),
        kind: Some("human_contact".into()),
        message: Some(message.to_owned()),
        ..Default::default()
    })
    .approval_id
}

pub(crate) fn approval(d: &TestDaemon, id: &str) -> Approval {
    d.request::<GetApproval>(GetApprovalParams {
        approval_id: id.to_owned(),
    })
    .approval
}

/// Polls an approval until it is no longer pending.
pub(crate) fn wait_decided(d: &TestDaemon, id: &str) -> Approval {
    wait_for(WAIT, || {
        Some(approval(d, id)).filter(|a| a.status != ApprovalStatus::Pending)
    })
    .unwrap_or_else(|| panic!("approval {id} never decided"))
}

/// Waits until something subscribed to `d`'s events.
pub(crate) fn wait_subscribed(d: &TestDaemon) {
    wait_for(WAIT, || {
        (d.request::<Health>(NoParams {}).subscribers > 0).then_some(())
    })
    .expect("hlyr events never subscribed");
}

#[test]
fn launch_follows_a_session_to_completion() {
    let d = fake();
    let wd = workdir(&d);
    let run = hlyr(&d, &["launch", "-w", &wd, "-m", "sonnet", "hello", "hlyr"]);
    run.assert_code(0);
    let id = printed_session(&run);
    assert_in_order(
        &run.stdout,
        &[
            &format!("Session {id}"),
            "Run ",
            "> hello hlyr\n",
            "Hello! You asked: hello hlyr\n",
            "✓ completed · 1 turn · $",
        ],
    );
    assert!(!run.stdout.contains("\u{1b}["), "no colour into a pipe");
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Completed);
    assert_eq!(s.query, "hello hlyr");
    assert_eq!(s.model.as_deref(), Some("sonnet"));
    assert_eq!(s.working_dir, Some(wd));
}

#[test]
fn launch_prints_tool_calls_with_their_input_and_results() {
    let d = fake();
    let wd = workdir(&d);
    let run = hlyr(
        &d,
        &[
            "launch",
            "-w",
            &wd,
            "--no-approvals",
            "scenario:tool make a file",
        ],
    );
    run.assert_code(0);
    let file = Path::new(&wd).join("hello.txt");
    assert_in_order(
        &run.stdout,
        &[
            "> scenario:tool make a file",
            "thinking: ",
            &format!("→ Write {}\n    1 Hello, world!\n", file.display()),
            "  ← error: Claude requested permissions to write",
            "✓ completed · 2 turns",
        ],
    );
    let id = printed_session(&run);
    let s = d.wait_ended(&id);
    assert_eq!(s.permission_prompt_tool, None, "--no-approvals");
}

#[test]
fn long_tool_results_are_shortened() {
    let d = fake();
    let run = hlyr(&d, &["launch", "-w", &workdir(&d), "scenario:big read it"]);
    run.assert_code(0);
    let result = run
        .stdout
        .split("  ← ")
        .nth(1)
        .expect("a tool result")
        .split("\nThe file")
        .next()
        .unwrap();
    assert!(result.contains("(5)."), "{result}");
    assert!(!result.contains("(6)."), "five lines at most: {result}");
    assert!(result.ends_with("more bytes)"), "{result}");
    assert!(
        run.stdout.len() < 2000,
        "{} bytes printed",
        run.stdout.len()
    );
}

#[test]
fn a_failed_session_exits_1_with_its_error() {
    let d = fake();
    let run = hlyr(&d, &["launch", "-w", &workdir(&d), "scenario:error"]);
    run.assert_code(1);
    assert!(
        run.stdout.contains("✗ failed: Not logged in"),
        "{}",
        run.stdout
    );
}

#[test]
fn launch_json_is_one_parsable_line_per_update() {
    let d = fake();
    let run = hlyr(&d, &["--json", "launch", "-w", &workdir(&d), "json please"]);
    run.assert_code(0);
    let lines = run.json_lines_as("update");
    assert_eq!(lines[0]["type"], "started");
    let id = lines[0]["data"]["session_id"].as_str().unwrap();
    assert_eq!(lines[0]["data"]["run_id"].as_str().unwrap().len(), 36);
    let events: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "event")
        .map(|l| &l["data"])
        .collect();
    assert_eq!(events[0]["event_type"], "message");
    assert_eq!(events[0]["role"], "user");
    assert_eq!(events[0]["content"], "json please");
    assert_eq!(events[1]["role"], "assistant");
    let ids: HashSet<i64> = events.iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), events.len(), "no event printed twice");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "finished");
    assert_eq!(last["data"]["id"], id);
    assert_eq!(last["data"]["status"], "completed");
}

#[test]
fn detach_returns_at_once_and_conversation_follow_picks_it_up() {
    let d = slow_daemon(2);
    let run = hlyr(
        &d,
        &["launch", "--detach", "-w", &workdir(&d), "scenario:slow"],
    );
    run.assert_code(0);
    let id = printed_session(&run);
    assert!(
        !run.stdout.contains('>'),
        "no conversation printed: {}",
        run.stdout
    );
    assert!(matches!(
        d.state(&id).status,
        SessionStatus::Starting | SessionStatus::Running
    ));

    let follow = hlyr(&d, &["conversation", &id[..8], "--follow"]);
    follow.assert_code(0);
    // Every chunk exactly once, in order, whether it came from the history or the stream.
    let chunks: Vec<&str> = follow
        .stdout
        .lines()
        .filter(|l| l.starts_with("chunk "))
        .collect();
    let expected: Vec<String> = (1..=20).map(|i| format!("chunk {i}")).collect();
    assert_eq!(chunks, expected, "{}", follow.stdout);
    assert!(follow.stdout.contains("✓ completed"), "{}", follow.stdout);

    // After the end, `conversation` prints the same history and returns.
    let again = hlyr(&d, &["conversation", &id]);
    again.assert_code(0);
    assert_eq!(again.stdout.matches("chunk ").count(), 20);
    assert!(!again.stdout.contains("completed"), "no follow summary");
    let json = hlyr(&d, &["--json", "conversation", &id]);
    let lines = json.assert_code(0).json_lines_as("update");
    assert_eq!(lines.len(), d.conversation(&id).len());
    assert!(lines
        .iter()
        .all(|l| l["type"] == "event" && l["data"]["session_id"] == id.as_str()));
}

#[test]
fn continue_prints_the_conversation_so_far_then_follows_the_new_session() {
    let d = fake();
    let first = hlyr(&d, &["launch", "-w", &workdir(&d), "first question"]);
    let parent = printed_session(first.assert_code(0));
    let run = hlyr(&d, &["continue", &parent[..6], "second", "question"]);
    run.assert_code(0);
    let child = printed_session(&run);
    assert_ne!(child, parent);
    assert_in_order(
        &run.stdout,
        &[
            &format!("Continues {parent}"),
            "> first question",
            "Hello! You asked: first question",
            "> second question",
            "Continuing our conversation (turn 2). You said: second question",
            "✓ completed",
        ],
    );
    let s = d.wait_ended(&child);
    assert_eq!(s.parent_session_id, Some(parent));
}

#[test]
fn sessions_lists_the_recent_ones_as_a_table_and_json() {
    let d = fake();
    let wd = workdir(&d);
    let empty = hlyr(&d, &["sessions"]);
    assert_eq!(empty.assert_code(0).stdout.trim(), "no sessions");
    assert_eq!(
        hlyr(&d, &["sessions", "--json"]).json_as("sessions"),
        json!([])
    );

    let mut ids = Vec::new();
    for i in 0..21 {
        let id = d.launch(LaunchSessionParams {
            model: Some("opus".into()),
            ..launch_params(&format!("query {i}"), &wd)
        });
        d.wait_ended(&id);
        ids.push(id);
    }
    let run = hlyr(&d, &["sessions"]);
    run.assert_code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    for column in ["ID", "STATUS", "AGE", "MODEL", "COST", "TITLE"] {
        assert!(lines[0].contains(column), "{}", lines[0]);
    }
    assert_eq!(lines.len(), 1 + 20 + 1, "{}", run.stdout);
    // Newest first; short ids, status, age, model, cost and summary on each row.
    assert!(lines[1].starts_with(&ids[20][..8]), "{}", lines[1]);
    assert!(lines[1].contains("completed") && lines[1].contains("opus"));
    assert!(lines[1].contains('$') && lines[1].ends_with("query 20"));
    assert!(lines[21].contains("1 older session not shown"));

    let all = hlyr(&d, &["sessions", "--all"]);
    assert_eq!(all.assert_code(0).stdout.lines().count(), 1 + 21);
    let json = hlyr(&d, &["sessions", "--all", "--json"]).json_as("sessions");
    let listed: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    let mut newest_first = ids.clone();
    newest_first.reverse();
    assert_eq!(listed, newest_first);
    assert_eq!(json[0]["status"], "completed");
    // A script gets every chain, where the table stops at 20.
    assert_eq!(
        hlyr(&d, &["sessions", "--json"])
            .json_as("sessions")
            .as_array()
            .unwrap()
            .len(),
        21
    );

    // 21 ids share a first hex digit somewhere: that prefix is ambiguous.
    let mut by_digit = std::collections::HashMap::<char, usize>::new();
    for id in &ids {
        *by_digit.entry(id.chars().next().unwrap()).or_default() += 1;
    }
    let digit = by_digit
        .iter()
        .find(|(_, n)| **n > 1)
        .unwrap()
        .0
        .to_string();
    let ambiguous = hlyr(&d, &["show", &digit]);
    ambiguous.assert_code(2);
    assert!(
        ambiguous.stderr.contains("is ambiguous"),
        "{}",
        ambiguous.stderr
    );
    let candidates = ids.iter().filter(|id| id.starts_with(&digit));
    for id in candidates {
        assert!(ambiguous.stderr.contains(&id[..8]), "{}", ambiguous.stderr);
    }
}

#[test]
fn show_prints_a_session_and_its_json() {
    let d = fake();
    let wd = workdir(&d);
    let id = d.launch(launch_params("show me", &wd));
    d.wait_ended(&id);
    let run = hlyr(&d, &["show", &id[..5]]);
    run.assert_code(0);
    assert_in_order(
        &run.stdout,
        &[
            &format!("Session         {id}"),
            "Status          completed",
            "Query           show me",
            &format!("Working dir     {wd}"),
            "Turns           1",
            "Cost            $",
            "Result          Hello! You asked: show me",
        ],
    );
    // The session object `sessions` lists, built from the daemon's state.
    let json = hlyr(&d, &["show", &id, "--json"]).json_as("session");
    let listed = hlyr(&d, &["sessions", "--json"]).json_as("sessions");
    assert_eq!(json, listed[0]);
    let state = d.call("getSessionState", json!({"session_id": id}));
    let state = &state["result"]["session"];
    for (ours, wire) in [
        ("id", "id"),
        ("created_at", "created_at"),
        ("ended_at", "completed_at"),
        ("result", "result_content"),
        ("working_dir", "working_dir"),
    ] {
        assert_eq!(json[ours], state[wire], "{ours}");
    }
}

#[test]
fn interrupt_ends_a_running_session_and_followers_see_it() {
    let d = slow_daemon(30);
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["conversation", "--follow", &id]);
    let follower = Running::spawn(cmd);
    follower.wait_for("chunk 1\n", 1);

    let run = hlyr(&d, &["interrupt", &id[..8]]);
    run.assert_code(0);
    assert!(
        run.stdout
            .starts_with(&format!("interrupting {}", &id[..8])),
        "{}",
        run.stdout
    );

    let followed = follower.finish();
    followed.assert_code(4);
    assert!(
        followed.stdout.contains("■ interrupted"),
        "{}",
        followed.stdout
    );
    let s = d.wait_ended(&id);
    assert!(s.interrupted);

    // An ended session cannot be interrupted.
    let again = hlyr(&d, &["interrupt", &id, "--json"]);
    again.assert_code(1);
    assert!(again.stderr.contains("is not running"), "{}", again.stderr);
}

#[test]
fn interrupt_json_is_the_daemons_reply() {
    let d = slow_daemon(30);
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    d.wait_session(&id, |s| s.status == SessionStatus::Running);
    let json = hlyr(&d, &["--json", "interrupt", &id]).json_as("interrupt");
    assert_eq!(json["success"], true);
    assert_eq!(json["session_id"], id);
    assert_eq!(json["status"], "completing");
    d.wait_ended(&id);
}

#[test]
fn a_sessions_id_decides_its_one_waiting_approval_of_that_kind() {
    let d = slow_daemon(30);
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    let write = ask_tool(&d, &id, "Write", json!({"file_path": "/tmp/x"}));
    let question = ask_human(&d, &id, "Which colour?");
    // As `hlyr watch` lists it: the session's id, for its one tool call or question.
    hlyr(&d, &["respond", &id[..8], "--comment", "blue"]).assert_code(0);
    assert_eq!(approval(&d, &question).comment.as_deref(), Some("blue"));
    let bash = ask_tool(&d, &id, "Bash", json!({"command": "make"}));
    let two = hlyr(&d, &["approve", &id[..8]]);
    two.assert_code(2);
    assert!(
        two.stderr
            .contains(&format!("session {} has 2 approvals waiting", &id[..8])),
        "{two:#?}"
    );
    hlyr(&d, &["deny", &bash, "--comment", "no"]).assert_code(0);
    hlyr(&d, &["approve", &id[..8]]).assert_code(0);
    assert_eq!(approval(&d, &write).status, ApprovalStatus::Approved);
    let none = hlyr(&d, &["approve", &id[..8]]);
    assert!(
        none.stderr
            .contains(&format!("approval not found: {}", &id[..8])),
        "{none:#?}"
    );
}

#[test]
fn approvals_are_listed_and_decided_by_prefix() {
    let d = slow_daemon(30);
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    let none = hlyr(&d, &["approvals"]);
    assert_eq!(none.assert_code(0).stdout.trim(), "no pending approvals");

    let content = "line\n".repeat(40);
    let write = ask_tool(
        &d,
        &id,
        "Write",
        json!({"file_path": "/tmp/x", "content": content}),
    );
    let bash = ask_tool(&d, &id, "Bash", json!({"command": "rm -rf build"}));
    let other = ask_tool(&d, &id, "mcp__db__query", json!({"sql": "select 1"}));
    let question = ask_human(&d, &id, "Which colour?");
    let table = hlyr(&d, &["approvals", "--session", &id[..8]]);
    table.assert_code(0);
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{}", table.stdout);
    assert!(lines[0].contains("ID") && lines[0].contains("REQUEST"));
    // A file or a command says what the call is about; another tool's input is shown as is.
    assert!(table.stdout.contains("Write /tmp/x\n"), "{}", table.stdout);
    assert!(
        table.stdout.contains("Bash rm -rf build\n"),
        "{}",
        table.stdout
    );
    assert!(table
        .stdout
        .contains(r#"mcp__db__query {"sql":"select 1"}"#));
    assert!(table.stdout.contains("question") && table.stdout.contains("Which colour?"));
    assert!(
        table.stdout.contains(&write[..14]),
        "ids shown as local-xxxxxxxx"
    );
    let json = hlyr(&d, &["approvals", "--json"]).json_as("approvals");
    let listed: HashSet<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        HashSet::from([&*write, &*bash, &*other, &*question])
    );

    // A prefix without the `local-` word is enough.
    let approve = hlyr(&d, &["approve", &write[6..14], "--comment", "fine"]);
    approve.assert_code(0);
    assert_eq!(approve.stdout.trim(), format!("✓ approved {write}: fine"));
    let a = approval(&d, &write);
    assert_eq!(
        (a.status, a.comment.as_deref()),
        (ApprovalStatus::Approved, Some("fine"))
    );

    let deny = hlyr(&d, &["--json", "deny", &bash, "--comment", "too risky"]);
    assert_eq!(
        deny.assert_code(0).json_as("decision"),
        json!({"call_id": bash, "decision": "deny", "comment": "too risky"})
    );
    assert_eq!(approval(&d, &bash).status, ApprovalStatus::Denied);

    // A question is answered with `respond`, not approved.
    let wrong = hlyr(&d, &["approve", &question]);
    wrong.assert_code(2);
    assert!(wrong.stderr.contains("is a question"), "{}", wrong.stderr);
    let respond = hlyr(&d, &["respond", &question, "--comment", "blue"]);
    respond.assert_code(0);
    assert_eq!(approval(&d, &question).comment.as_deref(), Some("blue"));
    hlyr(&d, &["approve", &other]).assert_code(0);
    assert_eq!(
        hlyr(&d, &["approvals", "--json"]).json_as("approvals"),
        json!([])
    );

    // Deciding again is refused: the approval was decided already.
    let twice = hlyr(&d, &["approve", &write]);
    twice.assert_code(1);
    assert_eq!(
        twice.stderr,
        format!("error: approval {write} was already decided: approved\n")
    );

    hlyr(&d, &["interrupt", &id]).assert_code(0);
}

#[test]
fn events_prints_one_json_line_per_event() {
    let d = fake();
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["events", "--type", "session_status_changed", "-n", "2"]);
    let events = Running::spawn(cmd);
    // Wait for the subscription before launching.
    wait_subscribed(&d);
    let id = d.launch(launch_params("events", workdir(&d)));
    let run = events.finish();
    run.assert_code(0);
    let lines = run.json_lines_as("event");
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    for line in &lines {
        assert_eq!(line["type"], "session_status_changed");
        assert_eq!(line["data"]["session_id"], id);
        assert!(line["timestamp"].is_string());
    }
    assert_eq!(lines[0]["data"]["new_status"], "running");
    assert_eq!(lines[1]["data"]["new_status"], "completed");

    let bad = hlyr(&d, &["events", "--type", "nonsense"]);
    bad.assert_code(2);
    assert!(
        bad.stderr.contains("new_approval"),
        "lists the accepted types: {}",
        bad.stderr
    );
}

/// The message, notification and usage-window events print in the shape `event.json` gives.
#[test]
fn events_of_messages_notifications_and_windows_match_their_schema() {
    let d = slow_daemon(3);
    let wd = workdir(&d);
    let types = "message_queued,message_delivered,notification,rate_limit_updated";
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["events", "--type", types]);
    let events = Running::spawn(cmd);
    wait_subscribed(&d);
    let slow = d.launch(launch_params("scenario:slow wait", &wd));
    hlyr(&d, &["send", &slow, "and then this"]).assert_code(0);
    d.wait_ended(&slow);
    let near = d.launch(launch_params("scenario:near_limit hello", &wd));
    d.wait_ended(&near);
    for kind in types.split(',') {
        events.wait_for(&format!("\"type\":\"{kind}\""), 1);
    }
    events.interrupt();
    let lines = events.finish().json_lines_as("event");
    let queued = lines
        .iter()
        .find(|l| l["type"] == "message_queued")
        .unwrap();
    assert_eq!(queued["data"]["message"]["text"], "and then this");
    let window = lines
        .iter()
        .find(|l| l["type"] == "rate_limit_updated")
        .unwrap();
    assert_eq!(window["data"]["session_id"], near);
}

#[test]
fn events_filters_by_session_prefix() {
    let d = fake();
    let wd = workdir(&d);
    let first = d.launch(launch_params("one", &wd));
    d.wait_ended(&first);
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["events", "--session", &first[..8], "-n", "1"]);
    let events = Running::spawn(cmd);
    wait_subscribed(&d);
    // Another session's events are filtered out; an approval of the first one comes through.
    let other = d.launch(launch_params("two", &wd));
    d.wait_ended(&other);
    let approval = ask_human(&d, &first, "still there?");
    let run = events.finish();
    let lines = run.assert_code(0).json_lines_as("event");
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["type"], "new_approval");
    assert_eq!(lines[0]["data"]["approval"]["id"], approval);
}

/// A socket path in a fresh directory where no daemon runs, and that directory.
pub(crate) fn no_daemon() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("hlyr-")
        .tempdir_in("/tmp")
        .unwrap();
    let socket = dir.path().join("d.sock");
    (dir, socket)
}

/// Runs `hlyr` against `socket` with a fake `claude` and a private database for any daemon it
/// starts.
pub(crate) fn hlyr_at(socket: &Path, home: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = hlyr_command(socket, home);
    cmd.args(args)
        .env("HUMANLAYER_CLAUDE_PATH", fake_claude())
        .env("HUMANLAYER_DATABASE_PATH", home.join("daemon.db"))
        .env("FAKE_CLAUDE_HOME", home.join("fake-claude"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_command(cmd)
}

/// Stops a daemon that a test started through hlyr, whatever happens in the test.
pub(crate) struct StopOnDrop<'a>(pub(crate) &'a Path, pub(crate) &'a Path);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        if self.0.exists() {
            hlyr_at(self.0, self.1, &["daemon", "stop"], &[]);
        }
    }
}

#[test]
fn daemon_start_status_and_stop() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    let status = hlyr_at(&socket, home, &["daemon", "status"], &[]);
    status.assert_code(3);
    assert!(
        status.stderr.contains("the daemon is not running"),
        "{}",
        status.stderr
    );
    assert!(status
        .stderr
        .contains("hint: start it with `hlyr daemon start`"));

    let _stop = StopOnDrop(&socket, home);
    let start = hlyr_at(&socket, home, &["daemon", "start", "--json"], &[]);
    let started = start.assert_code(0).json_as("daemon-start");
    assert_eq!(started["started"], true);
    assert_eq!(started["socket"], socket.display().to_string());
    let log = PathBuf::from(started["log"].as_str().unwrap());
    assert_eq!(log, dir.path().join("d.log"));
    assert!(log.exists());
    assert!(started["pid"].as_u64().unwrap() > 0);

    let again = hlyr_at(&socket, home, &["daemon", "start"], &[]);
    assert!(
        again.assert_code(0).stdout.contains("is already running"),
        "{}",
        again.stdout
    );

    let status = hlyr_at(&socket, home, &["daemon", "status"], &[]);
    status.assert_code(0);
    assert_in_order(
        &status.stdout,
        &[
            "hld",
            "pid",
            "uptime",
            "socket",
            &socket.display().to_string(),
            "database",
            "log",
            &dir.path().join("d.log").display().to_string(),
            "claude",
            "available",
            "approvals",
            "asked through",
            "hld",
            "sessions",
            "0 running",
            "subscribers",
        ],
    );
    let json =
        hlyr_at(&socket, home, &["daemon", "status", "--json"], &[]).json_as("daemon-status");
    assert_eq!(json["status"], "ok");
    assert_eq!(json["claude"]["available"], true);
    assert_eq!(json["approvals"]["available"], true);
    assert_eq!(json["active_sessions"], 0);
    assert_eq!(json["version"], started["version"]);

    let stop = hlyr_at(&socket, home, &["daemon", "stop"], &[]);
    assert!(stop.assert_code(0).stdout.starts_with("stopped hld"));
    assert!(!socket.exists(), "the daemon removed its socket");
    hlyr_at(&socket, home, &["daemon", "status"], &[]).assert_code(3);
    let again = hlyr_at(&socket, home, &["daemon", "stop"], &[]);
    assert!(
        again.assert_code(0).stdout.contains("nothing to stop"),
        "{}",
        again.stdout
    );
}

#[test]
fn launch_leaves_a_process_that_listens_without_answering_and_says_so() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    let closing = Closing::listen(&socket);
    let run = hlyr_at(&socket, home, &["launch", "not started"], &[]);
    // Told by the call that failed, as a daemon unreachable; no daemon tried beside it.
    run.assert_code(3);
    assert!(
        run.stderr.contains("the daemon closed the connection"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("started hld"), "{}", run.stderr);
    assert!(!dir.path().join("d.log").exists());
    assert!(closing.closed() > 0);
}

#[test]
fn launch_starts_the_daemon_when_none_answers() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    let _stop = StopOnDrop(&socket, home);
    let run = hlyr_at(&socket, home, &["launch", "auto", "start"], &[]);
    run.assert_code(0);
    assert!(run.stderr.contains("started hld (pid "), "{}", run.stderr);
    assert!(
        run.stdout.contains("Hello! You asked: auto start"),
        "{}",
        run.stdout
    );
    // The working directory defaults to hlyr's own.
    let id = printed_session(&run);
    let show = hlyr_at(&socket, home, &["--json", "show", &id], &[]).json_as("session");
    assert_eq!(
        show["working_dir"],
        std::fs::canonicalize(home).unwrap().display().to_string()
    );
    // The started daemon uses the socket it was given, and logs next to it.
    assert!(socket.exists());
    assert!(dir.path().join("d.log").exists());
    // The next launch finds it running.
    let second = hlyr_at(&socket, home, &["launch", "again"], &[]);
    assert!(!second.assert_code(0).stderr.contains("started hld"));
}

#[test]
fn the_hld_binary_can_be_chosen() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    let _stop = StopOnDrop(&socket, home);

    let missing = hlyr_at(
        &socket,
        home,
        &["launch", "--hld-path", "/nonexistent/hld", "hi"],
        &[],
    );
    missing.assert_code(3);
    assert!(
        missing.stderr.contains("cannot start /nonexistent/hld"),
        "{}",
        missing.stderr
    );
    assert!(missing.stderr.contains("HLD_PATH"), "{}", missing.stderr);

    // HLD_PATH names a wrapper that leaves a mark and runs the real daemon.
    let wrapper = dir.path().join("my-hld");
    let mark = dir.path().join("wrapper-ran");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ntouch {}\nexec {} \"$@\"\n",
            mark.display(),
            workspace_bin("hld").display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&wrapper)
        .status()
        .unwrap();
    let wrapper = wrapper.display().to_string();
    let start = hlyr_at(
        &socket,
        home,
        &["daemon", "start"],
        &[("HLD_PATH", &wrapper)],
    );
    start.assert_code(0);
    assert!(mark.exists(), "HLD_PATH was used");

    // A daemon that exits at start-up is reported with its log.
    let (dir2, socket2) = no_daemon();
    let failing = dir2.path().join("bad-hld");
    std::fs::write(&failing, "#!/bin/sh\necho broken >&2\nexit 7\n").unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&failing)
        .status()
        .unwrap();
    let failed = hlyr_at(
        &socket2,
        dir2.path(),
        &[
            "daemon",
            "start",
            "--hld-path",
            &failing.display().to_string(),
        ],
        &[],
    );
    failed.assert_code(3);
    assert!(
        failed.stderr.contains("hld exited at start-up"),
        "{}",
        failed.stderr
    );
    let log = dir2.path().join("d.log");
    assert!(failed.stderr.contains(&log.display().to_string()));
    assert!(std::fs::read_to_string(log).unwrap().contains("broken"));
}

#[test]
fn a_daemon_that_refuses_to_start_is_reported_with_its_reason() {
    // The database of a running daemon, given to the one `hlyr daemon start` starts.
    let first = TestDaemon::start_with(DaemonOptions::fake_claude());
    let database = first.dir.join("hld.db");
    let (dir, socket) = no_daemon();
    let env = [("HUMANLAYER_DATABASE_PATH", database.to_str().unwrap())];
    let failed = hlyr_at(&socket, dir.path(), &["daemon", "start"], &env);
    failed.assert_code(3);
    let said = format!(
        "error: hld exited at start-up: the database {} is in use by another hld",
        database.display()
    );
    assert!(failed.stderr.starts_with(&said), "{}", failed.stderr);
    assert!(!socket.exists(), "the refused daemon left no socket");
}

#[test]
fn commands_that_need_the_daemon_exit_3_with_a_hint() {
    let (dir, socket) = no_daemon();
    let home = dir.path();
    for args in [
        vec!["sessions"],
        vec!["show", "abc"],
        vec!["conversation", "abc", "--follow"],
        vec!["interrupt", "abc"],
        vec!["approvals"],
        vec!["approve", "abc"],
        vec!["deny", "abc", "--comment", "no"],
        vec!["respond", "abc", "--comment", "yes"],
        vec!["events"],
    ] {
        let run = hlyr_at(&socket, home, &args, &[]);
        run.assert_code(3);
        assert_eq!(run.stdout, "", "{args:?}");
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(
            lines,
            [
                format!(
                    "error: the daemon is not running (nothing answers at {})",
                    socket.display()
                ),
                "hint: start it with `hlyr daemon start`".to_owned()
            ],
            "{args:?}"
        );
    }
    assert!(!socket.exists(), "nothing started a daemon");
}

#[test]
fn usage_errors_exit_2() {
    let d = fake();
    let bad_json = d.dir.join("bad.json");
    std::fs::write(&bad_json, "{not json").unwrap();
    let bad_json = bad_json.display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["launch", "--max-turns", "zero", "hi"],
            "invalid value 'zero'",
        ),
        (
            vec!["launch", "--max-turns", "0", "hi"],
            "invalid value '0'",
        ),
        (
            vec!["launch", "-w", "/nonexistent/dir", "hi"],
            "working directory /nonexistent/dir does not exist",
        ),
        (
            vec!["launch", "--mcp-config", "/nonexistent.json", "hi"],
            "cannot read --mcp-config /nonexistent.json",
        ),
        (
            vec!["launch", "--mcp-config", &bad_json, "hi"],
            "is not valid",
        ),
        (vec!["launch", " "], "the query is empty"),
        (vec!["launch"], "required"),
        (vec!["deny"], "<CALL_ID>"),
        (
            vec!["respond", "abc", "--comment", " "],
            "must not be empty",
        ),
        (vec!["show"], "required"),
        (vec!["frobnicate"], "unrecognized subcommand"),
        (vec!["show", ""], "an empty session id"),
    ];
    for (args, message) in cases {
        let run = hlyr(&d, &args);
        run.assert_code(2);
        assert!(run.stderr.contains(message), "{args:?}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    }
    assert!(
        d.request::<ListSessions>(NoParams {}).sessions.is_empty(),
        "no usage error reached the daemon"
    );
}

#[test]
fn unknown_ids_exit_2() {
    let d = fake();
    for args in [
        vec!["show", "ffff"],
        vec!["conversation", "ffff"],
        vec!["continue", "ffff", "more"],
        vec!["interrupt", "ffff"],
    ] {
        let run = hlyr(&d, &args);
        run.assert_code(2);
        assert_eq!(
            run.stderr,
            "error: session not found: ffff\nhint: `hlyr sessions --all` lists every session\n",
            "{args:?}"
        );
    }
    for args in [
        vec!["approve", "local-nope"],
        vec!["deny", "local-nope", "--comment", "no"],
    ] {
        let run = hlyr(&d, &args);
        run.assert_code(2);
        assert_eq!(
            run.stderr,
            "error: approval not found: local-nope\nhint: `hlyr approvals` lists the pending ones\n",
            "{args:?}"
        );
    }
}

#[test]
fn a_malformed_config_file_is_a_usage_error() {
    let d = fake();
    let config = d.dir.join("config/humanlayer");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("humanlayer.json"), "{oops").unwrap();
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.env_remove("HUMANLAYER_DAEMON_SOCKET").arg("sessions");
    let run = run_command(cmd);
    run.assert_code(2);
    assert!(
        run.stderr.contains("malformed config file"),
        "{}",
        run.stderr
    );

    // `daemon_socket` in humanlayer.json is honoured when neither flag nor env says otherwise.
    std::fs::write(
        config.join("humanlayer.json"),
        json!({"daemon_socket": d.socket}).to_string(),
    )
    .unwrap();
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.env_remove("HUMANLAYER_DAEMON_SOCKET").arg("sessions");
    run_command(cmd).assert_code(0);

    // The flag wins over the environment.
    let mut cmd = hlyr_command(Path::new("/nonexistent.sock"), &d.dir);
    cmd.args(["sessions", "--daemon-socket"]).arg(&d.socket);
    run_command(cmd).assert_code(0);
}

/// `hlyr ARGS` on a pseudo-terminal (util-linux `script`) against `d`, typing into it
/// through a pipe.
fn on_a_terminal(d: &TestDaemon, args: &str, env: &[(&str, &str)]) -> Running {
    terminal_at(&d.socket, &d.dir, args, env)
}

/// `hlyr ARGS` on a pseudo-terminal against `socket`, with `home` as its home and working
/// directory.
pub(crate) fn terminal_at(socket: &Path, home: &Path, args: &str, env: &[(&str, &str)]) -> Running {
    let command = format!("{} {args}", workspace_bin("hlyr").display());
    let mut script = Command::new("script");
    script
        .args(["-qfec", &command, "/dev/null"])
        .env("HUMANLAYER_DAEMON_SOCKET", socket)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("HLD_PATH")
        .current_dir(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        script.env(k, v);
    }
    Running::spawn(script)
}

#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    let d = fake();
    let id = d.launch(launch_params("colours", workdir(&d)));
    d.wait_ended(&id);
    let coloured = on_a_terminal(&d, "sessions", &[]).finish();
    coloured.assert_code(0);
    assert!(coloured.stdout.contains("\u{1b}["), "{:?}", coloured.stdout);
    let plain = on_a_terminal(&d, "sessions", &[("NO_COLOR", "1")]).finish();
    plain.assert_code(0);
    assert!(plain.stdout.contains("completed"));
    assert!(!plain.stdout.contains("\u{1b}["), "{:?}", plain.stdout);
    let piped = hlyr(&d, &["sessions"]);
    assert!(!piped.stdout.contains("\u{1b}["));
}

#[test]
fn a_json_rpc_error_is_the_daemons_message_without_the_apis_parameter_names() {
    // `false` as claude: sessions fail before Claude names its session, so none can resume.
    let d = TestDaemon::start_with(
        DaemonOptions::default()
            .arg("--claude-path")
            .arg("/bin/false"),
    );
    let run = hlyr(&d, &["launch", "-w", &workdir(&d), "never starts"]);
    run.assert_code(1);
    assert!(run.stdout.contains("✗ failed: "), "{}", run.stdout);
    let id = printed_session(&run);
    let run = hlyr(&d, &["continue", &id, "more"]);
    run.assert_code(1);
    assert_eq!(
        run.stderr,
        "error: parent session missing claude_session_id (cannot resume)\n"
    );
}

#[test]
fn hlyr_tui_runs_the_dashboard_with_its_socket_and_hld() {
    // No daemon at the socket and an `hld` that cannot run: the dashboard that hlyr replaced
    // itself with tries to start that one, for that socket, and says so.
    let home = tempfile::tempdir().unwrap();
    let socket = home.path().join("none.sock");
    let mut cmd = hlyr_command(&socket, home.path());
    cmd.args(["tui", "--hld-path", "/nonexistent/hld"]);
    let run = run_command(cmd);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains(&format!("no daemon at {}", socket.display()))
            && run.stderr.contains("cannot start /nonexistent/hld"),
        "{}",
        run.stderr
    );
}

/// On `term`, answers the two questions `scenario:ask` asks with `FAKE_CLAUDE_QUESTIONS=2`,
/// each asked in turn with its choices shown: the first by its label, the second by a
/// choice's number (after one that names no choice, which is asked again, not sent).
pub(crate) fn answer_blue_then_large(term: &mut hld_e2e::pty::Terminal) {
    let screen = term.wait_screen("your answer to “What colour should the button be?”");
    for choice in ["1. Blue — like the sky", "2. Large — fills the screen"] {
        assert!(screen.contains(choice), "{choice:?} in\n{screen}");
    }
    term.send("Blue\r");
    term.wait_screen("your answer to “What size should it be?”");
    term.send("9\r");
    term.wait_screen("choose 1–");
    // Asked again on an empty line: what is typed now is the whole answer.
    term.send("2\r");
}

/// Session `id` ended, its agent having read the answers `Blue` and `Large`.
pub(crate) fn assert_told_blue_large(d: &TestDaemon, id: &str) {
    d.wait_ended(id);
    let told = hlyr(d, &["conversation", id]);
    assert!(
        told.assert_code(0)
            .stdout
            .contains("The human answered: Blue, Large"),
        "{}",
        told.stdout
    );
}
