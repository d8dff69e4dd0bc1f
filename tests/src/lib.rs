//! Support for the end-to-end tests: a `TestDaemon` that runs the real `hld` binary on a
//! private socket and database, and small helpers to talk to it line by line.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub mod anchor;
pub mod anthropic;
pub mod cloud;
pub mod http;

/// The path of a binary built in this workspace (next to the test executable's `deps/`).
pub fn workspace_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target directory");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is not built; run `cargo test --workspace`",
        path.display()
    );
    path
}

/// The `fake-claude` stand-in built by this crate.
pub fn fake_claude() -> PathBuf {
    workspace_bin("fake-claude")
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
    /// The database path.
    pub database: PathBuf,
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
                // Short paths: a Unix socket path must fit in 108 bytes.
                let t = tempfile::Builder::new()
                    .prefix("hld-")
                    .tempdir_in("/tmp")
                    .expect("tempdir");
                let p = t.path().to_path_buf();
                (Some(t), p)
            }
        };
        let socket = options.socket.unwrap_or_else(|| dir.join("hld.sock"));
        let database = dir.join("hld.db");
        let log = dir.join("hld.log");
        let binary = options.binary.unwrap_or_else(|| workspace_bin("hld"));
        let mut cmd = Command::new(binary);
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
        let child = cmd.spawn().expect("spawn hld");
        TestDaemon {
            dir,
            socket,
            database,
            log,
            child: Some(child),
            _tempdir: tempdir,
        }
    }

    /// Waits until the socket answers `health` (10 s at most).
    pub fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(mut conn) = LineConn::connect(&self.socket) {
                if conn
                    .call(r#"{"jsonrpc":"2.0","method":"health","id":0}"#)
                    .get("result")
                    .is_some()
                {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("daemon did not become ready; log:\n{}", self.log_text());
    }

    /// A new line-oriented connection.
    pub fn conn(&self) -> LineConn {
        LineConn::connect(&self.socket).expect("connect to daemon")
    }

    /// One request on a fresh connection; returns the reply.
    pub fn call(&self, method: &str, params: Value) -> Value {
        let line = serde_json::json!({"jsonrpc":"2.0","method":method,"params":params,"id":1});
        self.conn().call(&line.to_string())
    }

    /// The result of one request, panicking on an error reply.
    pub fn result(&self, method: &str, params: Value) -> Value {
        let reply = self.call(method, params);
        match reply.get("result") {
            Some(r) => r.clone(),
            None => panic!("{method} failed: {reply}"),
        }
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
        while started.elapsed() < timeout {
            if let Some(status) = child.try_wait().expect("try_wait") {
                self.child = None;
                return Some((status, started.elapsed()));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        None
    }

    /// Waits for exit and returns stderr (for a daemon expected to fail at start-up).
    pub fn wait_failure(mut self) -> (ExitStatus, String) {
        let mut child = self.child.take().expect("running");
        let status = child.wait().expect("wait");
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

    /// Polls `getSessionState` until `done` holds (10 s at most); returns the session.
    pub fn wait_session(&self, session_id: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let state = self.result(
                "getSessionState",
                serde_json::json!({"session_id": session_id}),
            );
            let session = state["session"].clone();
            if done(&session) {
                return session;
            }
            assert!(
                Instant::now() < deadline,
                "session never reached the expected state: {session}\nlog:\n{}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until a session has ended (`completed` or `failed`).
    pub fn wait_ended(&self, session_id: &str) -> Value {
        self.wait_session(session_id, |s| {
            matches!(s["status"].as_str(), Some("completed" | "failed"))
        })
    }

    /// Launches a session and returns its id.
    pub fn launch(&self, params: Value) -> String {
        let r = self.result("launchSession", params);
        r["session_id"].as_str().expect("session_id").to_owned()
    }

    /// The conversation of a session.
    pub fn conversation(&self, session_id: &str) -> Vec<Value> {
        let r = self.result(
            "getConversation",
            serde_json::json!({"session_id": session_id}),
        );
        r["events"].as_array().expect("events array").clone()
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

/// A raw line-oriented connection to the daemon, for wire-level tests.
#[derive(Debug)]
pub struct LineConn {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl LineConn {
    /// Connects, with a 10 s read timeout.
    pub fn connect(path: &Path) -> std::io::Result<LineConn> {
        let stream = UnixStream::connect(path)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        Ok(LineConn {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
        })
    }

    /// Writes raw bytes.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write to daemon");
    }

    /// Writes one line (a `\n` is added).
    pub fn send(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.send_raw(&bytes);
    }

    /// Reads one line and parses it.
    pub fn recv(&mut self) -> Value {
        let line = self.recv_line().expect("a reply line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad reply {line:?}: {e}"))
    }

    /// Reads one raw line, or `None` on EOF.
    pub fn recv_line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(line),
            Err(e) => panic!("read from daemon: {e}"),
        }
    }

    /// Reads one line within `timeout`, or `None` if none arrived (or EOF).
    pub fn try_recv(&mut self, timeout: Duration) -> Option<Value> {
        self.set_timeout(timeout);
        let mut line = String::new();
        let got = match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(serde_json::from_str(&line).expect("a JSON line")),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                None
            }
            Err(e) => panic!("read from daemon: {e}"),
        };
        self.set_timeout(Duration::from_secs(10));
        got
    }

    /// Sets the read timeout.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.writer
            .set_read_timeout(Some(timeout))
            .expect("set timeout");
    }

    /// Sends a line and reads the reply.
    pub fn call(&mut self, line: &str) -> Value {
        self.send(line);
        self.recv()
    }

    /// Sends a request and reads the reply.
    pub fn request(&mut self, method: &str, params: Value, id: Value) -> Value {
        let line = serde_json::json!({"jsonrpc":"2.0","method":method,"params":params,"id":id});
        self.call(&line.to_string())
    }
}
