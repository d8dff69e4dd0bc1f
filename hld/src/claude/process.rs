//! Starting `claude` in its own process group, and signalling that group.

use std::path::Path;
use std::process::Stdio;

use nix::sys::prctl::set_pdeathsig;
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::{getppid, Pid};
use tokio::process::Child;

use super::{command, LaunchSpec};

/// Environment added to every `claude` child: no auto-update or telemetry when supervised.
const CHILD_ENV: [(&str, &str); 3] = [
    ("DISABLE_AUTOUPDATER", "1"),
    ("DISABLE_TELEMETRY", "1"),
    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
];

/// Spawns `claude` with the spec's command line in `working_dir` (stdin, stdout and stderr
/// piped: stdin carries its messages and control requests) as a new process group leader, without the daemon's secrets. If the daemon
/// dies, even by SIGKILL, the child gets SIGTERM.
pub fn spawn(claude: &Path, spec: &LaunchSpec, working_dir: &Path) -> std::io::Result<Child> {
    let mut cmd = command::command(claude);
    cmd.args(spec.args())
        .current_dir(working_dir)
        .envs(CHILD_ENV)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let daemon = std::process::id();
    // SAFETY: the closure runs in the forked child before exec and only makes the
    // async-signal-safe calls prctl(2) and getppid(2); it allocates nothing.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            set_pdeathsig(Signal::SIGTERM)?;
            // The daemon may have died before prctl took effect.
            if u32::try_from(getppid().as_raw()).ok() != Some(daemon) {
                return Err(std::io::Error::other("the daemon exited"));
            }
            Ok(())
        });
    }
    cmd.spawn()
}

/// Sends SIGINT to `claude` alone (the fallback of the `interrupt` control request), which
/// stops its turn and its own tools and MCP servers
/// (signalling the group would race them against Claude's rejection of a pending tool call).
pub fn interrupt(pid: u32) {
    let Ok(raw) = i32::try_from(pid) else { return };
    match kill(Pid::from_raw(raw), Signal::SIGINT) {
        Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
        Err(e) => tracing::warn!(pid, error = %e, "cannot interrupt claude"),
    }
}

/// Sends SIGKILL to the whole process group led by `pgid`. A group already gone is fine.
pub fn kill_group(pgid: u32) {
    let Ok(raw) = i32::try_from(pgid) else { return };
    match killpg(Pid::from_raw(raw), Signal::SIGKILL) {
        Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
        Err(e) => tracing::warn!(pgid, error = %e, "cannot kill process group"),
    }
}
