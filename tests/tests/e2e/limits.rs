//! The daemon's resources: it raises its soft limit on open files to the hard limit, so that
//! a low inherited soft limit does not cap its subscribers (only the daemon is started with the
//! low limit, through `prlimit`; the test process keeps its own); its threads stay few under
//! any load; and a client that never reads its replies cannot grow its memory.

use std::io::Write;
use std::os::unix::net::UnixStream;

use hld_client::protocol::{Health, NoParams, SubscribeParams};
use hld_e2e::{launch_params, proc_status, wait_for, DaemonOptions, TestDaemon, WAIT};
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

/// A field of the daemon's `/proc/PID/status`.
fn status_field(pid: u32, field: &str) -> u64 {
    proc_status(pid, field).unwrap_or_else(|| panic!("no {field} for process {pid}"))
}

/// `count` requests for a conversation, pipelined on one line each.
fn pipelined_reads(session: &str, count: usize) -> Vec<u8> {
    (0..count)
        .flat_map(|i| {
            format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"getConversation\",\"params\":{{\"session_id\":\"{session}\"}},\"id\":{i}}}\n"
            )
            .into_bytes()
        })
        .collect()
}

#[test]
fn many_concurrent_reads_keep_the_thread_count_small() {
    let d = TestDaemon::start();
    let pid = d.pid();
    let most = std::sync::atomic::AtomicU64::new(status_field(pid, "Threads"));
    std::thread::scope(|scope| {
        for _ in 0..32 {
            scope.spawn(|| {
                let mut conn = d.conn();
                conn.send_raw(&pipelined_reads("no-such-session", 50));
                for _ in 0..50 {
                    assert_eq!(conn.recv()["error"]["code"], -32602);
                    let threads = status_field(pid, "Threads");
                    most.fetch_max(threads, std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
    });
    // The runtime's thread, the store's writer and checkpointer, jemalloc's background purger,
    // and at most one blocking thread per read connection plus one.
    let most = most.into_inner();
    assert!(most <= 8, "{most} threads");
}

#[test]
fn clients_that_never_read_their_replies_cannot_grow_the_daemon() {
    const MIB: u64 = 1024;
    // A conversation of 5 MB and a budget of 64 MiB: the proportions of twenty clients
    // asking for a 20 MB one from a daemon with the default budget (256 MiB), in a quarter
    // of the time. The conversation is stored by one daemon and served by another on the
    // same database, so that the peak is the flood's, not the storing's.
    let base = hld_e2e::short_tempdir();
    let on_base = || DaemonOptions {
        dir: Some(base.path().to_path_buf()),
        ..DaemonOptions::fake_claude()
    };
    let mut storing = TestDaemon::start_with(on_base());
    let id = storing.launch(launch_params("scenario:big", "/tmp"));
    storing.wait_ended(&id);
    storing.stop();
    drop(storing);
    let d = TestDaemon::start_with(on_base().arg("--max-buffered").arg(&(64 << 20).to_string()));
    let mut conn = d.conn();
    conn.set_timeout(WAIT);
    conn.send_raw(&pipelined_reads(&id, 1));
    let size = conn.recv_line().expect("a reply").len() as u64;
    assert!(size > 5_000_000, "a reply of {size} bytes");
    let before = status_field(d.pid(), "VmRSS");
    // Twenty clients each pipeline six requests for the whole conversation and never read:
    // together they ask for 600 MB of replies. The daemon builds replies while its buffer
    // budget has room, then says it is full and reads no more of their requests.
    let requests = pipelined_reads(&id, 6);
    let clients: Vec<UnixStream> = (0..20)
        .map(|_| {
            let mut conn = UnixStream::connect(&d.socket).unwrap();
            conn.write_all(&requests).unwrap();
            conn
        })
        .collect();
    let full = wait_for(WAIT, || {
        d.log_text()
            .contains("buffer budget (--max-buffered) is full")
            .then_some(())
    });
    assert!(full.is_some(), "never full: {}", d.log_text());
    drop(clients);
    // Once they are gone, their bytes are given back and requests are served again. The
    // peak holds the budget, and less than as much again: replies being built within their
    // share, and the allocator's slack. Without the budget, it held twice the replies asked
    // for by the twenty clients.
    assert_eq!(d.request::<Health>(NoParams {}).status, "ok");
    let peak = status_field(d.pid(), "VmHWM");
    assert!(
        peak < before + 128 * MIB,
        "RSS {} MiB before, peak {} MiB",
        before / MIB,
        peak / MIB
    );
}
