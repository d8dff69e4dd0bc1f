//! Drafts over the real daemon: created, edited, discarded and restored without a run, listed
//! only under the draft filters, deleted only when empty, and kept across a restart.

use hld_client::protocol::*;
use hld_e2e::{launch_params, DaemonOptions, TestDaemon};

use crate::hlyr::{hlyr_command, run_command};

fn fake() -> TestDaemon {
    TestDaemon::start_with(DaemonOptions::fake_claude())
}

fn leaves(d: &TestDaemon, filter: LeafFilter) -> Vec<SessionInfo> {
    d.request::<GetSessionLeaves>(GetSessionLeavesParams {
        filter: Some(filter),
    })
    .sessions
}

fn ids(sessions: &[SessionInfo]) -> Vec<&str> {
    sessions.iter().map(|s| s.id.as_str()).collect()
}

fn draft(d: &TestDaemon, fields: DraftFields) -> String {
    d.request::<CreateDraft>(fields).session_id
}

fn id(session_id: &str) -> SessionIdParams {
    SessionIdParams {
        session_id: session_id.to_owned(),
    }
}

/// Asserts a -32602 whose message holds `words`.
fn refused<M: Method>(d: &TestDaemon, params: M::Params, words: &str) {
    let Err(e) = d.try_request::<M>(params) else {
        panic!("{} was not refused", M::NAME);
    };
    assert_eq!(e.code, ErrorCode::InvalidParams.code(), "{e:?}");
    assert!(e.message.contains(words), "{e:?}");
}

#[test]
fn drafts_are_listed_only_under_the_draft_filter() {
    let d = fake();
    let work = d.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let ran = d.launch(launch_params("a real run", &work));
    d.wait_ended(&ran);
    let id = draft(
        &d,
        DraftFields {
            working_dir: Some("/nowhere/yet".into()),
            query: Some("Fix the flaky draft test".into()),
            title: Some("Flaky".into()),
            model: Some("opus".into()),
            auto_accept_edits: Some(true),
            editor_state: Some(r#"{"doc":1}"#.into()),
            ..DraftFields::default()
        },
    );

    assert_eq!(
        ids(&d.request::<ListSessions>(NoParams {}).sessions),
        [&ran]
    );
    assert_eq!(ids(&leaves(&d, LeafFilter::Normal)), [&ran]);
    assert!(leaves(&d, LeafFilter::Archived).is_empty());
    assert!(leaves(&d, LeafFilter::Discarded).is_empty());
    let found = d.request::<SearchSessions>(SearchSessionsParams {
        query: "flaky".into(),
        limit: None,
    });
    assert!(found.sessions.is_empty(), "{found:?}");
    let paths = d
        .request::<GetRecentPaths>(GetRecentPathsParams::default())
        .paths;
    assert!(paths.iter().all(|p| p.path != "/nowhere/yet"), "{paths:?}");

    let drafts = leaves(&d, LeafFilter::Draft);
    assert_eq!(ids(&drafts), [&id]);
    let s = &drafts[0];
    assert_eq!(s.control.draft, Some(DraftState::Draft));
    assert_eq!(s.control.editor_state.as_deref(), Some(r#"{"doc":1}"#));
    assert_eq!(s.control.title, "Flaky");
    assert!(s.control.auto_accept_edits);
    assert!(!s.control.dangerously_skip_permissions);
    assert_eq!(s.query, "Fix the flaky draft test");
    assert_eq!(s.model.as_deref(), Some("opus"));
    assert_eq!(s.working_dir.as_deref(), Some("/nowhere/yet"));
    assert!(s.claude_session_id.is_none(), "nothing ran: {s:?}");
    let state = d.request::<GetSessionState>(self::id(&id)).session;
    assert_eq!(state.control.draft, Some(DraftState::Draft));
    // A session that ran is no draft.
    assert_eq!(leaves(&d, LeafFilter::Normal)[0].control.draft, None);
}

#[test]
fn a_draft_is_edited_discarded_and_restored() {
    let d = fake();
    let id = draft(&d, DraftFields::default());
    let edit = |fields: DraftFields| {
        d.request::<UpdateDraft>(UpdateDraftParams {
            session_id: id.clone(),
            fields,
        })
    };
    edit(DraftFields {
        query: Some("first words".into()),
        title: Some("T".into()),
        editor_state: Some("{}".into()),
        ..DraftFields::default()
    });
    edit(DraftFields {
        title: Some(String::new()),
        dangerously_skip_permissions: Some(true),
        ..DraftFields::default()
    });
    let s = d.request::<GetSessionState>(self::id(&id)).session;
    assert_eq!(s.query, "first words", "an absent field is kept");
    assert_eq!(s.control.title, "first words", "an empty title clears it");
    assert_eq!(s.control.editor_state.as_deref(), Some("{}"));
    assert!(s.control.dangerously_skip_permissions);

    assert!(d.request::<DiscardDraft>(self::id(&id)).success);
    assert!(leaves(&d, LeafFilter::Draft).is_empty());
    assert_eq!(ids(&leaves(&d, LeafFilter::Discarded)), [&id]);
    refused::<DiscardDraft>(&d, self::id(&id), "not a draft being composed");

    assert!(d.request::<RestoreDraft>(self::id(&id)).success);
    assert_eq!(ids(&leaves(&d, LeafFilter::Draft)), [&id]);
    assert!(leaves(&d, LeafFilter::Discarded).is_empty());
    refused::<RestoreDraft>(&d, self::id(&id), "not a discarded draft");
}

#[test]
fn draft_methods_refuse_other_sessions_and_bad_input() {
    let d = fake();
    let work = d.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let ran = d.launch(launch_params("a real run", &work));
    d.wait_ended(&ran);

    let update = |session_id: &str| UpdateDraftParams {
        session_id: session_id.to_owned(),
        fields: DraftFields {
            query: Some("x".into()),
            ..DraftFields::default()
        },
    };
    refused::<UpdateDraft>(&d, update(&ran), "is not a draft");
    refused::<DiscardDraft>(&d, id(&ran), "is not a draft");
    refused::<UpdateDraft>(&d, update("no-such-session"), "session not found");
    refused::<CreateDraft>(
        &d,
        DraftFields {
            query: Some("a\0b".into()),
            ..DraftFields::default()
        },
        "NUL",
    );
    let s = d.request::<GetSessionState>(id(&ran)).session;
    assert_eq!(s.query, "a real run");
    assert_eq!(s.control.draft, None);
    assert!(leaves(&d, LeafFilter::Draft).is_empty(), "nothing was made");
}

#[test]
fn only_an_empty_draft_is_deleted() {
    let d = fake();
    let empty = draft(
        &d,
        DraftFields {
            title: Some("Untitled".into()),
            model: Some("sonnet".into()),
            editor_state: Some("{}".into()),
            query: Some("  ".into()),
            ..DraftFields::default()
        },
    );
    let full = draft(
        &d,
        DraftFields {
            editor_state: Some(r#"{"text":"keep me"}"#.into()),
            ..DraftFields::default()
        },
    );
    refused::<DeleteSession>(&d, id(&full), "draft with contents");
    assert!(d.request::<DeleteSession>(id(&empty)).success);
    refused::<GetSessionState>(&d, id(&empty), "not found");
    assert_eq!(ids(&leaves(&d, LeafFilter::Draft)), [&full]);
}

#[test]
fn drafts_survive_a_restart_as_drafts() {
    let mut d = fake();
    let id = draft(
        &d,
        DraftFields {
            query: Some("later".into()),
            ..DraftFields::default()
        },
    );
    d.stop();
    let again = TestDaemon::start_with(DaemonOptions {
        dir: Some(d.dir.clone()),
        ..DaemonOptions::fake_claude()
    });
    let s = again.request::<GetSessionState>(self::id(&id)).session;
    assert_eq!(s.control.draft, Some(DraftState::Draft));
    assert_eq!(s.status, SessionStatus::Completed);
    assert!(s.error_message.is_none(), "not failed as an orphan: {s:?}");
    assert_eq!(ids(&leaves(&again, LeafFilter::Draft)), [&id]);
}

#[test]
fn a_launched_draft_runs_under_its_own_id_and_stops_being_a_draft() {
    let d = fake();
    let work = d.dir.join("made-at-launch");
    let id = draft(
        &d,
        DraftFields {
            working_dir: Some(work.display().to_string()),
            title: Some("From a draft".into()),
            ..DraftFields::default()
        },
    );
    let launch = |query: Option<&str>, create_directory: Option<bool>| LaunchDraftParams {
        session_id: id.clone(),
        query: query.map(str::to_owned),
        create_directory,
    };
    refused::<LaunchDraft>(&d, launch(None, None), "query");
    refused::<LaunchDraft>(&d, launch(Some("go"), None), "does not exist");
    assert!(!work.exists());
    assert_eq!(ids(&leaves(&d, LeafFilter::Draft)), [&id], "still a draft");

    let r = d.request::<LaunchDraft>(launch(Some("go"), Some(true)));
    assert_eq!(r.session_id, id);
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Completed);
    assert_eq!(s.control.draft, None);
    assert_eq!(s.query, "go");
    assert_eq!(s.control.title, "From a draft");
    assert!(s.claude_session_id.is_some(), "it ran: {s:?}");
    assert!(work.is_dir());
    assert!(leaves(&d, LeafFilter::Draft).is_empty());
    assert_eq!(ids(&d.request::<ListSessions>(NoParams {}).sessions), [&id]);
    refused::<LaunchDraft>(&d, launch(Some("again"), None), "not a draft");

    let set_aside = draft(&d, DraftFields::default());
    d.request::<DiscardDraft>(self::id(&set_aside));
    refused::<LaunchDraft>(
        &d,
        LaunchDraftParams {
            session_id: set_aside,
            query: Some("go".into()),
            create_directory: None,
        },
        "not a draft being composed",
    );
}

#[test]
fn hlyr_sessions_lists_drafts_only_when_asked() {
    let d = fake();
    let work = d.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let ran = d.launch(launch_params("the run that happened", &work));
    d.wait_ended(&ran);
    draft(
        &d,
        DraftFields {
            title: Some("Still composing".into()),
            ..DraftFields::default()
        },
    );
    let sessions = |args: &[&str]| {
        let mut cmd = hlyr_command(&d.socket, &d.dir);
        cmd.arg("sessions").args(args).env("COLUMNS", "160");
        let run = run_command(cmd);
        run.assert_code(0);
        run.stdout
    };
    let normal = sessions(&[]);
    assert!(normal.contains("the run that happened"), "{normal}");
    assert!(!normal.contains("Still composing"), "{normal}");
    let all = sessions(&["--all"]);
    assert!(!all.contains("Still composing"), "{all}");

    let drafts = sessions(&["--drafts"]);
    assert!(!drafts.contains("the run that happened"), "{drafts}");
    let row = drafts.lines().find(|l| l.contains("Still composing"));
    assert!(row.is_some_and(|l| l.contains(" draft ")), "{drafts}");

    let only = leaves(&d, LeafFilter::Draft);
    d.request::<DiscardDraft>(id(&only[0].id));
    assert!(sessions(&["--drafts"]).contains("no drafts"));
}
