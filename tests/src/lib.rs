//! Support for the end-to-end tests: a `TestDaemon` that runs the real `hld` binary on a
//! private socket and database, typed calls and subscriptions through the protocol's
//! [`Method`]s, raw line connections for the wire-level tests, and [`wait_for`], the one way
//! the tests wait for something to happen.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use hld_client::protocol::{
    Approval, ConversationEvent, ConversationEventType, ErrorObject, Event, FetchApprovals,
    FetchApprovalsParams, GetConversation, GetConversationParams, GetSessionState, Health,
    LaunchSession, LaunchSessionParams, ListSessions, Method, NoParams, Response, SessionIdParams,
    SessionState, SessionStatus, Subscribe, SubscribeParams, TimedEvent, HEARTBEAT_MESSAGE,
};
use serde_json::Value;

pub use line_conn::LineConn;

pub mod anchor;
pub mod anthropic;
pub mod browser;
pub mod closing;
pub mod cloud;
pub mod corpus;
pub mod desktop;
pub mod frames;
pub mod http;
pub mod images;
mod keyed;
mod line_conn;
pub mod pty;
pub mod rest;
pub mod rest_conversation;
pub mod rest_events;
pub mod rest_mentions;
pub mod webhook;
pub mod ws;

/// How long the tests wait for anything that should happen (a session's end, an approval, a
/// line of output) before they fail.
pub const WAIT: Duration = Duration::from_secs(20);

/// A new directory under `/tmp`, removed when dropped: its path is short, as a Unix socket's
/// path in it must fit in 108 bytes.
pub fn short_tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("hld-")
        .tempdir_in("/tmp")
        .expect("a temporary directory in /tmp")
}

/// Calls `check` until it returns `Some`, for `within` at most, and returns that value; `None`
/// if it never came. Between calls it pauses 10 ms: the condition is polled, never assumed
/// after a fixed sleep.
pub fn wait_for<T>(within: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(value) = check() {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The path of a binary built in this workspace: beside this executable, or beside its
/// `deps/` for a test, so under whatever target directory (`CARGO_TARGET_DIR`) built it.
pub fn workspace_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let mut dir = exe.parent().expect("target directory");
    if dir.ends_with("deps") {
        dir = dir.parent().expect("target directory");
    }
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is not built; run `cargo build --workspace --all-targets` first",
        path.display()
    );
    path
}

/// The `fake-claude` stand-in built by this crate.
pub fn fake_claude() -> PathBuf {
    workspace_bin("fake-claude")
}

/// `launchSession` params for `query` in `working_dir`, everything else left to the daemon.
pub fn launch_params(query: &str, working_dir: impl AsRef<Path>) -> LaunchSessionParams {
    LaunchSessionParams {
        query: query.to_owned(),
        working_dir: Some(working_dir.as_ref().display().to_string()),
        ..Default::default()
    }
}

/// Options for starting a daemon.
#[derive(Debug, Default)]
pub struct DaemonOptions {
    /// Extra command-line arguments.
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// Use this socket path instead of `<dir>/hld.sock`.
    pub socket: Option<PathBuf>,
    /// Use this directory instead of a fresh one (for restarts on the same database).
    pub dir: Option<PathBuf>,
    /// Run this `hld` instead of the workspace's.
    pub binary: Option<PathBuf>,
    /// Start `hld` through this command (its arguments follow), e.g. `prlimit --nofile=128:`:
    /// what only the daemon's process should get, without touching the test process.
    pub wrapper: Vec<String>,
    /// Run `hld` in this working directory instead of the test's.
    pub current_dir: Option<PathBuf>,
}

impl DaemonOptions {
    /// Options that run sessions with `fake-claude` (logging its invocations to
    /// `<dir>/fake-log/`).
    pub fn fake_claude() -> DaemonOptions {
        DaemonOptions {
            args: vec![
                "--claude-path".into(),
                fake_claude().display().to_string(),
                "--interrupt-grace-ms".into(),
                "3000".into(),
            ],
            ..Default::default()
        }
    }

    /// Adds arguments.
    pub fn arg(mut self, arg: &str) -> Self {
        self.args.push(arg.to_owned());
        self
    }

    /// Adds an environment variable.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }
}

/// A running `hld` process with its own socket, database and log file. Stopped on drop.
#[derive(Debug)]
pub struct TestDaemon {
    /// The private directory (socket, database, log).
    pub dir: PathBuf,
    /// The socket path.
    pub socket: PathBuf,
    /// The log file.
    pub log: PathBuf,
    child: Option<Child>,
    _tempdir: Option<tempfile::TempDir>,
}

impl TestDaemon {
    /// Starts a daemon with default options and waits until it answers.
    pub fn start() -> TestDaemon {
        Self::start_with(DaemonOptions::default())
    }

    /// Starts a daemon and waits until it answers `health`.
    pub fn start_with(options: DaemonOptions) -> TestDaemon {
        let daemon = Self::spawn(options);
        daemon.wait_ready();
        daemon
    }

    /// Starts a daemon without waiting for it.
    pub fn spawn(options: DaemonOptions) -> TestDaemon {
        let (tempdir, dir) = match options.dir {
            Some(dir) => (None, dir),
            None => {
                let t = short_tempdir();
                let p = t.path().to_path_buf();
                (Some(t), p)
            }
        };
        let socket = options.socket.unwrap_or_else(|| dir.join("hld.sock"));
        let database = dir.join("hld.db");
        let log = dir.join("hld.log");
        let binary = options.binary.unwrap_or_else(|| workspace_bin("hld"));
        let mut cmd = match options.wrapper.split_first() {
            Some((wrapper, wrapper_args)) => {
                let mut cmd = Command::new(wrapper);
                cmd.args(wrapper_args).arg(binary);
                cmd
            }
            None => Command::new(binary),
        };
        cmd.arg("--socket")
            .arg(&socket)
            .arg("--database")
            .arg(&database)
            .arg("--log-level")
            .arg("debug")
            .arg("--log-file")
            .arg(&log)
            .args(&options.args)
            .env_remove("HUMANLAYER_DAEMON_SOCKET")
            .env_remove("HUMANLAYER_DATABASE_PATH")
            .env_remove("HUMANLAYER_API_KEY")
            // A real `claude` under test must not find the developer's Anthropic account.
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env_remove("ANTHROPIC_BASE_URL")
            .env_remove("CLAUDE_CODE_OAUTH_TOKEN")
            // Notifications go only where a test points them, never to the developer's desktop.
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("HUMANLAYER_NOTIFY_WEBHOOK")
            .env("HOME", &dir)
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("FAKE_CLAUDE_HOME", dir.join("fake-claude"))
            .env("FAKE_CLAUDE_LOG_DIR", dir.join("fake-log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in &options.env {
            cmd.env(k, v);
        }
        if let Some(current_dir) = &options.current_dir {
            cmd.current_dir(current_dir);
        }
        let child = cmd.spawn().expect("spawn hld");
        TestDaemon {
            dir,
            socket,
            log,
            child: Some(child),
            _tempdir: tempdir,
        }
    }

    /// Waits until the socket answers `health` (10 s at most).
    pub fn wait_ready(&self) {
        let ready = wait_for(Duration::from_secs(10), || {
            let mut conn = LineConn::connect(&self.socket).ok()?;
            conn.try_request::<Health>(NoParams {}).ok()
        });
        assert!(
            ready.is_some(),
            "daemon did not become ready; log:\n{}",
            self.log_text()
        );
    }

    /// A new line-oriented connection.
    pub fn conn(&self) -> LineConn {
        LineConn::connect(&self.socket).expect("connect to daemon")
    }

    /// One raw request on a fresh connection; returns the reply line. For the tests about the
    /// wire; a well-formed call goes through [`TestDaemon::request`].
    pub fn call(&self, method: &str, params: Value) -> Value {
        let line = serde_json::json!({"jsonrpc":"2.0","method":method,"params":params,"id":1});
        self.conn().call(&line.to_string())
    }

    /// Method `M` on a fresh connection: its typed result. Panics (with the daemon's log) on an
    /// error reply.
    pub fn request<M: Method>(&self, params: M::Params) -> M::Result {
        self.try_request::<M>(params)
            .unwrap_or_else(|e| panic!("{} failed: {e:?}\nlog:\n{}", M::NAME, self.log_text()))
    }

    /// Method `M` on a fresh connection: its typed result, or the error object the daemon
    /// answered with.
    pub fn try_request<M: Method>(&self, params: M::Params) -> Result<M::Result, ErrorObject> {
        self.conn().try_request::<M>(params)
    }

    /// A typed async client.
    pub async fn client(&self) -> hld_client::Client {
        hld_client::Client::connect(&self.socket)
            .await
            .expect("client connects")
    }

    /// The daemon's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// Sends a signal to the daemon.
    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        let pid = nix::unistd::Pid::from_raw(self.pid() as i32);
        nix::sys::signal::kill(pid, signal).expect("signal daemon");
    }

    /// Waits for the daemon to exit, at most `timeout`; returns its status and the time taken.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<(ExitStatus, Duration)> {
        let started = Instant::now();
        let child = self.child.as_mut()?;
        let status = wait_for(timeout, || child.try_wait().expect("try_wait"))?;
        self.child = None;
        Some((status, started.elapsed()))
    }

    /// Starts a daemon with each `(args, expected)` and checks that it refuses to start: exit
    /// code 2, `expected` in its stderr.
    #[track_caller]
    pub fn assert_refuses(cases: &[(Vec<&str>, &str)]) {
        for (args, expected) in cases {
            let options = args.iter().fold(DaemonOptions::default(), |o, a| o.arg(a));
            let (status, stderr) = TestDaemon::spawn(options).wait_failure();
            assert_eq!(status.code(), Some(2), "{args:?}: {stderr}");
            assert!(stderr.contains(expected), "{args:?}: {stderr}");
        }
    }

    /// Waits for exit and returns stderr (for a daemon expected to fail at start-up); one
    /// still running after [`WAIT`] is killed, and the test fails.
    pub fn wait_failure(mut self) -> (ExitStatus, String) {
        let mut child = self.child.take().expect("running");
        let status = wait_for(WAIT, || child.try_wait().expect("wait"));
        let Some(status) = status else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the daemon was expected to fail at start-up, and still runs");
        };
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .expect("stderr piped")
            .read_to_string(&mut stderr)
            .expect("read stderr");
        (status, stderr)
    }

    /// Kills the daemon with SIGKILL, without any clean-up.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// `getSessionState`: the session now.
    pub fn state(&self, session_id: &str) -> SessionState {
        self.request::<GetSessionState>(SessionIdParams {
            session_id: session_id.to_owned(),
        })
        .session
    }

    /// Polls `getSessionState` until `done` holds ([`WAIT`] at most); returns the session.
    pub fn wait_session(
        &self,
        session_id: &str,
        done: impl Fn(&SessionState) -> bool,
    ) -> SessionState {
        let mut last = None;
        wait_for(WAIT, || {
            let session = self.state(session_id);
            if done(&session) {
                return Some(session);
            }
            last = Some(session);
            None
        })
        .unwrap_or_else(|| {
            panic!(
                "session never reached the expected state: {last:#?}\nlog:\n{}",
                self.log_text()
            )
        })
    }

    /// Waits until a session has ended (`completed` or `failed`).
    pub fn wait_ended(&self, session_id: &str) -> SessionState {
        self.wait_session(session_id, |s| !s.status.is_active())
    }

    /// Launches a session and returns its id.
    pub fn launch(&self, params: LaunchSessionParams) -> String {
        self.request::<LaunchSession>(params).session_id
    }

    /// The conversation of a session (its whole parent chain).
    pub fn conversation(&self, session_id: &str) -> Vec<ConversationEvent> {
        self.request::<GetConversation>(GetConversationParams {
            session_id: Some(session_id.to_owned()),
            ..Default::default()
        })
        .events
    }

    /// The daemon's only session: its id (panics unless there is exactly one).
    #[track_caller]
    pub fn only_session(&self) -> String {
        let sessions = self.request::<ListSessions>(NoParams {}).sessions;
        assert_eq!(sessions.len(), 1, "one session: {sessions:#?}");
        sessions[0].id.clone()
    }

    /// The session's first tool call, once stored. Claude's line with it and its approval
    /// request reach the daemon on two channels (stdout, the approvals MCP server), in either
    /// order: a pending approval does not mean its call is stored yet.
    pub fn wait_tool_call(&self, session_id: &str) -> ConversationEvent {
        let stored = || {
            self.conversation(session_id)
                .into_iter()
                .find(|e| e.event_type == ConversationEventType::ToolCall)
        };
        wait_for(WAIT, stored).unwrap_or_else(|| {
            let events = self.conversation(session_id);
            panic!(
                "no tool_call event in {events:#?}\nlog:\n{}",
                self.log_text()
            )
        })
    }

    /// The pending approvals, of one session or of all.
    pub fn approvals(&self, session_id: Option<&str>) -> Vec<Approval> {
        self.request::<FetchApprovals>(FetchApprovalsParams {
            session_id: session_id.map(str::to_owned),
        })
        .approvals
    }

    /// Polls `fetchApprovals` until `done` holds for the pending approvals ([`WAIT`] at most);
    /// returns them.
    pub fn wait_approvals(
        &self,
        session_id: Option<&str>,
        done: impl Fn(&[Approval]) -> bool,
    ) -> Vec<Approval> {
        let mut last = Vec::new();
        wait_for(WAIT, || {
            last = self.approvals(session_id);
            done(&last).then(|| last.clone())
        })
        .unwrap_or_else(|| {
            panic!(
                "the pending approvals of {session_id:?} never were as expected: \
                 {last:#?}\nlog:\n{}",
                self.log_text()
            )
        })
    }

    /// Subscribes on a new connection; returns the subscription once confirmed.
    pub fn subscribe(&self, params: SubscribeParams) -> Subscription {
        let mut conn = self.conn();
        let confirmation = conn
            .try_request::<Subscribe>(params)
            .unwrap_or_else(|e| panic!("Subscribe failed: {e:?}"));
        assert!(!confirmation.subscription_id.is_empty(), "{confirmation:?}");
        Subscription { conn }
    }

    /// What `fake-claude` recorded about the run with this Claude session id.
    pub fn fake_invocation(&self, claude_session_id: &str) -> Value {
        let path = self
            .dir
            .join("fake-log")
            .join(format!("{claude_session_id}.json"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("no fake-claude log {}: {e}", path.display()));
        serde_json::from_str(&text).expect("fake-claude log is JSON")
    }

    /// The daemon's log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Stops the daemon with SIGTERM and waits for it (10 s, then SIGKILL).
    pub fn stop(&mut self) {
        if self.child.is_some() {
            self.signal(nix::sys::signal::Signal::SIGTERM);
            if self.wait_exit(Duration::from_secs(10)).is_none() {
                self.kill9();
            }
        }
    }
}

impl Drop for TestDaemon {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A confirmed `Subscribe` connection whose lines are read as typed events.
#[derive(Debug)]
pub struct Subscription {
    conn: LineConn,
}

impl Subscription {
    /// The next event (heartbeats skipped); panics if none comes within [`WAIT`].
    pub fn next_event(&mut self) -> TimedEvent {
        self.next_within(WAIT)
            .unwrap_or_else(|| panic!("no event within {WAIT:?}"))
    }

    /// The next event (heartbeats skipped), if one comes within `within` (EOF counts as none).
    pub fn next_within(&mut self, within: Duration) -> Option<TimedEvent> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.conn.try_recv(left.max(Duration::from_millis(1)))?;
            let response: Response = serde_json::from_value(line.clone())
                .unwrap_or_else(|e| panic!("not a JSON-RPC response ({e}): {line}"));
            let result = response
                .result
                .unwrap_or_else(|| panic!("a subscription line without a result: {line}"));
            if let Some(event) = result.get("event") {
                return Some(
                    serde_json::from_value(event.clone())
                        .unwrap_or_else(|e| panic!("an event that does not decode ({e}): {line}")),
                );
            }
            assert_eq!(result["type"], "heartbeat", "{line}");
            assert_eq!(result["message"], HEARTBEAT_MESSAGE, "{line}");
        }
    }

    /// The events up to and including the first for which `last` holds.
    pub fn until(&mut self, mut last: impl FnMut(&Event) -> bool) -> Vec<TimedEvent> {
        let mut events = Vec::new();
        loop {
            let event = self.next_event();
            let done = last(&event.event);
            events.push(event);
            if done {
                return events;
            }
        }
    }

    /// The connection, for reading or writing raw lines.
    pub fn conn(&mut self) -> &mut LineConn {
        &mut self.conn
    }
}

/// Whether `event` says that session `session_id` ended (`completed` or `failed`).
pub fn ended(event: &Event, session_id: &str) -> bool {
    matches!(
        event,
        Event::SessionStatusChanged { session_id: id, new_status, .. }
            if id == session_id && !new_status.is_active()
    )
}

/// The `(old, new)` statuses of a `session_status_changed` event of session `session_id`.
pub fn status_change(event: &Event, session_id: &str) -> Option<(SessionStatus, SessionStatus)> {
    match event {
        Event::SessionStatusChanged {
            session_id: id,
            old_status,
            new_status,
            ..
        } if id == session_id => Some((old_status.clone(), new_status.clone())),
        _ => None,
    }
}

/// Raises this process's soft limit on open files to the hard limit: a thousand subscribers
/// need more than the usual 1024 descriptors, here and in the processes it starts.
pub fn raise_fd_limit() -> nix::Result<()> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard)?;
    }
    Ok(())
}

/// A number of `/proc/PID/status` (`Threads`, `VmRSS` and `VmHWM` in KiB, …); `None` if the
/// process or the field is gone.
pub fn proc_status(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status
        .lines()
        .find(|l| l.split(':').next() == Some(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
