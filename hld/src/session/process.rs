//! Starting `claude` in its own process group, and signalling that group.

use std::path::Path;
use std::process::Stdio;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

use crate::claude::LaunchSpec;

/// Environment added to every `claude` child: no auto-update or telemetry from a supervised
/// process.
const CHILD_ENV: [(&str, &str); 3] = [
    ("DISABLE_AUTOUPDATER", "1"),
    ("DISABLE_TELEMETRY", "1"),
    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
];

/// Spawns `claude` with the spec's command line in `working_dir`, stdin closed, stdout and
/// stderr piped, as the leader of a new process group.
pub fn spawn(claude: &Path, spec: &LaunchSpec, working_dir: &Path) -> std::io::Result<Child> {
    let mut cmd = Command::new(claude);
    cmd.args(spec.args())
        .current_dir(working_dir)
        .envs(CHILD_ENV)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    cmd.spawn()
}

/// Sends `signal` to the process group led by `pgid`. A group that is already gone is fine.
pub fn signal_group(pgid: u32, signal: Signal) {
    let Ok(raw) = i32::try_from(pgid) else { return };
    match killpg(Pid::from_raw(raw), signal) {
        Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
        Err(e) => tracing::warn!(pgid, %signal, error = %e, "cannot signal process group"),
    }
}
