//! The usage view in the fleet (`hld-tui --all-contexts`): one daemon's figures at a time,
//! named in the titles, and Ctrl+O the next daemon's.

use hld_e2e::{launch_params, DaemonOptions, TestDaemon, WAIT};

use crate::contexts::wss_daemon;
use crate::tui::workdir;
use crate::tui_fleet::{dashboard, home_with_box};

/// Runs `turns` plain sessions of one turn each on `d` to their end.
fn turns(d: &TestDaemon, turns: usize) {
    let work = workdir();
    for _ in 0..turns {
        let id = d.launch(launch_params("scenario:plain say hello", work.path()));
        d.wait_ended(&id);
    }
}

#[test]
fn the_fleets_usage_view_shows_each_daemons_figures_named() {
    let certs = tempfile::tempdir().unwrap();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (far, url, pin) = wss_daemon(certs.path(), 0);
    turns(&local, 1);
    turns(&far, 2);

    let home = home_with_box(&far, &url, pin);
    let args = ["--all-contexts", "--no-bell"];
    let mut tui = dashboard("hld-tui", home, &local.socket, &args, &[]);
    tui.wait_until("both daemons connected", WAIT, |screen| {
        screen.contains("⌂ local ●") && screen.contains("⌂ box ●")
    });
    let laptop = |screen: &str| {
        screen.contains("By model, all time on ⌂local") && screen.contains("1 turns · 1 sessions")
    };
    let the_box = |screen: &str| {
        screen.contains("By model, all time on ⌂box") && screen.contains("2 turns · 2 sessions")
    };
    tui.send("U");
    let screen = tui.wait_until("one daemon's figures, named", WAIT, |screen| {
        laptop(screen) || the_box(screen)
    });
    let first_was_laptop = laptop(&screen);
    tui.send("\x0f");
    tui.wait_until("the other daemon's figures, named", WAIT, |screen| {
        if first_was_laptop {
            the_box(screen)
        } else {
            laptop(screen)
        }
    });
}
