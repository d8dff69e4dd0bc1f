//! The drafts view: Tab reaches it and loads the drafts; Enter edits one in the launch form,
//! whose submission launches that draft; Esc on a new form with a query keeps a draft; X
//! discards the selected draft.

use crossterm::event::KeyCode;
use hld_client::protocol::DraftFields;
use hld_tui::app::{update, Command, ListView, Modal, Msg};
use serde_json::json;

use super::fixtures::*;

fn draft(id: &str, query: &str) -> hld_client::protocol::SessionInfo {
    session(
        id,
        "starting",
        query,
        10,
        json!({"draft": "draft", "auto_accept_edits": true, "model": "sonnet"}),
    )
}

#[test]
fn tab_reaches_the_drafts_and_enter_launches_the_one_selected() {
    let mut state = loaded(120, 40);
    assert_eq!(update(&mut state, key(KeyCode::Tab)), []);
    assert_eq!(state.list.view, ListView::Archived);
    assert_eq!(update(&mut state, key(KeyCode::Tab)), [Command::LoadDrafts]);
    assert_eq!(state.list.view, ListView::Drafts);
    update(
        &mut state,
        Msg::Drafts(vec![draft("d-1", "Port the parser"), draft("d-2", "Older")]),
    );
    let shown = screen(&state, false);
    assert!(shown.contains("Drafts (2)"), "{shown}");
    assert!(
        shown.contains("✎ draft") && shown.contains("Port the parser"),
        "{shown}"
    );
    assert!(
        !shown.contains("Refactor the parser"),
        "no running session: {shown}"
    );

    update(&mut state, key(KeyCode::Enter));
    let Some(Modal::Launch(form)) = &state.modal else {
        panic!("no form: {:?}", state.modal)
    };
    assert_eq!(form.draft.as_deref(), Some("d-1"));
    assert_eq!(form.query.lines().join("\n"), "Port the parser");
    keys(&mut state, " now");
    let commands = update(&mut state, ctrl('s'));
    let [Command::LaunchDraft {
        session_id,
        fields,
        params,
    }] = commands.as_slice()
    else {
        panic!("{commands:?}")
    };
    assert_eq!(session_id, "d-1");
    assert_eq!(params.query, "Port the parser now");
    assert_eq!(fields.query.as_deref(), Some("Port the parser now"));
    assert_eq!(fields.model.as_deref(), Some("sonnet"));
    assert_eq!(fields.auto_accept_edits, Some(true));
    assert!(hld_tui::app::draft_holds(params));
    assert_eq!(
        state.list.view,
        ListView::Sessions,
        "the launched one is a session"
    );
    assert!(state.drafts.iter().all(|d| d.id != "d-1"));
}

#[test]
fn esc_keeps_a_form_with_a_query_as_a_draft_and_x_discards_one() {
    let mut state = loaded(80, 24);
    keys(&mut state, "c");
    assert_eq!(
        update(&mut state, key(KeyCode::Esc)),
        [],
        "an empty form just closes"
    );
    keys(&mut state, "cwrite the changelog");
    let commands = update(&mut state, key(KeyCode::Esc));
    let [Command::SaveDraft { session_id, fields }] = commands.as_slice() else {
        panic!("{commands:?}")
    };
    assert_eq!(session_id, &None);
    let expected = DraftFields {
        working_dir: Some("/home/me/project".into()),
        query: Some("write the changelog".into()),
        auto_accept_edits: Some(false),
        ..Default::default()
    };
    assert_eq!(**fields, expected);
    assert!(state.modal.is_none());
    assert_eq!(
        update(&mut state, Msg::Drafted("kept".into())),
        [Command::LoadDrafts]
    );

    // X discards only in the drafts view.
    assert_eq!(update(&mut state, key(KeyCode::Char('X'))), []);
    update(&mut state, key(KeyCode::Tab));
    update(&mut state, key(KeyCode::Tab));
    update(
        &mut state,
        Msg::Drafts(vec![draft("d-1", "write the changelog")]),
    );
    assert_eq!(
        update(&mut state, key(KeyCode::Char('X'))),
        [Command::DiscardDraft("d-1".into())]
    );
    assert!(screen(&state, false).contains("No drafts"));
    update(&mut state, key(KeyCode::Esc));
    assert_eq!(state.list.view, ListView::Sessions);
}

#[test]
fn a_draft_not_kept_opens_its_form_again_saying_why_and_esc_then_closes_it() {
    let mut state = loaded(100, 30);
    keys(&mut state, "cwrite the changelog");
    let commands = update(&mut state, key(KeyCode::Esc));
    let [Command::SaveDraft { fields, .. }] = commands.as_slice() else {
        panic!("{commands:?}")
    };
    assert!(state.modal.is_none());
    let unsaved = Msg::Unsaved {
        daemon: 0,
        session_id: None,
        fields: fields.clone(),
        error: "not connected to the daemon".into(),
    };
    assert_eq!(update(&mut state, unsaved), []);
    let Some(Modal::Launch(form)) = &state.modal else {
        panic!("no form: {:?}", state.modal)
    };
    assert_eq!(form.query.lines().join("\n"), "write the changelog");
    assert_eq!(form.working_dir.lines().join(""), "/home/me/project");
    let shown = screen(&state, false);
    assert!(
        shown.contains("Not kept as a draft: not connected to the daemon"),
        "{shown}"
    );
    // Too long for one line, it wraps one column in from the border, as it starts.
    let lines: Vec<&str> = shown.lines().collect();
    let at = lines.iter().position(|l| l.contains("Not kept as a draft"));
    let next = at.map_or("", |at| lines[at + 1].trim_start());
    assert!(next.starts_with("│ unsaved"), "{shown}");

    // Esc now closes it without trying to keep it again.
    assert_eq!(update(&mut state, key(KeyCode::Esc)), []);
    assert!(state.modal.is_none());
}

#[test]
fn a_draft_not_kept_while_another_box_is_open_is_said_in_the_footer() {
    let mut state = loaded(100, 30);
    keys(&mut state, "c");
    let unsaved = Msg::Unsaved {
        daemon: 0,
        session_id: Some("d-1".into()),
        fields: Box::new(DraftFields {
            query: Some("an older query".into()),
            ..Default::default()
        }),
        error: "the daemon refused".into(),
    };
    update(&mut state, unsaved);
    let Some(Modal::Launch(form)) = &state.modal else {
        panic!("no form: {:?}", state.modal)
    };
    assert_eq!(
        form.query.lines().join("\n"),
        "",
        "the open form is left as it was"
    );
    let shown = screen(&state, false);
    assert!(
        shown.contains("Not kept as a draft: the daemon refused"),
        "{shown}"
    );
}
