//! The fleet view (`hld-tui --all-contexts`, several `--context`) with a daemon it cannot
//! reach: a context whose token file is readable by others or missing is shown disconnected,
//! with why, while the other daemon is served (and is refused at start when it is the only
//! daemon named); an approval of a daemon that is down stays listed when approved.

use std::os::unix::fs::PermissionsExt;

use hld_client::protocol::SessionStatus;
use hld_e2e::{launch_params, DaemonOptions, TestDaemon, WAIT};

use crate::contexts::wss_daemon;
use crate::tui::{workdir, APPROVAL_DETAIL};
use crate::tui_fleet::{dashboard, home_with_box, one_approval_each};

#[test]
fn a_fleet_shows_a_context_whose_token_cannot_be_read_as_disconnected_and_serves_the_other() {
    let certs = tempfile::tempdir().unwrap();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (far, url, pin) = wss_daemon(certs.path(), 0);
    let (here, there) = (workdir(), workdir());
    local.launch(launch_params("scenario:plain on the laptop", here.path()));
    far.launch(launch_params("scenario:plain far away", there.path()));

    // The box's token file readable by others: the box shown disconnected with why, the
    // laptop's sessions listed; put right, the box connects without a restart.
    let home = home_with_box(&far, &url, pin);
    let token = home.path().join("box.token");
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).unwrap();
    let args = ["--all-contexts", "--no-bell"];
    let tui = dashboard("hld-tui", home, &local.socket, &args, &[]);
    let screen = tui.wait_until("the box disconnected, with why", WAIT, |screen| {
        screen.contains("⌂ local ●")
            && screen.contains("⌂ box ↯ disconnected")
            && screen.contains("box.token must be yours")
            && screen.contains("on the laptop")
    });
    assert!(!screen.contains("far away"), "{screen}");
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    tui.wait_until(
        "the box connected once its token is private",
        WAIT,
        |screen| screen.contains("⌂ box ●") && screen.contains("far away") && !screen.contains('↯'),
    );

    // The token file missing, the box named first: the same.
    let home = home_with_box(&far, &url, pin);
    std::fs::remove_file(home.path().join("box.token")).unwrap();
    let args = ["--context", "box", "--context", "local", "--no-bell"];
    let tui = dashboard("hld-tui", home, &local.socket, &args, &[]);
    tui.wait_until("the box disconnected, with why", WAIT, |screen| {
        screen.contains("⌂ box ↯ disconnected")
            && screen.contains("cannot read the token file")
            && screen.contains("⌂ local ●")
            && screen.contains("on the laptop")
    });

    // The box alone: refused at start, saying why.
    let home = home_with_box(&far, &url, pin);
    std::fs::remove_file(home.path().join("box.token")).unwrap();
    let args = ["--context", "box", "--no-bell"];
    let mut tui = dashboard("hld-tui", home, &local.socket, &args, &[]);
    let status = tui.wait_exit(std::time::Duration::from_secs(10));
    assert_eq!(status.exit_code(), 2);
    let screen = tui.screen_text();
    assert!(
        screen.contains("context \"box\": cannot read the token file"),
        "{screen}"
    );
}

#[test]
fn approving_the_row_of_a_daemon_that_is_down_keeps_it_listed_and_says_why() {
    let certs = tempfile::tempdir().unwrap();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (mut far, url, pin) = wss_daemon(certs.path(), 0);
    let (near, _, _here, there) = one_approval_each(&local, &far);

    let home = home_with_box(&far, &url, pin);
    let args = ["--all-contexts", "--no-bell"];
    let mut tui = dashboard("hld-tui", home, &local.socket, &args, &[]);
    tui.wait_until("both daemons' approvals", WAIT, |screen| {
        screen.contains("⌂ box ●") && screen.contains("⚑ 2 pending")
    });
    far.kill9();
    tui.wait_screen("⌂ box ↯ disconnected");
    tui.send("2");
    tui.wait_until("both approvals", WAIT, |screen| {
        screen.contains("⚑ 2 pending") && screen.contains(APPROVAL_DETAIL)
    });
    tui.send("j");
    tui.send("a");
    let screen = tui.wait_screen("⌂box is not connected: the decision was not sent");
    assert!(screen.contains("⚑ 2 pending"), "{screen}");
    assert!(screen.contains("file there"), "{screen}");

    // The laptop's approval is approved as ever.
    tui.send("k");
    tui.send("a");
    local.wait_session(&near, |s| s.status == SessionStatus::Completed);
    let screen = tui.wait_screen("⚑ 1 pending");
    assert!(screen.contains("file there"), "{screen}");
    assert!(!there.path().join("hello.txt").exists());
}
