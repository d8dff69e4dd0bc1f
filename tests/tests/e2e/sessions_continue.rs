//! `continueSession` checks the params it shares with `launchSession` as launching does, and
//! before it touches the parent.

use hld_client::protocol::{
    ContinueSession, ContinueSessionParams, ListSessions, NoParams, SessionStatus,
};
use hld_e2e::{launch_params, DaemonOptions, TestDaemon};

#[test]
fn continue_refuses_a_negative_max_turns_before_interrupting_the_parent() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    let id = d.launch(launch_params("scenario:slow", &dir));
    d.wait_session(&id, |s| s.claude_session_id.is_some());

    let e = d
        .try_request::<ContinueSession>(ContinueSessionParams {
            session_id: id.clone(),
            query: "again".into(),
            max_turns: Some(-1),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.code, -32602, "{e:?}");
    assert_eq!(e.message, "max_turns must not be negative");
    assert_eq!(e.data.unwrap()["param"], "max_turns");

    // The parent ran its turn to the end, uninterrupted, and has no continuation.
    let parent = d.wait_ended(&id);
    assert_eq!(parent.status, SessionStatus::Completed);
    assert!(!parent.interrupted);
    assert_eq!(d.request::<ListSessions>(NoParams {}).sessions.len(), 1);
}
