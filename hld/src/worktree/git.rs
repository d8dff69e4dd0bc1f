//! Running the git CLI: off the async threads (`tokio::process`), with a time limit, what it
//! prints held up to a cap when asked, and its failures told in plain words.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;

use crate::error::Error;

/// How long one git command may run; a slower one is killed and reported.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(300);

/// What a git command printed, once it exited (successfully or not).
#[derive(Debug)]
pub struct Output {
    pub ok: bool,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// `stdout` is only the first bytes git printed, as many as [`run_capped`] allowed: git
    /// was stopped there (and `ok` is then false).
    pub cut: bool,
}

impl Output {
    /// This output when git succeeded; else its failure in plain words ([`failure`]).
    pub fn succeeded(self) -> Result<Output, Error> {
        match self.ok {
            true => Ok(self),
            false => Err(failure(&self.stderr)),
        }
    }

    /// The first line of stdout, trimmed.
    pub fn line(&self) -> String {
        self.stdout.lines().next().unwrap_or("").trim().to_owned()
    }
}

/// A git command to run in `dir`: the user's configuration and hooks apply; it never asks
/// for a password on a terminal, and its messages are in English, so that they can be read.
fn command<I, S>(dir: &Path, args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// Runs git in `dir`, with `env` added; its exit status is in the output, not an error.
pub async fn run_env<I, S>(dir: &Path, args: I, env: &[(&str, &OsStr)]) -> Result<Output, Error>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_capped(dir, args, env, usize::MAX).await
}

/// Runs git in `dir`, with `env` added, holding at most `cap` bytes of what it prints: when
/// it prints more, its stdout is closed there, which ends it, and the output is `cut`. Its
/// exit status is in the output, not an error.
pub async fn run_capped<I, S>(
    dir: &Path,
    args: I,
    env: &[(&str, &OsStr)],
    cap: usize,
) -> Result<Output, Error>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = command(dir, args);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let cannot_run = |e| Error::internal("git could not be run: is it installed?", e);
    let mut child = cmd.spawn().map_err(cannot_run)?;
    let (Some(stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        unreachable!("git's stdout and stderr are piped");
    };
    let run = async {
        // Read together, so that git never waits on a full pipe. Stdout, read no further
        // than `cap`, is closed there: git's next write fails and it ends.
        let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
        let capped = async move {
            let mut out = Vec::new();
            stdout.take(limit).read_to_end(&mut out).await.map(|_| out)
        };
        let mut err = Vec::new();
        let (out, _) = tokio::join!(capped, stderr.read_to_end(&mut err));
        let out = out?;
        let status = child.wait().await?;
        Ok::<_, std::io::Error>((status, out, err))
    };
    let (status, stdout, stderr) = match tokio::time::timeout(GIT_TIMEOUT, run).await {
        Err(_) => {
            return Err(Error::internal(
                format!("git took longer than {} s", GIT_TIMEOUT.as_secs()),
                anyhow::anyhow!("git timed out in {}", dir.display()),
            ))
        }
        Ok(Err(e)) => return Err(cannot_run(e)),
        Ok(Ok(output)) => output,
    };
    let cut = stdout.len() > cap;
    Ok(Output {
        ok: status.success() && !cut,
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout[..stdout.len().min(cap)]).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        cut,
    })
}

/// Runs git in `dir`; its exit status is in the output, not an error.
pub async fn run<I, S>(dir: &Path, args: I) -> Result<Output, Error>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_env(dir, args, &[]).await
}

/// Runs git in `dir` and requires success; a failure is told in plain words.
pub async fn ok<I, S>(dir: &Path, args: I) -> Result<Output, Error>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run(dir, args).await?.succeeded()
}

/// Git's failure in plain words: -32602 for what the user can fix, else -32603 with git's
/// own first line.
pub fn failure(stderr: &str) -> Error {
    let user = |param: &str, message: &str| {
        Error::invalid_param(
            param,
            "a repository git can work with",
            "git refused",
            message,
        )
    };
    let lower = stderr.to_ascii_lowercase();
    if lower.contains("not a git repository") {
        let message = "not a git repository: the working directory is in no git repository";
        return user("working_dir", message);
    }
    if lower.contains("is locked") {
        let message = "the worktree is locked: `git worktree unlock` it first";
        return user("session_id", message);
    }
    if lower.contains("please tell me who you are") || lower.contains("empty ident") {
        let message = "git has no identity to commit with: set one with `git config --global \
                       user.name \"Your Name\"` and `git config --global user.email you@example.com`";
        return user("session_id", message);
    }
    if lower.contains("would be overwritten by") {
        // git lists the files, each on a line of its own, indented.
        let files: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with(['\t', ' ']))
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        // The files first: a line cut short still names them.
        let message = format!(
            "{} in the main checkout would be overwritten by the merge: move, commit or remove \
             them there first",
            files.join(", ")
        );
        return user("session_id", &message);
    }
    let first = stderr
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("git failed");
    let first = first.strip_prefix("fatal: ").unwrap_or(first);
    Error::internal(format!("git failed: {first}"), anyhow::anyhow!("{stderr}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_files_a_merge_would_overwrite_are_named() {
        let stderr = "error: The following untracked working tree files would be overwritten \
                      by merge:\n\tlong.txt\n\tsrc/b.rs\nPlease move or remove them before you \
                      merge.\nAborting\n";
        let said = format!("{:?}", super::failure(stderr));
        assert!(
            said.contains("long.txt, src/b.rs in the main checkout would be overwritten"),
            "{said}"
        );
    }
}
