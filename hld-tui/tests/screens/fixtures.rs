//! The screen tests' fixtures: sessions, approvals and a conversation at a fixed time, the
//! keys and events that drive `update`, and a screen drawn to text.

use chrono::{DateTime, Duration, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use hld_client::protocol::{
    Approval, ConversationEvent, Event, SessionInfo, SessionStatus, TimedEvent,
};
use hld_tui::app::{update, Command, Msg, State};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::{json, Value};

pub fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-27T12:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

pub fn ago(secs: i64) -> String {
    (now() - Duration::seconds(secs)).to_rfc3339()
}

pub fn session(id: &str, status: &str, query: &str, secs_ago: i64, extra: Value) -> SessionInfo {
    let mut v = json!({
        "id": id, "run_id": format!("run-{id}"), "claude_session_id": format!("claude-{id}"),
        "status": status, "start_time": ago(secs_ago + 60), "last_activity_at": ago(secs_ago),
        "query": query, "summary": query, "model": "claude-opus-4-1",
        "working_dir": "/home/me/project",
    });
    if let (Value::Object(v), Value::Object(extra)) = (&mut v, extra) {
        v.extend(extra);
    }
    serde_json::from_value(v).unwrap()
}

pub fn sessions() -> Vec<SessionInfo> {
    vec![
        session(
            "s-run",
            "running",
            "Refactor the parser into modules",
            5,
            json!({}),
        ),
        session(
            "s-wait",
            "waiting_input",
            "Fix the flaky test in ci",
            30,
            json!({}),
        ),
        session(
            "s-done",
            "completed",
            "Write a README",
            3600,
            json!({"cost_usd": 0.42, "result": {"type": "result", "subtype": "success",
                "total_cost_usd": 0.42, "is_error": false, "duration_ms": 1000,
                "duration_api_ms": 900, "num_turns": 7, "result": "done", "session_id": "c"}}),
        ),
        session(
            "s-child",
            "completed",
            "And add a section on install",
            120,
            json!({"parent_session_id": "s-done", "cost_usd": 0.1}),
        ),
        session(
            "s-int",
            "completed",
            "Explore the codebase",
            7200,
            json!({"interrupted": true}),
        ),
        session(
            "s-fail",
            "failed",
            "Deploy to prod",
            86400 * 2,
            json!({"error": "claude exited 1"}),
        ),
    ]
}

pub fn approval(id: &str, session_id: &str, tool: &str, args: Value, secs_ago: i64) -> Approval {
    serde_json::from_value(json!({
        "id": id, "call_id": id, "run_id": format!("run-{session_id}"), "session_id": session_id,
        "type": "function_call", "status": "pending", "function_name": tool,
        "function_args": args, "tool_use_id": format!("tool-{id}"), "requested_at": ago(secs_ago),
    }))
    .unwrap()
}

pub fn question(id: &str, session_id: &str, message: &str) -> Approval {
    serde_json::from_value(json!({
        "id": id, "call_id": id, "run_id": "run", "session_id": session_id,
        "type": "human_contact", "status": "pending", "message": message,
        "requested_at": ago(10),
    }))
    .unwrap()
}

pub fn event(id: i64, session_id: &str, fields: Value) -> ConversationEvent {
    let mut v = json!({
        "id": id, "session_id": session_id, "claude_session_id": "c", "sequence": id,
        "created_at": ago(100 - id), "is_completed": true, "is_error": false,
    });
    if let (Value::Object(v), Value::Object(fields)) = (&mut v, fields) {
        v.extend(fields);
    }
    serde_json::from_value(v).unwrap()
}

pub fn conversation(session_id: &str) -> Vec<ConversationEvent> {
    let long: String = (1..=40)
        .map(|i| format!("test case {i} ... ok\n"))
        .collect();
    vec![
        event(
            1,
            session_id,
            json!({"event_type": "message", "role": "user",
            "content": "Fix the flaky test in ci"}),
        ),
        event(
            2,
            session_id,
            json!({"event_type": "thinking", "role": "assistant",
            "content": "The test races on the port.\nUse port 0."}),
        ),
        event(
            3,
            session_id,
            json!({"event_type": "message", "role": "assistant",
            "content": "## Plan\n\n1. Find the test\n2. Fix the **race**\n\nRun `cargo test`:\n\n```sh\ncargo test -p net\n```"}),
        ),
        event(
            4,
            session_id,
            json!({"event_type": "tool_call", "role": "assistant",
            "tool_id": "tool-e1", "tool_name": "Edit", "tool_input_json": json!({
                "file_path": "src/net.rs", "old_string": "bind(8080)\nlisten()\n",
                "new_string": "bind(0)\nlisten()\n"}).to_string(),
            "approval_status": "approved"}),
        ),
        event(
            5,
            session_id,
            json!({"event_type": "tool_result", "role": "user",
            "tool_result_for_id": "tool-e1", "tool_result_content": long}),
        ),
        event(
            6,
            session_id,
            json!({"event_type": "tool_call", "role": "assistant",
            "tool_id": "tool-a1", "tool_name": "Bash", "tool_input_json": json!({
                "command": "cargo test -p net", "description": "Run the tests"}).to_string()}),
        ),
    ]
}

pub fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

pub fn keys(state: &mut State, text: &str) -> Vec<Command> {
    text.chars()
        .flat_map(|c| update(state, key(KeyCode::Char(c))))
        .collect()
}

pub fn timed(event: Event) -> Msg {
    Msg::Event(Box::new(TimedEvent {
        event,
        timestamp: now().to_rfc3339(),
    }))
}

/// Session `session_id` moved from `old_status` to `new_status`, as the daemon announces it.
pub fn status_changed(
    session_id: &str,
    old_status: SessionStatus,
    new_status: SessionStatus,
) -> Msg {
    timed(Event::SessionStatusChanged {
        session_id: session_id.into(),
        run_id: "run".into(),
        old_status,
        new_status,
        parent_session_id: None,
        error: None,
        usage_limit: None,
        turn: None,
    })
}

/// `event` stored in its session's conversation, as the daemon announces it.
pub fn stored(event: ConversationEvent) -> Msg {
    timed(Event::ConversationUpdated {
        run_id: format!("run-{}", event.session_id),
        session_id: event.session_id.clone(),
        claude_session_id: "c".into(),
        event: Box::new(event),
    })
}

/// A connected dashboard with the fixture sessions and approvals.
pub fn loaded(width: u16, height: u16) -> State {
    let mut state = State::new(now(), width, height, true);
    update(&mut state, Msg::Connected);
    update(&mut state, Msg::Sessions(sessions()));
    update(
        &mut state,
        Msg::Approvals(vec![
            approval(
                "a1",
                "s-wait",
                "Bash",
                json!({"command": "cargo test -p net", "description": "Run the tests"}),
                20,
            ),
            approval(
                "a2",
                "s-run",
                "Write",
                json!({"file_path": "src/lib.rs", "content": "pub mod parser;\npub mod lexer;\n"}),
                5,
            ),
        ]),
    );
    state
}

/// Opens the waiting session's conversation.
pub fn with_conversation(width: u16, height: u16) -> State {
    let mut state = loaded(width, height);
    update(&mut state, key(KeyCode::Down));
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [
            Command::LoadConversation("s-wait".into()),
            Command::LoadQueue("s-wait".into())
        ]
    );
    update(
        &mut state,
        Msg::Conversation {
            session_id: "s-wait".into(),
            events: conversation("s-wait"),
            approvals: Vec::new(),
        },
    );
    state
}

pub fn screen(state: &State, color: bool) -> String {
    let mut terminal = Terminal::new(TestBackend::new(state.width, state.height)).unwrap();
    terminal
        .draw(|f| hld_tui::view::draw(state, f, color))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| {
            let line: String = (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect();
            line.trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
