//! Unit tests of the watch board, over hand-made protocol values.

use hld_client::protocol::{RateLimitKind, RateLimitStatus, SessionInfo};
use serde_json::json;

use super::*;

fn plain(text: &str) -> String {
    anstream::adapter::strip_str(text).to_string()
}

fn session(id: &str, parent: Option<&str>) -> Session {
    let info: SessionInfo = serde_json::from_value(json!({
        "id": id, "run_id": "r", "status": "running", "query": "Fix the tests", "summary": "",
        "start_time": "2026-11-29T10:00:00Z", "last_activity_at": "2026-11-29T10:00:00Z",
        "parent_session_id": parent, "cost_usd": 0.25,
    }))
    .unwrap();
    info.into()
}

fn approval(id: &str, session: &str, tool: &str, input: serde_json::Value) -> Approval {
    serde_json::from_value(json!({
        "id": id, "call_id": id, "run_id": "r", "session_id": session,
        "type": "function_call", "status": "pending", "function_name": tool,
        "function_args": input, "requested_at": "2026-11-29T10:00:01Z",
    }))
    .unwrap()
}

fn new_approval(approval: Approval) -> Event {
    Event::NewApproval {
        session_id: approval.session_id.clone(),
        run_id: "r".into(),
        kind: approval.kind,
        count: 1,
        total: 1,
        approval: Box::new(approval),
    }
}

#[test]
fn what_waits_is_said_in_a_few_clean_words() {
    let bash = approval("a", "s", "Bash", json!({"command": "cargo test\nrm -rf /"}));
    assert_eq!(waits_for(&bash), "approve Bash: cargo test");
    let write = approval(
        "a",
        "s",
        "Write",
        json!({"file_path": "/w/a\x1b[2J", "content": ""}),
    );
    assert_eq!(waits_for(&write), "approve Write: /w/a�[2J");
    let plan = approval("a", "s", "ExitPlanMode", json!({"plan": "# Plan"}));
    assert_eq!(waits_for(&plan), "approve the plan");
    let other = approval("a", "s", "mcp__x\x07", json!({"q": 1}));
    assert_eq!(waits_for(&other), "approve mcp__x�");
    let mut question = approval("q", "s", "", json!(null));
    question.kind = ApprovalType::HumanContact;
    question.message = Some("Which database?\nPostgres or SQLite".into());
    assert_eq!(waits_for(&question), "answer: Which database?");
}

#[test]
fn approvals_come_and_go_on_their_sessions_line() {
    let mut board = Board::default();
    board.put(session("s1", None));
    let asked = new_approval(approval("a1", "s1", "Bash", json!({"command": "ls"})));
    assert_eq!(board.event(&asked), Next::Show);
    // Told twice, it waits once.
    board.event(&asked);
    assert_eq!(board.rows[0].waiting_text, ["approve Bash: ls"]);
    assert_eq!(board.first_waiting(), Some(0));
    let line = plain(&board.table(10, Some(0)));
    assert!(line.contains("› "), "{line}");
    assert!(line.contains("approve Bash: ls  Fix the tests"), "{line}");
    let decided: Event = serde_json::from_value(json!({"type": "approval_resolved", "data": {
        "approval_id": "a1", "call_id": "a1", "session_id": "s1", "run_id": "r",
        "decision": "approved", "type": "function_call", "total": 0,
    }}))
    .unwrap();
    assert_eq!(board.event(&decided), Next::Show);
    assert!(board.rows[0].waiting.is_empty());
    // An approval of a session not on the board asks for it to be read.
    let elsewhere = new_approval(approval("a9", "s9", "Bash", json!({"command": "ls"})));
    assert_eq!(board.event(&elsewhere), Next::Fetch("s9".into()));
}

#[test]
fn a_narrow_table_cuts_what_waits_and_the_title_in_turn() {
    let mut board = Board::default();
    let mut long = session("s1", None);
    long.query = "Refactor the payment retry logic into its own module".into();
    board.put(long);
    let command = "cargo test --workspace --all-features -- --test-threads 1 retry";
    board.event(&new_approval(approval(
        "a1",
        "s1",
        "Bash",
        json!({"command": command}),
    )));
    let line = plain(&board.table_within(10, None, Some(100)));
    let row = line.lines().nth(1).unwrap();
    assert!(row.chars().count() <= 100, "{line}");
    // Neither is cut to nothing: the title keeps more than its first word.
    assert!(row.contains("approve Bash: cargo tes…"), "{line}");
    assert!(row.contains("Refactor the payment"), "{line}");
    // Narrower, the context share, then the cost go before the title is cut to nothing.
    for (width, gone) in [(60, &["CTX"][..]), (48, &["CTX", "COST"])] {
        let narrow = plain(&board.table_within(10, None, Some(width)));
        let (head, row) = (
            narrow.lines().next().unwrap(),
            narrow.lines().nth(1).unwrap(),
        );
        assert!(row.chars().count() <= width, "{narrow}");
        assert!(head.ends_with("TITLE"), "{narrow}");
        assert!(gone.iter().all(|c| !head.contains(c)), "{narrow}");
        assert!(
            row.contains("approve Bash") && row.contains("Refactor"),
            "{narrow}"
        );
    }
}

#[test]
fn a_continuation_takes_its_chains_line_unless_all_are_watched() {
    let mut board = Board::default();
    board.put(session("parent", None));
    board.put(session("other", None));
    board.put(session("child", Some("parent")));
    let ids: Vec<&str> = board.rows.iter().map(|r| r.session.id.as_str()).collect();
    assert_eq!(ids, ["other", "child"]);
    let mut all = Board {
        all: true,
        ..Board::default()
    };
    all.put(session("parent", None));
    all.put(session("child", Some("parent")));
    assert_eq!(all.rows.len(), 2);
    // Archived, it leaves the board.
    let mut control = board.rows[1].session.control.clone();
    control.archived = true;
    let archived = Event::SessionSettingsChanged {
        session_id: "child".into(),
        run_id: "r".into(),
        control,
        model: None,
        reason: "updated".into(),
    };
    board.event(&archived);
    assert_eq!(board.rows.len(), 1);
}

#[test]
fn the_windows_line_warns_near_a_limit_and_says_when_it_resets() {
    let now: chrono::DateTime<chrono::Utc> = "2026-11-29T12:00:00Z".parse().unwrap();
    let mut board = Board::default();
    assert_eq!(board.windows_line(now), None);
    let window = |kind, utilization| RateLimitWindow {
        kind,
        status: RateLimitStatus::Allowed,
        utilization: Some(utilization),
        resets_at: Some("2026-11-29T14:13:00Z".into()),
        updated_at: "2026-11-29T12:00:00Z".into(),
    };
    board.window(window(RateLimitKind::FiveHour, 0.5));
    board.window(window(RateLimitKind::SevenDay, 0.4));
    board.window(window(RateLimitKind::FiveHour, 0.91));
    let line = board.windows_line(now).unwrap();
    assert_eq!(plain(&line), "limits  5h 91% (resets in 2h 13m) · 7d 40%");
    assert!(line.contains(&paint(YELLOW.bold(), "5h 91% (resets in 2h 13m)")));
    assert!(!line.contains(&paint(YELLOW.bold(), "7d 40%")));
    // A window this version does not know shows cleaned.
    board.window(window("x\x1b[2J".into(), 0.1));
    assert!(plain(&board.windows_line(now).unwrap()).ends_with(" · x�[2J 10%"));
}

#[test]
fn a_context_column_shows_only_when_a_line_has_a_context() {
    let mut board = Board::default();
    board.put(session("s1", None));
    let alone = plain(&board.table(10, None));
    assert!(!alone.contains("CONTEXT"), "{alone}");
    board.rows[0].context = Some("devbox".into());
    let marked = plain(&board.table(10, None));
    let header = marked.lines().next().unwrap();
    assert!(header.trim_start().starts_with("CONTEXT  ID"), "{marked}");
    let line = marked.lines().nth(1).unwrap().trim_start();
    assert!(line.starts_with("devbox   s1  running"), "{marked}");
    assert_eq!(
        board.rows[0].plain_line().split("  ").next(),
        Some("devbox")
    );
    let json = serde_json::to_value(board.rows[0].json()).unwrap();
    assert_eq!(json["context"], "devbox");
}
