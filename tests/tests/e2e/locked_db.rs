//! A database another process holds: a write the daemon cannot make says why, and the daemon
//! serves on once the other process lets go.

use hld_client::protocol::{LaunchSession, SessionStatus};
use hld_e2e::{launch_params, DaemonOptions, TestDaemon, WAIT};

#[test]
fn a_database_another_process_holds_is_named_and_the_daemon_serves_on() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    // As a user's `sqlite3 hld.db` with a write transaction open.
    let other = rusqlite::Connection::open(d.dir.join("hld.db")).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    // Refused once SQLite's busy timeout (5 s) has run out, for each write queued before this
    // one too (the daemon's cache release may be): waited for as any answer the tests await.
    let mut c = d.conn();
    c.set_timeout(WAIT);
    let refused = c
        .try_request::<LaunchSession>(launch_params("scenario:plain", "/tmp"))
        .unwrap_err();
    assert_eq!(
        refused.message,
        "failed to store session in database: the database is locked by another process"
    );
    other.execute_batch("COMMIT").unwrap();
    let id = d.launch(launch_params("scenario:plain", "/tmp"));
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
}
