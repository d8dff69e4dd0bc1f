//! The `hld-tui` group's idle CPU: the binary in a pseudo-terminal, its CPU time over a
//! span once it shows a few sessions.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context};
use portable_pty::{CommandBuilder, PtySize};

use crate::groups::finished_session;
use crate::procs::{Bins, DaemonOptions, Server};
use crate::tui::{HEIGHT, IDLE_SESSIONS, STEP_TIMEOUT, WIDTH};

/// The CPU time `pid` has used (utime + stime of `/proc/<pid>/stat`, all its threads), in
/// clock ticks.
fn cpu_ticks(pid: u32) -> anyhow::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // After the command name (in parentheses): state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .context("no command name")?
        .split_whitespace()
        .collect();
    let utime: u64 = fields.get(11).context("no utime")?.parse()?;
    let stime: u64 = fields.get(12).context("no stime")?.parse()?;
    Ok(utime + stime)
}

/// The CPU an idle dashboard used.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Idle {
    /// utime + stime over the wall time, in percent of one CPU.
    pub(crate) share: f64,
    /// The threads' run time over the wall time, in percent of one CPU, and in ms.
    pub(crate) ran_share: f64,
    pub(crate) ran_ms: f64,
}

/// The time `pid`'s threads have run, in ns (`/proc/<pid>/task/*/schedstat`, first field):
/// finer than the clock ticks of `/proc/<pid>/stat`, but blind to threads that have exited.
fn run_time_ns(pid: u32) -> anyhow::Result<u64> {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let text = std::fs::read_to_string(task?.path().join("schedstat"))?;
        let ran: u64 = text
            .split_whitespace()
            .next()
            .context("empty schedstat")?
            .parse()?;
        total += ran;
    }
    Ok(total)
}

/// Runs `hld-tui` in a pseudo-terminal against a daemon with a few completed sessions and
/// measures the CPU it uses over `span` once it shows them.
pub(crate) fn idle_cpu(bins: &Bins, span: Duration) -> anyhow::Result<Idle> {
    let server = Server::daemon(bins, &DaemonOptions::default())?;
    for _ in 0..IDLE_SESSIONS {
        finished_session(&server, "hello")?;
    }
    let pty = portable_pty::native_pty_system()
        .openpty(PtySize {
            rows: HEIGHT,
            cols: WIDTH,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(|e| anyhow!("open a pty: {e}"))?;
    let mut cmd = CommandBuilder::new(&bins.tui);
    cmd.arg("--no-bell");
    cmd.arg("--daemon-socket");
    cmd.arg(&server.sock);
    cmd.env("TERM", "xterm-256color");
    cmd.cwd(server.dir.path());
    let mut child = pty
        .slave
        .spawn_command(cmd)
        .map_err(|e| anyhow!("start hld-tui: {e}"))?;
    // Only the child holds the terminal's side now, so reads end when it exits.
    drop(pty.slave);
    let screen = Arc::new(Mutex::new(vt100::Parser::new(HEIGHT, WIDTH, 0)));
    let mut reader = pty
        .master
        .try_clone_reader()
        .map_err(|e| anyhow!("read the pty: {e}"))?;
    // Read all the time, so that hld-tui never waits on a full pty.
    let reading = {
        let screen = screen.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0; 1 << 16];
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                screen.lock().unwrap().process(&buf[..n]);
            }
        })
    };
    let measured = (|| -> anyhow::Result<Idle> {
        let pid = child.process_id().context("hld-tui has no pid")?;
        let listed = format!("Sessions ({IDLE_SESSIONS})");
        let deadline = Instant::now() + STEP_TIMEOUT;
        loop {
            let text = screen.lock().unwrap().screen().contents();
            if text.contains(&listed) && text.contains("● connected") {
                break;
            }
            ensure!(
                Instant::now() < deadline,
                "hld-tui did not show the sessions:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let (started, ticks, ran) = (Instant::now(), cpu_ticks(pid)?, run_time_ns(pid)?);
        std::thread::sleep(span);
        let (ticks, ran) = (
            cpu_ticks(pid)? - ticks,
            run_time_ns(pid)?.saturating_sub(ran),
        );
        let wall = started.elapsed().as_secs_f64();
        let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)?
            .context("no clock tick rate")?;
        Ok(Idle {
            share: ticks as f64 / hz as f64 / wall * 100.0,
            ran_share: ran as f64 / 1e9 / wall * 100.0,
            ran_ms: ran as f64 / 1e6,
        })
    })();
    let quit = (|| -> anyhow::Result<()> {
        let mut writer = pty
            .master
            .take_writer()
            .map_err(|e| anyhow!("write to the pty: {e}"))?;
        writer.write_all(b"q")?;
        writer.flush()?;
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Some(status) = child.try_wait()? {
                ensure!(status.success(), "hld-tui exited with {status:?}");
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        bail!("hld-tui did not quit on q")
    })();
    if quit.is_err() {
        let _ = child.kill();
        let _ = child.wait();
    }
    drop(pty.master);
    let _ = reading.join();
    server.stop()?;
    let measured = measured?;
    quit?;
    Ok(measured)
}
