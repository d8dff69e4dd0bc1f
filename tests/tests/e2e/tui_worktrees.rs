//! `hld-tui` with isolated sessions, end to end over the real daemon, `fake-claude` and real
//! git in a temporary repository: launched isolated from the form, the row's branch and
//! counts, the review screen's hunk, a refused merge, a confirmed squash merge into the main
//! checkout, a discard (forced, once the daemon refuses unmerged work), and a worktree removed
//! by hand: the review screen says so, and the discard cleans up.

use hld_client::protocol::{WorktreeParams, WorktreeState};
use hld_e2e::launch_params;

use super::tui::{fake, tui_on, Tui};
use super::worktrees::{git, repo, shared};

const CTRL_S: &str = "\x13";
const RIGHT: &str = "\x1b[C";

/// Fills the launch form: `query` (Alt+Enter is a new line there), the working directory,
/// edits accepted, the isolation switch on, and `branch`; Ctrl+S launches.
fn launch_isolated(tui: &mut Tui, query: &str, dir: &std::path::Path, branch: &str) {
    tui.send("c");
    tui.wait_screen(" New session ");
    tui.wait_screen("Isolation");
    tui.send(&query.replace('\n', "\x1b\r"));
    // The directory field holds where the dashboard started: erased, then typed.
    tui.send("\t\x15");
    tui.send(&dir.display().to_string());
    // Model, then approvals: ask → auto-accept edits.
    tui.send("\t\t");
    tui.send(RIGHT);
    tui.wait_screen("auto-accept edits, ask the rest");
    tui.send("\t");
    tui.send(RIGHT);
    tui.wait_screen("◂ own git worktree and branch ▸");
    tui.send("\t");
    tui.send(branch);
    tui.wait_screen(branch);
    tui.send(CTRL_S);
}

#[test]
fn launched_isolated_from_the_form_reviewed_and_squash_merged_with_confirmation() {
    let d = fake();
    let repo = repo(&d);
    let mut tui = tui_on(&d);
    tui.wait_screen("No sessions yet");

    let query = format!("scenario:write shared.txt\n{}", shared(&[(3, "three")]));
    launch_isolated(&mut tui, &query, &repo, "tui-feature");
    // Its conversation opens once the daemon launched it.
    tui.wait_screen("I'll write shared.txt.");
    let id = d.only_session();
    let state = d.wait_ended(&id);
    assert_eq!(state.error_message, None, "{state:#?}");
    let worktree = state.worktree.expect("isolated");
    assert_eq!(worktree.branch, "tui-feature");
    assert_eq!(worktree.state, WorktreeState::Active);
    // The agent wrote in its worktree, not in the main checkout.
    assert_eq!(
        std::fs::read_to_string(repo.join("shared.txt")).unwrap(),
        shared(&[])
    );

    // The conversation opened at launch; back on the list the row shows the branch and counts.
    tui.wait_screen("shared.txt is written.");
    tui.send("\x1b");
    tui.wait_screen("⎇ tui-feature +1 −1");

    // The review screen: the file, and its hunk with the line removed and the one added.
    tui.send("D");
    let screen = tui.wait_screen("+three");
    assert!(screen.contains("M shared.txt"), "{screen}");
    assert!(screen.contains("-line 3"), "{screen}");
    assert!(screen.contains("⎇ tui-feature → main"), "{screen}");

    // A dirty main checkout is refused in the daemon's words, and nothing changes.
    std::fs::write(repo.join("shared.txt"), "dirty\n").unwrap();
    tui.send("m");
    tui.wait_screen("Merge ⎇ tui-feature into main?");
    tui.send("y");
    tui.wait_screen("not merged: the main checkout has uncommitted changes");
    assert_eq!(git(&repo, &["rev-list", "--count", "HEAD"]).trim(), "1");
    git(&repo, &["checkout", "--", "shared.txt"]);

    // Merge asks how; squash, confirmed.
    tui.send("m");
    tui.wait_screen("Merge ⎇ tui-feature into main?");
    tui.send("s");
    tui.wait_screen("◂ squash ▸");
    tui.send("y");
    tui.wait_screen("merged (squash)");
    d.wait_session(&id, |s| {
        s.worktree
            .as_ref()
            .is_some_and(|w| w.state == WorktreeState::Merged)
    });
    // One new commit on main, holding the change: no merge commit, no branch commits.
    assert_eq!(git(&repo, &["rev-list", "--count", "HEAD"]).trim(), "2");
    assert_eq!(git(&repo, &["rev-list", "--merges", "HEAD"]).trim(), "");
    assert_eq!(
        std::fs::read_to_string(repo.join("shared.txt")).unwrap(),
        shared(&[(3, "three")])
    );
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
    tui.send("\x1b");
    tui.wait_screen("⎇ tui-feature merged");
}

#[test]
fn discarding_unmerged_work_asks_again_then_forces() {
    let d = fake();
    let repo = repo(&d);
    let mut p = launch_params(
        &format!("scenario:write shared.txt\n{}", shared(&[(5, "five")])),
        &repo,
    );
    p.dangerously_skip_permissions = Some(true);
    p.worktree = Some(WorktreeParams {
        branch: Some("throwaway".into()),
        base: None,
    });
    let id = d.launch(p);
    d.wait_ended(&id);
    let mut tui = tui_on(&d);
    tui.wait_screen("⎇ throwaway +1 −1");

    tui.send("D");
    tui.wait_screen("+five");
    tui.send("X");
    tui.wait_screen("Discard the worktree and branch ⎇ throwaway?");
    tui.send("y");
    // The daemon refuses work never merged, in its words; confirming again forces it.
    let screen = tui.wait_screen("discard anyway");
    assert!(screen.contains("Refused: the session's branch holds work never merged"));
    assert_eq!(
        git(
            &repo,
            &["branch", "--list", "--format=%(refname:short)", "throwaway"]
        )
        .trim(),
        "throwaway"
    );
    tui.send("y");
    tui.wait_screen("discarded the worktree and its branch");
    d.wait_session(&id, |s| {
        s.worktree
            .as_ref()
            .is_some_and(|w| w.state == WorktreeState::Discarded)
    });
    assert_eq!(
        git(
            &repo,
            &["branch", "--list", "--format=%(refname:short)", "throwaway"]
        )
        .trim(),
        ""
    );
    tui.wait_screen("⎇ throwaway discarded");
}

#[test]
fn a_worktree_removed_by_hand_is_said_on_the_review_screen_then_discarded() {
    let d = fake();
    let repo = repo(&d);
    let mut p = launch_params("scenario:write notes.txt\nnotes\n", &repo);
    p.dangerously_skip_permissions = Some(true);
    p.worktree = Some(WorktreeParams {
        branch: Some("by-hand".into()),
        base: None,
    });
    let id = d.launch(p);
    let path = d.wait_ended(&id).worktree.expect("isolated").path;
    git(&repo, &["worktree", "remove", "--force", &path]);
    let mut tui = tui_on(&d);
    tui.wait_screen("⎇ by-hand");

    tui.send("D");
    let screen = tui.wait_screen("The diff could not be read:");
    // The daemon's reason, wrapped to the screen's width.
    let words = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    let reason = format!("the session's worktree {path} no longer exists (removed outside hld)");
    assert!(words.contains(&reason), "{screen}");
    tui.send("X");
    tui.wait_screen("Discard the worktree and branch ⎇ by-hand?");
    tui.send("y");
    tui.wait_screen("discarded the worktree and its branch");
    assert_eq!(
        git(&repo, &["branch", "--format=%(refname:short)"]).trim(),
        "main"
    );
}
