//! The daemon's own resource limits: it raises its soft limit on open files to the hard limit,
//! so that a low inherited soft limit does not cap its subscribers. (A test binary of its own:
//! it lowers this process's limit while the daemon starts.)

use hld_e2e::TestDaemon;
use nix::sys::resource::{getrlimit, setrlimit, Resource};
use serde_json::json;

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
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    assert!(
        hard > 2 * SUBSCRIBERS as u64,
        "the hard limit ({hard}) leaves no room for this test"
    );
    // The daemon inherits the low soft limit; this process gets its own back at once, as it
    // holds the subscribers' ends.
    setrlimit(Resource::RLIMIT_NOFILE, LOW, hard).unwrap();
    let d = TestDaemon::start();
    setrlimit(Resource::RLIMIT_NOFILE, soft, hard).unwrap();
    assert_eq!(open_files_limits(d.pid()), (hard, hard));

    let subs: Vec<_> = (0..SUBSCRIBERS)
        .map(|i| {
            let mut c = d.conn();
            let reply = c.request("Subscribe", json!({}), json!(i));
            assert!(reply["result"]["subscription_id"].is_string(), "{reply}");
            c
        })
        .collect();
    assert_eq!(
        d.result("health", json!({}))["subscribers"],
        SUBSCRIBERS as u64
    );
    drop(subs);
}
