//! Isolated sessions: their rows' branch and counts, the review screen's files and hunks,
//! paging, the merge and discard dialogs, and the launch form's isolation switch.

use crossterm::event::KeyCode;
use hld_client::protocol::{
    GetSessionDiffResult, MergeSessionResult, MergeStrategy, SessionInfo, SessionStatus,
    WorktreeParams, WorktreeState,
};
use hld_tui::app::{update, Command, DiffStat, Msg, Screen, State};
use serde_json::{json, Value};

use super::fixtures::*;

fn worktree(branch: &str, state: &str) -> Value {
    json!({"worktree": {"repository": "/home/me/project", "path": format!("/wt/{branch}"),
        "branch": branch, "base_branch": "main", "base_commit": "0123456789abcdef",
        "state": state}})
}

/// Two isolated sessions (one active, one merged) above the fixture sessions.
fn isolated() -> Vec<SessionInfo> {
    let mut all = vec![
        session(
            "s-iso",
            "completed",
            "Add a parser",
            1,
            worktree("add-parser", "active"),
        ),
        session(
            "s-merged",
            "completed",
            "Fix the docs",
            2,
            worktree("fix-docs", "merged"),
        ),
    ];
    // The isolated session works in a directory of its worktree.
    all[0].working_dir = Some("/wt/add-parser/src".into());
    all.extend(sessions());
    all
}

fn with_isolated(width: u16, height: u16) -> State {
    let mut state = State::new(now(), width, height, true);
    update(&mut state, Msg::Connected);
    let loads = update(&mut state, Msg::Sessions(isolated()));
    // Only the active worktree has a diff to count.
    assert_eq!(loads, [Command::LoadDiffStat("s-iso".into())]);
    let stat = DiffStat {
        files: 3,
        additions: 12,
        deletions: 4,
    };
    update(
        &mut state,
        Msg::DiffStat {
            session_id: "s-iso".into(),
            stat: Some(stat),
        },
    );
    state
}

/// A page of three files: one changed, one renamed, one binary; `next` when more follow.
fn diff(next: Option<u64>) -> GetSessionDiffResult {
    serde_json::from_value(json!({
        "files": [
            {"path": "src/parser.rs", "status": "modified", "additions": 2, "deletions": 1,
             "hunks": [{"header": "@@ -1,2 +1,3 @@", "lines":
                [" fn main() {}", "-fn parse() {}", "+fn parse(s: &str) {}", "+fn lex() {}"]}]},
            {"path": "docs/new.md", "old_path": "docs/old.md", "status": "renamed",
             "additions": 0, "deletions": 0, "hunks": []},
            {"path": "logo.png", "status": "binary", "additions": 0, "deletions": 0,
             "hunks": []},
        ],
        "total_files": 4, "additions": 12, "deletions": 4, "next_offset": next,
    }))
    .unwrap()
}

/// The review screen of `s-iso` with its first page loaded.
fn reviewing(width: u16, height: u16, next: Option<u64>) -> State {
    let mut state = with_isolated(width, height);
    assert_eq!(
        keys(&mut state, "D"),
        [Command::LoadDiff {
            session_id: "s-iso".into(),
            offset: 0
        }]
    );
    let diff = diff(next);
    let more = update(
        &mut state,
        Msg::Diff {
            session_id: "s-iso".into(),
            offset: 0,
            diff,
        },
    );
    assert!(more.is_empty(), "{more:?}");
    state
}

#[test]
fn an_isolated_row_shows_its_branch_and_counts() {
    let state = with_isolated(100, 20);
    let text = screen(&state, false);
    let row = text.lines().find(|l| l.contains("Add a parser")).unwrap();
    assert!(row.contains("⎇ add-parser +12 −4"), "{row}");
    // Its directory is said as in the repository's checkout, which the user knows.
    assert!(row.contains("/home/me/project/src"), "{row}");
    let merged = text.lines().find(|l| l.contains("Fix the docs")).unwrap();
    assert!(merged.contains("⎇ fix-docs merged"), "{merged}");
    let plain = text
        .lines()
        .find(|l| l.contains("Refactor the parser"))
        .unwrap();
    assert!(!plain.contains('⎇'), "{plain}");
}

#[test]
fn a_turn_ending_or_a_worktree_changing_state_reloads_the_counts() {
    let mut state = with_isolated(100, 12);
    let ended = update(
        &mut state,
        status_changed("s-iso", SessionStatus::Running, SessionStatus::Completed),
    );
    assert!(ended.contains(&Command::LoadDiffStat("s-iso".into())));
    // Counts git could not read leave the branch alone on the row, and are not asked for
    // again with each reload of the list.
    update(
        &mut state,
        Msg::DiffStat {
            session_id: "s-iso".into(),
            stat: None,
        },
    );
    let text = screen(&state, false);
    let row = text.lines().find(|l| l.contains("Add a parser")).unwrap();
    assert!(row.contains("⎇ add-parser Add a parser"), "{row}");
    // Known counts of an unchanged worktree are not asked for again.
    assert!(update(&mut state, Msg::Sessions(isolated())).is_empty());
    let mut merged = isolated();
    merged[0].worktree.as_mut().unwrap().state = WorktreeState::Merged;
    assert!(update(&mut state, Msg::Sessions(merged)).is_empty());
    let row = screen(&state, false);
    let row = row.lines().find(|l| l.contains("Add a parser")).unwrap();
    assert!(row.contains("merged"), "{row}");
}

#[test]
fn a_session_that_is_not_isolated_has_nothing_to_review() {
    let mut state = loaded(80, 24);
    assert!(keys(&mut state, "D").is_empty());
    assert_eq!(state.screen, Screen::Sessions);
    assert!(state.flash.unwrap().text.contains("not isolated"));
}

#[test]
fn screen_review() {
    for (w, h) in [(80, 24), (120, 40)] {
        let state = reviewing(w, h, None);
        insta::assert_snapshot!(format!("review_{w}x{h}"), screen(&state, true));
    }
}

#[test]
fn the_review_moves_among_files_and_scrolls_hunks() {
    let mut state = reviewing(100, 20, None);
    let text = screen(&state, false);
    assert!(text.contains("⎇ add-parser → main"), "{text}");
    assert!(text.contains("4 files +12 −4"), "{text}");
    assert!(text.contains("M src/parser.rs"), "{text}");
    assert!(text.contains("R docs/old.md → docs/new.md"), "{text}");
    assert!(text.contains("B logo.png"), "{text}");
    assert!(text.contains("+fn parse(s: &str) {}"), "{text}");
    keys(&mut state, "]");
    assert!(screen(&state, false).contains("renamed, content unchanged"));
    keys(&mut state, "j");
    assert!(screen(&state, false).contains("binary file: no text to show"));
    keys(&mut state, "[[");
    // Enter focuses the hunks: j scrolls them (on a screen too short for the file), Esc
    // returns to the files, Esc again leaves.
    update(&mut state, Msg::Resize(100, 6));
    update(&mut state, key(KeyCode::Enter));
    keys(&mut state, "j");
    let review = state.review.as_ref().unwrap();
    assert_eq!((review.selected, review.scroll), (0, 1));
    update(&mut state, key(KeyCode::Esc));
    keys(&mut state, "j");
    assert_eq!(state.review.as_ref().unwrap().selected, 1);
    update(&mut state, key(KeyCode::Esc));
    assert_eq!(state.screen, Screen::Sessions);
}

#[test]
fn a_file_whose_diff_is_too_large_says_so_with_its_counts() {
    let mut state = with_isolated(100, 20);
    keys(&mut state, "D");
    let diff = serde_json::from_value(json!({
        "files": [{"path": "package-lock.json", "status": "modified", "additions": 90000,
            "deletions": 12, "hunks_omitted": true, "hunks": []}],
        "total_files": 1, "additions": 90000, "deletions": 12,
    }))
    .unwrap();
    let session_id = "s-iso".into();
    update(
        &mut state,
        Msg::Diff {
            session_id,
            offset: 0,
            diff,
        },
    );
    let text = screen(&state, false);
    assert!(text.contains("package-lock.json  +90000 −12"), "{text}");
    assert!(
        text.contains("diff too large to show here: the file is in the worktree"),
        "{text}"
    );
}

#[test]
fn a_large_diff_loads_its_next_page_at_the_last_file() {
    let mut state = reviewing(100, 20, Some(3));
    assert!(keys(&mut state, "j").is_empty());
    let page = keys(&mut state, "j");
    assert_eq!(
        page,
        [Command::LoadDiff {
            session_id: "s-iso".into(),
            offset: 3
        }]
    );
    // Asked once while it is on its way.
    assert!(keys(&mut state, "j").is_empty());
    let mut rest = diff(None);
    rest.files.truncate(1);
    rest.files[0].path = "src/zz.rs".into();
    let more = update(
        &mut state,
        Msg::Diff {
            session_id: "s-iso".into(),
            offset: 3,
            diff: rest,
        },
    );
    assert!(more.is_empty());
    keys(&mut state, "j");
    assert_eq!(state.review.as_ref().unwrap().files.len(), 4);
    assert!(screen(&state, false).contains("src/zz.rs"));
}

#[test]
fn merge_asks_how_and_names_conflicts() {
    let mut state = reviewing(100, 20, None);
    keys(&mut state, "m");
    assert!(screen(&state, false).contains("Merge ⎇ add-parser into main?"));
    update(&mut state, key(KeyCode::Right));
    assert!(screen(&state, false).contains("◂ squash ▸"));
    keys(&mut state, "r");
    assert!(screen(&state, false).contains("◂ rebase ▸"));
    keys(&mut state, "s");
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [Command::Merge {
            session_id: "s-iso".into(),
            strategy: MergeStrategy::Squash
        }]
    );
    let result = MergeSessionResult {
        merged: false,
        conflicts: vec!["src/parser.rs".into(), "README.md".into()],
        commit: None,
    };
    update(
        &mut state,
        Msg::Merged {
            session_id: "s-iso".into(),
            strategy: MergeStrategy::Merge,
            result,
        },
    );
    let flash = state.flash.clone().unwrap();
    assert!(flash.error);
    assert!(flash.text.contains("src/parser.rs, README.md"), "{flash:?}");
    // And what to do next: the branch takes its base in first.
    assert!(
        flash
            .text
            .contains("ask its agent to merge main into its branch"),
        "{flash:?}"
    );
    // Esc cancels without a command.
    keys(&mut state, "m");
    assert!(update(&mut state, key(KeyCode::Esc)).is_empty());
    assert!(state.modal.is_none());
    // A refusal reaches the flash in the daemon's words.
    update(
        &mut state,
        Msg::Failed("the main checkout has uncommitted changes".into()),
    );
    assert!(screen(&state, false).contains("the main checkout has uncommitted changes"));
    // One too long for the footer beside its hints is read whole, in the rows it takes
    // above the footer, without the hints.
    let long = "blob.bin, notes.txt in the main checkout would be overwritten by the merge: \
                move, commit or remove them there first";
    update(&mut state, Msg::Failed(long.into()));
    let shown = screen(&state, false);
    let rows: Vec<_> = shown
        .lines()
        .skip_while(|l| !l.contains("blob.bin"))
        .collect();
    assert_eq!(rows.len(), 2, "{shown}");
    assert_eq!(
        rows.join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
        long
    );
    assert!(!shown.contains('…') && !shown.contains("? help"), "{shown}");
}

#[test]
fn discard_asks_and_asks_again_to_force_unmerged_work() {
    let mut state = reviewing(100, 20, None);
    keys(&mut state, "X");
    assert!(screen(&state, false).contains("Discard the worktree and branch ⎇ add-parser?"));
    assert_eq!(
        keys(&mut state, "y"),
        [Command::Discard {
            session_id: "s-iso".into(),
            force: false
        }]
    );
    let reason = "the session's branch holds work never merged (1 commit)";
    update(
        &mut state,
        Msg::DiscardRefused {
            session_id: "s-iso".into(),
            reason: reason.into(),
        },
    );
    let text = screen(&state, false);
    assert!(
        text.contains("Refused: the session's branch holds work"),
        "{text}"
    );
    assert!(text.contains("discard anyway"), "{text}");
    assert!(!text.contains("discarding…"), "{text}");
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [Command::Discard {
            session_id: "s-iso".into(),
            force: true
        }]
    );
    let reload = update(&mut state, Msg::Discarded("s-iso".into()));
    assert_eq!(reload, [Command::LoadSessions]);
    assert_eq!(state.screen, Screen::Sessions);
    assert!(state.review.is_none());
}

#[test]
fn the_launch_form_launches_isolated_on_a_named_branch() {
    let mut state = loaded(100, 30);
    keys(&mut state, "c");
    keys(&mut state, "Add a parser");
    for _ in 0..4 {
        update(&mut state, key(KeyCode::Tab));
    }
    update(&mut state, key(KeyCode::Right));
    assert!(screen(&state, false).contains("◂ own git worktree and branch ▸"));
    update(&mut state, key(KeyCode::Tab));
    keys(&mut state, "feat/parser");
    let launched = update(&mut state, ctrl('s'));
    let [Command::Launch(params)] = launched.as_slice() else {
        panic!("{launched:?}");
    };
    assert_eq!(
        params.worktree,
        Some(WorktreeParams {
            branch: Some("feat/parser".into()),
            base: None
        })
    );
    // Off by default: a plain launch asks for no worktree.
    update(&mut state, Msg::Opened("s-run".into()));
    keys(&mut state, "c");
    keys(&mut state, "Plain");
    let launched = update(&mut state, ctrl('s'));
    let [Command::Launch(params)] = launched.as_slice() else {
        panic!("{launched:?}");
    };
    assert_eq!(params.worktree, None);
}

#[test]
fn a_diff_that_cannot_be_read_says_so() {
    let mut state = with_isolated(100, 20);
    keys(&mut state, "D");
    assert!(screen(&state, false).contains("loading the diff…"));
    update(
        &mut state,
        Msg::Failed("git failed: fatal: not a git repository".into()),
    );
    let text = screen(&state, false);
    assert!(text.contains("The diff could not be read"), "{text}");
    assert!(text.contains("not a git repository"), "{text}");
}

#[test]
fn a_diff_refused_shows_the_daemons_reason_on_the_screen_wrapped() {
    let mut state = reviewing(60, 20, None);
    // A turn's end reloads the diff; the worktree is gone meanwhile.
    let reload = update(
        &mut state,
        status_changed("s-iso", SessionStatus::Running, SessionStatus::Completed),
    );
    assert!(reload.contains(&Command::LoadDiff {
        session_id: "s-iso".into(),
        offset: 0
    }));
    let reason = "the session's worktree /wt/add-parser no longer exists (removed outside \
                  hld): continue the session in a worktree of its own, or discard it";
    update(
        &mut state,
        Msg::DiffRefused {
            session_id: "s-iso".into(),
            reason: reason.into(),
        },
    );
    let text = screen(&state, false);
    assert!(text.contains("The diff could not be read:"), "{text}");
    assert!(
        !text.contains("src/parser.rs"),
        "the files are no longer shown: {text}"
    );
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains(reason), "{text}");
    // A page read again shows the files.
    update(
        &mut state,
        Msg::Diff {
            session_id: "s-iso".into(),
            offset: 0,
            diff: diff(None),
        },
    );
    assert!(screen(&state, false).contains("src/parser.rs"));
}

#[test]
fn a_long_branch_gives_way_to_the_title_with_an_ellipsis() {
    let mut state = State::new(now(), 80, 24, true);
    update(&mut state, Msg::Connected);
    let branch = "feature/a-branch-name-much-longer-than-any-column-could-show";
    let long = session(
        "s-long",
        "completed",
        "Add a parser",
        1,
        worktree(branch, "merged"),
    );
    update(&mut state, Msg::Sessions(vec![long]));
    let shown = screen(&state, false);
    let row = shown.lines().find(|l| l.contains("⎇")).unwrap();
    assert!(row.contains("⎇ feature/a-bran"), "{row}");
    assert!(row.contains("… Add a parser"), "{row}");
}

#[test]
fn esc_leaves_the_review_for_the_screen_it_was_opened_from() {
    let mut state = with_isolated(100, 20);
    update(&mut state, key(KeyCode::Enter));
    assert_eq!(state.screen, Screen::Conversation);
    keys(&mut state, "D");
    assert_eq!(state.screen, Screen::Review);
    update(&mut state, key(KeyCode::Esc));
    assert_eq!(state.screen, Screen::Conversation);
}

#[test]
fn a_new_session_starts_in_the_repository_of_an_isolated_one_not_its_worktree() {
    let mut state = State::new(now(), 100, 30, true);
    update(&mut state, Msg::Connected);
    let mut isolated = worktree("add-parser", "active");
    isolated["working_dir"] = json!("/wt/add-parser");
    let iso = session("s-iso", "completed", "Add a parser", 1, isolated);
    update(&mut state, Msg::Sessions(vec![iso]));
    keys(&mut state, "c");
    keys(&mut state, "More");
    let launched = update(&mut state, ctrl('s'));
    let [Command::Launch(params)] = launched.as_slice() else {
        panic!("{launched:?}");
    };
    assert_eq!(params.working_dir.as_deref(), Some("/home/me/project"));
}

/// At 80 columns a long title then a long branch are cut with `…`, keeping the base branch
/// and the counts; with room, all of it shows.
#[test]
fn a_long_branch_is_cut_in_the_review_heading_keeping_the_base_and_counts() {
    let mut state = reviewing(80, 24, None);
    let title = "scenario:edit change the greeting in hello.txt";
    let heading = |state: &mut State, branch: &str| {
        let mut sessions = isolated();
        sessions[0].worktree.as_mut().unwrap().branch = branch.into();
        sessions[0].summary = title.into();
        update(state, Msg::Sessions(sessions));
        screen(state, false).lines().nth(1).unwrap().to_owned()
    };
    let shown = heading(&mut state, "hld/scenario-edit-change-greeting");
    assert!(
        shown.contains("“scenario:…” ⎇ hld/scenario-edit-change-greeting → main · 4 files +12 −4"),
        "{shown}"
    );
    let shown = heading(
        &mut state,
        "hld/scenario-edit-change-the-greeting-in-hello-txt",
    );
    assert!(shown.contains("… → main · 4 files +12 −4"), "{shown}");
    assert!(shown.contains("⎇ hld/scenario-edit"), "{shown}");
    update(&mut state, Msg::Resize(160, 24));
    let shown = heading(&mut state, "hld/scenario-edit-change-greeting");
    assert!(
        shown.contains(&format!(
            "“{title}” ⎇ hld/scenario-edit-change-greeting → main"
        )),
        "{shown}"
    );
}

/// Merged, the review says what is next, as `hlyr merge` does: the worktree and branch stay
/// until discarded, and the key that discards them.
#[test]
fn after_a_merge_the_review_says_the_worktree_stays_until_x_discards_it() {
    let mut state = reviewing(80, 20, None);
    let result = MergeSessionResult {
        merged: true,
        conflicts: Vec::new(),
        commit: Some("abcdef0123456789".into()),
    };
    let merged = Msg::Merged {
        session_id: "s-iso".into(),
        strategy: MergeStrategy::Squash,
        result,
    };
    assert_eq!(update(&mut state, merged), [Command::LoadSessions]);
    let flash = state.flash.clone().unwrap().text;
    assert!(
        flash.contains("worktree and branch kept: X discards them"),
        "{flash}"
    );
    // Whole in an 80-column footer.
    let footer = screen(&state, false).lines().last().unwrap().to_owned();
    assert!(footer.contains("X discards them"), "{footer}");
    let mut sessions = isolated();
    sessions[0].worktree =
        serde_json::from_value(worktree("add-parser", "merged")["worktree"].clone()).unwrap();
    update(&mut state, Msg::Sessions(sessions));
    let shown = screen(&state, false);
    assert!(shown.contains("(merged)"), "{shown}");
    assert!(
        shown.contains("Merged: its worktree and branch stay until discarded (X discards them)."),
        "{shown}"
    );
}
