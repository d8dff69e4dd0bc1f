//! Isolated sessions over the real daemon, real git in temporary repositories and
//! `fake-claude`: each session in its own worktree and branch, its diff, merge (merge, squash),
//! conflicts, discard, and the refusals.

use std::path::{Path, PathBuf};
use std::process::Command;

use hld_client::protocol::{
    ContinueSession, ContinueSessionParams, DeleteSession, DiffStatus, DiscardSession,
    DiscardSessionParams, GetSessionDiff, GetSessionDiffParams, GetSessionDiffResult, Health,
    LaunchSession, MergeSession, MergeSessionParams, MergeSessionResult, MergeStrategy, NoParams,
    SendMessage, SendMessageParams, SessionIdParams, WorktreeParams, WorktreeState,
};
use hld_e2e::{launch_params, DaemonOptions, TestDaemon};

/// Runs git in `dir`; its stdout (it must succeed).
pub(super) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The ten lines of `shared.txt`, with `changes` (line number, new text) made.
pub(super) fn shared(changes: &[(usize, &str)]) -> String {
    (1..=10)
        .map(|i| {
            let line = changes
                .iter()
                .find(|(n, _)| *n == i)
                .map_or(format!("line {i}"), |(_, t)| (*t).to_owned());
            format!("{line}\n")
        })
        .collect()
}

/// A repository on `main` with one commit holding `shared.txt`.
pub(super) fn repo(d: &TestDaemon) -> PathBuf {
    repo_at(&d.dir.join("repo"))
}

/// A repository at `repo` on `main` with one commit holding `shared.txt`.
pub(super) fn repo_at(repo: &Path) -> PathBuf {
    let repo = repo.to_owned();
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.name", "Ada"]);
    git(&repo, &["config", "user.email", "ada@example.com"]);
    std::fs::write(repo.join("shared.txt"), shared(&[])).unwrap();
    std::fs::write(repo.join(".gitignore"), "*.log\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    repo
}

fn daemon() -> TestDaemon {
    TestDaemon::start_with(DaemonOptions::fake_claude())
}

/// Launches an isolated session whose agent writes `shared.txt` with `changes`, and waits
/// for its turn to end.
pub(super) fn isolated(
    d: &TestDaemon,
    repo: &Path,
    branch: Option<&str>,
    changes: &[(usize, &str)],
) -> String {
    let query = format!("scenario:write shared.txt\n{}", shared(changes));
    let mut p = launch_params(&query, repo);
    p.dangerously_skip_permissions = Some(true);
    p.worktree = Some(WorktreeParams {
        branch: branch.map(str::to_owned),
        base: None,
    });
    let id = d.launch(p);
    let state = d.wait_ended(&id);
    assert_eq!(state.error_message, None, "{state:#?}");
    id
}

fn diff(d: &TestDaemon, id: &str) -> GetSessionDiffResult {
    d.request::<GetSessionDiff>(GetSessionDiffParams {
        session_id: id.into(),
        ..Default::default()
    })
}

fn merge(d: &TestDaemon, id: &str, strategy: MergeStrategy) -> MergeSessionResult {
    d.request::<MergeSession>(MergeSessionParams {
        session_id: id.into(),
        strategy,
        message: None,
    })
}

/// The -32602 message a call is refused with.
fn refusal<M: hld_client::protocol::Method>(d: &TestDaemon, params: M::Params) -> String {
    refused_param::<M>(d, params).1
}

/// The parameter a -32602 names, and its message.
fn refused_param<M: hld_client::protocol::Method>(
    d: &TestDaemon,
    params: M::Params,
) -> (String, String) {
    let Err(e) = d.try_request::<M>(params) else {
        panic!("{} was not refused", M::NAME);
    };
    assert_eq!(e.code, -32602, "{e:?}");
    let param = e
        .data
        .as_ref()
        .and_then(|d| d["param"].as_str())
        .unwrap_or_default();
    (param.to_owned(), e.message)
}

#[test]
fn three_isolated_sessions_are_reviewed_merged_squashed_and_discarded() {
    let d = daemon();
    let repo = repo(&d);
    let first = isolated(&d, &repo, Some("first"), &[(1, "one by the first")]);
    let second = isolated(&d, &repo, None, &[(10, "ten by the second")]);
    let third = isolated(&d, &repo, Some("third/x"), &[(5, "five by the third")]);

    // Each agent wrote in its own worktree: the main checkout is untouched.
    assert_eq!(
        std::fs::read_to_string(repo.join("shared.txt")).unwrap(),
        shared(&[])
    );
    let root = d
        .request::<Health>(NoParams {})
        .worktree_root
        .expect("root in health");
    for (id, line) in [
        (&first, "+one by the first"),
        (&second, "+ten by the second"),
        (&third, "+five by the third"),
    ] {
        let state = d.state(id);
        let w = state.worktree.expect("a worktree record");
        assert_eq!(w.state, WorktreeState::Active);
        assert_eq!(w.base_branch, "main");
        assert!(
            Path::new(&w.path).starts_with(&root),
            "{} under {root}",
            w.path
        );
        assert_eq!(state.working_dir.as_deref(), Some(w.path.as_str()));
        let diff = diff(&d, id);
        assert_eq!(diff.total_files, 1, "{diff:#?}");
        let file = &diff.files[0];
        assert_eq!(
            (file.path.as_str(), &file.status),
            ("shared.txt", &DiffStatus::Modified)
        );
        assert_eq!((file.additions, file.deletions), (1, 1));
        let lines: Vec<&str> = file
            .hunks
            .iter()
            .flat_map(|h| &h.lines)
            .map(String::as_str)
            .collect();
        assert!(lines.contains(&line), "{lines:?}");
        assert_eq!(
            lines.iter().filter(|l| l.starts_with('+')).count(),
            1,
            "{lines:?}"
        );
    }
    let listed = d.request::<hld_client::protocol::ListSessions>(NoParams {});
    let branch_of_second = d.state(&second).worktree.unwrap().branch;
    assert!(
        branch_of_second.starts_with("hld/scenario-write-shared.txt"),
        "{branch_of_second}"
    );
    assert!(listed.sessions.iter().all(|s| s.worktree.is_some()));

    // The agent's process stays warm after its turn, until the merge ends it.
    assert!(d.wait_session(&first, |s| s.live).live);
    let merged = merge(&d, &first, MergeStrategy::Merge);
    assert!(merged.merged && merged.conflicts.is_empty(), "{merged:?}");
    assert!(
        !d.state(&first).live,
        "the merge ended the warm process first"
    );
    let squashed = merge(&d, &second, MergeStrategy::Squash);
    assert!(squashed.merged, "{squashed:?}");
    assert_eq!(
        squashed.commit.as_deref(),
        Some(git(&repo, &["rev-parse", "HEAD"]).trim())
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("shared.txt")).unwrap(),
        shared(&[(1, "one by the first"), (10, "ten by the second")])
    );
    // Work never merged is kept unless discarded with force.
    let kept = refusal::<DiscardSession>(
        &d,
        DiscardSessionParams {
            session_id: third.clone(),
            force: None,
        },
    );
    assert!(kept.contains("never merged"), "{kept}");
    d.request::<DiscardSession>(DiscardSessionParams {
        session_id: third.clone(),
        force: Some(true),
    });
    // The merged ones are discarded too, as a user finishing up does.
    for id in [&first, &second] {
        assert_eq!(d.state(id).worktree.unwrap().state, WorktreeState::Merged);
        d.request::<DiscardSession>(DiscardSessionParams {
            session_id: id.to_string(),
            force: None,
        });
    }

    // History: the merge commit of `first`, then the squash commit; nothing of the third.
    let log = git(&repo, &["log", "--topo-order", "--format=%s|%P", "main"]);
    let subjects: Vec<(&str, usize)> = log
        .lines()
        .map(|l| l.split_once('|').unwrap())
        .map(|(s, parents)| (s, parents.split_whitespace().count()))
        .collect();
    assert_eq!(subjects.len(), 4, "{log}");
    assert_eq!(subjects[0].1, 1, "the squash is one plain commit: {log}");
    assert_eq!(subjects[1].1, 2, "the merge has two parents: {log}");
    assert_eq!(subjects[3].0, "base");
    let message = git(&repo, &["log", "-1", "--format=%B", "main~1^2"]);
    assert!(
        message.contains("uncommitted changes of the session"),
        "{message}"
    );
    assert!(!git(&repo, &["log", "-p", "main"]).contains("five by the third"));
    // No stray worktree or branch.
    assert_eq!(
        git(&repo, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
    assert_eq!(
        git(&repo, &["branch", "--format=%(refname:short)"]).trim(),
        "main"
    );
    for id in [&first, &second, &third] {
        assert_eq!(
            d.state(id).worktree.unwrap().state,
            WorktreeState::Discarded
        );
    }
}

#[test]
fn a_conflict_leaves_the_main_checkout_untouched_and_names_the_file() {
    let d = daemon();
    let repo = repo(&d);
    let a = isolated(&d, &repo, Some("a"), &[(3, "three from a")]);
    let b = isolated(&d, &repo, Some("b"), &[(3, "three from b")]);
    assert!(merge(&d, &a, MergeStrategy::Rebase).merged);
    let head = git(&repo, &["rev-parse", "HEAD"]);
    for strategy in [
        MergeStrategy::Merge,
        MergeStrategy::Squash,
        MergeStrategy::Rebase,
    ] {
        let result = merge(&d, &b, strategy);
        assert!(!result.merged, "{result:?}");
        assert_eq!(result.conflicts, ["shared.txt"]);
        assert_eq!(git(&repo, &["rev-parse", "HEAD"]), head);
        assert_eq!(git(&repo, &["status", "--porcelain"]), "");
    }
    assert_eq!(d.state(&b).worktree.unwrap().state, WorktreeState::Active);
}

#[test]
fn untracked_ignored_binary_and_uncommitted_files_in_the_diff() {
    let d = daemon();
    let repo = repo(&d);
    let id = isolated(&d, &repo, Some("mixed"), &[(2, "two")]);
    let path = PathBuf::from(d.state(&id).worktree.unwrap().path);
    std::fs::write(path.join("new.txt"), "fresh\n").unwrap();
    std::fs::write(path.join("debug.log"), "ignored\n").unwrap();
    std::fs::write(path.join("blob.bin"), [0u8, 159, 146, 150, 0, 1]).unwrap();
    git(&path, &["mv", "shared.txt", "moved.txt"]);
    let diff = diff(&d, &id);
    let files: Vec<(&str, &DiffStatus)> = diff
        .files
        .iter()
        .map(|f| (f.path.as_str(), &f.status))
        .collect();
    assert_eq!(
        files,
        [
            ("blob.bin", &DiffStatus::Binary),
            ("moved.txt", &DiffStatus::Renamed),
            ("new.txt", &DiffStatus::Added)
        ]
    );
    assert_eq!(diff.files[1].old_path.as_deref(), Some("shared.txt"));
    let page = d.request::<GetSessionDiff>(GetSessionDiffParams {
        session_id: id.clone(),
        offset: Some(1),
        limit: Some(1),
        ..Default::default()
    });
    assert_eq!(
        (page.files.len(), page.total_files, page.next_offset),
        (1, 3, Some(2))
    );
    assert_eq!(page.files[0].path, "moved.txt");
    // The worktree's own index was not touched by the review.
    assert!(git(&path, &["status", "--porcelain"]).contains("?? new.txt"));
}

#[test]
fn refusals_are_plain() {
    let d = daemon();
    let repo = repo(&d);
    let not_repo = d.dir.join("plain");
    std::fs::create_dir_all(&not_repo).unwrap();
    let mut p = launch_params("scenario:plain hi", &not_repo);
    p.worktree = Some(WorktreeParams::default());
    let (param, message) = refused_param::<LaunchSession>(&d, p);
    assert!(message.contains("not a git repository"), "{message}");
    assert_eq!(param, "working_dir");

    let id = isolated(&d, &repo, Some("taken"), &[(4, "four")]);
    let mut p = launch_params("scenario:plain hi", &repo);
    p.worktree = Some(WorktreeParams {
        branch: Some("taken".into()),
        base: None,
    });
    let (param, message) = refused_param::<LaunchSession>(&d, p);
    assert!(message.contains("branch taken already exists"), "{message}");
    assert_eq!(param, "worktree");
    // A name given is refused rather than cut.
    let mut p = launch_params("scenario:plain hi", &repo);
    p.worktree = Some(WorktreeParams {
        branch: Some(format!("feature/{}", "long-".repeat(20))),
        base: None,
    });
    let (param, message) = refused_param::<LaunchSession>(&d, p);
    assert!(message.contains("is too long: at most 60"), "{message}");
    assert_eq!(param, "worktree");
    let mut p = launch_params("scenario:plain hi", &repo);
    p.worktree = Some(WorktreeParams {
        branch: None,
        base: Some("nope".into()),
    });
    assert!(refusal::<LaunchSession>(&d, p).contains("names no commit"));

    // A turn waiting for an approval is still running: no merge or discard under it.
    let mut p = launch_params("scenario:tool write", &repo);
    p.worktree = Some(WorktreeParams {
        branch: Some("busy".into()),
        base: None,
    });
    let busy = d.launch(p);
    d.wait_approvals(Some(&busy), |a| !a.is_empty());
    let msg = refusal::<MergeSession>(
        &d,
        MergeSessionParams {
            session_id: busy.clone(),
            ..Default::default()
        },
    );
    assert!(msg.contains("a turn is still running"), "{msg}");
    let msg = refusal::<DiscardSession>(
        &d,
        DiscardSessionParams {
            session_id: busy,
            force: Some(true),
        },
    );
    assert!(msg.contains("a turn is still running"), "{msg}");

    // A session that is not isolated has nothing to merge.
    let plain = d.launch(launch_params("scenario:plain hi", &repo));
    d.wait_ended(&plain);
    let msg = refusal::<MergeSession>(
        &d,
        MergeSessionParams {
            session_id: plain.clone(),
            ..Default::default()
        },
    );
    assert!(msg.contains("not isolated"), "{msg}");
    let own = ContinueSessionParams {
        session_id: plain,
        query: "more".into(),
        worktree: Some(WorktreeParams::default()),
        ..Default::default()
    };
    let msg = refusal::<ContinueSession>(&d, own);
    assert!(msg.contains("the parent session is not isolated"), "{msg}");

    // A dirty main checkout, then one on another branch.
    std::fs::write(repo.join("shared.txt"), "dirty\n").unwrap();
    let msg = refusal::<MergeSession>(
        &d,
        MergeSessionParams {
            session_id: id.clone(),
            ..Default::default()
        },
    );
    assert!(msg.contains("uncommitted changes"), "{msg}");
    git(&repo, &["checkout", "-q", "--", "shared.txt"]);
    git(&repo, &["checkout", "-q", "-b", "other"]);
    let msg = refusal::<MergeSession>(
        &d,
        MergeSessionParams {
            session_id: id.clone(),
            ..Default::default()
        },
    );
    assert!(msg.contains("not on the base branch main"), "{msg}");
    git(&repo, &["checkout", "-q", "main"]);
    assert!(merge(&d, &id, MergeStrategy::Merge).merged);

    // A merged session takes no more messages or continuations in its worktree.
    let msg = refusal::<SendMessage>(
        &d,
        SendMessageParams {
            session_id: id.clone(),
            text: "more".into(),
            mode: None,
            images: None,
        },
    );
    assert!(msg.contains("was merged"), "{msg}");
    let cont = ContinueSessionParams {
        session_id: id.clone(),
        query: "more".into(),
        ..Default::default()
    };
    assert!(refusal::<ContinueSession>(&d, cont).contains("was merged"));
    let again = refusal::<MergeSession>(
        &d,
        MergeSessionParams {
            session_id: id.clone(),
            ..Default::default()
        },
    );
    assert!(again.contains("already merged"), "{again}");

    // Deleting the session removes the worktree it owns.
    let path = d.state(&id).worktree.unwrap().path;
    d.request::<DeleteSession>(SessionIdParams { session_id: id });
    assert!(!Path::new(&path).exists());
    assert_eq!(
        git(&repo, &["branch", "--format=%(refname:short)"]).trim(),
        "busy\nmain\nother"
    );
}

#[test]
fn a_merge_without_a_git_identity_says_how_to_set_one() {
    let d = daemon();
    let repo = d.dir.join("anonymous");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("shared.txt"), shared(&[])).unwrap();
    git(&repo, &["add", "."]);
    let ada = ["-c", "user.name=Ada", "-c", "user.email=ada@example.com"];
    git(&repo, &[&ada[..], &["commit", "-q", "-m", "base"]].concat());
    // No identity configured (the daemon's HOME has none), and none guessed from the machine.
    git(&repo, &["config", "user.useConfigOnly", "true"]);
    let id = isolated(&d, &repo, None, &[(1, "one")]);
    let params = MergeSessionParams {
        session_id: id,
        ..Default::default()
    };
    let message = refusal::<MergeSession>(&d, params);
    assert!(message.contains("no identity"), "{message}");
    assert!(
        message.contains("git config --global user.email"),
        "{message}"
    );
    assert_eq!(git(&repo, &["log", "--format=%s"]).trim(), "base");
}

#[test]
fn a_continuation_works_in_its_parents_worktree_or_its_own() {
    let d = daemon();
    let repo = repo(&d);
    let parent = isolated(&d, &repo, Some("parent"), &[(6, "six")]);
    let parent_dir = d.state(&parent).worktree.unwrap().path;
    let same = d.request::<ContinueSession>(ContinueSessionParams {
        session_id: parent.clone(),
        query: "scenario:plain go on".into(),
        ..Default::default()
    });
    let state = d.wait_ended(&same.session_id);
    assert_eq!(state.working_dir.as_deref(), Some(parent_dir.as_str()));
    assert_eq!(state.worktree.unwrap().branch, "parent");
    let own = d.request::<ContinueSession>(ContinueSessionParams {
        session_id: parent.clone(),
        query: "scenario:write shared.txt\n".to_owned() + &shared(&[(7, "seven")]),
        worktree: Some(WorktreeParams {
            branch: Some("child".into()),
            base: None,
        }),
        ..Default::default()
    });
    let state = d.wait_ended(&own.session_id);
    let w = state.worktree.unwrap();
    assert_eq!(
        (w.branch.as_str(), w.base_branch.as_str()),
        ("child", "main")
    );
    assert_ne!(w.path, parent_dir);
    // Its diff holds only its own change, on top of the parent's branch.
    let diff = diff(&d, &own.session_id);
    let lines: Vec<&str> = diff.files[0]
        .hunks
        .iter()
        .flat_map(|h| &h.lines)
        .map(String::as_str)
        .collect();
    assert!(
        lines.contains(&"+seven") && !lines.contains(&"+six"),
        "{lines:?}"
    );

    // Once the parent's worktree is discarded, nothing branches from it any more.
    d.request::<DiscardSession>(DiscardSessionParams {
        session_id: parent.clone(),
        force: Some(true),
    });
    let again = ContinueSessionParams {
        session_id: parent,
        query: "scenario:plain more".into(),
        worktree: Some(WorktreeParams::default()),
        ..Default::default()
    };
    let msg = refusal::<ContinueSession>(&d, again);
    assert!(msg.contains("was discarded"), "{msg}");
}

#[test]
fn parallel_launches_on_one_repository_each_get_their_worktree() {
    let d = daemon();
    let repo = repo(&d);
    let ids: Vec<String> = std::thread::scope(|s| {
        let launches: Vec<_> = (1..=4)
            .map(|i| {
                let (d, repo) = (&d, &repo);
                s.spawn(move || isolated(d, repo, None, &[(i, "changed")]))
            })
            .collect();
        launches.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut branches: Vec<String> = ids
        .iter()
        .map(|id| d.state(id).worktree.unwrap().branch)
        .collect();
    branches.sort();
    branches.dedup();
    assert_eq!(branches.len(), 4, "{branches:?}");
    assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 5);
    for (i, id) in ids.iter().enumerate() {
        let diff = diff(&d, id);
        let lines = &diff.files[0].hunks[0].lines;
        let removed: Vec<&String> = lines.iter().filter(|l| l.starts_with('-')).collect();
        assert_eq!(removed, [&format!("-line {}", i + 1)], "{lines:?}");
    }
}

#[test]
fn unborn_and_detached_repositories_and_a_symlinked_root_are_refused() {
    let d = daemon();
    let launch = |dir: &Path, branch: &str| {
        let mut p = launch_params("scenario:plain hi", dir);
        p.worktree = Some(WorktreeParams {
            branch: Some(branch.into()),
            base: None,
        });
        refusal::<LaunchSession>(&d, p)
    };
    let empty = d.dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    git(&empty, &["init", "-q"]);
    assert!(launch(&empty, "x").contains("unborn branch"));

    let repo = repo(&d);
    git(&repo, &["checkout", "-q", "--detach"]);
    assert!(launch(&repo, "x").contains("detached HEAD"));
    git(&repo, &["checkout", "-q", "main"]);

    // The repository's directory under the root swapped for a link out of it.
    let id = isolated(&d, &repo, Some("first"), &[]);
    let repo_dir = Path::new(&d.state(&id).worktree.unwrap().path)
        .parent()
        .unwrap()
        .to_owned();
    d.request::<DiscardSession>(DiscardSessionParams {
        session_id: id,
        force: Some(true),
    });
    std::fs::remove_dir(&repo_dir).unwrap();
    let outside = d.dir.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, &repo_dir).unwrap();
    let e = d
        .try_request::<LaunchSession>({
            let mut p = launch_params("scenario:plain hi", &repo);
            p.worktree = Some(WorktreeParams::default());
            p
        })
        .map(|_| ())
        .unwrap_err();
    assert!(e.message.contains("symbolic link"), "{e:?}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}
