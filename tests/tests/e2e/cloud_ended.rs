//! Cloud approvals end with their session, as local ones do: resolved in the write that ends
//! it (or stored resolved when first fetched after the end, or by the start-up sweep); a later
//! decision is refused with `reason: resolved` and nothing is sent to the cloud; the poller
//! leaves them alone, and the cloud's answer to one is logged once and ignored.

use hld_client::protocol::{
    ApprovalSource, ApprovalStatus, Event, InterruptSession, RefusalReason, SessionIdParams,
    SessionStatus,
};
use hld_e2e::cloud::CloudStandIn;
use hld_e2e::{wait_for, DaemonOptions, TestDaemon, WAIT};
use serde_json::json;

use super::cloud::{
    approval_status_of, cloud_options, decide, finished_session, function_call, get_approval, ids,
    subscribe, waiting_session, FUNCTION_CALLS, KEY,
};

/// The comment of an approval resolved because its session ended.
const SESSION_ENDED: &str = "the session ended before a decision";

/// The log line of a cloud answer to an approval resolved when its session ended.
const ANSWER_IGNORED: &str = "cloud answer ignored";

/// A daemon polling `api` every 50 ms, in `dir` if given (to restart on the same database).
fn cloud_daemon_in(api: &CloudStandIn, dir: Option<std::path::PathBuf>) -> TestDaemon {
    TestDaemon::start_with(DaemonOptions {
        dir,
        ..cloud_options(api, 50, 400).env("HUMANLAYER_API_KEY", KEY)
    })
}

/// Asserts that a decision on `id` is refused as resolved and that no decision was ever sent
/// to the cloud.
fn assert_refused_locally(d: &TestDaemon, api: &CloudStandIn, id: &str) {
    let reply = decide(d, id, "function_call", "approve", Some("too late"));
    assert!(!reply.success, "{reply:?}");
    assert_eq!(reply.reason, Some(RefusalReason::Resolved), "{reply:?}");
    assert!(
        api.requests().iter().all(|r| r.method == "GET"),
        "a decision reached the cloud: {:?}",
        api.requests()
    );
}

/// Waits until the stand-in has served `n` more polls of the function calls.
fn wait_polls(api: &CloudStandIn, n: usize) {
    let seen = api.requests_to(FUNCTION_CALLS).len();
    api.wait_until("more polls", |r| {
        r.iter().filter(|r| r.path == FUNCTION_CALLS).count() >= seen + n
    });
}

#[test]
fn a_cloud_approval_is_resolved_when_its_session_ends_and_the_cloud_answer_ignored() {
    let api = CloudStandIn::start();
    let d = cloud_daemon_in(&api, None);
    let (session_id, run_id, call) = waiting_session(&d);
    api.add_function_call(function_call(&run_id, "fc-end", "Write", json!({})));
    d.wait_approvals(Some(&session_id), |a| ids(a) == ["fc-end"]);
    d.wait_session(&session_id, |s| s.status == SessionStatus::WaitingInput);
    let mut sub = subscribe(&d, &session_id);

    d.request::<InterruptSession>(SessionIdParams {
        session_id: session_id.clone(),
    });
    d.wait_ended(&session_id);
    // Resolved in the write that ended the session: no wait for it after the end.
    let stored = get_approval(&d, "fc-end");
    assert_eq!(stored.status, ApprovalStatus::Resolved, "{stored:?}");
    assert_eq!(stored.comment.as_deref(), Some(SESSION_ENDED));
    assert!(d.approvals(None).is_empty(), "still listed");
    assert_eq!(approval_status_of(&d, &call).as_deref(), Some("resolved"));
    match sub.next_event().event {
        Event::ApprovalResolved {
            call_id, decision, ..
        } => {
            assert_eq!(call_id, "fc-end");
            assert_eq!(decision, ApprovalStatus::Resolved);
        }
        other => panic!("expected approval_resolved, got {other:?}"),
    }
    assert_refused_locally(&d, &api, "fc-end");

    // The cloud still lists it; the polls leave it as it is.
    wait_polls(&api, 3);
    assert_eq!(get_approval(&d, "fc-end").status, ApprovalStatus::Resolved);
    assert!(d.approvals(None).is_empty());
    assert!(!d.log_text().contains(ANSWER_IGNORED));

    // Answered in the cloud: the answer is logged once, and changes nothing.
    api.remove("fc-end");
    wait_for(WAIT, || d.log_text().contains(ANSWER_IGNORED).then_some(()))
        .unwrap_or_else(|| panic!("the answer was not logged:\n{}", d.log_text()));
    wait_polls(&api, 3);
    let log = d.log_text();
    assert_eq!(log.matches(ANSWER_IGNORED).count(), 1, "{log}");
    let line = log.lines().find(|l| l.contains(ANSWER_IGNORED)).unwrap();
    assert!(line.contains("fc-end"), "{line}");
    let stored = get_approval(&d, "fc-end");
    assert_eq!(stored.status, ApprovalStatus::Resolved);
    assert_eq!(stored.comment.as_deref(), Some(SESSION_ENDED));
    assert_refused_locally(&d, &api, "fc-end");
}

#[test]
fn a_cloud_approval_first_fetched_after_its_session_ended_is_stored_resolved() {
    let api = CloudStandIn::start();
    let d = cloud_daemon_in(&api, None);
    let (session_id, run_id) = finished_session(&d);
    let mut sub = subscribe(&d, &session_id);
    api.add_function_call(function_call(
        &run_id,
        "fc-late",
        "Bash",
        json!({"command": "ls"}),
    ));
    // Published as resolved at once, never announced as pending.
    match sub.next_event().event {
        Event::ApprovalResolved {
            call_id,
            decision,
            comment,
            ..
        } => {
            assert_eq!(call_id, "fc-late");
            assert_eq!(decision, ApprovalStatus::Resolved);
            assert_eq!(comment.as_deref(), Some(SESSION_ENDED));
        }
        other => panic!("expected approval_resolved, got {other:?}"),
    }
    let stored = get_approval(&d, "fc-late");
    assert_eq!(stored.source, ApprovalSource::Cloud);
    assert_eq!(stored.status, ApprovalStatus::Resolved);
    assert_eq!(stored.session_id, session_id);
    assert!(d.approvals(None).is_empty());
    assert_eq!(d.state(&session_id).status, SessionStatus::Completed);
    assert_refused_locally(&d, &api, "fc-late");
}

#[test]
fn a_restarted_daemon_resolves_the_cloud_approvals_its_predecessor_left_pending() {
    let base = hld_e2e::short_tempdir();
    let api = CloudStandIn::start();
    let mut d = cloud_daemon_in(&api, Some(base.path().to_path_buf()));
    let (session_id, run_id, _) = waiting_session(&d);
    api.add_function_call(function_call(&run_id, "fc-kill", "Write", json!({})));
    d.wait_approvals(Some(&session_id), |a| ids(a) == ["fc-kill"]);
    // No clean-up at all: the approval stays pending in the database.
    d.kill9();
    drop(d);

    let d = cloud_daemon_in(&api, Some(base.path().to_path_buf()));
    assert!(d.approvals(None).is_empty());
    let stored = get_approval(&d, "fc-kill");
    assert_eq!(stored.status, ApprovalStatus::Resolved);
    assert_eq!(stored.comment.as_deref(), Some(SESSION_ENDED));
    // The cloud still lists it: the new poller leaves it resolved.
    wait_polls(&api, 3);
    assert_eq!(get_approval(&d, "fc-kill").status, ApprovalStatus::Resolved);
    assert_refused_locally(&d, &api, "fc-kill");
}
