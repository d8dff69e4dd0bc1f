//! Isolated sessions: each in a git worktree of its own, on a new branch, under one directory
//! the daemon owns. Git is the CLI (`git`): it honours the user's configuration, hooks and
//! credentials. Writes to one repository (make, merge, discard) run one at a time.

mod diff;
mod git;
mod merge;
mod names;
mod setup;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use hld_client::protocol::{StrayWorktree, WorktreeInfo, WorktreeState, WORKTREE_MISSING};
use tokio::sync::OwnedMutexGuard;

use crate::error::{Error, Result};
use crate::store::worktrees::{self, WorktreeRow};
use crate::store::Store;
pub use diff::{session_diff, DEFAULT_LIMIT};
pub use setup::{setup_commands, SetupCommands};

/// A worktree made for a session about to start.
#[derive(Debug, Clone)]
pub struct Made {
    pub id: String,
    /// Where the agent runs: the worktree, or the directory in it matching `working_dir`.
    pub dir: PathBuf,
    pub row: WorktreeRow,
}

/// What a new worktree starts from.
pub struct Request<'a> {
    /// A directory in the repository (the main checkout, or another worktree of it).
    pub working_dir: &'a Path,
    pub branch: Option<String>,
    pub base: Option<String>,
    /// The title or query, for a branch name when none is given.
    pub text: &'a str,
    /// The branch it merges into, when known (a continuation: its parent's).
    pub base_branch: Option<String>,
}

/// The worktree manager, shared by the daemon.
pub struct Worktrees {
    root: PathBuf,
    setup: SetupCommands,
    /// One lock per repository (a std Mutex around the table: never held across an await).
    locks: Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>,
    stray: Mutex<Vec<StrayWorktree>>,
}

impl std::fmt::Debug for Worktrees {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worktrees")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

/// A -32602 about the session's worktree or repository.
pub(crate) fn refused(message: impl Into<String>) -> Error {
    Error::invalid_param(
        "session_id",
        "an isolated session git can work with",
        "refused",
        message,
    )
}

/// Refuses to work in a worktree whose directory was removed by hand (`rm -rf`, `git worktree
/// remove`): git cannot read it, an agent would run in a directory that is gone, and Claude
/// finds a conversation to resume through the directory it was held in (a continuation in a
/// new worktree would not find it). Its branch is left: made again at its path from the
/// branch, the worktree serves the session again; a discard deletes the branch.
pub(crate) fn present(info: &WorktreeInfo) -> Result<()> {
    if Path::new(&info.path).is_dir() {
        return Ok(());
    }
    let git = format!("git -C {}", info.repository);
    Err(Error::invalid_param(
        "session_id",
        "an isolated session git can work with",
        WORKTREE_MISSING,
        format!(
            "the session's worktree {path} no longer exists (removed outside hld): make it \
             again from its branch (`{git} worktree prune && {git} worktree add {path} \
             {branch}`), or discard it",
            path = info.path,
            branch = info.branch,
        ),
    ))
}

/// A -32602 about the worktree a launch or continuation asked for.
fn not_made(message: impl Into<String>) -> Error {
    Error::invalid_param("worktree", "a worktree git can make", "refused", message)
}

impl Worktrees {
    pub fn new(root: PathBuf, setup: SetupCommands) -> Worktrees {
        Worktrees {
            root,
            setup,
            locks: Mutex::default(),
            stray: Mutex::default(),
        }
    }

    /// The directory every worktree is made under.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What the start-up check found and left alone.
    pub fn stray(&self) -> Vec<StrayWorktree> {
        self.stray.lock().unwrap().clone()
    }

    /// Waits for, and holds, the repository's write lock.
    async fn lock(&self, repository: &Path) -> OwnedMutexGuard<()> {
        let lock = {
            let mut locks = self.locks.lock().unwrap();
            Arc::clone(locks.entry(repository.to_owned()).or_default())
        };
        lock.lock_owned().await
    }

    /// Makes a worktree on a new branch for a session about to start, running the
    /// repository's setup command in it; on any failure nothing made is left.
    pub async fn create(&self, store: &Store, req: Request<'_>) -> Result<Made> {
        let top = git::run(req.working_dir, ["rev-parse", "--show-toplevel"]).await?;
        if !top.ok {
            return Err(git::failure(&top.stderr));
        }
        let repository = PathBuf::from(top.line());
        let subdir = canonical(req.working_dir)
            .strip_prefix(canonical(&repository))
            .map(Path::to_path_buf)
            .unwrap_or_default();
        if !git::run(&repository, ["rev-parse", "--verify", "--quiet", "HEAD"])
            .await?
            .ok
        {
            return Err(not_made(
                "the repository has no commits yet (unborn branch): commit once first",
            ));
        }
        let (base_commit, base_branch) = base_of(&repository, &req).await?;
        let id = uuid::Uuid::new_v4().to_string();
        let branch = match &req.branch {
            // A name given is never cut: the session's branch is the one asked for.
            Some(given) if given.trim().len() > names::MAX_BRANCH => {
                return Err(not_made(format!(
                    "a branch name of {} characters is too long: at most {}",
                    given.trim().len(),
                    names::MAX_BRANCH
                )));
            }
            Some(given) => names::sanitize_branch(given)
                .ok_or_else(|| not_made(format!("{given:?} cannot be a branch name")))?,
            None => names::branch_from_text(req.text, &id),
        };
        let _one = self.lock(&repository).await;
        if branch_exists(&repository, &branch).await? {
            // A name made safe for git is said with the one given, which the user knows.
            let given = match &req.branch {
                Some(given) if given.trim() != branch => format!(" (made of {:?})", given.trim()),
                _ => String::new(),
            };
            return Err(not_made(format!(
                "branch {branch}{given} already exists: choose another name"
            )));
        }
        let repo_dir = names::repo_dir(&self.root, &repository);
        for dir in [&self.root, &repo_dir] {
            crate::private_dir::ensure(dir, "the worktree directory")
                .map_err(|e| Error::internal(e.to_string(), e))?;
        }
        let path = names::worktree_dir(&repo_dir, &branch);
        if std::fs::symlink_metadata(&path).is_ok() {
            return Err(not_made(format!(
                "a worktree directory for branch {branch} already exists: {}",
                path.display()
            )));
        }
        let row = WorktreeRow {
            id: id.clone(),
            creating: true,
            info: WorktreeInfo {
                repository: repository.display().to_string(),
                path: path.display().to_string(),
                branch: branch.clone(),
                base_branch,
                base_commit: base_commit.clone(),
                state: WorktreeState::Active,
                setup_output: None,
            },
        };
        let stored = row.clone();
        store
            .write(move |w, _| w.create_worktree(&stored, &crate::time::now()))
            .await
            .map_err(|e| Error::internal("failed to store the worktree", e))?;
        let add: [&OsStr; 6] = [
            "worktree".as_ref(),
            "add".as_ref(),
            "-b".as_ref(),
            branch.as_ref(),
            path.as_os_str(),
            base_commit.as_ref(),
        ];
        let added = git::run(&repository, add).await;
        let setup = match added {
            Ok(out) if out.ok => self.setup.run(&repository, &path).await,
            Ok(out) => Err(git::failure(&out.stderr)),
            Err(e) => Err(e),
        };
        let output = match setup {
            Ok(output) => output,
            Err(e) => {
                remove(&row.info).await;
                let _ = store.write(move |w, _| w.delete_worktree(&id)).await;
                return Err(e);
            }
        };
        let (key, out) = (id.clone(), output.clone());
        store
            .write(move |w, _| w.set_worktree_state(&key, "active", out.as_deref()))
            .await
            .map_err(|e| Error::internal("failed to store the worktree", e))?;
        let mut row = row;
        row.creating = false;
        row.info.setup_output = output;
        let inner = path.join(&subdir);
        let dir = if subdir.as_os_str().is_empty() || !inner.is_dir() {
            path
        } else {
            inner
        };
        Ok(Made { id, dir, row })
    }

    /// Removes a worktree made for a session that then failed to start.
    pub async fn abandon(&self, store: &Store, made: &Made) {
        let repository = PathBuf::from(&made.row.info.repository);
        let _one = self.lock(&repository).await;
        remove(&made.row.info).await;
        let id = made.id.clone();
        let _ = store
            .write(move |w, _| w.set_worktree_state(&id, "discarded", None))
            .await;
    }

    /// At start-up: removes worktrees a stopped daemon left half-made, and reports (never
    /// removes) those whose session is gone, whose directory vanished, and directories under
    /// the root that no record names.
    pub async fn check_at_start(&self, store: &Store) -> anyhow::Result<()> {
        let kept = store.read(worktrees::kept_worktrees).await?;
        let mut stray = Vec::new();
        let mut known = Vec::new();
        for (row, users) in kept {
            known.push(PathBuf::from(&row.info.path));
            if row.creating {
                tracing::warn!(path = %row.info.path, "removing a worktree left half-made");
                remove(&row.info).await;
                let id = row.id.clone();
                store.write(move |w, _| w.delete_worktree(&id)).await?;
                continue;
            }
            let reason = if users == 0 {
                "session gone"
            } else if !Path::new(&row.info.path).is_dir() {
                "directory vanished"
            } else {
                continue;
            };
            stray.push(StrayWorktree {
                path: row.info.path.clone(),
                reason: reason.into(),
            });
        }
        for repo_dir in read_dir(&self.root) {
            for dir in read_dir(&repo_dir) {
                if !known.contains(&dir) {
                    stray.push(StrayWorktree {
                        path: dir.display().to_string(),
                        reason: "not made by this daemon".into(),
                    });
                }
            }
        }
        for s in &stray {
            tracing::warn!(path = %s.path, reason = %s.reason, "worktree left alone");
        }
        *self.stray.lock().unwrap() = stray;
        Ok(())
    }
}

/// The commit a new worktree starts from, and the branch it merges into: `base` (a branch
/// merges into itself), else HEAD; the current branch when neither names one.
async fn base_of(repository: &Path, req: &Request<'_>) -> Result<(String, String)> {
    let (commit, branch) = match &req.base {
        Some(base) => {
            let no_commit = || not_made(format!("base {base:?} names no commit"));
            if base.starts_with('-') {
                return Err(no_commit());
            }
            let spec = format!("{base}^{{commit}}");
            let commit = git::run(repository, ["rev-parse", "--verify", "--quiet", &spec]).await?;
            if !commit.ok {
                return Err(no_commit());
            }
            let branch = branch_exists(repository, base).await?.then(|| base.clone());
            (commit.line(), branch)
        }
        None => (
            git::ok(repository, ["rev-parse", "HEAD"]).await?.line(),
            None,
        ),
    };
    if let Some(branch) = req.base_branch.clone().or(branch) {
        return Ok((commit, branch));
    }
    let current = git::run(repository, ["symbolic-ref", "--quiet", "--short", "HEAD"]).await?;
    if !current.ok {
        return Err(not_made(
            "the main checkout is on a detached HEAD: check out a branch, or give a base branch",
        ));
    }
    Ok((commit, current.line()))
}

/// Whether `repository` has a local branch `name`.
async fn branch_exists(repository: &Path, name: &str) -> Result<bool> {
    let reference = format!("refs/heads/{name}");
    let found = git::run(repository, ["show-ref", "--verify", "--quiet", &reference]).await?;
    Ok(found.ok)
}

/// The entries of a directory (none if it cannot be read).
fn read_dir(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// `path` with symbolic links resolved (as given when it cannot be).
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

/// Removes a worktree the daemon made, and its branch; what is already gone is skipped.
async fn remove(info: &WorktreeInfo) {
    let repository = Path::new(&info.repository);
    let path = Path::new(&info.path);
    if std::fs::symlink_metadata(path).is_ok() {
        let args: [&std::ffi::OsStr; 4] = [
            "worktree".as_ref(),
            "remove".as_ref(),
            "--force".as_ref(),
            path.as_os_str(),
        ];
        if let Ok(out) = git::run(repository, args).await {
            if !out.ok {
                tracing::warn!(path = %info.path, error = %out.stderr.trim(), "worktree not removed");
            }
        }
    }
    let _ = git::run(repository, ["worktree", "prune"]).await;
    let _ = git::run(repository, ["branch", "-D", &info.branch]).await;
}
