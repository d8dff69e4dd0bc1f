//! Talking to a session from its conversation: the reply box sends into it (queued while the
//! agent works, which the box says), the queue shows above it and `x` cancels the newest
//! queued message; a session whose process is warm between turns is marked `◉`.

use crossterm::event::KeyCode;
use hld_client::protocol::{Event, QueuedMessage, SessionStatus};
use hld_tui::app::{update, Command, Msg};
use serde_json::json;

use super::fixtures::*;

fn message(id: &str, text: &str, status: &str) -> QueuedMessage {
    serde_json::from_value(json!({
        "id": id, "session_id": "s-wait", "text": text, "mode": "queue", "status": status,
        "created_at": ago(1),
    }))
    .unwrap()
}

fn queued(id: &str, text: &str) -> Msg {
    timed(Event::MessageQueued {
        session_id: "s-wait".into(),
        run_id: "run-s-wait".into(),
        message: message(id, text, "queued"),
    })
}

#[test]
fn a_reply_while_the_agent_works_is_sent_queued_shown_and_cancelled_with_x() {
    let mut state = with_conversation(80, 24);
    keys(&mut state, "r");
    assert!(screen(&state, false).contains("Message (queued until the agent's turn ends)"));
    keys(&mut state, "and the docs");
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [Command::Send {
            session_id: "s-wait".into(),
            text: "and the docs".into()
        }]
    );
    // The queue as loaded, then as the daemon's events change it.
    update(
        &mut state,
        Msg::Queue {
            session_id: "s-wait".into(),
            messages: vec![message("m1", "first", "queued")],
        },
    );
    update(&mut state, queued("m2", "and the docs"));
    update(&mut state, queued("m2", "and the docs"));
    let shown = screen(&state, false);
    assert!(shown.contains("Queued for the next turn"), "{shown}");
    assert!(
        shown.contains("⧗ first") && shown.contains("⧗ and the docs"),
        "{shown}"
    );
    assert_eq!(shown.matches("⧗ and the docs").count(), 1, "{shown}");
    // `x` cancels the newest; it leaves the screen when the daemon says so.
    assert_eq!(keys(&mut state, "x"), [Command::CancelMessage("m2".into())]);
    update(
        &mut state,
        timed(Event::MessageCancelled {
            session_id: "s-wait".into(),
            run_id: "run-s-wait".into(),
            message: message("m2", "and the docs", "cancelled"),
        }),
    );
    update(
        &mut state,
        timed(Event::MessageDelivered {
            session_id: "s-wait".into(),
            run_id: "run-s-wait".into(),
            message: message("m1", "first", "delivered"),
        }),
    );
    let shown = screen(&state, false);
    assert!(!shown.contains('⧗') && !shown.contains("Queued"), "{shown}");
    assert!(keys(&mut state, "x").is_empty());
    assert!(screen(&state, false).contains("no queued message"));
}

/// The queue's load may answer after the events that changed it (the one sent as the
/// conversation opened, under load): each change asks for the queue again, so that the
/// runtime drops the older answer, and the newer one holds the change.
#[test]
fn each_change_of_the_queue_loads_it_again_to_overtake_an_older_load() {
    let mut state = with_conversation(80, 24);
    let reload = [Command::LoadQueue("s-wait".into())];
    assert_eq!(update(&mut state, queued("m2", "from the box")), reload);
    assert!(screen(&state, false).contains("⧗ from the box"));
    let delivered = timed(Event::MessageDelivered {
        session_id: "s-wait".into(),
        run_id: "run-s-wait".into(),
        message: message("m2", "from the box", "delivered"),
    });
    assert_eq!(update(&mut state, delivered), reload);
    assert!(!screen(&state, false).contains('⧗'));
    // Another session's messages are not this conversation's queue.
    let other = timed(Event::MessageQueued {
        session_id: "s-other".into(),
        run_id: "run-s-other".into(),
        message: QueuedMessage {
            session_id: "s-other".into(),
            ..message("m3", "elsewhere", "queued")
        },
    });
    assert!(update(&mut state, other).is_empty());
}

#[test]
fn a_reply_after_the_turn_goes_on_in_the_same_session_and_a_warm_one_is_marked() {
    let mut state = with_conversation(120, 40);
    let mut list = sessions();
    for s in &mut list {
        if s.id == "s-wait" {
            s.status = SessionStatus::Completed;
            s.live = true;
        }
    }
    update(&mut state, Msg::Sessions(list));
    // The title bar marks the warm session.
    assert!(screen(&state, false).lines().next().unwrap().contains("◉"));
    keys(&mut state, "r");
    assert!(screen(&state, false).contains("Reply (the session goes on)"));
    keys(&mut state, "more");
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [Command::Send {
            session_id: "s-wait".into(),
            text: "more".into()
        }]
    );
    keys(&mut state, "q");
    let list = screen(&state, false);
    let row = list
        .lines()
        .find(|l| l.contains("Fix the flaky test"))
        .unwrap();
    assert!(row.contains("◉"), "{list}");
    let other = list
        .lines()
        .find(|l| l.contains("Refactor the parser"))
        .unwrap();
    assert!(!other.contains("◉"), "{list}");
}

#[test]
fn a_reply_the_daemon_did_not_take_goes_back_into_its_box() {
    let mut state = with_conversation(100, 30);
    keys(&mut state, "r");
    keys(&mut state, "keep this");
    update(&mut state, key(KeyCode::Enter));
    assert!(!screen(&state, false).contains("keep this"));
    let unsent = |text: &str| Msg::Unsent {
        session_id: "s-wait".into(),
        text: text.into(),
        error: "not connected to the daemon".into(),
    };
    update(&mut state, unsent("keep this"));
    let shown = screen(&state, false);
    assert!(shown.contains("Message (queued"), "{shown}");
    assert!(shown.contains("keep this"), "{shown}");
    assert!(
        shown.contains("not sent: not connected to the daemon"),
        "{shown}"
    );
    // Esc keeps it for when the box opens again.
    update(&mut state, key(KeyCode::Esc));
    keys(&mut state, "r");
    assert!(screen(&state, false).contains("keep this"));
    // Typed since: the unsent text goes first, and Enter sends both.
    update(&mut state, ctrl('u'));
    keys(&mut state, "and this");
    update(&mut state, unsent("first"));
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [Command::Send {
            session_id: "s-wait".into(),
            text: "first\nand this".into()
        }]
    );
    // Another session's message does not land in this box.
    keys(&mut state, "r");
    update(
        &mut state,
        Msg::Unsent {
            session_id: "s-other".into(),
            text: "elsewhere".into(),
            error: "gone".into(),
        },
    );
    assert!(!screen(&state, false).contains("elsewhere"));
}

#[test]
fn ctrl_u_erases_the_reply_before_the_cursor_as_a_shell_does() {
    let mut state = with_conversation(100, 30);
    keys(&mut state, "r");
    keys(&mut state, "not this");
    update(&mut state, ctrl('u'));
    keys(&mut state, "but this");
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [Command::Send {
            session_id: "s-wait".into(),
            text: "but this".into()
        }]
    );
}

/// The text of the open conversation's reply box, or `None` when it is closed.
fn reply_text(state: &hld_tui::app::State) -> Option<String> {
    let c = state.conversation.as_ref()?;
    c.reply.as_ref().map(|r| r.lines().join("\n"))
}

#[test]
fn esc_keeps_the_unsent_reply_of_each_session_until_it_is_sent() {
    let mut state = with_conversation(80, 24);
    keys(&mut state, "rline one");
    let alt_enter =
        crossterm::event::KeyEvent::new(KeyCode::Enter, crossterm::event::KeyModifiers::ALT);
    update(&mut state, Msg::Key(alt_enter));
    keys(&mut state, "line two");
    update(&mut state, key(KeyCode::Esc));
    assert_eq!(reply_text(&state), None);
    keys(&mut state, "r");
    assert_eq!(reply_text(&state).as_deref(), Some("line one\nline two"));
    let shown = screen(&state, false);
    assert!(
        shown.contains("line one") && shown.contains("line two"),
        "{shown}"
    );
    // Another session's box is its own; coming back, the first one's text is there.
    update(&mut state, key(KeyCode::Esc));
    update(&mut state, key(KeyCode::Esc));
    keys(&mut state, "gg");
    update(&mut state, key(KeyCode::Enter));
    keys(&mut state, "r");
    assert_eq!(reply_text(&state).as_deref(), Some(""));
    keys(&mut state, "elsewhere");
    update(&mut state, key(KeyCode::Esc));
    update(&mut state, key(KeyCode::Esc));
    keys(&mut state, "j");
    update(&mut state, key(KeyCode::Enter));
    keys(&mut state, "r");
    assert_eq!(reply_text(&state).as_deref(), Some("line one\nline two"));
    // Sent, it is gone: the box opens empty.
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [Command::Send {
            session_id: "s-wait".into(),
            text: "line one\nline two".into()
        }]
    );
    keys(&mut state, "r");
    assert_eq!(reply_text(&state).as_deref(), Some(""));
}
