//! What the dashboard shows of what the daemon stores: an API retry's text, how an approval
//! ended and its comment (a rule's too, live), events that stream in while a conversation
//! loads, a selection that stays on its session as the list reorders, messages beside the key
//! hints, the deny box's hint while one types, the lists' columns by priority, with a detail
//! pane on a wide terminal (its text wrapped under itself), and a long approval's detail
//! scrolled.

use crossterm::event::KeyCode;
use hld_client::protocol::{Approval, SessionInfo, ANSWERED_ELSEWHERE};
use hld_tui::app::{update, Msg, Screen, State};
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use ratatui::Terminal;
use serde_json::json;

use super::fixtures::*;

/// A decided approval as `getApproval` returns it.
fn decided(id: &str, status: &str, comment: &str) -> Approval {
    serde_json::from_value(json!({
        "id": id, "call_id": id, "run_id": "run-s-done", "session_id": "s-done",
        "type": "function_call", "status": status, "function_name": "Bash",
        "function_args": {"command": "git push"}, "tool_use_id": format!("tool-{id}"),
        "requested_at": ago(50), "comment": comment,
    }))
    .unwrap()
}

/// The finished chain's conversation opened (its newest session, `s-child`, continues
/// `s-done`): an API retry, then two Bash calls, one denied
/// and one whose approval ended with the session, with the approvals `getApproval` gave.
fn finished_conversation(width: u16, height: u16) -> State {
    let mut state = loaded(width, height);
    keys(&mut state, "jj");
    update(&mut state, key(KeyCode::Enter));
    let call = |id: i64, approval: &str, status: &str| {
        event(
            id,
            "s-done",
            json!({"event_type": "tool_call", "role": "assistant", "tool_name": "Bash",
                "tool_id": format!("tool-{approval}"), "tool_input_json": r#"{"command":"git push"}"#,
                "approval_status": status, "approval_id": approval}),
        )
    };
    let events = vec![
        event(
            1,
            "s-done",
            json!({"event_type": "system", "role": "system", "subtype": "api_retry",
                "is_error": true,
                "content": "API error 529 (overloaded), retrying (1/3) in 0.6 s"}),
        ),
        call(2, "a8", "denied"),
        call(3, "a9", "resolved"),
        call(4, "a10", "resolved"),
    ];
    update(
        &mut state,
        Msg::Conversation {
            session_id: "s-child".into(),
            events,
            approvals: vec![
                decided("a8", "denied", "not on main"),
                decided("a9", "resolved", "the session ended before a decision"),
                decided("a10", "resolved", ANSWERED_ELSEWHERE),
            ],
        },
    );
    state
}

#[test]
fn an_api_retry_shows_the_error_the_attempt_and_the_delay() {
    let state = finished_conversation(100, 30);
    let shown = screen(&state, true);
    assert!(
        shown.contains("· API error 529 (overloaded), retrying (1/3) in 0.6 s"),
        "{shown}"
    );
    assert!(!shown.contains("api_retry"), "{shown}");
}

/// The foreground colour of the first cell of `text` on screen.
fn colour_of(state: &State, text: &str) -> Color {
    let mut terminal = Terminal::new(TestBackend::new(state.width, state.height)).unwrap();
    terminal
        .draw(|f| hld_tui::view::draw(state, f, true))
        .unwrap();
    let shown = screen(state, true);
    let (row, line) = shown
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(text))
        .unwrap_or_else(|| panic!("{text} not shown:\n{shown}"));
    let column = line[..line.find(text).unwrap()].chars().count();
    terminal.backend().buffer()[(column as u16, row as u16)].fg
}

#[test]
fn an_approval_that_ended_with_its_session_says_so_with_the_stored_comment() {
    let state = finished_conversation(100, 30);
    let shown = screen(&state, true);
    assert!(
        shown.contains("ended with its session: the session ended before a decision"),
        "{shown}"
    );
    assert!(!shown.contains("resolved elsewhere"), "{shown}");
    assert_ne!(colour_of(&state, "ended with its session"), Color::Green);
    // A cloud approval answered in the cloud is resolved too, and says so instead.
    let elsewhere = shown.lines().find(|l| l.contains("answered elsewhere"));
    assert!(
        elsewhere.is_some_and(|l| l.contains("– answered elsewhere") && !l.contains("cloud")),
        "{shown}"
    );
    // A denial's comment, which only the approval holds, shows too.
    assert!(shown.contains("✗ denied: not on main"), "{shown}");
}

#[test]
fn a_message_is_shown_beside_the_key_hints() {
    let mut state = loaded(120, 30);
    keys(&mut state, "2a");
    let footer = screen(&state, true).lines().last().unwrap().to_owned();
    assert!(footer.contains("approved Bash"), "{footer}");
    assert!(footer.contains("j/k move"), "{footer}");
}

#[test]
fn the_deny_box_keeps_its_hint_while_one_types() {
    let mut state = loaded(100, 30);
    keys(&mut state, "2d");
    let before = screen(&state, true);
    assert!(before.contains("Why not? Optional"), "{before}");
    keys(&mut state, "use the staging branch");
    let after = screen(&state, true);
    assert!(after.contains("use the staging branch"), "{after}");
    assert!(after.contains("Why not? Optional"), "{after}");
    assert!(after.contains("Enter denies"), "{after}");
}

/// Sessions in two repositories, one on a model with a long id.
fn two_repositories(width: u16, height: u16) -> State {
    let mut state = loaded(width, height);
    let sessions: Vec<SessionInfo> = vec![
        session(
            "s-a",
            "running",
            "Refactor the parser into modules",
            5,
            json!({"working_dir": "/srv/work/alpha-service", "model": "claude-opus-4-8[1m]"}),
        ),
        session(
            "s-b",
            "running",
            "Refactor the parser into modules",
            9,
            json!({"working_dir": "/srv/work/beta-service"}),
        ),
    ];
    update(&mut state, Msg::Sessions(sessions));
    state
}

#[test]
fn the_model_is_cut_with_an_ellipsis_and_shown_whole_when_there_is_room() {
    for width in 60..=160 {
        let shown = screen(&two_repositories(width, 12), true);
        for model in shown
            .split_whitespace()
            .filter(|w| w.starts_with("opus-4-8"))
        {
            assert!(
                model == "opus-4-8[1m]" || model.ends_with('…'),
                "{model} at {width} columns:\n{shown}"
            );
        }
    }
    let shown = screen(&two_repositories(120, 12), true);
    assert!(shown.contains("opus-4-8[1m]"), "{shown}");
}

#[test]
fn the_title_and_directory_win_at_narrow_widths() {
    for width in [60, 80, 100, 120] {
        let shown = screen(&two_repositories(width, 12), true);
        assert!(shown.contains("DIRECTORY"), "{width}:\n{shown}");
        // Agents in two repositories are told apart, and their titles stay readable.
        assert!(shown.contains("alpha-service"), "{width}:\n{shown}");
        assert!(shown.contains("beta-service"), "{width}:\n{shown}");
        assert!(shown.contains("Refactor the parser"), "{width}:\n{shown}");
    }
    // Narrower than the title's room: it takes what is left rather than leaving.
    let shown = screen(&two_repositories(40, 12), true);
    assert!(shown.contains("Refactor the"), "{shown}");
}

#[test]
fn one_long_title_or_input_hides_no_column_of_the_others() {
    let mut state = loaded(120, 20);
    let mut list = sessions();
    list[0].control.title = format!("Refactor {}", "the parser ".repeat(12));
    update(&mut state, Msg::Sessions(list));
    let shown = screen(&state, true);
    let header = shown.lines().find(|l| l.contains("STATUS")).unwrap();
    for column in ["TITLE", "DIRECTORY", "MODEL", "COST", "TURNS"] {
        assert!(header.contains(column), "{column}:\n{shown}");
    }
    assert!(
        shown.contains("Refactor the parser the parser the parser"),
        "{shown}"
    );
    let long = format!("/home/me/work/{}/greeting.rs", "nested/".repeat(20));
    update(
        &mut state,
        Msg::Approvals(vec![approval(
            "a-long",
            "s-run",
            "Edit",
            json!({"file_path": long}),
            4,
        )]),
    );
    keys(&mut state, "2");
    let shown = screen(&state, true);
    let header = shown.lines().find(|l| l.contains("INPUT")).unwrap();
    assert!(header.contains("SESSION"), "{shown}");
    assert!(shown.contains("Refactor the parser"), "{shown}");
}

#[test]
fn one_deep_directory_hides_no_model_or_cost() {
    // An isolated session's directory: its worktree, deep under the daemon's.
    let deep = "/home/me/.humanlayer/worktrees/repo-3f9a2c1b/very_long_directory_name_of_a_branch";
    for width in [120, 200] {
        let mut state = loaded(width, 12);
        let mut list = sessions();
        list[3].working_dir = Some(deep.into());
        update(&mut state, Msg::Sessions(list));
        let shown = screen(&state, true);
        insta::assert_snapshot!(format!("deep_directory_{width}x12"), shown);
        let header = shown.lines().find(|l| l.contains("STATUS")).unwrap();
        for column in ["TITLE", "DIRECTORY", "MODEL", "COST", "TURNS"] {
            assert!(header.contains(column), "{column} at {width}:\n{shown}");
        }
        let row = shown
            .lines()
            .find(|l| l.contains("And add a section"))
            .unwrap();
        assert!(row.contains("very_long_directory_name"), "{row}");
        assert!(row.contains("opus-4-1") && row.contains("$0.10"), "{row}");
    }
}

#[test]
fn a_wide_terminal_shows_the_selected_session_beside_the_list() {
    let mut state = loaded(160, 30);
    keys(&mut state, "jj");
    let shown = screen(&state, true);
    insta::assert_snapshot!("wide_sessions_160x30", shown);
    // The list and the pane share lines: the selected session's title is beside the header.
    let header = shown.lines().nth(2).unwrap();
    assert!(header.contains("STATUS"), "{shown}");
    assert!(header.contains("And add a section on install"), "{shown}");
    assert!(shown.contains("Query"), "{shown}");
    // Another selection, another pane: the waiting session's approval, and what it did last
    // as it streamed (which moves it to the top).
    let said = event(
        7,
        "s-wait",
        json!({"event_type": "message", "role": "assistant",
            "content": "The port is taken: I will use port 0.\nMore later."}),
    );
    update(&mut state, stored(said));
    keys(&mut state, "gg");
    let shown = screen(&state, true);
    assert!(shown.contains("Waiting for you"), "{shown}");
    assert!(shown.contains("cargo test -p net"), "{shown}");
    assert!(shown.contains("Latest"), "{shown}");
    assert!(
        shown.contains("The port is taken: I will use port 0."),
        "{shown}"
    );
    assert!(!shown.contains("More later"), "{shown}");
}

#[test]
fn a_wide_terminal_shows_the_selected_approval_beside_the_list() {
    let mut state = loaded(160, 30);
    keys(&mut state, "2");
    assert_eq!(state.screen, Screen::Approvals);
    let shown = screen(&state, true);
    insta::assert_snapshot!("wide_approvals_160x30", shown);
    // The call's detail starts on the list's first lines, not below the list.
    let at = shown
        .lines()
        .position(|l| l.contains("$ cargo test -p net"))
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(at <= 3, "{shown}");
}

#[test]
fn events_streamed_while_a_conversation_loads_are_kept() {
    let mut state = loaded(100, 30);
    keys(&mut state, "j");
    update(&mut state, key(KeyCode::Enter));
    // The daemon read the conversation (empty) before the agent's first words, which arrive
    // ahead of the load's answer.
    let said = |id: i64, text: &str| {
        let fields = json!({"event_type": "message", "role": "assistant", "content": text});
        stored(event(id, "s-wait", fields))
    };
    update(&mut state, said(1, "I'll create that file for you."));
    let answer = |events| Msg::Conversation {
        session_id: "s-wait".into(),
        events,
        approvals: Vec::new(),
    };
    update(&mut state, answer(Vec::new()));
    let shown = screen(&state, true);
    assert!(shown.contains("I'll create that file for you."), "{shown}");

    // After a reconnect too: what streams in before the reload's answer stays, what the answer
    // holds replaces what was shown.
    update(&mut state, Msg::Connected);
    update(&mut state, said(2, "Done."));
    let stored = event(
        1,
        "s-wait",
        json!({"event_type": "message", "role": "assistant", "content": "I'll create it."}),
    );
    update(&mut state, answer(vec![stored]));
    let shown = screen(&state, true);
    assert!(shown.contains("I'll create it."), "{shown}");
    assert!(shown.contains("Done."), "{shown}");
    assert!(!shown.contains("I'll create that file"), "{shown}");
}

#[test]
fn the_selection_stays_on_its_session_when_another_one_moves_up() {
    let mut state = loaded(160, 30);
    keys(&mut state, "jjj");
    let header = |state: &State| screen(state, true).lines().nth(2).unwrap().to_owned();
    assert!(
        header(&state).contains("│ Explore the codebase"),
        "{}",
        header(&state)
    );
    // The failed session, below it, streams: it goes to the top, the selection stays.
    let fields = json!({"event_type": "message", "role": "assistant", "content": "Retrying"});
    update(&mut state, stored(event(9, "s-fail", fields)));
    assert!(
        header(&state).contains("│ Explore the codebase"),
        "{}",
        screen(&state, true)
    );
    // A reloaded list in another order too.
    let mut reordered = sessions();
    reordered[4].last_activity_at = ago(0);
    update(&mut state, Msg::Sessions(reordered));
    assert!(
        header(&state).contains("│ Explore the codebase"),
        "{}",
        screen(&state, true)
    );
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [
            hld_tui::app::Command::LoadConversation("s-int".into()),
            hld_tui::app::Command::LoadQueue("s-int".into())
        ]
    );
}

#[test]
fn a_long_input_scrolls_in_the_approvals_detail() {
    let mut state = loaded(80, 24);
    let content: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let write = json!({"file_path": "/home/me/project/notes.txt", "content": content});
    update(
        &mut state,
        Msg::Approvals(vec![
            approval("a-long", "s-run", "Write", write, 4),
            approval("a-next", "s-wait", "Bash", json!({"command": "ls"}), 2),
        ]),
    );
    keys(&mut state, "2");
    let shown = screen(&state, false);
    assert!(
        shown.contains("line 1") && !shown.contains("line 40"),
        "{shown}"
    );
    assert!(shown.contains("more lines · PgDn End"), "{shown}");
    assert!(!shown.contains("PgUp Home"), "{shown}");
    // Down to the end: the last line and the keys below it show, and no further.
    for _ in 0..8 {
        update(&mut state, ctrl('d'));
    }
    let end = screen(&state, false);
    assert!(
        end.contains("line 40") && !end.contains("PgDn End") && end.contains("PgUp Home"),
        "{end}"
    );
    update(&mut state, ctrl('d'));
    assert_eq!(screen(&state, false), end);
    update(&mut state, ctrl('u'));
    assert!(screen(&state, false).contains("more lines · PgDn End"));
    // Another approval starts at its top; back on this one too.
    keys(&mut state, "jk");
    let shown = screen(&state, false);
    assert!(shown.contains("more lines · PgDn End"), "{shown}");
}

/// Paged down, the detail says how many rows are hidden above and below, and the keys to them.
#[test]
fn a_scrolled_approval_detail_marks_the_rows_above_and_below() {
    let mut state = loaded(80, 24);
    let content: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let write = json!({"file_path": "/home/me/project/notes.txt", "content": content});
    update(
        &mut state,
        Msg::Approvals(vec![approval("a-long", "s-run", "Write", write, 4)]),
    );
    keys(&mut state, "2");
    update(&mut state, key(KeyCode::PageDown));
    let shown = screen(&state, false);
    insta::assert_snapshot!("approval_scrolled_80x24", shown);
    assert!(shown.contains("↑ ") && shown.contains("↓ "), "{shown}");
    update(&mut state, key(KeyCode::Home));
    assert!(!screen(&state, false).contains("more lines · PgUp"));
}

#[test]
fn a_long_title_in_the_title_bar_ends_in_an_ellipsis_clear_of_the_right_side() {
    let mut state = with_conversation(110, 24);
    let mut list = sessions();
    list[1].control.title = "Fix the flaky test in ci and then everything else".repeat(2);
    update(&mut state, Msg::Sessions(list));
    let shown = screen(&state, false);
    let bar = shown.lines().next().unwrap();
    let (title, right) = bar.split_once('…').expect(bar);
    assert!(title.contains("Fix the flaky test"), "{bar}");
    assert!(
        right.starts_with(' ') && right.trim() == "● connected",
        "{bar}"
    );
}

#[test]
fn a_popup_over_a_wide_title_keeps_its_left_border() {
    for (pad, width) in [("", 120), ("x", 120), ("", 121), ("x", 121)] {
        let mut state = loaded(width, 24);
        let title = format!("{pad}{}", "日本語のタイトル".repeat(4));
        let list = (0..20)
            .map(|i| session(&format!("s-{i}"), "running", &title, i, json!({})))
            .collect();
        update(&mut state, Msg::Sessions(list));
        keys(&mut state, "M");
        let shown = screen(&state, false);
        let top = shown.lines().find(|l| l.contains('┐')).expect(&shown);
        let bottom = shown.lines().find(|l| l.contains('┘')).expect(&shown);
        assert!(top.contains('┌') && bottom.contains('└'), "{shown}");
        let rows = shown.lines().skip_while(|l| !l.contains('┐')).skip(1);
        for row in rows.take_while(|l| !l.contains('┘')) {
            assert_eq!(row.matches('│').count(), 2, "{row:?} in\n{shown}");
        }
    }
}

/// An approval a session rule decided as it was made (never pending) shows its comment live,
/// as a reload shows it, whether its tool call streamed in before the decision or after.
#[test]
fn a_rules_approval_shows_its_comment_live_as_after_a_reload() {
    use hld_client::protocol::{ApprovalStatus, ApprovalType, Event};
    let bypassed = "Approved automatically: permissions are bypassed for this session.";
    let mut state = with_conversation(120, 40);
    let call = |id: i64, approval: &str| {
        event(
            id,
            "s-wait",
            json!({"event_type": "tool_call", "role": "assistant", "tool_name": "Bash",
                "tool_id": format!("tool-{approval}"), "approval_id": approval,
                "approval_status": "approved",
                "tool_input_json": json!({"command": format!("echo {approval}")}).to_string()}),
        )
    };
    let resolved = |approval: &str| {
        timed(Event::ApprovalResolved {
            approval_id: approval.into(),
            call_id: approval.into(),
            session_id: "s-wait".into(),
            run_id: "run-s-wait".into(),
            decision: ApprovalStatus::Approved,
            comment: Some(bypassed.into()),
            kind: ApprovalType::FunctionCall,
            total: 0,
            decided_by: Some("dangerously_skip_permissions".into()),
            settled_on_request: true,
        })
    };
    update(&mut state, stored(call(7, "r1")));
    update(&mut state, resolved("r1"));
    update(&mut state, resolved("r2"));
    update(&mut state, stored(call(8, "r2")));
    let shown = screen(&state, false);
    let marked = format!("✓ approved: {bypassed}");
    for command in ["$ echo r1", "$ echo r2"] {
        let at = shown
            .lines()
            .position(|l| l.contains(command))
            .expect(&shown);
        let mark = shown.lines().nth(at + 1).unwrap();
        assert!(mark.contains(&marked), "{command}: {mark}\n{shown}");
    }
}

/// The end of a big Write waiting for approval can be read: PageDown/PageUp page the detail,
/// End and Home go to its end and top, G on the only approval leaves it where it is; in the
/// conversation, `i` shows the whole input, its last line and the approval's state.
#[test]
fn a_big_writes_end_is_reached_in_the_approvals_detail_and_the_conversation() {
    let mut state = with_conversation(80, 24);
    let content: String = (1..=3200).map(|i| format!("row {i}\n")).collect();
    let write = json!({"file_path": "/home/me/project/big.txt", "content": content});
    let call = json!({"event_type": "tool_call", "role": "assistant", "tool_name": "Write",
        "tool_id": "tool-big", "tool_input_json": write.to_string()});
    update(&mut state, stored(event(7, "s-wait", call)));
    update(
        &mut state,
        Msg::Approvals(vec![approval("big", "s-wait", "Write", write, 4)]),
    );
    keys(&mut state, "i");
    keys(&mut state, "G");
    let shown = screen(&state, false);
    for line in ["+ row 3200", "waiting for approval"] {
        assert!(shown.contains(line), "{line}:\n{shown}");
    }
    assert!(!shown.contains("cut: too long"), "{shown}");

    keys(&mut state, "2");
    let row = |shown: &str| -> usize {
        let first = shown.lines().find_map(|l| l.trim().strip_prefix("+ row "));
        let first = first
            .and_then(|r| r.split_whitespace().next())
            .expect(shown);
        first.parse().unwrap()
    };
    let top = row(&screen(&state, false));
    update(&mut state, key(KeyCode::PageDown));
    let paged = row(&screen(&state, false));
    assert!(paged > top + 5, "{top} → {paged}");
    update(&mut state, key(KeyCode::PageUp));
    assert_eq!(row(&screen(&state, false)), top);
    update(&mut state, key(KeyCode::End));
    let end = screen(&state, false);
    assert!(
        end.contains("row 3200") && !end.contains("PgDn End"),
        "{end}"
    );
    keys(&mut state, "G");
    assert_eq!(screen(&state, false), end);
    update(&mut state, key(KeyCode::Home));
    assert_eq!(row(&screen(&state, false)), top);
}

#[test]
fn the_detail_pane_wraps_a_result_under_its_text_a_blank_row_between_paragraphs() {
    let mut state = loaded(160, 30);
    let said = "The parser now lives in its own module, with the lexer beside it; every test \
                passes and the public API is unchanged.\n\nNext: the error messages.";
    let mut listed = sessions();
    let child = listed.iter_mut().find(|s| s.id == "s-child").unwrap();
    child.result = serde_json::from_value(json!({"type": "result", "subtype": "success",
        "is_error": false, "total_cost_usd": 0.1, "duration_ms": 1000,
        "duration_api_ms": 900, "num_turns": 1, "result": said, "session_id": "c"}))
    .unwrap();
    update(&mut state, Msg::Sessions(listed));
    keys(&mut state, "jj");
    let shown = screen(&state, false);
    // The pane's rows, after the list's columns and the pane's border.
    let rows: Vec<&str> = shown
        .lines()
        .filter_map(|l| l.split_once('│').map(|(_, pane)| pane.trim_end()))
        .skip_while(|l| !l.contains("Result"))
        .skip(1)
        .take(6)
        .collect();
    assert_eq!(rows.len(), 6, "{shown}");
    assert!(rows[0].starts_with("   The parser"), "{shown}");
    let blank = rows.iter().position(|r| r.trim().is_empty()).expect(&shown);
    assert!(blank >= 2, "the first paragraph wraps: {shown}");
    for row in &rows[1..blank] {
        assert!(
            row.starts_with("   ") && !row.starts_with("    "),
            "{row:?}\n{shown}"
        );
    }
    assert_eq!(rows[blank + 1], "   Next: the error messages.", "{shown}");
}
