//! The worktrees group: an isolated session's diff (`getSessionDiff` against `git diff --stat`
//! plus `git diff` run directly in its worktree) and the making of its worktree (an isolated
//! `launchSession` against `git worktree add` itself), on one repository of many files.

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{ensure, Context};
use serde_json::{json, Value};

use crate::groups::{Group, Plan};
use crate::live::result;
use crate::procs::{Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::stats::{ratio, us, Spread};

/// The targets: each at most this many times its baseline.
const MAX_RATIO: f64 = 1.5;

/// Runs `git ARGS` in `dir`; fails with git's words.
fn git(dir: &Path, args: &[&str]) -> anyhow::Result<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .context("running git")?;
    ensure!(
        out.status.success(),
        "git {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(out.stdout)
}

/// A repository of `files` files of a few lines each, in one commit.
fn repository(dir: &Path, files: usize) -> anyhow::Result<()> {
    git(dir, &["init", "-q", "-b", "main"])?;
    git(dir, &["config", "user.name", "bench"])?;
    git(dir, &["config", "user.email", "bench@example.com"])?;
    for i in 0..files {
        let sub = dir.join(format!("d{:03}", i / 100));
        std::fs::create_dir_all(&sub)?;
        let lines: String = (0..8).map(|l| format!("file {i} line {l}\n")).collect();
        std::fs::write(sub.join(format!("f{i}.txt")), lines)?;
    }
    git(dir, &["add", "-A"])?;
    git(dir, &["commit", "-q", "-m", "base"])?;
    Ok(())
}

/// Seconds `f` takes.
fn timed(f: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    let started = Instant::now();
    f()?;
    Ok(started.elapsed().as_secs_f64())
}

/// Launches an isolated session on `repo`: the seconds the reply took, the session's id and
/// its worktree.
fn launch(
    conn: &mut UnixStream,
    repo: &Path,
    branch: &str,
) -> anyhow::Result<(f64, String, PathBuf)> {
    let params = json!({"query": "scenario:plain hello", "working_dir": repo,
        "worktree": {"branch": branch}});
    let mut launched = Value::Null;
    let seconds = timed(|| {
        launched = result(conn, "launchSession", params)?;
        Ok(())
    })?;
    let id = launched["session_id"].as_str().context("a session id")?;
    let state = result(conn, "getSessionState", json!({"session_id": id}))?;
    let path = state["session"]["worktree"]["path"]
        .as_str()
        .context("the session's worktree")?;
    Ok((seconds, id.to_owned(), PathBuf::from(path)))
}

/// One round: the median seconds of hld's and git's diff, then of hld's launch and git's
/// `worktree add`.
fn round(bins: &Bins, plan: &Plan, round: usize) -> anyhow::Result<[(f64, f64); 2]> {
    let (files, changed, reps) = if plan.smoke {
        (500, 10, 3)
    } else {
        (10_000, 100, 10)
    };
    let server = Server::daemon(bins, &DaemonOptions::default())?;
    let repo = server.dir.path().join("repo");
    std::fs::create_dir_all(&repo)?;
    repository(&repo, files)?;
    let mut conn = UnixStream::connect(&server.sock)?;

    let (mut hld_adds, mut git_adds) = (Vec::new(), Vec::new());
    let mut session = None;
    for rep in 0..reps {
        let (seconds, id, worktree) = launch(&mut conn, &repo, &format!("bench-{round}-{rep}"))?;
        hld_adds.push(seconds);
        session = Some((id, worktree));
        let path = server.dir.path().join(format!("plain-{rep}"));
        let path = path.display().to_string();
        let branch = format!("plain-{round}-{rep}");
        git_adds.push(timed(|| {
            git(
                &repo,
                &["worktree", "add", "-q", "-b", &branch, &path, "main"],
            )
            .map(drop)
        })?);
    }

    let (id, worktree) = session.context("a session")?;
    let worktree = worktree.as_path();
    for i in (0..files).step_by(files / changed).take(changed) {
        let file = worktree.join(format!("d{:03}/f{i}.txt", i / 100));
        let mut text = std::fs::read_to_string(&file)?;
        text = text.replacen("line 3", "line three", 1);
        std::fs::write(&file, text)?;
    }
    let (mut hld_diffs, mut git_diffs) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let mut reply = Value::Null;
        hld_diffs.push(timed(|| {
            reply = result(
                &mut conn,
                "getSessionDiff",
                json!({"session_id": id, "limit": changed}),
            )?;
            Ok(())
        })?);
        ensure!(
            reply["total_files"] == changed,
            "the diff has {} files, not {changed}",
            reply["total_files"]
        );
        git_diffs.push(timed(|| {
            git(worktree, &["diff", "--stat", "main"])?;
            git(worktree, &["diff", "main"]).map(drop)
        })?);
    }
    server.stop()?;
    let median = |v: &[f64]| Spread::of(v).median;
    Ok([
        (median(&hld_diffs), median(&git_diffs)),
        (median(&hld_adds), median(&git_adds)),
    ])
}

/// Runs the group.
pub fn run(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let rounds = (0..plan.slow_rounds)
        .map(|r| round(bins, plan, r))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let files = if plan.smoke {
        "500 files, 10"
    } else {
        "10,000 files, 100"
    };
    let names = [
        format!("getSessionDiff ({files} changed) vs git diff --stat + git diff"),
        format!("isolated launchSession ({files} in the worktree) vs git worktree add"),
    ];
    let rows = names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let spread = |f: fn(&(f64, f64)) -> f64| {
                Spread::of(&rounds.iter().map(|r| f(&r[i]) * 1e6).collect::<Vec<_>>())
            };
            let (hld, git) = (spread(|r| r.0), spread(|r| r.1));
            let ratios = Spread::of(&rounds.iter().map(|r| r[i].0 / r[i].1).collect::<Vec<_>>());
            Row {
                name,
                figure: us(hld.median),
                baseline: us(git.median),
                ratio: ratio(ratios.median),
                target: format!("≤ {MAX_RATIO}×"),
                verdict: Verdict::of(ratios.median <= MAX_RATIO),
            }
        })
        .collect();
    Ok(Section {
        title: Group::Worktrees.title().into(),
        method: "A repository of many small files in one commit. Each repetition launches an \
            isolated session of fake-claude (`worktree: {branch}`), timed from the request to \
            its reply, then runs `git worktree add -b` of a new branch beside it. Then the \
            bench edits one line of each changed file in the last session's worktree \
            (uncommitted, as an agent leaves them) and times `getSessionDiff` (one page of \
            every file) against `git diff --stat main` plus `git diff main` run in that \
            worktree. Medians of the repetitions, per round."
            .into(),
        commands: vec!["hld --claude-path fake-claude".into()],
        rows,
        notes: Vec::new(),
    })
}
