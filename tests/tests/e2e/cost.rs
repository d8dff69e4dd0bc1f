//! What sessions cost (`getUsage`), over sessions whose token counts `fake-claude` scripts
//! (`usage:` markers): a live session's second turn, a continuation and a failed session each
//! counted once, grouped by the daemon's local day, model and working directory; `since`;
//! bad params. And the context figures of `listSessions` following a live session.

use chrono::{FixedOffset, NaiveDate, Utc};
use hld_client::protocol::{
    ApprovalStatus, ContinueSession, ContinueSessionParams, GetUsage, GetUsageParams,
    GetUsageResult, Health, LaunchSessionParams, ListSessions, NoParams, SendDecision,
    SendDecisionParams, SendMessage, SendMessageParams, SessionInfo, SessionStatus, UsageGroupBy,
    UsageRow, UsageTotals,
};
use hld_e2e::{launch_params, wait_for, DaemonOptions, TestDaemon, WAIT};
use serde_json::json;

/// The price `fake-claude` charges (Sonnet 4.5 rates): input, cache written, cache read and
/// output tokens, per million.
fn cost(input: i64, output: i64, written: i64, read: i64) -> f64 {
    (input as f64 * 3.0 + written as f64 * 3.75 + read as f64 * 0.3 + output as f64 * 15.0)
        / 1_000_000.0
}

/// Tokens and cost of some turns of some sessions, as `getUsage` should sum them.
fn totals(t: [i64; 4], sessions: u64, turns: u64) -> UsageTotals {
    UsageTotals {
        input_tokens: t[0],
        output_tokens: t[1],
        cache_creation_input_tokens: t[2],
        cache_read_input_tokens: t[3],
        cost_usd: cost(t[0], t[1], t[2], t[3]),
        sessions,
        turns,
    }
}

/// `a` and `b` equal, their costs within rounding.
#[track_caller]
fn assert_totals(a: &UsageTotals, b: &UsageTotals) {
    assert!((a.cost_usd - b.cost_usd).abs() < 1e-9, "{a:?} vs {b:?}");
    let plain = |t: &UsageTotals| UsageTotals {
        cost_usd: 0.0,
        ..t.clone()
    };
    assert_eq!(plain(a), plain(b));
}

/// Sessions of known usage, in a daemon whose local time zone is `offset` from UTC.
pub(super) struct Known {
    pub(super) d: TestDaemon,
    /// The daemon's local time zone.
    pub(super) offset: FixedOffset,
    /// When the live session's first turn had ended and nothing else yet had.
    pub(super) after_first: String,
    /// The model ids: the sessions' own, and the one a subagent used.
    pub(super) sonnet: &'static str,
    pub(super) opus: &'static str,
    pub(super) haiku: &'static str,
    pub(super) dir_live: String,
    pub(super) dir_failed: String,
}

/// The models the sessions run on (ids `fake-claude` reports as given), and a subagent's.
const SONNET: &str = "claude-sonnet-4-5";
const OPUS: &str = "claude-opus-4-1";
const HAIKU: &str = "claude-haiku-4-5";

/// A time zone whose day is not UTC's now: 12 hours behind before noon UTC, else 14 ahead.
fn offset_day_apart() -> (FixedOffset, &'static str) {
    use chrono::Timelike;
    if Utc::now().hour() < 12 {
        (FixedOffset::west_opt(12 * 3600).unwrap(), "XXX+12")
    } else {
        (FixedOffset::east_opt(14 * 3600).unwrap(), "XXX-14")
    }
}

fn dir(d: &TestDaemon, name: &str) -> String {
    let dir = d.dir.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir.display().to_string()
}

/// Runs the sessions of [`Known`]:
/// - live (sonnet): turn 1 `usage:100,10,1000,5000` plus a subagent's `usage:20,2,0,0` on
///   haiku; turn 2, a message into the same process, `usage:200,20,2000,6000` (the process
///   reports 300 input tokens in all then);
/// - its continuation (sonnet, a new process): `usage:300,30,0,0`;
/// - failed (opus, another directory): `--max-turns` stops it after `usage:7,1,0,0`.
pub(super) fn known_usage() -> Known {
    let (offset, tz) = offset_day_apart();
    let d = TestDaemon::start_with(DaemonOptions::fake_claude().env("TZ", tz));
    let (dir_live, dir_failed) = (dir(&d, "shop"), dir(&d, "blog"));
    let live = d.launch(LaunchSessionParams {
        model: Some(SONNET.into()),
        ..launch_params(
            &format!("usage:100,10,1000,5000 usage:20,2,0,0@{HAIKU}"),
            &dir_live,
        )
    });
    d.wait_session(&live, |s| s.status == SessionStatus::Completed && s.live);
    let after_first = Utc::now().to_rfc3339();
    d.request::<SendMessage>(SendMessageParams {
        session_id: live.clone(),
        text: "again usage:200,20,2000,6000".into(),
        mode: None,
        images: None,
    });
    wait_turns(&d, 2);
    let continued = d
        .request::<ContinueSession>(ContinueSessionParams {
            session_id: live.clone(),
            query: "more usage:300,30,0,0".into(),
            ..Default::default()
        })
        .session_id;
    assert_eq!(d.wait_ended(&continued).status, SessionStatus::Completed);
    let failed = d.launch(LaunchSessionParams {
        model: Some(OPUS.into()),
        ..launch_params("scenario:maxturns usage:7,1,0,0", &dir_failed)
    });
    assert_eq!(d.wait_ended(&failed).status, SessionStatus::Failed);
    wait_turns(&d, 4);
    Known {
        offset,
        after_first,
        sonnet: SONNET,
        opus: OPUS,
        haiku: HAIKU,
        dir_live,
        dir_failed,
        d,
    }
}

pub(super) fn usage(d: &TestDaemon, since: Option<&str>, group_by: UsageGroupBy) -> GetUsageResult {
    d.request::<GetUsage>(GetUsageParams {
        since: since.map(str::to_owned),
        group_by,
    })
}

/// Waits until `getUsage` counts `turns` turns.
pub(super) fn wait_turns(d: &TestDaemon, turns: u64) {
    let counted = wait_for(WAIT, || {
        let total = usage(d, None, UsageGroupBy::Day).total;
        (total.turns >= turns).then_some(total.turns)
    });
    assert_eq!(counted, Some(turns), "log:\n{}", d.log_text());
}

fn keys(rows: &[UsageRow]) -> Vec<&str> {
    rows.iter().map(|r| r.key.as_str()).collect()
}

#[test]
fn get_usage_counts_each_turn_once_by_day_model_and_directory() {
    let k = known_usage();
    let d = &k.d;
    let before = Utc::now().with_timezone(&k.offset).date_naive();

    // Per model: the live session's second turn is what its process's totals grew by, the
    // continuation counts only its own turn, the failed session what it reported.
    let by_model = usage(d, None, UsageGroupBy::Model);
    assert_eq!(by_model.group_by, UsageGroupBy::Model);
    assert_eq!(keys(&by_model.rows), [k.sonnet, k.haiku, k.opus]);
    assert_totals(
        &by_model.rows[0].totals,
        &totals([600, 60, 3000, 11_000], 2, 3),
    );
    assert_totals(&by_model.rows[1].totals, &totals([20, 2, 0, 0], 1, 1));
    assert_totals(&by_model.rows[2].totals, &totals([7, 1, 0, 0], 1, 1));
    let all = totals([627, 63, 3000, 11_000], 3, 4);
    assert_totals(&by_model.total, &all);

    // The same cost as the sessions' own.
    let sessions = d.request::<ListSessions>(NoParams {}).sessions;
    let listed: f64 = sessions.iter().filter_map(|s| s.cost_usd).sum();
    assert!((listed - all.cost_usd).abs() < 1e-9, "{listed} vs {all:?}");

    // Per directory: a continuation works in its parent's.
    let by_dir = usage(d, None, UsageGroupBy::WorkingDir);
    assert_eq!(keys(&by_dir.rows), [k.dir_live.as_str(), &k.dir_failed]);
    let live_dir = totals([620, 62, 3000, 11_000], 2, 3);
    assert_totals(&by_dir.rows[0].totals, &live_dir);
    assert_totals(&by_dir.total, &all);

    // Per day of the daemon's time zone, which is not UTC's.
    let by_day = usage(d, None, UsageGroupBy::Day);
    let after = Utc::now().with_timezone(&k.offset).date_naive();
    let day = by_day.rows[0].key.clone();
    assert!(
        [before, after].map(|d| d.to_string()).contains(&day),
        "{day} is not the day at {}",
        k.offset
    );
    assert_ne!(day, Utc::now().date_naive().to_string());
    assert_eq!(by_day.rows.len(), 1, "{by_day:?}");
    assert_totals(&by_day.rows[0].totals, &all);

    // Since a time: the live session's first turn is left out. Since a day: its start.
    let later = usage(d, Some(&k.after_first), UsageGroupBy::Model);
    assert_eq!(keys(&later.rows), [k.sonnet, k.opus]);
    assert_totals(&later.rows[0].totals, &totals([500, 50, 2000, 6000], 2, 2));
    assert_totals(&later.total, &totals([507, 51, 2000, 6000], 3, 3));
    assert_totals(&usage(d, Some(&day), UsageGroupBy::Day).total, &all);
    let tomorrow = NaiveDate::parse_from_str(&day, "%Y-%m-%d")
        .unwrap()
        .succ_opt()
        .unwrap();
    let tomorrow = tomorrow.to_string();
    let none = usage(d, Some(&tomorrow), UsageGroupBy::Day);
    assert!(none.rows.is_empty(), "{none:?}");
    assert_eq!(none.total, UsageTotals::default());
}

#[test]
fn get_usage_refuses_bad_params_and_serves_on() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let refused = |params: serde_json::Value| {
        let reply = d.call("getUsage", params.clone());
        let error = &reply["error"];
        assert_eq!(error["code"], -32602, "{params}: {reply}");
        error["data"]["param"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(refused(json!({"since": "yesterday"})), "since");
    assert_eq!(refused(json!({"since": "2026-02-30"})), "since");
    assert_eq!(refused(json!({"group_by": "week"})), "group_by");
    let reply = d.call("getUsage", json!({"group_by": "week"}));
    assert_eq!(
        reply["error"]["data"]["accepted"],
        json!(["day", "model", "working_dir"])
    );
    assert_eq!(refused(json!({"since": 5})), "since");
    // Nothing stored: no rows; and the daemon serves on.
    let empty = usage(&d, None, UsageGroupBy::Day);
    assert!(empty.rows.is_empty());
    assert_eq!(empty.total, UsageTotals::default());
    assert_eq!(d.request::<Health>(NoParams {}).status, "ok");
}

/// The session as `listSessions` lists it.
fn listed(d: &TestDaemon, id: &str) -> SessionInfo {
    let sessions = d.request::<ListSessions>(NoParams {}).sessions;
    sessions.into_iter().find(|s| s.id == id).expect("listed")
}

#[test]
fn list_sessions_context_follows_each_assistant_message_of_a_live_session() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let work = dir(&d, "work");
    let id = d.launch(launch_params("usage:100,0,1000,5000", &work));
    let state = d.wait_session(&id, |s| s.status == SessionStatus::Completed && s.live);
    let info = listed(&d, &id);
    assert_eq!(info.effective_context_tokens, Some(6100));
    assert_eq!(info.context_limit, Some(200_000));
    assert_eq!(
        state.effective_context_tokens,
        info.effective_context_tokens
    );

    // The next turn, held at an approval after its assistant messages: the list shows the
    // context they used while the turn is still under way.
    d.request::<SendMessage>(SendMessageParams {
        session_id: id.clone(),
        text: "scenario:tool usage:200,0,2000,7000".into(),
        mode: None,
        images: None,
    });
    let pending = d.wait_approvals(Some(&id), |a| {
        a.iter().any(|a| a.status == ApprovalStatus::Pending)
    });
    let info = listed(&d, &id);
    assert_eq!(info.status, SessionStatus::WaitingInput);
    assert_eq!(info.effective_context_tokens, Some(9200));
    assert_eq!(
        d.state(&id).effective_context_tokens,
        info.effective_context_tokens
    );
    d.request::<SendDecision>(SendDecisionParams {
        call_id: Some(pending[0].id.clone()),
        kind: Some("function_call".into()),
        decision: Some("approve".into()),
        comment: None,
    });
    d.wait_session(&id, |s| s.status == SessionStatus::Completed);
    let info = listed(&d, &id);
    assert_eq!(
        (info.effective_context_tokens, info.context_limit),
        (Some(9200), Some(200_000))
    );
}

#[tokio::test]
async fn the_sdk_gets_usage_and_the_daemons_refusals() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let id = d.launch(launch_params("usage:40,4,0,0", dir(&d, "work")));
    d.wait_ended(&id);
    let client = d.client().await;
    let params = GetUsageParams {
        since: Some("2000-01-01".into()),
        group_by: UsageGroupBy::WorkingDir,
    };
    let usage = client.get_usage(params).await.unwrap();
    assert_eq!(usage.rows.len(), 1);
    assert_totals(&usage.total, &totals([40, 4, 0, 0], 1, 1));
    let bad = GetUsageParams {
        since: Some("soon".into()),
        ..Default::default()
    };
    match client.get_usage(bad).await {
        Err(hld_client::Error::Rpc(error)) => {
            assert_eq!(error.code, -32602);
            assert_eq!(error.data.unwrap()["param"], "since");
        }
        other => panic!("not refused: {other:?}"),
    }
}
