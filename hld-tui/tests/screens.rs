//! Whole screens through ratatui's `TestBackend` (insta snapshots at 80×24 and 120×40), and
//! `update`'s behaviour fed scripted keys and daemon events, with no terminal or daemon.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use hld_client::protocol::{ApprovalStatus, ApprovalType, Event, SessionStatus};
use hld_tui::app::{update, Command, Link, Msg, Screen, State, DEFAULT_DENIAL};
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use ratatui::Terminal;
use serde_json::json;

// A test file is a crate root, so its modules are named by path.
#[path = "screens/details.rs"]
mod details;
#[path = "screens/drafts.rs"]
mod drafts;
#[path = "screens/fixtures.rs"]
mod fixtures;
#[path = "screens/fleet.rs"]
mod fleet;
#[path = "screens/fleet_usage.rs"]
mod fleet_usage;
#[path = "screens/launch.rs"]
mod launch;
#[path = "screens/queue.rs"]
mod queue;
#[path = "screens/review.rs"]
mod review;
#[path = "screens/settings.rs"]
mod settings;
#[path = "screens/steer.rs"]
mod steer;
#[path = "screens/usage.rs"]
mod usage;

use fixtures::*;

/// Snapshots `make`'s state at 80×24 and 120×40.
fn snap(name: &str, make: impl Fn(u16, u16) -> State) {
    for (w, h) in [(80, 24), (120, 40)] {
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen(&make(w, h), true));
    }
}

#[test]
fn screen_empty_daemon() {
    snap("empty", |w, h| {
        let mut state = State::new(now(), w, h, true);
        update(&mut state, Msg::Connected);
        update(&mut state, Msg::Sessions(Vec::new()));
        state
    });
}

#[test]
fn an_empty_list_waits_for_the_daemon_before_saying_there_are_no_sessions() {
    let mut state = State::new(now(), 100, 20, true);
    let waiting = "Waiting for the daemon: its sessions show once it answers.";
    assert!(screen(&state, false).contains(waiting));
    update(&mut state, Msg::Connected);
    update(&mut state, Msg::Sessions(Vec::new()));
    let text = screen(&state, false);
    assert!(
        text.contains("No sessions yet") && !text.contains(waiting),
        "{text}"
    );
    let error = "connection refused".into();
    update(
        &mut state,
        Msg::Disconnected {
            error,
            retry_in_ms: 2000,
        },
    );
    assert!(screen(&state, false).contains(waiting));
}

#[test]
fn screen_lost_connection() {
    snap("lost_connection", |w, h| {
        let mut state = loaded(w, h);
        update(
            &mut state,
            Msg::Disconnected {
                error: "connection refused".into(),
                retry_in_ms: 2000,
            },
        );
        state
    });
}

#[test]
fn screen_sessions() {
    snap("sessions", loaded);
}

#[test]
fn screen_sessions_with_an_expanded_chain_and_a_search() {
    snap("sessions_chain_search", |w, h| {
        let mut state = loaded(w, h);
        keys(&mut state, "/readme");
        update(&mut state, key(KeyCode::Enter));
        update(&mut state, key(KeyCode::Char(' ')));
        state
    });
}

#[test]
fn screen_conversation() {
    snap("conversation", |w, h| {
        let mut state = with_conversation(w, h);
        keys(&mut state, "gg");
        state
    });
}

#[test]
fn screen_conversation_with_thinking_and_long_output_expanded() {
    snap("conversation_expanded", |w, h| {
        let mut state = with_conversation(w, h);
        keys(&mut state, "ti");
        keys(&mut state, "gg");
        state
    });
}

#[test]
fn screen_conversation_with_reply_box() {
    snap("conversation_reply", |w, h| {
        let mut state = with_conversation(w, h);
        update(
            &mut state,
            Msg::Sessions(
                sessions()
                    .into_iter()
                    .map(|mut s| {
                        if s.id == "s-wait" {
                            s.status = SessionStatus::Completed;
                        }
                        s
                    })
                    .collect(),
            ),
        );
        keys(&mut state, "rnow add a test");
        state
    });
}

#[test]
fn screen_approvals() {
    snap("approvals", |w, h| {
        let mut state = loaded(w, h);
        update(
            &mut state,
            timed(Event::NewApproval {
                approval: Box::new(question("q1", "s-run", "Which branch should I push to?")),
                session_id: "s-run".into(),
                run_id: "run".into(),
                kind: ApprovalType::HumanContact,
                count: 1,
                total: 3,
            }),
        );
        keys(&mut state, "2");
        state
    });
}

#[test]
fn screen_modals() {
    snap("help", |w, h| {
        let mut state = loaded(w, h);
        keys(&mut state, "?");
        state
    });
    snap("help_scrolled_to_the_end", |w, h| {
        let mut state = loaded(w, h);
        keys(&mut state, "?G");
        state
    });
    snap("deny_box", |w, h| {
        let mut state = loaded(w, h);
        keys(&mut state, "2dnot on main");
        state
    });
    snap("interrupt_confirm", |w, h| {
        let mut state = loaded(w, h);
        update(&mut state, ctrl('x'));
        state
    });
    snap("launch_form", |w, h| {
        let mut state = loaded(w, h);
        keys(&mut state, "cAdd a --verbose flag");
        update(&mut state, key(KeyCode::Tab));
        state
    });
}

#[test]
fn the_launch_forms_recent_directories_keep_their_ends_and_fit() {
    let mut state = State::new(now(), 80, 24, true);
    update(&mut state, Msg::Connected);
    let deep = |name: &str| format!("/srv/build/checkouts/of/the/team/services/{name}");
    let sessions = ["billing-gateway", "search-indexer", "notifications"]
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let extra = json!({"working_dir": deep(name)});
            session(&format!("s{i}"), "completed", name, i as i64 * 10, extra)
        })
        .collect();
    update(&mut state, Msg::Sessions(sessions));
    keys(&mut state, "c");
    let shown = screen(&state, false);
    let line = shown
        .lines()
        .find(|l| l.contains("recent:"))
        .unwrap_or_else(|| panic!("no recent line:\n{shown}"));
    for name in ["billing-gateway", "search-indexer", "notifications"] {
        assert!(line.contains(&format!("…/{name}")), "{line}");
    }
    // The form's right border is still drawn after it.
    assert!(line.trim_end().ends_with('│'), "{line}");
}

#[test]
fn no_color_leaves_no_colour_in_any_cell() {
    let state = with_conversation(80, 24);
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|f| hld_tui::view::draw(&state, f, false))
        .unwrap();
    let buffer = terminal.backend().buffer();
    assert!(buffer
        .content
        .iter()
        .all(|c| c.fg == Color::Reset && c.bg == Color::Reset));
    // The same screen with colour has some.
    terminal
        .draw(|f| hld_tui::view::draw(&state, f, true))
        .unwrap();
    assert!(terminal
        .backend()
        .buffer()
        .content
        .iter()
        .any(|c| c.fg != Color::Reset));
}

#[test]
fn tiny_terminals_resizes_and_huge_content_never_panic() {
    let mut state = with_conversation(80, 24);
    let huge = "x".repeat(2_000_000) + "\n" + &"line\n".repeat(100_000);
    update(
        &mut state,
        stored(event(
            7,
            "s-wait",
            json!({"event_type": "message",
                "role": "assistant", "content": huge}),
        )),
    );
    for (w, h) in [
        (1, 1),
        (0, 0),
        (5, 2),
        (19, 4),
        (20, 5),
        (30, 8),
        (300, 100),
    ] {
        update(&mut state, Msg::Resize(w, h));
        for screen_key in ["1", "2", "?"] {
            keys(&mut state, screen_key);
            screen(&state, true);
            keys(&mut state, "?");
        }
    }
    // An event's lines are capped, so the huge message cannot swamp the view.
    update(&mut state, Msg::Resize(80, 24));
    let c = state.conversation.as_ref().unwrap();
    assert!(c.total_lines() < 10_000, "{} lines", c.total_lines());
    assert!(screen(&state, true).contains("hld"));
}

#[test]
fn approving_shows_at_once_and_sends_the_decision() {
    let mut state = loaded(80, 24);
    keys(&mut state, "2");
    let commands = keys(&mut state, "a");
    assert_eq!(state.approvals.len(), 1);
    assert_eq!(state.approvals[0].id, "a2");
    let Command::Decide(params) = &commands[0] else {
        panic!("{commands:?}")
    };
    assert_eq!(params.call_id.as_deref(), Some("a1"));
    assert_eq!(params.decision.as_deref(), Some("approve"));
    assert!(screen(&state, true).contains("approved Bash"));
}

#[test]
fn denying_without_a_comment_sends_the_default_and_with_one_sends_it() {
    let mut state = loaded(80, 24);
    keys(&mut state, "2d");
    let commands = update(&mut state, key(KeyCode::Enter));
    let Command::Decide(params) = &commands[0] else {
        panic!("{commands:?}")
    };
    assert_eq!(params.decision.as_deref(), Some("deny"));
    assert_eq!(params.comment.as_deref(), Some(DEFAULT_DENIAL));
    let commands = [
        keys(&mut state, "nuse a branch"),
        update(&mut state, key(KeyCode::Enter)),
    ]
    .concat();
    let Command::Decide(params) = &commands[0] else {
        panic!("{commands:?}")
    };
    assert_eq!(params.comment.as_deref(), Some("use a branch"));
    assert!(state.approvals.is_empty());
}

/// Several questions at once (one `AskUserQuestion`) are answered a line each, from the
/// approvals list: its detail shows each question with its numbered choices, the box asks
/// the question of the cursor's line, and Enter moves on to the next one until the last. A
/// question of several lines that is one question is answered as one.
#[test]
fn several_questions_are_answered_a_line_each() {
    let mut state = loaded(80, 24);
    let mut asked = question("q1", "s-wait", "Colour?\nSize?");
    asked.tool_use_id = Some("tool-q1".into());
    asked.function_args = Some(json!({"questions": [
        {"question": "Colour?", "options": [{"label": "Blue", "description": "like the sky"},
            {"label": "Red"}]},
        {"question": "Size?", "multiSelect": true,
            "options": [{"label": "Small"}, {"label": "Large"}]}]}));
    let mut one = question("q2", "s-wait", "Done with X.\nShall I do Y?");
    one.tool_use_id = Some("tool-q2".into());
    update(&mut state, Msg::Approvals(vec![asked, one]));
    keys(&mut state, "2");
    let detail = screen(&state, false);
    for line in [
        "2 questions: Colour?",
        "? Colour?",
        "1. Blue — like the sky",
        "2. Red",
        "? Size?",
        "(several may be picked: their numbers, e.g. 1, 3)",
        "r answer, a line each (a choice's number picks it)",
    ] {
        assert!(detail.contains(line), "{line:?} in\n{detail}");
    }
    keys(&mut state, "r");
    let shown = screen(&state, false);
    assert!(
        shown.contains("Answer 1 of 2: Colour?") && shown.contains("Enter: the next question"),
        "{shown}"
    );
    // Enter moves on to the next question (Alt+Enter too); on the last one it sends.
    keys(&mut state, "Blue");
    assert!(update(&mut state, key(KeyCode::Enter)).is_empty());
    let shown = screen(&state, false);
    assert!(
        shown.contains("Answer 2 of 2: Size?") && shown.contains(" Enter sends · Esc"),
        "{shown}"
    );
    // A number that names no choice is told, and the box stays as typed.
    keys(&mut state, "1, 3");
    assert!(update(&mut state, key(KeyCode::Enter)).is_empty());
    let shown = screen(&state, false);
    assert!(shown.contains("“Size?”: choose 1–2"), "{shown}");
    for _ in 0..4 {
        update(&mut state, key(KeyCode::Backspace));
    }
    keys(&mut state, "Large");
    let alt_enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT);
    assert!(update(&mut state, Msg::Key(alt_enter)).is_empty());
    assert!(update(&mut state, key(KeyCode::Backspace)).is_empty());
    let commands = update(&mut state, key(KeyCode::Enter));
    let [Command::Decide(params)] = commands.as_slice() else {
        panic!("{commands:?}")
    };
    assert_eq!(params.comment.as_deref(), Some("Blue\nLarge"));
    keys(&mut state, "r");
    let shown = screen(&state, false);
    assert!(shown.contains("Answer: Done with X."), "{shown}");
    assert!(!shown.contains("a line each"), "{shown}");
}

#[test]
fn a_question_needs_an_answer_and_gets_respond() {
    let mut state = loaded(80, 24);
    update(
        &mut state,
        Msg::Approvals(vec![question("q1", "s-run", "Which branch?")]),
    );
    keys(&mut state, "2");
    update(&mut state, key(KeyCode::Enter));
    assert!(
        update(&mut state, key(KeyCode::Enter)).is_empty(),
        "empty answer sent"
    );
    let commands = [
        keys(&mut state, "main"),
        update(&mut state, key(KeyCode::Enter)),
    ]
    .concat();
    let Command::Decide(params) = &commands[0] else {
        panic!("{commands:?}")
    };
    assert_eq!(params.decision.as_deref(), Some("respond"));
    assert_eq!(params.kind.as_deref(), Some("human_contact"));
    assert_eq!(params.comment.as_deref(), Some("main"));
}

#[test]
fn a_decision_made_elsewhere_shows_at_once_on_the_tool_call() {
    let mut state = with_conversation(80, 24);
    update(
        &mut state,
        Msg::Approvals(vec![approval(
            "a1",
            "s-wait",
            "Bash",
            json!({"command": "ls"}),
            5,
        )]),
    );
    let before = screen(&state, true);
    assert!(before.contains("waiting for approval"), "{before}");
    update(
        &mut state,
        timed(Event::ApprovalResolved {
            approval_id: "a1".into(),
            call_id: "a1".into(),
            session_id: "s-wait".into(),
            run_id: "run".into(),
            decision: ApprovalStatus::Denied,
            comment: Some("not today".into()),
            kind: ApprovalType::FunctionCall,
            total: 0,
            decided_by: None,
            settled_on_request: false,
        }),
    );
    assert!(state.approvals.is_empty());
    let after = screen(&state, true);
    assert!(after.contains("✗ denied: not today"), "{after}");
    assert!(
        !after.contains("pending"),
        "the pending badge stays: {after}"
    );
}

#[test]
fn a_new_approval_is_listed_once_and_ctrl_g_jumps_to_the_oldest() {
    let mut state = loaded(80, 24);
    let new = |id: &str| {
        timed(Event::NewApproval {
            approval: Box::new(approval(id, "s-run", "Bash", json!({"command": "ls"}), 0)),
            session_id: "s-run".into(),
            run_id: "run".into(),
            kind: ApprovalType::FunctionCall,
            count: 1,
            total: 3,
        })
    };
    // The list is fetched again, so that one fetched before this approval existed (and
    // answered after it) cannot hide it: the runtime drops an answer a newer load overtook.
    // The bell is the daemon's notification's, not the approval's.
    assert_eq!(update(&mut state, new("a3")), [Command::LoadApprovals]);
    assert!(
        update(&mut state, new("a3")).is_empty(),
        "a repeat loaded again"
    );
    update(&mut state, new("a4"));
    update(&mut state, ctrl('g'));
    assert_eq!(state.screen, Screen::Approvals);
    assert_eq!(state.approvals[state.approval_selected].id, "a1");
    assert_eq!(state.approvals.len(), 4);
}

#[test]
fn scrolling_up_stops_following_and_g_resumes() {
    let mut state = with_conversation(80, 12);
    let c = state.conversation.as_ref().unwrap();
    assert!(c.follow);
    let bottom = state.conversation_top();
    assert!(bottom > 0);
    keys(&mut state, "k");
    assert!(!state.conversation.as_ref().unwrap().follow);
    assert_eq!(state.conversation_top(), bottom - 1);
    // New events do not move a reader who scrolled up.
    update(
        &mut state,
        stored(event(
            9,
            "s-wait",
            json!({"event_type": "message",
                "role": "assistant", "content": "more\nlines\nhere"}),
        )),
    );
    assert_eq!(state.conversation_top(), bottom - 1);
    assert!(screen(&state, true).contains("more lines · G follows"));
    keys(&mut state, "G");
    assert!(state.conversation.as_ref().unwrap().follow);
    assert!(state.conversation_top() > bottom);
}

#[test]
fn a_reconnect_reloads_everything_shown_and_replaces_it() {
    let mut state = with_conversation(80, 24);
    update(
        &mut state,
        Msg::Disconnected {
            error: "gone".into(),
            retry_in_ms: 100,
        },
    );
    assert!(matches!(state.link, Link::Reconnecting { .. }));
    assert_eq!(
        update(&mut state, Msg::Connected),
        [
            Command::LoadSessions,
            Command::LoadDrafts,
            Command::LoadApprovals,
            Command::LoadRateLimits,
            Command::LoadConversation("s-wait".into()),
            Command::LoadQueue("s-wait".into())
        ]
    );
    update(
        &mut state,
        Msg::Sessions(vec![session(
            "s-new",
            "running",
            "Only this one",
            1,
            json!({}),
        )]),
    );
    update(
        &mut state,
        Msg::Conversation {
            session_id: "s-wait".into(),
            events: conversation("s-wait")[..2].to_vec(),
            approvals: Vec::new(),
        },
    );
    assert_eq!(state.conversation.as_ref().unwrap().events.len(), 2);
    keys(&mut state, "1");
    let shown = screen(&state, true);
    assert!(
        shown.contains("Only this one") && !shown.contains("Write a README"),
        "{shown}"
    );
}

#[test]
fn the_list_shows_one_row_per_chain_and_filters_and_searches() {
    let mut state = loaded(120, 40);
    let ids = |state: &State| {
        state
            .rows()
            .iter()
            .map(|r| r.session.id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(&state),
        ["s-run", "s-wait", "s-child", "s-int", "s-fail"]
    );
    assert!(screen(&state, false).contains(" Sessions (5)"));
    keys(&mut state, "jj ");
    assert_eq!(
        ids(&state),
        ["s-run", "s-wait", "s-child", "s-done", "s-int", "s-fail"]
    );
    // A chain counts once, expanded or not.
    assert!(screen(&state, false).contains(" Sessions (5)"));
    keys(&mut state, "f");
    assert_eq!(ids(&state), ["s-run", "s-wait"]);
    keys(&mut state, "ffff");
    assert_eq!(ids(&state), ["s-fail"]);
    keys(&mut state, "f/PARSER");
    assert_eq!(ids(&state), ["s-run"]);
    update(&mut state, key(KeyCode::Esc));
    assert_eq!(ids(&state).len(), 6, "the expanded chain stays expanded");
}

#[test]
fn a_status_change_moves_the_session_up_and_reloads_the_list() {
    let mut state = loaded(80, 24);
    let commands = update(
        &mut state,
        status_changed("s-fail", SessionStatus::Failed, SessionStatus::Running),
    );
    assert_eq!(commands, [Command::LoadSessions]);
    assert_eq!(state.rows()[0].session.id, "s-fail");
}

#[test]
fn an_interrupt_shows_as_such_before_the_list_is_read_again() {
    use hld_client::protocol::SessionStatus::*;
    let mut state = loaded(80, 24);
    let mut moved = |id: &str, title: &str, old_status, new_status| {
        update(&mut state, status_changed(id, old_status, new_status));
        let shown = screen(&state, false);
        let row = shown.lines().find(|l| l.contains(title));
        row.map(str::to_owned)
            .unwrap_or_else(|| panic!("{title} in\n{shown}"))
    };
    let parser = "Refactor the parser";
    moved("s-run", parser, Running, Completing);
    assert!(moved("s-run", parser, Completing, Completed).contains("■ interrupted"));
    // The next turn is no longer interrupted, nor is its end.
    let explore = "Explore the codebase";
    moved("s-int", explore, Completed, Running);
    assert!(moved("s-int", explore, Running, Completed).contains("✓ completed"));
}

#[test]
fn back_on_the_list_the_session_just_read_is_selected() {
    let mut state = loaded(80, 24);
    keys(&mut state, "G");
    update(&mut state, key(KeyCode::Enter));
    assert_eq!(state.screen, Screen::Conversation);
    // While it is read, it moves to the top of the list.
    update(
        &mut state,
        status_changed("s-fail", SessionStatus::Failed, SessionStatus::Running),
    );
    update(&mut state, key(KeyCode::Esc));
    assert_eq!(state.screen, Screen::Sessions);
    let selected = &state.rows()[state.list.selected];
    assert_eq!(selected.session.id, "s-fail");
}

#[test]
fn launching_from_the_form_sends_the_fields() {
    let mut state = loaded(80, 24);
    keys(&mut state, "cline one");
    // Alt+Enter starts a new line of the query; Enter would launch.
    update(
        &mut state,
        Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)),
    );
    keys(&mut state, "line two");
    update(&mut state, key(KeyCode::Tab));
    update(&mut state, key(KeyCode::Tab));
    update(&mut state, key(KeyCode::Right));
    update(&mut state, key(KeyCode::Tab));
    update(&mut state, key(KeyCode::Left));
    let commands = update(&mut state, ctrl('s'));
    let [Command::Launch(params)] = commands.as_slice() else {
        panic!("{commands:?}")
    };
    assert_eq!(params.query, "line one\nline two");
    assert_eq!(params.working_dir.as_deref(), Some("/home/me/project"));
    assert_eq!(params.model.as_deref(), Some("opus"));
    assert_eq!(params.no_approvals, Some(true));
    assert_eq!(params.auto_accept_edits, None);
    // The form waits for the daemon's answer, and closes once the session is launched.
    assert!(state.modal.is_some());
    update(&mut state, Msg::Opened("s-run".into()));
    assert!(state.modal.is_none());
    // Right from "ask" is auto-accept of edits, with the approvals server kept; Enter
    // launches, as Ctrl+S does.
    keys(&mut state, "cq");
    for _ in 0..3 {
        update(&mut state, key(KeyCode::Tab));
    }
    update(&mut state, key(KeyCode::Right));
    let commands = update(&mut state, key(KeyCode::Enter));
    let [Command::Launch(params)] = commands.as_slice() else {
        panic!("{commands:?}")
    };
    assert_eq!(params.auto_accept_edits, Some(true));
    assert_eq!(params.no_approvals, None);
    // Until the daemon answers, the form says it is launching; the session opened then
    // tells that it was.
    assert!(screen(&state, false).contains("launching…"));
    let opened = update(&mut state, Msg::Opened("s-run".into()));
    assert!(
        opened.contains(&Command::LoadConversation("s-run".into())),
        "{opened:?}"
    );
    assert!(!screen(&state, false).contains("launching…"));
}

#[test]
fn interrupting_asks_first() {
    let mut state = loaded(80, 24);
    update(&mut state, ctrl('x'));
    assert!(keys(&mut state, "n").is_empty());
    update(&mut state, ctrl('x'));
    assert_eq!(keys(&mut state, "y"), [Command::Interrupt("s-run".into())]);
    // A session that ends while asked about closes the question: keys typed next are not
    // taken by it.
    update(&mut state, ctrl('x'));
    assert!(state.modal.is_some());
    update(
        &mut state,
        status_changed("s-run", SessionStatus::Running, SessionStatus::Completed),
    );
    assert!(state.modal.is_none());
    assert!(screen(&state, false).contains("the session is completed: nothing to interrupt"));
    // A finished session is not interrupted.
    keys(&mut state, "G");
    assert!(update(&mut state, ctrl('x')).is_empty());
    assert!(state.modal.is_none());
}

/// Ctrl+C, which Claude Code's users press to interrupt, quits only when pressed again soon
/// after; the first press says so, and how to interrupt instead.
#[test]
fn ctrl_c_quits_only_when_pressed_twice() {
    let mut state = loaded(80, 24);
    update(&mut state, key(KeyCode::Enter));
    assert_eq!(state.screen, Screen::Conversation);
    assert!(update(&mut state, ctrl('c')).is_empty());
    let footer = screen(&state, false).lines().last().unwrap().to_owned();
    assert!(
        footer.contains(
            "Ctrl+C again quits (the sessions keep running) · ^X interrupts this session"
        ),
        "{footer}"
    );
    assert_eq!(update(&mut state, ctrl('c')), [Command::Quit]);
    // Too late, or after another key, the next press asks again.
    let mut state = loaded(80, 24);
    assert!(update(&mut state, ctrl('c')).is_empty());
    update(&mut state, Msg::Tick(now() + chrono::Duration::seconds(3)));
    assert!(!screen(&state, false).contains("Ctrl+C again"));
    assert!(update(&mut state, ctrl('c')).is_empty());
    keys(&mut state, "j");
    assert!(update(&mut state, ctrl('c')).is_empty());
    // From a dialog too, which stays open after the first press.
    keys(&mut state, "cdraft");
    assert!(update(&mut state, ctrl('c')).is_empty());
    assert!(state.modal.is_some());
    assert_eq!(update(&mut state, ctrl('c')), [Command::Quit]);
}

#[test]
fn a_stored_event_that_changes_replaces_the_one_shown() {
    let mut state = with_conversation(80, 24);
    keys(&mut state, "gg");
    let mut call = conversation("s-wait").swap_remove(3);
    assert_eq!(call.tool_name.as_deref(), Some("Edit"));
    assert!(!screen(&state, true).contains("✗ denied"));
    call.approval_status = Some("denied".into());
    update(&mut state, stored(call));
    let c = state.conversation.as_ref().unwrap();
    assert_eq!(c.events.len(), conversation("s-wait").len(), "added twice");
    assert!(screen(&state, true).contains("✗ denied"));
}

/// Every binding's help, first or last key of its label included, is on an 80×24 screen at
/// one point while the help is scrolled down with `j`, and `k` scrolls back to the top.
#[test]
fn the_help_scrolls_to_every_binding_on_a_small_screen() {
    let mut state = loaded(80, 24);
    keys(&mut state, "?");
    let first = screen(&state, false);
    let mut seen = first.clone();
    for _ in 0..40 {
        keys(&mut state, "j");
        seen.push_str(&screen(&state, false));
    }
    let missing: Vec<&str> = hld_tui::keys::BINDINGS
        .iter()
        .map(|b| b.help)
        .filter(|help| !first.contains(help))
        .collect();
    assert!(!missing.is_empty(), "the help fits 80×24 unscrolled");
    for b in hld_tui::keys::BINDINGS {
        let shown = b.help.chars().take(20).collect::<String>();
        assert!(seen.contains(&shown), "{:?} never shown", b.help);
    }
    for _ in 0..40 {
        keys(&mut state, "k");
    }
    assert_eq!(screen(&state, false), first);
    keys(&mut state, "q");
    assert!(!screen(&state, false).contains("Keys (? or Esc closes)"));
}

/// At 50 columns, where two columns would cut every line, the help is one column: each
/// binding's label and whole help show as it scrolls.
#[test]
fn a_narrow_help_is_one_column_of_whole_lines() {
    let mut state = loaded(50, 24);
    keys(&mut state, "?");
    let mut seen = screen(&state, false);
    for _ in 0..80 {
        keys(&mut state, "j");
        seen.push_str(&screen(&state, false));
    }
    for b in hld_tui::keys::BINDINGS {
        let line = format!("{:<12}{}", b.label, b.help);
        assert!(seen.contains(&line), "{line:?} never shown whole:\n{seen}");
    }
}

/// A question asked with Claude Code's `AskUserQuestion` reads as its question and choices,
/// not as the tool's raw input, and says how to answer it; `a` opens the answer box.
#[test]
fn a_question_tool_call_shows_its_question_and_choices() {
    // A conversation of `notes` messages, then the question, followed to its end.
    let asked_after = |notes: i64| {
        let mut state = loaded(80, 24);
        update(&mut state, key(KeyCode::Down));
        update(&mut state, key(KeyCode::Enter));
        let (session_id, events, approvals) = ("s-wait".into(), Vec::new(), Vec::new());
        let empty = Msg::Conversation {
            session_id,
            events,
            approvals,
        };
        update(&mut state, empty);
        for n in 0..notes {
            let note = json!({"event_type": "message", "role": "assistant",
                "content": format!("note {n}")});
            update(&mut state, stored(event(7 + n, "s-wait", note)));
        }
        let input = json!({"questions": [{
            "question": "What colour should the button be?", "header": "Colour",
            "options": [{"label": "Blue", "description": "like the sky"}, {"label": "Red"}],
            "multiSelect": false,
        }]});
        let call = json!({"event_type": "tool_call", "role": "assistant", "tool_id": "tool-q1",
            "tool_name": "AskUserQuestion", "tool_input_json": input.to_string()});
        update(&mut state, stored(event(7 + notes, "s-wait", call)));
        let mut asked = question("q1", "s-wait", "What colour should the button be?");
        asked.tool_use_id = Some("tool-q1".into());
        update(&mut state, Msg::Approvals(vec![asked]));
        update(&mut state, key(KeyCode::Char('G')));
        state
    };
    let state = asked_after(0);
    let shown = screen(&state, false);
    for line in [
        "  ? What colour should the button be?",
        "    1. Blue — like the sky",
        "    2. Red\n",
        "waiting for your answer (a answers)",
    ] {
        assert!(shown.contains(line), "{line:?} in\n{shown}");
    }
    assert!(!shown.contains("\"questions\""), "{shown}");
    // The answer box leaves the choices in view, below a short conversation or above the
    // end of one that fills the screen.
    for notes in [0, 30] {
        let mut state = asked_after(notes);
        keys(&mut state, "a");
        let boxed = screen(&state, false);
        assert!(
            boxed.contains("Answer: What colour should the button be?"),
            "{boxed}"
        );
        assert!(boxed.contains("2. Red\n"), "{notes} notes:\n{boxed}");
    }
}

#[test]
fn screen_a_long_error_is_read_whole_above_the_footer() {
    snap("long_error", |w, h| {
        let mut state = loaded(w, h);
        let error = "cannot merge: git refused: error: Your local changes to the following \
                     files would be overwritten by merge:\n\tsrc/main.rs\n\tREADME.md\nPlease \
                     commit your changes or stash them before you merge. Aborting";
        update(&mut state, Msg::Failed(error.into()));
        state
    });
}
