//! Merging an isolated session's branch into its base branch in the main checkout, and
//! discarding its worktree: each under the repository's lock, after the session's warm
//! processes end.

use std::path::Path;

use hld_client::protocol::{MergeSessionResult, MergeStrategy, SessionStatus, WorktreeState};

use super::{git, present, refused, remove, Worktrees};
use crate::error::{Error, Result};
use crate::session::Sessions;
use crate::store::worktrees::{self, WorktreeRow};
use crate::store::Store;

impl Worktrees {
    /// The worktree `id`, checked to be usable (`active`, or `merged` when `merged_ok`), with
    /// no turn running in any session using it; the warm processes in it are ended.
    async fn prepare(
        &self,
        store: &Store,
        sessions: &Sessions,
        id: &str,
        merged_ok: bool,
    ) -> Result<WorktreeRow> {
        let key = id.to_owned();
        let (row, users) = store
            .read(move |c| {
                Ok((
                    worktrees::worktree(c, &key)?,
                    worktrees::sessions_using(c, &key)?,
                ))
            })
            .await
            .map_err(|e| Error::internal("failed to read the worktree", e))?;
        let Some(row) = row.filter(|r| !r.creating) else {
            return Err(refused("the session's worktree is still being made"));
        };
        match row.info.state {
            WorktreeState::Discarded => {
                return Err(refused("the session's worktree was discarded"))
            }
            WorktreeState::Merged if !merged_ok => {
                return Err(refused("the session's branch is already merged"))
            }
            // A merge commits what the worktree holds first; a discard needs no worktree.
            _ if !merged_ok => present(&row.info)?,
            _ => {}
        }
        for (session, status) in &users {
            if SessionStatus::from(status.as_str()).is_active() {
                return Err(refused(format!(
                    "a turn is still running in session {session}: wait for it to end, or \
                     interrupt it"
                )));
            }
        }
        for (session, _) in &users {
            sessions
                .end_warm(session, "its worktree is being merged or discarded")
                .await;
        }
        Ok(row)
    }

    /// `mergeSession`: the branch (with the worktree's uncommitted changes committed on it)
    /// into the base branch; with conflicts, nothing in the main checkout changes.
    pub async fn merge(
        &self,
        store: &Store,
        sessions: &Sessions,
        id: &str,
        strategy: &MergeStrategy,
        message: Option<String>,
        title: &str,
    ) -> Result<MergeSessionResult> {
        let repository = std::path::PathBuf::from(self.repository_of(store, id).await?);
        let _one = self.lock(&repository).await;
        let row = self.prepare(store, sessions, id, false).await?;
        let info = &row.info;
        let worktree = Path::new(&info.path);
        let current = git::run(&repository, ["symbolic-ref", "--quiet", "--short", "HEAD"]).await?;
        if !current.ok || current.line() != info.base_branch {
            let on = if current.ok {
                current.line()
            } else {
                "a detached HEAD".into()
            };
            return Err(refused(format!(
                "the main checkout is on {on}, not on the base branch {}: check it out first",
                info.base_branch
            )));
        }
        let dirty = git::ok(
            &repository,
            ["status", "--porcelain", "--untracked-files=no"],
        )
        .await?;
        if !dirty.stdout.trim().is_empty() {
            return Err(refused(
                "the main checkout has uncommitted changes: commit or stash them first",
            ));
        }
        git::ok(worktree, ["add", "-A"]).await?;
        if !git::run(worktree, ["diff", "--cached", "--quiet"])
            .await?
            .ok
        {
            let note = format!(
                "hld: uncommitted changes of the session, committed before merging\n\n\
                 The agent left these changes uncommitted in its worktree ({})",
                info.branch
            );
            git::ok(worktree, ["commit", "-q", "-m", &note]).await?;
        }
        let check = git::run(
            &repository,
            [
                "merge-tree",
                "--write-tree",
                "--name-only",
                "--no-messages",
                &info.base_branch,
                &info.branch,
            ],
        )
        .await?;
        if !check.ok {
            if check.code != Some(1) {
                return Err(git::failure(&check.stderr));
            }
            let conflicts = check.stdout.lines().skip(1).filter(|l| !l.is_empty());
            return Ok(MergeSessionResult {
                merged: false,
                conflicts: conflicts.map(str::to_owned).collect(),
                commit: None,
            });
        }
        let message = message.filter(|m| !m.trim().is_empty()).unwrap_or_else(|| {
            format!(
                "{title}\n\nMerged from the hld session branch {}",
                info.branch
            )
        });
        let done = match strategy {
            MergeStrategy::Squash => squash(&repository, &info.branch, &message).await,
            MergeStrategy::Rebase => {
                rebase(&repository, worktree, &info.base_branch, &info.branch).await
            }
            _ => git::run(
                &repository,
                [
                    "merge",
                    "--no-ff",
                    "--no-edit",
                    "-m",
                    &message,
                    &info.branch,
                ],
            )
            .await
            .and_then(|out| {
                if out.ok {
                    Ok(())
                } else {
                    Err(git::failure(&out.stderr))
                }
            }),
        };
        if let Err(e) = done {
            // A hook or git itself refused: the main checkout goes back to where it was.
            let _ = git::run(&repository, ["merge", "--abort"]).await;
            let _ = git::run(&repository, ["reset", "--merge"]).await;
            return Err(e);
        }
        let commit = git::ok(&repository, ["rev-parse", "HEAD"]).await?.line();
        let key = id.to_owned();
        store
            .write(move |w, _| w.set_worktree_state(&key, "merged", None))
            .await
            .map_err(|e| Error::internal("failed to store the merge", e))?;
        Ok(MergeSessionResult {
            merged: true,
            conflicts: Vec::new(),
            commit: Some(commit),
        })
    }

    /// `discardSession`: removes the worktree and its branch; work never merged only with
    /// `force`.
    pub async fn discard(
        &self,
        store: &Store,
        sessions: &Sessions,
        id: &str,
        force: bool,
    ) -> Result<()> {
        let repository = std::path::PathBuf::from(self.repository_of(store, id).await?);
        let _one = self.lock(&repository).await;
        let row = self.prepare(store, sessions, id, true).await?;
        if row.info.state == WorktreeState::Active && !force {
            if let Some(work) = unmerged(&repository, &row).await? {
                // Without its worktree the branch cannot be merged from here.
                let merge = match Path::new(&row.info.path).is_dir() {
                    true => "merge it",
                    false => "make its worktree again to merge it",
                };
                return Err(refused(format!(
                    "the session's branch holds work never merged ({work}): {merge}, or \
                     discard with force"
                )));
            }
        }
        remove(&row.info).await;
        let key = id.to_owned();
        store
            .write(move |w, _| w.set_worktree_state(&key, "discarded", None))
            .await
            .map_err(|e| Error::internal("failed to store the discard", e))?;
        Ok(())
    }

    async fn repository_of(&self, store: &Store, id: &str) -> Result<String> {
        let key = id.to_owned();
        let row = store
            .read(move |c| worktrees::worktree(c, &key))
            .await
            .map_err(|e| Error::internal("failed to read the worktree", e))?;
        row.map(|r| r.info.repository)
            .ok_or_else(|| refused("the session is not isolated (it has no worktree)"))
    }
}

/// What a worktree holds that its base branch does not: commits, uncommitted changes.
async fn unmerged(repository: &Path, row: &WorktreeRow) -> Result<Option<String>> {
    let info = &row.info;
    let mut work = Vec::new();
    let range = format!("{}..{}", info.base_branch, info.branch);
    let ahead = git::run(repository, ["rev-list", "--count", &range]).await?;
    match ahead.line().as_str() {
        _ if !ahead.ok => {}
        "0" => {}
        "1" => work.push("1 commit".to_owned()),
        n => work.push(format!("{n} commits")),
    }
    if Path::new(&info.path).is_dir() {
        let status = git::ok(Path::new(&info.path), ["status", "--porcelain"]).await?;
        if !status.stdout.trim().is_empty() {
            work.push("uncommitted changes".into());
        }
    }
    Ok((!work.is_empty()).then(|| work.join(", ")))
}

/// One commit on the base branch holding all of the branch's changes.
async fn squash(repository: &Path, branch: &str, message: &str) -> Result<()> {
    git::ok(repository, ["merge", "--squash", branch]).await?;
    if git::run(repository, ["diff", "--cached", "--quiet"])
        .await?
        .ok
    {
        return Ok(());
    }
    git::ok(repository, ["commit", "-q", "-m", message]).await?;
    Ok(())
}

/// The branch replayed onto the base branch (in its worktree), then the base branch moved
/// forward to it.
async fn rebase(repository: &Path, worktree: &Path, base: &str, branch: &str) -> Result<()> {
    let replayed = git::run(worktree, ["rebase", "-q", base]).await?;
    if !replayed.ok {
        let _ = git::run(worktree, ["rebase", "--abort"]).await;
        return Err(git::failure(&replayed.stderr));
    }
    git::ok(repository, ["merge", "--ff-only", "-q", branch]).await?;
    Ok(())
}
