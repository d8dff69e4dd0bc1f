//! An isolated session whose worktree the user removed by hand (`rm -rf`, `git worktree
//! remove`), over the real daemon, `hlyr`, `fake-claude` and git: its diff, merge, messages and
//! continuations refused naming the worktree and the ways on, no turn run where it was
//! (neither by the warm process nor for a message queued before), the worktree made again and
//! working, a discard.

use std::path::Path;

use hld_client::protocol::{
    InterruptSession, ListQueuedMessages, SendMessage, SendMessageParams, SessionIdParams,
    SessionStatus, WorktreeParams, WorktreeState,
};
use hld_e2e::{launch_params, wait_for, DaemonOptions, TestDaemon, WAIT};

use super::hlyr::{fake, hlyr};
use super::worktrees::{git, repo};
use super::worktrees_hlyr::isolated;

/// The local branches of `repo`.
fn branches(repo: &Path) -> String {
    git(repo, &["branch", "--format=%(refname:short)"])
}

#[test]
fn a_worktree_removed_by_hand_is_named_with_the_ways_on_then_made_again_or_discarded() {
    let d = fake();
    let repo = repo(&d);
    let (id, worktree) = isolated(&d, &repo, "scenario:write notes.txt\nnotes\n");
    let branch = d.state(&id).worktree.unwrap().branch;
    // Its process stays warm between turns, in the directory removed now.
    std::fs::remove_dir_all(&worktree).unwrap();

    let (path, repository) = (worktree.display(), repo.display());
    let gone = format!(
        "error: the session's worktree {path} no longer exists (removed outside hld): make it \
         again from its branch (`git -C {repository} worktree prune && git -C {repository} \
         worktree add {path} {branch}`), or discard it\n"
    );
    // Named by a prefix, the session is named so in the hint, whichever command refused.
    let short = &id[..8];
    let hint = format!(
        "hint: made again, the worktree serves the session as before; `hlyr discard {short}` \
         deletes its branch\n"
    );
    let later = "scenario:write later.txt\nlater\n";
    for args in [
        vec!["diff", short],
        vec!["merge", short],
        vec!["send", short, later],
        vec!["continue", short, "--detach", later],
        vec!["continue", short, "--worktree", "--detach", later],
    ] {
        let run = hlyr(&d, &args);
        assert_eq!(run.code, 1, "{args:?}: {run:#?}");
        assert_eq!(run.stderr, format!("{gone}{hint}"), "{args:?}");
    }
    let error = hlyr(&d, &["--json", "diff", &id]).error_json();
    assert_eq!(error["kind"], "worktree_missing", "{error}");
    // No turn ran: the session ended once, and nothing made the directory again.
    assert_eq!(d.state(&id).status, SessionStatus::Completed);
    assert!(!worktree.exists());

    // Made again as the message says, the worktree serves the session: the next message runs
    // in it (not in the warm process, whose directory is the one removed).
    git(&repo, &["worktree", "prune"]);
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            &worktree.display().to_string(),
            &branch,
        ],
    );
    hlyr(&d, &["send", &id, later]).assert_code(0);
    wait_for(WAIT, || worktree.join("later.txt").is_file().then_some(()))
        .expect("the agent writes in the worktree made again");
    assert_eq!(d.wait_ended(&id).error_message, None);
    let stat = hlyr(&d, &["diff", &id, "--stat"]);
    assert!(
        stat.assert_code(0)
            .stdout
            .starts_with("later.txt added +1 -0\n"),
        "{}",
        stat.stdout
    );

    // Removed with git, a worktree is discarded: git's record pruned, the branch deleted.
    let (other, worktree) = isolated(&d, &repo, "scenario:write notes.txt\nnotes\n");
    let branch = d.state(&other).worktree.unwrap().branch;
    let path = worktree.display().to_string();
    git(&repo, &["worktree", "remove", "--force", &path]);
    let run = hlyr(&d, &["discard", &other]);
    assert!(
        run.assert_code(0).stdout.starts_with("discarded "),
        "{run:#?}"
    );
    assert!(!branches(&repo).contains(&branch), "{}", branches(&repo));
    assert!(!git(&repo, &["worktree", "list"]).contains(&path));
    assert_eq!(
        d.state(&other).worktree.unwrap().state,
        WorktreeState::Discarded
    );
}

#[test]
fn a_message_queued_before_the_worktree_was_removed_is_not_delivered_there() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_COUNT", "400")
            .env("FAKE_CLAUDE_DELAY_MS", "25"),
    );
    let repo = repo(&d);
    let mut p = launch_params("scenario:slow", &repo);
    p.worktree = Some(WorktreeParams::default());
    let id = d.launch(p);
    d.wait_session(&id, |s| s.status == SessionStatus::Running);
    let queued = d.request::<SendMessage>(SendMessageParams {
        session_id: id.clone(),
        text: "scenario:write later.txt\nlater\n".into(),
        mode: None,
        images: None,
    });
    assert!(queued.queued);
    let worktree = d.state(&id).worktree.unwrap().path;
    git(&repo, &["worktree", "remove", "--force", &worktree]);
    d.request::<InterruptSession>(SessionIdParams {
        session_id: id.clone(),
    });
    let ended = d.wait_ended(&id).status;

    // The turn's end gives the queued message up, saying why, instead of running it.
    wait_for(WAIT, || {
        let queued = d.request::<ListQueuedMessages>(SessionIdParams {
            session_id: id.clone(),
        });
        queued.messages.is_empty().then_some(())
    })
    .expect("the queued message is settled");
    let db = rusqlite::Connection::open(d.dir.join("hld.db")).unwrap();
    let (status, error): (String, String) = db
        .query_row(
            "SELECT status, error FROM queued_messages WHERE id = ?1",
            [&queued.message_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(status, "undelivered");
    assert_eq!(
        error,
        format!("the session's working directory no longer exists: {worktree}")
    );
    assert!(!Path::new(&worktree).exists());
    assert_eq!(d.state(&id).status, ended, "no turn ran after it");
    assert!(d.log_text().contains("its working directory was removed"));
}
