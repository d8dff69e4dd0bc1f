//! A full disk: the session writing when it filled fails, and a daemon restarted on it still
//! starts and serves what the database holds (on a 2 MiB tmpfs, which takes root to mount).

use hld_client::protocol::SessionStatus;
use hld_e2e::{launch_params, wait_for, DaemonOptions, TestDaemon, WAIT};
use nix::mount::{mount, umount2, MntFlags, MsFlags};

/// A tmpfs of `size`, unmounted on drop; `None` where mounting is not allowed.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::Builder::new()
            .prefix("hld-full-")
            .tempdir_in("/tmp")
            .unwrap();
        let options = format!("size={size},mode=0700");
        let mounted = mount(
            Some("tmpfs"),
            dir.path(),
            Some("tmpfs"),
            MsFlags::empty(),
            Some(options.as_str()),
        );
        match mounted {
            Ok(()) => Some(Tmpfs(dir)),
            Err(e) => {
                assert!(!nix::unistd::geteuid().is_root(), "root cannot mount: {e}");
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = umount2(self.0.path(), MntFlags::MNT_DETACH);
    }
}

#[test]
fn a_daemon_on_a_full_disk_starts_and_serves_what_it_holds() {
    // Mounting takes root, as CI runs; anyone else has nothing to fill.
    let Some(disk) = Tmpfs::mount("2m") else {
        return;
    };
    // The database (and its WAL, beside what the link leads to) on the small disk; the log not.
    let dir = hld_e2e::short_tempdir();
    std::os::unix::fs::symlink(disk.0.path().join("hld.db"), dir.path().join("hld.db")).unwrap();
    let options = || DaemonOptions {
        dir: Some(dir.path().to_path_buf()),
        ..DaemonOptions::fake_claude().env("FAKE_CLAUDE_COUNT", "100000")
    };
    let mut d = TestDaemon::start_with(options());
    let id = d.launch(launch_params("scenario:many fill the disk", "/tmp"));
    // The disk fills: the conversation stops where it could not be stored.
    let full = || {
        d.log_text()
            .contains("database or disk is full")
            .then_some(())
    };
    assert!(wait_for(WAIT, full).is_some(), "{}", d.log_text());
    let stored = d.conversation(&id).len();
    assert!(stored > 0);
    // Stopped on the full disk: what it closes with cannot be written either.
    d.stop();
    drop(d);
    // It starts (marking the session failed if the disk lets it) and serves the conversation,
    // the session as last stored otherwise: running, or interrupting if the stop's interrupt
    // found room (its end did not).
    let d = TestDaemon::start_with(options());
    assert_eq!(d.conversation(&id).len(), stored);
    let s = d.state(&id);
    assert!(
        matches!(
            s.status,
            SessionStatus::Running | SessionStatus::Completing | SessionStatus::Failed
        ),
        "{s:?}"
    );
}
