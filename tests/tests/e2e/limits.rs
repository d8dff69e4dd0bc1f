//! The daemon's own resource limits: it raises its soft limit on open files to the hard limit,
//! so that a low inherited soft limit does not cap its subscribers. Only the daemon is started
//! with the low limit (through `prlimit`); the test process keeps its own.

use hld_client::protocol::{Health, NoParams, SubscribeParams};
use hld_e2e::{DaemonOptions, TestDaemon};
use nix::sys::resource::{getrlimit, Resource};

/// The daemon's soft and hard limits on open files, from `/proc/PID/limits`.
fn open_files_limits(pid: u32) -> (u64, u64) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .expect("an open files line");
    let words: Vec<&str> = line.split_whitespace().collect();
    (words[3].parse().unwrap(), words[4].parse().unwrap())
}

#[test]
fn a_low_inherited_open_files_limit_does_not_cap_subscribers() {
    const LOW: u64 = 128;
    const SUBSCRIBERS: usize = 300;
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    assert!(
        hard > 2 * SUBSCRIBERS as u64,
        "the hard limit ({hard}) leaves no room for this test"
    );
    // `prlimit` lowers the soft limit it passes on to the daemon, and only that.
    let d = TestDaemon::start_with(DaemonOptions {
        wrapper: vec!["prlimit".into(), format!("--nofile={LOW}:")],
        ..Default::default()
    });
    assert_eq!(open_files_limits(d.pid()), (hard, hard));

    let subs: Vec<_> = (0..SUBSCRIBERS)
        .map(|_| d.subscribe(SubscribeParams::default()))
        .collect();
    assert_eq!(
        d.request::<Health>(NoParams {}).subscribers,
        SUBSCRIBERS as u64
    );
    drop(subs);
}
