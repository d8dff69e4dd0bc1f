//! The processes a run needs: the real `hld` daemon, a raw reference server, a load generator
//! (this binary re-executed), each optionally pinned to CPU 0 with `taskset -c 0`; and the
//! memory figures of a process from `/proc`.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// Where the binaries are.
#[derive(Debug, Clone)]
pub struct Bins {
    /// `hld`.
    pub hld: PathBuf,
    /// `fake-claude`.
    pub fake_claude: PathBuf,
    /// This benchmark (re-executed as servers and clients).
    pub bench: PathBuf,
    /// `bench-hello`.
    pub hello: PathBuf,
    /// `hlyr`.
    pub hlyr: PathBuf,
    /// `hld-tui`.
    pub tui: PathBuf,
    /// `hld-soak`.
    pub soak: PathBuf,
}

/// A command, prefixed with `taskset -c 0` when pinned.
pub fn command(program: &Path, pinned: bool) -> Command {
    if pinned {
        let mut c = Command::new("taskset");
        c.arg("-c").arg("0").arg(program);
        c
    } else {
        Command::new(program)
    }
}

/// Runs this binary as a load generator and parses the JSON line it prints.
pub fn client<T: serde::de::DeserializeOwned>(
    bins: &Bins,
    pinned: bool,
    args: &[String],
) -> anyhow::Result<T> {
    let out = command(&bins.bench, pinned)
        .arg("client")
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .context("run the load generator")?;
    if !out.status.success() {
        bail!("load generator {args:?} failed: {}", out.status);
    }
    serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "load generator output {:?}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// A server process, killed (or stopped) on drop.
#[derive(Debug)]
pub struct Server {
    child: Option<Child>,
    /// The socket it serves.
    pub sock: PathBuf,
    /// Its directory (socket, database, log), removed on drop.
    pub dir: tempfile::TempDir,
}

/// Options of a daemon.
#[derive(Debug, Default, Clone)]
pub struct DaemonOptions {
    /// Pin it to CPU 0.
    pub pinned: bool,
    /// Use this database file instead of a fresh one.
    pub database: Option<PathBuf>,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// Extra flags.
    pub args: Vec<String>,
}

/// A fresh directory under /tmp, removed when dropped.
pub fn private_dir() -> anyhow::Result<tempfile::TempDir> {
    // Short paths: a Unix socket path must fit in 108 bytes.
    Ok(tempfile::Builder::new()
        .prefix("hld-bench-")
        .tempdir_in("/tmp")?)
}

impl Server {
    /// Starts `hld` with its own socket and log, and waits until it answers `health`.
    pub fn daemon(bins: &Bins, opts: &DaemonOptions) -> anyhow::Result<Server> {
        let dir = private_dir()?;
        let sock = dir.path().join("hld.sock");
        let database = opts
            .database
            .clone()
            .unwrap_or_else(|| dir.path().join("hld.db"));
        let mut cmd = command(&bins.hld, opts.pinned);
        cmd.arg("--socket")
            .arg(&sock)
            .arg("--database")
            .arg(&database)
            .arg("--log-file")
            .arg(dir.path().join("hld.log"))
            .arg("--claude-path")
            .arg(&bins.fake_claude)
            .args(&opts.args)
            .env_remove("HUMANLAYER_LOG_LEVEL")
            .env("HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("FAKE_CLAUDE_HOME", dir.path().join("fake-claude"))
            .env("FAKE_CLAUDE_LOG_DIR", dir.path().join("fake-log"))
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        for (k, v) in &opts.env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().context("start hld")?;
        let server = Server {
            child: Some(child),
            sock,
            dir,
        };
        server.wait_ready(true)?;
        Ok(server)
    }

    /// Starts a raw reference server (this binary, `serve --kind <kind> <extra>…`), with
    /// `env` and, for the agents it may start, the daemon's `fake-claude` directories.
    pub fn raw(
        bins: &Bins,
        kind: &str,
        pinned: bool,
        extra: &[String],
        env: &[(String, String)],
    ) -> anyhow::Result<Server> {
        let dir = private_dir()?;
        let sock = dir.path().join("raw.sock");
        let child = command(&bins.bench, pinned)
            .arg("serve")
            .arg("--kind")
            .arg(kind)
            .arg("--sock")
            .arg(&sock)
            .args(extra)
            .env("HOME", dir.path())
            .env("FAKE_CLAUDE_HOME", dir.path().join("fake-claude"))
            .env("FAKE_CLAUDE_LOG_DIR", dir.path().join("fake-log"))
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .context("start a raw server")?;
        let server = Server {
            child: Some(child),
            sock,
            dir,
        };
        server.wait_ready(false)?;
        Ok(server)
    }

    /// Waits until the socket accepts (and, for the daemon, answers `health`), 10 s at most.
    fn wait_ready(&self, health: bool) -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(mut conn) = UnixStream::connect(&self.sock) {
                if !health {
                    return Ok(());
                }
                if let Ok(reply) = call(&mut conn, r#"{"jsonrpc":"2.0","method":"health","id":0}"#)
                {
                    if reply.get("result").is_some() {
                        return Ok(());
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        bail!("server on {} did not become ready", self.sock.display())
    }

    /// The process id (of `taskset`'s exec'd program: `taskset` execs in place).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Sends a request on a new connection and returns the reply.
    pub fn request(
        &self,
        method: &str,
        params: serde_json::Value,
    ) -> anyhow::Result<serde_json::Value> {
        let mut conn = UnixStream::connect(&self.sock)?;
        let line = serde_json::json!({"jsonrpc":"2.0","method":method,"params":params,"id":1});
        let reply = call(&mut conn, &line.to_string())?;
        match reply.get("result") {
            Some(r) => Ok(r.clone()),
            None => bail!("{method} failed: {reply}"),
        }
    }

    /// Stops the server: SIGTERM, then SIGKILL after 10 s; fails if a daemon did not exit 0.
    pub fn stop(mut self) -> anyhow::Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(status) = child.try_wait()? {
                return if status.success() || status.signal_is_term() {
                    Ok(())
                } else {
                    bail!("server exited with {status}")
                };
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = child.kill();
        let _ = child.wait();
        bail!("server did not stop within 10 s")
    }
}

/// Whether an exit status is "killed by SIGTERM" (the raw servers do not handle it).
trait TermStatus {
    fn signal_is_term(&self) -> bool;
}

impl TermStatus for std::process::ExitStatus {
    fn signal_is_term(&self) -> bool {
        use std::os::unix::process::ExitStatusExt;
        self.signal() == Some(nix::sys::signal::Signal::SIGTERM as i32)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Sends one line and reads one reply line.
pub fn call(conn: &mut UnixStream, line: &str) -> anyhow::Result<serde_json::Value> {
    conn.set_read_timeout(Some(Duration::from_secs(30)))?;
    conn.write_all(line.as_bytes())?;
    conn.write_all(b"\n")?;
    let mut reply = String::new();
    BufReader::new(&*conn).read_line(&mut reply)?;
    Ok(serde_json::from_str(&reply)?)
}

/// `VmRSS` and `VmHWM` of a process, in KiB.
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    /// Resident now.
    pub rss_kib: f64,
    /// Peak resident.
    pub hwm_kib: f64,
}

/// Reads the memory figures of `pid`.
pub fn memory(pid: u32) -> anyhow::Result<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let field = |name: &str| -> anyhow::Result<f64> {
        let line = status
            .lines()
            .find(|l| l.starts_with(name))
            .with_context(|| format!("{name} missing"))?;
        let kib = line
            .split_whitespace()
            .nth(1)
            .context("no value")?
            .parse()?;
        Ok(kib)
    };
    Ok(Memory {
        rss_kib: field("VmRSS:")?,
        hwm_kib: field("VmHWM:")?,
    })
}

/// Resets the peak RSS of `pid` to its current RSS (`/proc/<pid>/clear_refs`, value 5).
pub fn reset_peak(pid: u32) -> anyhow::Result<()> {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").context("reset the peak RSS")
}

/// Writes a large line in chunks and reads the reply (for the oversize test).
pub fn send_huge_line(conn: &mut UnixStream, bytes: usize) -> anyhow::Result<String> {
    conn.set_read_timeout(Some(Duration::from_secs(30)))?;
    let chunk = vec![b'x'; 1 << 20];
    let mut left = bytes;
    conn.write_all(br#"{"jsonrpc":"2.0","method":"health","params":{"pad":""#)?;
    while left > 0 {
        let n = left.min(chunk.len());
        conn.write_all(&chunk[..n])?;
        left -= n;
    }
    conn.write_all(b"\"},\"id\":1}\n")?;
    let mut reply = String::new();
    BufReader::new(&*conn).read_line(&mut reply)?;
    Ok(reply)
}
