//! `hld-tui` on remote daemons (issue 42): `--context NAME`, `HLD_CONTEXT` and `hlyr tui`
//! reach a daemon by its context — here one serving `wss://` on loopback with a self-signed
//! certificate — while another daemon runs on this machine's socket; that daemon shown gone
//! and back across a restart; a contexts file others can read refused. `--all-contexts`
//! watches both daemons in one list: approvals reach the right agent, and one daemon killed
//! and restarted leaves the other usable throughout.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use hld_client::address::Fingerprint;
use hld_client::protocol::{ListSessions, NoParams, SessionStatus};
use hld_e2e::pty;
use hld_e2e::{launch_params, wait_for, workspace_bin, DaemonOptions, TestDaemon, WAIT};

use crate::contexts::{restart_wss, token_file, wss_daemon};
use crate::tui::{workdir, Tui, APPROVAL_DETAIL};

/// A home for the dashboard whose contexts file names `far` as `box`, pinned by `pin`.
pub(super) fn home_with_box(far: &TestDaemon, url: &str, pin: Fingerprint) -> tempfile::TempDir {
    let home = tempfile::Builder::new()
        .prefix("hld-tui-home-")
        .tempdir_in("/tmp")
        .expect("tempdir");
    let token = token_file(far, home.path());
    let dir = home.path().join("config/humanlayer");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("contexts.json");
    let contexts = serde_json::json!({
        "contexts": {
            "box": {"url": url, "token_file": token, "fingerprint": pin.to_string()}
        }
    });
    std::fs::write(&file, contexts.to_string()).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    home
}

/// A session on `local`, then one on `far`, each waiting on one approval to write a file in a
/// directory of its own: (their ids, their directories). The laptop's is asked first, so it
/// is listed first (oldest first).
pub(super) fn one_approval_each(
    local: &TestDaemon,
    far: &TestDaemon,
) -> (String, String, tempfile::TempDir, tempfile::TempDir) {
    let (here, there) = (workdir(), workdir());
    let near = local.launch(launch_params(
        "scenario:tool write the hello file near",
        here.path(),
    ));
    local.wait_approvals(Some(&near), |a| a.len() == 1);
    let far_id = far.launch(launch_params(
        "scenario:tool write the hello file there",
        there.path(),
    ));
    far.wait_approvals(Some(&far_id), |a| a.len() == 1);
    (near, far_id, here, there)
}

/// `program ARGS…` on a pseudo-terminal in `home`, the local daemon's socket in its
/// environment, and `env`.
pub(super) fn dashboard(
    program: &str,
    home: tempfile::TempDir,
    local: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Tui {
    let mut cmd = pty::command(&workspace_bin(program), home.path());
    cmd.env("HUMANLAYER_DAEMON_SOCKET", local);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(args);
    Tui::run(cmd, home)
}

#[test]
fn hld_tui_context_watches_and_approves_an_agent_on_a_wss_daemon() {
    let certs = tempfile::tempdir().unwrap();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (far, url, pin) = wss_daemon(certs.path(), 0);
    let here = workdir();
    let there = workdir();
    local.launch(launch_params("scenario:plain on the laptop", here.path()));
    let id = far.launch(launch_params(
        "scenario:tool write the hello file",
        there.path(),
    ));
    far.wait_approvals(Some(&id), |a| a.len() == 1);

    let home = home_with_box(&far, &url, pin);
    let args = ["--context", "box", "--no-bell"];
    let mut tui = dashboard("hld-tui", home, &local.socket, &args, &[]);
    tui.wait_screen("● connected");
    let screen = tui.wait_screen("write the hello file");
    assert!(
        screen.contains("⌂ box"),
        "the title names the context:\n{screen}"
    );
    assert!(
        !screen.contains("on the laptop"),
        "only the context's daemon is shown:\n{screen}"
    );
    tui.send("2");
    let screen = tui.wait_screen(APPROVAL_DETAIL);
    assert!(screen.contains("hello.txt"), "{screen}");
    tui.send("a");
    tui.wait_screen("No pending approvals");
    far.wait_session(&id, |s| s.status == SessionStatus::Completed);
    assert_eq!(
        std::fs::read_to_string(there.path().join("hello.txt")).unwrap(),
        "Hello, world!\n"
    );
    assert!(!here.path().join("hello.txt").exists());
    tui.send("1");
    tui.wait_screen("✓ completed");
    tui.send("q");
    assert!(tui.wait_exit(std::time::Duration::from_secs(5)).success());
}

#[test]
fn hlyr_tui_passes_hld_context_and_all_contexts_on_and_a_missing_context_is_refused() {
    let certs = tempfile::tempdir().unwrap();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (far, url, pin) = wss_daemon(certs.path(), 0);
    let there = workdir();
    far.launch(launch_params("scenario:plain far away", there.path()));

    let home = home_with_box(&far, &url, pin);
    let env = [("HLD_CONTEXT", "box")];
    let tui = dashboard("hlyr", home, &local.socket, &["tui", "--no-bell"], &env);
    tui.wait_screen("● connected");
    let screen = tui.wait_screen("far away");
    assert!(screen.contains("⌂ box"), "{screen}");

    // `hlyr tui --all-contexts`: both daemons, each marked.
    let home = home_with_box(&far, &url, pin);
    let args = ["tui", "--all-contexts", "--no-bell"];
    let tui = dashboard("hlyr", home, &local.socket, &args, &[]);
    tui.wait_until("both daemons, each row marked", WAIT, |screen| {
        screen.contains("⌂ local ●") && screen.contains("⌂box") && screen.contains("far away")
    });

    let home = home_with_box(&far, &url, pin);
    let args = ["--context", "nowhere"];
    let mut tui = dashboard("hld-tui", home, &local.socket, &args, &[]);
    let status = tui.wait_exit(std::time::Duration::from_secs(10));
    assert_eq!(status.exit_code(), 2);
    let screen = tui.screen_text();
    assert!(screen.contains("no context named \"nowhere\""), "{screen}");
}

#[test]
fn hld_tui_on_a_wss_context_shows_its_daemon_gone_then_back_after_a_restart() {
    let certs = tempfile::tempdir().unwrap();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (mut far, url, pin) = wss_daemon(certs.path(), 0);
    let port = url.rsplit(':').next().unwrap().to_owned();
    let home = home_with_box(&far, &url, pin);
    let args = ["--context", "box", "--no-bell"];
    let mut tui = dashboard("hld-tui", home, &local.socket, &args, &[]);
    tui.wait_screen("● connected");

    far.stop();
    let screen = tui.wait_screen("○ reconnecting");
    assert!(screen.contains("⌂ box"), "{screen}");
    tui.wait_screen("daemon unreachable");
    // A list loaded while the daemon is away fails quietly: the footer keeps saying why.
    tui.send("\t\t");
    let screen = tui.wait_screen("Drafts (0)");
    assert!(screen.contains("daemon unreachable"), "{screen}");
    assert!(!screen.contains("not connected"), "{screen}");
    tui.send("\t");

    // The same daemon (its directory, token and certificate) on the same port.
    let again = DaemonOptions {
        dir: Some(far.dir.clone()),
        ..DaemonOptions::fake_claude()
    }
    .arg("--ws")
    .arg(&format!("127.0.0.1:{port}"))
    .arg("--ws-tls-cert")
    .arg(certs.path().join("cert.pem").to_str().unwrap())
    .arg("--ws-tls-key")
    .arg(certs.path().join("key.pem").to_str().unwrap());
    let again = TestDaemon::start_with(again);
    tui.wait_screen("● connected");
    let there = workdir();
    again.launch(launch_params("scenario:plain back again", there.path()));
    tui.wait_screen("back again");
}

#[test]
fn hld_tui_refuses_a_contexts_file_others_can_read() {
    let certs = tempfile::tempdir().unwrap();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (far, url, pin) = wss_daemon(certs.path(), 0);
    let home = home_with_box(&far, &url, pin);
    let file = home.path().join("config/humanlayer/contexts.json");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut tui = dashboard("hld-tui", home, &local.socket, &["--no-bell"], &[]);
    let status = tui.wait_exit(std::time::Duration::from_secs(10));
    assert_eq!(status.exit_code(), 2);
    let screen = tui.screen_text();
    assert!(screen.contains("refusing"), "{screen}");
    assert!(screen.contains("chmod 600"), "{screen}");
}

#[test]
fn the_fleet_view_lists_two_daemons_and_approves_on_each_while_one_is_killed_and_back() {
    let certs = tempfile::tempdir().unwrap();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (mut far, url, pin) = wss_daemon(certs.path(), 0);
    let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
    let (near, far_id, here, there) = one_approval_each(&local, &far);

    let home = home_with_box(&far, &url, pin);
    let args = ["--all-contexts", "--no-bell"];
    let mut tui = dashboard("hld-tui", home, &local.socket, &args, &[]);
    let both = |screen: &str| screen.contains("⌂ local ●") && screen.contains("⌂ box ●");
    tui.wait_until("both daemons connected", WAIT, both);
    let rows = |screen: &str| {
        screen
            .lines()
            .any(|l| l.contains("⌂local") && l.contains("file near"))
            && screen
                .lines()
                .any(|l| l.contains("⌂box") && l.contains("file there"))
    };
    tui.wait_until("each session marked with its daemon", WAIT, rows);

    // The second approval is the box's: approving it reaches the agent over wss alone.
    tui.send("2");
    tui.wait_until("both approvals", WAIT, |screen| {
        screen.contains("⚑ 2 pending") && screen.contains(APPROVAL_DETAIL)
    });
    tui.send("j");
    tui.send("a");
    far.wait_session(&far_id, |s| s.status == SessionStatus::Completed);
    assert_eq!(
        std::fs::read_to_string(there.path().join("hello.txt")).unwrap(),
        "Hello, world!\n"
    );
    let pending = local.approvals(Some(&near));
    assert_eq!(pending.len(), 1, "the laptop's approval is untouched");
    assert!(!here.path().join("hello.txt").exists());
    tui.wait_screen("⚑ 1 pending");

    // The box killed: shown disconnected, its rows kept and marked; the laptop's approval is
    // still approved from the fleet view.
    far.kill9();
    let screen = tui.wait_screen("⌂ box ↯ disconnected");
    assert!(screen.contains("⌂ local ●"), "{screen}");
    tui.send("1");
    tui.wait_until("the box's row marked disconnected", WAIT, |screen| {
        screen
            .lines()
            .any(|l| l.contains("⌂box ↯") && l.contains("file there"))
    });
    tui.send("2");
    tui.wait_screen(APPROVAL_DETAIL);
    tui.send("a");
    local.wait_session(&near, |s| s.status == SessionStatus::Completed);
    assert_eq!(
        std::fs::read_to_string(here.path().join("hello.txt")).unwrap(),
        "Hello, world!\n"
    );
    tui.wait_screen("No pending approvals");

    // The box back on the same address: connected again, with its sessions; a launch on it
    // from the form (Ctrl+O: the next daemon) runs there.
    let again = restart_wss(&far, certs.path(), port);
    tui.wait_screen("⌂ box ●");
    tui.send("1");
    tui.wait_until("the box's row connected again", WAIT, |screen| {
        screen
            .lines()
            .any(|l| l.contains("⌂box ") && l.contains("file there"))
            && !screen.contains('↯')
    });
    tui.send("c");
    tui.wait_screen("New session on ⌂ local");
    tui.send("\x0f");
    tui.wait_screen("New session on ⌂ box");
    tui.send("scenario:plain launched on the box");
    tui.send("\x13");
    let launched = |a: &TestDaemon| {
        let sessions = a.request::<ListSessions>(NoParams {}).sessions;
        sessions
            .iter()
            .any(|s| s.query.contains("launched on the box"))
    };
    wait_for(WAIT, || launched(&again).then_some(())).expect("the launch on the box");
    assert!(!launched(&local), "launched on the box alone");
    tui.send("q");
}

#[test]
fn a_context_that_reaches_a_watched_daemon_again_is_watched_once() {
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let here = workdir();
    local.launch(launch_params("scenario:plain the first", here.path()));
    // `again` names the local daemon's socket through a link to its directory.
    let home = tempfile::Builder::new()
        .prefix("hld-tui-home-")
        .tempdir_in("/tmp")
        .expect("tempdir");
    let link = home.path().join("link");
    std::os::unix::fs::symlink(local.socket.parent().unwrap(), &link).unwrap();
    let again = link.join(local.socket.file_name().unwrap());
    let dir = home.path().join("config/humanlayer");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("contexts.json");
    let contexts = serde_json::json!({"contexts": {"again": {"url": again}}});
    std::fs::write(&file, contexts.to_string()).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();

    let args = ["--all-contexts", "--no-bell"];
    let tui = dashboard("hld-tui", home, &local.socket, &args, &[]);
    tui.wait_screen("the first");
    local.launch(launch_params("scenario:plain the second", here.path()));
    let screen = tui.wait_screen("the second");
    assert!(
        screen.contains("Sessions (2)"),
        "each session once:\n{screen}"
    );
    assert_eq!(screen.matches("the first").count(), 1, "{screen}");
    assert!(
        !screen.contains("⌂ again"),
        "watched under one name:\n{screen}"
    );
}
