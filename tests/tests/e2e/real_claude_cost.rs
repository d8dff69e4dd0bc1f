//! What the real `claude` CLI (2.1.197) reports a turn cost, counted by the daemon: its
//! `total_cost_usd` and `modelUsage` count since the process started (its `usage` is the
//! turn's), and a resumed session's new process starts again at 0. Every model call of the
//! stand-in uses the same tokens, so each turn costs the same: three turns (two in one live
//! process, one after a restart resumed the session) cost three times the first.

use hld_client::protocol::{
    ListSessions, NoParams, SendMessage, SendMessageParams, SessionStatus, UsageGroupBy,
};
use hld_e2e::anthropic::{AnthropicStandIn, Reply, INPUT_TOKENS, OUTPUT_TOKENS};
use hld_e2e::{launch_params, DaemonOptions, TestDaemon};

use crate::cost::{usage, wait_turns};
use crate::real_claude::{options, workdir};

fn send(d: &TestDaemon, id: &str, text: &str) {
    d.request::<SendMessage>(SendMessageParams {
        session_id: id.to_owned(),
        text: text.to_owned(),
        mode: None,
        images: None,
    });
}

#[test]
fn real_claude_turns_of_a_live_process_and_a_resume_each_count_once() {
    let api = AnthropicStandIn::start(|_| Reply::text("Noted."));
    let base = hld_e2e::short_tempdir();
    let restartable = || DaemonOptions {
        dir: Some(base.path().to_path_buf()),
        ..options(Some(&api))
    };
    let mut d = TestDaemon::start_with(restartable());
    let id = d.launch(launch_params("First", workdir(&d)));
    d.wait_session(&id, |s| s.status == SessionStatus::Completed && s.live);
    let first = usage(&d, None, UsageGroupBy::Model).total;
    assert_eq!(
        (first.turns, first.input_tokens, first.output_tokens),
        (1, INPUT_TOKENS as i64, OUTPUT_TOKENS as i64)
    );
    assert!(first.cost_usd > 0.0, "{first:?}");

    // The second turn, in the same process, which reports both turns' cost.
    send(&d, &id, "Second");
    wait_turns(&d, 2);
    // A new process resuming the same session, which reports only its own.
    d.stop();
    drop(d);
    let d = TestDaemon::start_with(restartable());
    send(&d, &id, "Third");
    wait_turns(&d, 3);
    d.wait_session(&id, |s| s.status == SessionStatus::Completed);

    let total = usage(&d, None, UsageGroupBy::Model).total;
    assert_eq!(api.model_turns().len(), 3);
    assert_eq!(
        (
            total.turns,
            total.sessions,
            total.input_tokens,
            total.output_tokens
        ),
        (3, 1, 3 * INPUT_TOKENS as i64, 3 * OUTPUT_TOKENS as i64)
    );
    assert!(
        (total.cost_usd - 3.0 * first.cost_usd).abs() < 1e-9,
        "{total:?} is not three times {first:?}"
    );
    let listed = d.request::<ListSessions>(NoParams {}).sessions;
    assert!((listed[0].cost_usd.unwrap() - total.cost_usd).abs() < 1e-9);
}
