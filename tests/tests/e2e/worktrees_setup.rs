//! Isolated sessions' housekeeping over the real daemon and git: the user's `worktree_setup`
//! command, and what a daemon killed while making a worktree leaves for the next start.

use std::path::{Path, PathBuf};

use hld_client::protocol::{Health, LaunchSession, NoParams, WorktreeParams};
use hld_e2e::LineConn;
use hld_e2e::{launch_params, wait_for, DaemonOptions, TestDaemon, WAIT};
use serde_json::json;

use super::worktrees::{git, isolated, repo_at, shared};

/// A private directory for a daemon that is started more than once, or configured first.
fn scratch() -> tempfile::TempDir {
    hld_e2e::short_tempdir()
}

/// Writes `humanlayer.json` with `worktree_setup` for a daemon in `dir`.
fn configure(dir: &Path, setup: serde_json::Value) {
    let config = dir.join("config/humanlayer");
    std::fs::create_dir_all(&config).unwrap();
    let body = json!({ "worktree_setup": setup }).to_string();
    std::fs::write(config.join("humanlayer.json"), body).unwrap();
}

fn start(dir: &Path) -> TestDaemon {
    TestDaemon::start_with(DaemonOptions {
        dir: Some(dir.to_owned()),
        ..DaemonOptions::fake_claude()
    })
}

/// The directories under the daemon's worktree root, two levels down.
fn made(dir: &Path) -> Vec<PathBuf> {
    let list = |d: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(d)
            .map(|e| e.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    list(&dir.join("worktrees"))
        .iter()
        .flat_map(|r| list(r))
        .collect()
}

#[test]
fn setup_runs_in_the_new_worktree_and_its_failure_removes_what_was_made() {
    let scratch = scratch();
    let dir = scratch.path();
    let good = repo_at(&dir.join("good"));
    let bad = repo_at(&dir.join("bad"));
    configure(
        dir,
        json!({
            good.display().to_string(): "echo SECRET=1 > .env && echo prepared",
            bad.display().to_string(): "echo broken >&2; exit 3",
        }),
    );
    let d = start(dir);
    let id = isolated(&d, &good, Some("with-env"), &[(1, "one")]);
    let w = d.state(&id).worktree.unwrap();
    assert_eq!(w.setup_output.as_deref(), Some("prepared\n"));
    assert!(Path::new(&w.path).join(".env").is_file());
    assert!(
        !good.join(".env").exists(),
        "the setup ran in the worktree only"
    );

    let mut p = launch_params("scenario:plain hi", &bad);
    p.worktree = Some(WorktreeParams::default());
    let Err(e) = d.try_request::<LaunchSession>(p) else {
        panic!("a failing setup did not fail the launch");
    };
    assert!(
        e.message.contains("worktree_setup failed (exit 3)"),
        "{e:?}"
    );
    assert!(e.message.contains("broken"), "{e:?}");
    assert_eq!(
        git(&bad, &["branch", "--format=%(refname:short)"]).trim(),
        "main"
    );
    assert_eq!(git(&bad, &["worktree", "list"]).lines().count(), 1);
    assert_eq!(
        made(dir).len(),
        1,
        "only the good worktree: {:?}",
        made(dir)
    );
}

#[test]
fn a_daemon_killed_while_making_a_worktree_leaves_nothing_unreported() {
    let scratch = scratch();
    let dir = scratch.path();
    let repo = repo_at(&dir.join("repo"));
    let started = dir.join("setup-started");
    let setup = format!("touch {} && sleep 5", started.display());
    configure(dir, json!({ repo.display().to_string(): setup }));
    let mut d = start(dir);
    let kept = isolated(&d, &repo, Some("kept"), &[(2, "two")]);
    let gone = isolated(&d, &repo, Some("gone"), &[(3, "three")]);
    let kept_path = d.state(&kept).worktree.unwrap().path;
    let gone_path = d.state(&gone).worktree.unwrap().path;

    // A launch whose setup is running when the daemon is killed.
    std::fs::remove_file(&started).unwrap();
    let mut conn = LineConn::connect(&d.socket).unwrap();
    let launch = json!({"jsonrpc": "2.0", "id": 1, "method": "launchSession", "params": {
        "query": "scenario:plain hi", "working_dir": repo, "worktree": {"branch": "half"}}});
    conn.send(&launch.to_string());
    wait_for(WAIT, || started.exists().then_some(())).expect("the setup started");
    d.kill9();
    drop(d);
    assert!(git(&repo, &["branch"]).contains("half"));

    // Meanwhile a worktree directory vanishes and a stranger's appears under the root.
    git(&repo, &["worktree", "remove", "--force", &gone_path]);
    let stranger = Path::new(&kept_path).with_file_name("stranger");
    std::fs::create_dir(&stranger).unwrap();

    let d = start(dir);
    assert!(
        !git(&repo, &["branch"]).contains("half"),
        "the half-made branch is removed"
    );
    assert!(!git(&repo, &["worktree", "list"]).contains("half"));
    let health = d.request::<Health>(NoParams {});
    let mut stray: Vec<(String, String)> = health
        .stray_worktrees
        .into_iter()
        .map(|s| (s.path, s.reason))
        .collect();
    stray.sort();
    assert_eq!(
        stray,
        [
            (gone_path, "directory vanished".to_owned()),
            (
                stranger.display().to_string(),
                "not made by this daemon".to_owned()
            ),
        ]
    );
    assert!(
        stranger.is_dir(),
        "a directory the daemon did not make is never deleted"
    );
    assert!(Path::new(&kept_path).is_dir());
    assert_eq!(
        std::fs::read_to_string(Path::new(&kept_path).join("shared.txt")).unwrap(),
        shared(&[(2, "two")])
    );
    assert!(d.log_text().contains("removing a worktree left half-made"));
}
