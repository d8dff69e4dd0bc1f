//! `hld-tui`'s drafts end to end: the real binary on a pseudo-terminal against a daemon
//! running `fake-claude`. A draft made elsewhere (as CodeLayer makes them) is listed in the
//! drafts view and launched from the form under its own id; Esc on a launch form with a query
//! keeps a draft the daemon lists; X discards one.

use hld_client::protocol::{
    CreateDraft, DraftFields, DraftState, GetSessionLeaves, GetSessionLeavesParams, LeafFilter,
    SessionStatus,
};
use hld_e2e::{wait_for, TestDaemon, WAIT};

use super::tui::{fake, tui_on, workdir};

fn drafts(d: &TestDaemon) -> Vec<hld_client::protocol::SessionInfo> {
    d.request::<GetSessionLeaves>(GetSessionLeavesParams {
        filter: Some(LeafFilter::Draft),
    })
    .sessions
}

#[test]
fn a_draft_is_listed_launched_kept_and_discarded_from_the_dashboard() {
    let d = fake();
    let work = workdir();
    let made = d.request::<CreateDraft>(DraftFields {
        working_dir: Some(work.path().display().to_string()),
        query: Some("scenario:plain draft from elsewhere".into()),
        ..Default::default()
    });
    let mut tui = tui_on(&d);
    tui.wait_screen(" Sessions (0)");
    tui.send("\t\t");
    tui.wait_until("the draft listed", WAIT, |s| {
        s.contains("Drafts (1)") && s.contains("draft from elsewhere")
    });
    tui.send("\r");
    tui.wait_screen("draft from elsewhere");
    // Ctrl+S launches it: the session keeps the draft's id and runs to its end.
    tui.send("\x13");
    assert!(
        wait_for(WAIT, || drafts(&d).is_empty().then_some(())).is_some(),
        "the draft was not launched:\n{}",
        tui.screen_text()
    );
    let session = d.wait_ended(&made.session_id);
    assert_eq!(session.status, SessionStatus::Completed, "{session:#?}");
    assert_eq!(session.query, "scenario:plain draft from elsewhere");
    assert!(session.result_content.is_some(), "it ran: {session:#?}");

    // The launched session's conversation opens; Esc goes back to the sessions.
    tui.wait_screen("Hello! You asked: scenario:plain draft from elsewhere");
    tui.send("\x1b");
    tui.wait_screen(" Sessions (1)");

    // Esc on a new form with a query keeps it as a draft.
    tui.send("c");
    tui.wait_screen("What should Claude do?");
    tui.send("scenario:plain kept for later");
    tui.send("\x1b");
    let kept = wait_for(WAIT, || drafts(&d).into_iter().next())
        .unwrap_or_else(|| panic!("no draft kept:\n{}", tui.screen_text()));
    assert_eq!(kept.query, "scenario:plain kept for later");
    assert_eq!(kept.control.draft, Some(DraftState::Draft));

    // X in the drafts view sets it aside.
    tui.send("\t\t");
    tui.wait_screen("kept for later");
    tui.send("X");
    tui.wait_screen("No drafts");
    assert!(
        wait_for(WAIT, || drafts(&d).is_empty().then_some(())).is_some(),
        "the draft was not discarded"
    );
}
