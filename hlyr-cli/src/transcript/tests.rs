//! The transcript's text: each kind of update, approval and question as hlyr prints it.

use hld_client::protocol::ApprovalSource;
use serde_json::json;

use super::*;

#[test]
fn a_long_user_message_is_cut_as_a_tool_input_is() {
    let paste: String = (1..=3000).map(|i| format!("pasted {i}\n")).collect();
    let text = plain(&user_message(&paste));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), FOLD_LINES + 1, "{text}");
    assert_eq!(lines[0], "> pasted 1");
    assert_eq!(lines[FOLD_LINES - 1], "  pasted 10");
    assert_eq!(lines[FOLD_LINES], "  … 2990 more lines");
    // One line more than is shown is shown whole rather than said.
    let short: String = (1..=11).map(|i| format!("line {i}\n")).collect();
    let shown = plain(&user_message(&short));
    assert!(
        shown.contains("line 11") && !shown.contains("more line"),
        "{shown}"
    );
}

fn plain(text: &str) -> String {
    anstream::adapter::strip_str(text).to_string()
}

fn write_approval() -> Approval {
    Approval {
        id: "local-1234abcd-0000".into(),
        call_id: "local-1234abcd-0000".into(),
        run_id: "r".into(),
        session_id: "s".into(),
        kind: ApprovalType::FunctionCall,
        status: ApprovalStatus::Pending,
        source: ApprovalSource::default(),
        function_name: Some("Write".into()),
        function_args: Some(json!({"file_path": "/w/a.txt", "content": "one\ntwo\n"})),
        message: None,
        tool_use_id: Some("toolu_1".into()),
        requested_at: "2025-01-01T00:00:00Z".into(),
        timeout_at: None,
        responded_at: None,
        comment: None,
        decided_by: None,
        function_call: None,
        human_contact: None,
    }
}

/// A tool call shows its input as the tool's view; its approval then names the tool only,
/// unless its call was not shown.
#[test]
fn a_tool_call_shows_its_input_and_its_approval_does_not_repeat_it() {
    let call: ConversationEvent = serde_json::from_value(json!({
        "id": 1, "session_id": "s", "claude_session_id": "c", "sequence": 1,
        "event_type": "tool_call", "created_at": "2025-01-01T00:00:00Z",
        "tool_name": "Write", "is_completed": false, "is_error": false,
        "tool_input_json": r#"{"file_path":"/w/a.txt","content":"one\ntwo\n"}"#,
    }))
    .unwrap();
    assert_eq!(
        plain(&Update::Event(call).human()),
        "→ Write /w/a.txt\n    1 one\n    2 two"
    );
    let approval = write_approval();
    assert_eq!(
        plain(&approval_text(&approval, false)),
        "? approval local-1234abcd: Write"
    );
    assert_eq!(
        plain(&Update::Approval(approval).human()),
        "? approval local-1234abcd: Write /w/a.txt\n    1 one\n    2 two"
    );
}

/// An agent's text reaches the terminal without its escape sequences or bells, whatever
/// kind of event carries it.
#[test]
fn escape_sequences_from_the_agent_never_reach_the_terminal() {
    let event = |fields: serde_json::Value| -> ConversationEvent {
        let mut event = json!({
            "id": 1, "session_id": "s", "claude_session_id": "c", "sequence": 1,
            "created_at": "2025-01-01T00:00:00Z", "is_completed": true, "is_error": false,
        });
        event
            .as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        serde_json::from_value(event).unwrap()
    };
    let hostile = "done\x1b]0;pwned\x07\x1b[2J";
    let events = [
        json!({"event_type": "message", "role": "assistant", "content": hostile}),
        json!({"event_type": "message", "role": "user", "content": hostile}),
        json!({"event_type": "message", "role": "system", "content": hostile}),
        json!({"event_type": "thinking", "content": hostile}),
        json!({"event_type": "system", "content": hostile}),
        json!({"event_type": "tool_result", "tool_result_content": hostile}),
    ];
    for fields in events {
        let text = Update::Event(event(fields.clone())).human();
        // Raw, with hlyr's own styles: only those are escape sequences.
        for raw in ["\x1b]", "\x07", "\x1b[2J"] {
            assert!(!text.contains(raw), "{fields}: {text:?}");
        }
        assert!(
            plain(&text).contains("done�]0;pwned��[2J"),
            "{fields}: {text:?}"
        );
    }
}

/// Nobody decided a resolved approval: it is not drawn as a decision (no mark, no
/// colour but dim), and its stored comment is shown.
#[test]
fn a_resolved_approval_reads_ended_with_its_session_with_its_comment() {
    let text = Update::Decision {
        approval_id: "local-1234abcd-0000".into(),
        decision: ApprovalStatus::Resolved,
        comment: Some("the session ended before a decision".into()),
        decided_by: None,
    }
    .human();
    assert_eq!(
        plain(&text),
        "· ended with its session local-1234abcd: the session ended before a decision"
    );
    assert!(!text.contains(&GREEN.to_string()), "{text:?}");
}

/// A question's approval shows its own input's choices, and says where several may be
/// picked.
#[test]
fn a_question_shows_its_choices_and_whether_several_may_be_picked() {
    let approval: Approval = serde_json::from_value(json!({
        "id": "local-1234abcd", "call_id": "local-1234abcd", "run_id": "r",
        "session_id": "s", "type": "human_contact", "status": "pending",
        "requested_at": "2026-01-01T00:00:00Z", "message": "Which?",
        "function_args": {"questions": [{"question": "Which?", "multiSelect": true,
            "options": [{"label": "Rust"}, {"label": "Go", "description": "simple"}]}]},
    }))
    .unwrap();
    assert_eq!(
        plain(&question_approval_text(&approval, None)),
        "? question local-1234abcd: Which?\n  1. Rust\n  2. Go — simple\n  \
         (several may be picked: their numbers, e.g. 1, 3)"
    );
}

/// A question's tool call shown as an event (a replayed one, its approval decided) is named by
/// its approval, as the approval's own line names it; one without an approval is not.
#[test]
fn a_question_shown_by_its_tool_call_names_its_approval() {
    let mut call: ConversationEvent = serde_json::from_value(json!({
        "id": 1, "session_id": "s", "claude_session_id": "c", "sequence": 1,
        "event_type": "tool_call", "created_at": "2025-01-01T00:00:00Z",
        "tool_name": "AskUserQuestion", "tool_id": "toolu_1", "is_completed": false,
        "is_error": false, "approval_id": "local-1234abcd-0000",
        "tool_input_json": json!({"questions": [{"question": "Which?",
            "options": [{"label": "Rust"}, {"label": "Go"}]}]}).to_string(),
    }))
    .unwrap();
    let asked = "Which?\n  1. Rust\n  2. Go";
    let shown = plain(&Update::Event(call.clone()).human());
    assert_eq!(shown, format!("? question local-1234abcd: {asked}"));
    call.approval_id = None;
    let shown = plain(&Update::Event(call).human());
    assert_eq!(shown, format!("? question: {asked}"));
}

/// Answers to several questions (a line each) read as one line; escapes do not pass.
#[test]
fn answers_to_several_questions_read_as_one_line_cleaned() {
    let text = Update::Decision {
        approval_id: "local-1234abcd".into(),
        decision: ApprovalStatus::Responded,
        comment: Some("Blue\nLarge\x1b[2J".into()),
        decided_by: None,
    }
    .human();
    assert_eq!(plain(&text), "✓ answered local-1234abcd: Blue · Large�[2J");
}

/// A cloud approval answered in the cloud is resolved too, but not with its session.
#[test]
fn a_cloud_approval_answered_in_the_cloud_reads_answered_elsewhere() {
    let text = Update::Decision {
        approval_id: "fc-1234abcd".into(),
        decision: ApprovalStatus::Resolved,
        comment: Some(ANSWERED_ELSEWHERE.into()),
        decided_by: None,
    }
    .human();
    assert_eq!(plain(&text), "· answered elsewhere fc-1234a");
}

#[test]
fn a_decision_made_by_a_rule_says_so_instead_of_its_comment() {
    let text = Update::Decision {
        approval_id: "local-1234abcd-0000".into(),
        decision: ApprovalStatus::Approved,
        comment: Some("Approved automatically: auto-accept edits is on".into()),
        decided_by: Some("auto_accept_edits".into()),
    }
    .human();
    let text = anstream::adapter::strip_str(&text).to_string();
    assert_eq!(
        text,
        "✓ approved automatically (auto_accept_edits) local-1234abcd"
    );
    let denied = Update::Decision {
        approval_id: "local-1234abcd-0000".into(),
        decision: ApprovalStatus::Denied,
        comment: Some("Denied: the session is in plan mode".into()),
        decided_by: Some("plan_mode".into()),
    }
    .human();
    assert_eq!(
        anstream::adapter::strip_str(&denied).to_string(),
        "✗ denied automatically (plan_mode) local-1234abcd"
    );
    let expired = Update::BypassExpired {
        session_id: "s".into(),
    }
    .human();
    assert!(
        expired.contains("bypass of permissions expired"),
        "{expired}"
    );
}

/// A message sent into the session reads by its status; one delivered says nothing (its
/// turn shows it), and the agent's text is cleaned.
#[test]
fn a_sent_message_reads_by_its_status() {
    let message = |text: &str, status: &str, error: Option<&str>| {
        let message: QueuedMessage = serde_json::from_value(json!({
            "id": "m1", "session_id": "s", "text": text, "mode": "queue",
            "status": status, "created_at": "2026-11-29T01:00:00Z", "error": error,
        }))
        .unwrap();
        Update::Message(message).human()
    };
    let text = |status: &str, error: Option<&str>| plain(&message("and the docs", status, error));
    assert!(!message("clear \u{1b}[2J", "queued", None).contains("\u{1b}[2J"));
    assert_eq!(
        text("queued", None),
        "⧗ queued: and the docs (sent when the turn ends)"
    );
    assert_eq!(text("delivered", None), "");
    assert_eq!(text("cancelled", None), "· cancelled: and the docs");
    assert_eq!(
        text("undelivered", Some("the daemon restarted")),
        "✗ not delivered: and the docs (the daemon restarted)"
    );
}

/// A tool's error reads as Claude Code shows it, without the CLI's `<tool_use_error>` tags.
#[test]
fn a_tool_error_is_printed_without_its_tags() {
    let result: ConversationEvent = serde_json::from_value(json!({
        "id": 2, "session_id": "s", "claude_session_id": "c", "sequence": 2,
        "event_type": "tool_result", "created_at": "2025-01-01T00:00:00Z",
        "tool_result_content": "<tool_use_error>File does not exist.</tool_use_error>",
        "is_completed": true, "is_error": true,
    }))
    .unwrap();
    assert_eq!(
        plain(&Update::Event(result).human()),
        "  ← error: File does not exist."
    );
}
