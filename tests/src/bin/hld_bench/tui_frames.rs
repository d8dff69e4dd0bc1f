//! The `hld-tui` group's frame cost: `update` and `draw` over a thousand sessions and a long
//! conversation, headless.

use std::time::Instant;

use anyhow::{ensure, Context};
use chrono::{DateTime, Utc};
use crossterm::event::KeyCode;
use hld_client::protocol::{
    ConversationEvent, ConversationEventType, Event, SessionControl, SessionInfo, SessionResult,
    SessionStatus, TimedEvent,
};
use hld_tui::app::{update, Command, Msg, Screen, State};
use hld_tui::view::draw;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use crate::stats::Latency;
use crate::tui::{key, Counts, HEIGHT, WIDTH};

/// One round's frame times and the time to open the conversation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Frames {
    pub(crate) scroll: Latency,
    pub(crate) list: Latency,
    pub(crate) appended: Latency,
    pub(crate) open_us: f64,
}

/// Builds the large state through `update` and times `update` + `draw` for each case.
pub(crate) fn frame_round(counts: &Counts) -> anyhow::Result<Frames> {
    let now = Utc::now();
    let mut state = State::new(now, WIDTH, HEIGHT, false);
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT))?;
    // One frame as the runtime makes it: the message applied, then the screen drawn.
    let mut frame = |state: &mut State, msg: Msg| -> anyhow::Result<(Vec<Command>, u64)> {
        let started = Instant::now();
        let commands = update(state, msg);
        terminal.draw(|f| draw(state, f, true))?;
        Ok((commands, u64::try_from(started.elapsed().as_nanos())?))
    };
    frame(&mut state, Msg::Connected)?;
    frame(&mut state, Msg::Sessions(sessions(counts.sessions, now)))?;
    let (commands, _) = frame(&mut state, key(KeyCode::Enter))?;
    let id = session_id(0);
    ensure!(
        commands.first() == Some(&Command::LoadConversation(id.clone())),
        "Enter did not open the newest session: {commands:?}"
    );
    let events = (0..counts.events).map(|i| event(&id, i, now)).collect();
    let (_, open) = frame(
        &mut state,
        Msg::Conversation {
            session_id: id.clone(),
            events,
            approvals: Vec::new(),
        },
    )?;

    let mut appended = Vec::new();
    for i in counts.events..counts.events + counts.frames {
        let timed = TimedEvent {
            event: Event::ConversationUpdated {
                session_id: id.clone(),
                run_id: format!("run-{id}"),
                claude_session_id: format!("claude-{id}"),
                event: Box::new(event(&id, i, now)),
            },
            timestamp: now.to_rfc3339(),
        };
        appended.push(frame(&mut state, Msg::Event(Box::new(timed)))?.1);
    }
    let c = state
        .conversation
        .as_ref()
        .context("no open conversation")?;
    ensure!(
        c.events.len() == counts.events + counts.frames && c.follow,
        "{} events shown, following: {}",
        c.events.len(),
        c.follow
    );

    let mut scroll = Vec::new();
    for i in 0..counts.frames {
        let up = i % 2 == 0;
        let pressed = if up { 'k' } else { 'j' };
        scroll.push(frame(&mut state, key(KeyCode::Char(pressed)))?.1);
        let follows = state.conversation.as_ref().is_some_and(|c| c.follow);
        ensure!(follows != up, "`{pressed}` did not scroll the conversation");
    }

    frame(&mut state, key(KeyCode::Esc))?;
    ensure!(state.screen == Screen::Sessions, "Esc did not go back");
    let mut list = Vec::new();
    for _ in 0..counts.frames {
        list.push(frame(&mut state, key(KeyCode::Char('j')))?.1);
    }
    ensure!(
        state.list.selected == counts.frames,
        "`j` left the selection at {}",
        state.list.selected
    );
    Ok(Frames {
        scroll: Latency::of_nanos(&mut scroll),
        list: Latency::of_nanos(&mut list),
        appended: Latency::of_nanos(&mut appended),
        open_us: open as f64 / 1000.0,
    })
}

fn session_id(i: usize) -> String {
    format!("sess-{i:05}")
}

/// `n` sessions as `listSessions` returns them, newest first: mostly completed, some running,
/// waiting or failed.
fn sessions(n: usize, now: DateTime<Utc>) -> Vec<SessionInfo> {
    (0..n)
        .map(|i| {
            let at = (now - chrono::Duration::minutes(i as i64)).to_rfc3339();
            let status = match i % 20 {
                1 => SessionStatus::Running,
                2 => SessionStatus::WaitingInput,
                3 => SessionStatus::Failed,
                _ => SessionStatus::Completed,
            };
            let query = format!(
                "Refactor module {i} of the payments service so that its retries are bounded, \
                 then run the tests"
            );
            SessionInfo {
                live: false,
                live_until: None,
                worktree: None,
                usage_limit: None,
                effective_context_tokens: None,
                context_limit: None,
                id: session_id(i),
                run_id: format!("run-{i}"),
                claude_session_id: Some(format!("claude-{i}")),
                parent_session_id: None,
                status: status.clone(),
                interrupting: false,
                start_time: at.clone(),
                end_time: Some(at.clone()),
                last_activity_at: at,
                error: (status == SessionStatus::Failed).then(|| "exit status 1".into()),
                summary: query.chars().take(50).collect(),
                query,
                model: Some("claude-sonnet-4-5".into()),
                working_dir: Some(format!("/home/dev/projects/service-{}", i % 7)),
                result: Some(SessionResult {
                    kind: "result".into(),
                    subtype: "session_completed".into(),
                    total_cost_usd: 0.01 * i as f64,
                    num_turns: 3 + (i % 9) as i64,
                    ..Default::default()
                }),
                interrupted: false,
                cost_usd: Some(0.01 * i as f64),
                control: SessionControl {
                    title: format!("Payments module {i}"),
                    auto_accept_edits: i % 5 == 0,
                    ..Default::default()
                },
            }
        })
        .collect()
}

/// The `i`th event of a long conversation, by turns: an assistant message in markdown (every
/// tenth turn the user's), thinking, an `Edit` call, its result, a `Bash` call, and its
/// 200-line result.
fn event(session_id: &str, i: usize, now: DateTime<Utc>) -> ConversationEvent {
    let mut e = ConversationEvent {
        id: i as i64 + 1,
        session_id: session_id.into(),
        claude_session_id: format!("claude-{session_id}"),
        sequence: i as i64 + 1,
        event_type: ConversationEventType::Message,
        created_at: now.to_rfc3339(),
        role: Some("assistant".into()),
        content: None,
        tool_id: None,
        tool_name: None,
        tool_input_json: None,
        tool_result_for_id: None,
        tool_result_content: None,
        is_completed: false,
        is_error: false,
        approval_status: None,
        approval_id: None,
        parent_tool_use_id: None,
        subtype: None,
    };
    let call = |name: &str, input: serde_json::Value, e: &mut ConversationEvent| {
        e.event_type = ConversationEventType::ToolCall;
        e.tool_id = Some(format!("toolu_{i}"));
        e.tool_name = Some(name.into());
        e.tool_input_json = Some(input.to_string());
        e.is_completed = true;
        e.approval_status = Some("approved".into());
    };
    let result = |content: String, e: &mut ConversationEvent| {
        e.event_type = ConversationEventType::ToolResult;
        e.role = Some("user".into());
        e.tool_result_for_id = Some(format!("toolu_{}", i - 1));
        e.tool_result_content = Some(content);
    };
    match i % 6 {
        0 if i.is_multiple_of(60) => {
            e.role = Some("user".into());
            e.content = Some(format!("Now step {i}: keep the public API as it is."));
        }
        0 => {
            e.content = Some(format!(
                "## Step {i}\n\nThe retry loop in `client.rs` has **no bound**, so a failing \
                 upstream keeps a worker busy forever. I'll:\n\n1. cap it at `MAX_RETRIES`,\n\
                 2. back off exponentially, and\n3. surface the last error.\n\n```rust\nfor \
                 attempt in 0..MAX_RETRIES {{\n    match send(&request) {{\n        Ok(r) => \
                 return Ok(r),\n        Err(e) => sleep(backoff(attempt)),\n    }}\n}}\n```\n\n\
                 > Note: the tests in `tests/retry.rs` cover the old behaviour."
            ));
        }
        1 => {
            e.event_type = ConversationEventType::Thinking;
            e.content = Some(
                "The caller expects an error after the last attempt, so the loop must \
                 return it.\n"
                    .repeat(12),
            );
        }
        2 => call(
            "Edit",
            serde_json::json!({
                "file_path": format!("/home/dev/projects/service/src/client_{i}.rs"),
                "old_string": "loop {\n    match send(&request) {\n        Ok(r) => return Ok(r),\n        Err(_) => continue,\n    }\n}",
                "new_string": "for attempt in 0..MAX_RETRIES {\n    match send(&request) {\n        Ok(r) => return Ok(r),\n        Err(e) => {\n            last = Some(e);\n            sleep(backoff(attempt));\n        }\n    }\n}\nErr(last.unwrap())",
            }),
            &mut e,
        ),
        3 => result(
            format!("The file client_{}.rs has been updated.", i - 1),
            &mut e,
        ),
        4 => call(
            "Bash",
            serde_json::json!({
                "command": "cargo test --package payments --test retry -- --nocapture",
                "description": "Run the retry tests",
            }),
            &mut e,
        ),
        _ => result(
            (0..200)
                .map(|l| format!("test retry::case_{l:03} ... ok ({} ms)\n", l % 17))
                .collect(),
            &mut e,
        ),
    }
    e
}
