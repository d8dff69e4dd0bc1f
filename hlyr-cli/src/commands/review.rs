//! `hlyr diff ID`, `hlyr merge ID` and `hlyr discard ID`: review an isolated session's branch
//! (on a terminal a view cleaned for it, through the pager; else the patch `git apply` takes),
//! merge it into its base branch, or throw it away.

use std::io::{IsTerminal, Write};
use std::process::{Command, Stdio};

use clap_complete::ArgValueCompleter;
use hld_client::protocol::{
    DiffFile, DiffStatus, GetSessionDiffParams, GetSessionDiffResult, MergeSessionParams,
    MergeSessionResult, MergeStrategy, WorktreeInfo, MAX_BINARY_PATCH, MAX_TEXT_PATCH,
};
use hld_client::view::clean;
use serde::Serialize;

use crate::complete;
use crate::error::{CliError, Exit};
use crate::hint::{hlyr, hlyr_daemon};
use crate::output::{paint, short_id, Render, BOLD, CYAN, DIM, GREEN, RED, YELLOW};
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The isolated session (a unique prefix is enough).
    #[arg(value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    id: String,
    /// Only the changed files and their +/- counts.
    #[arg(long)]
    stat: bool,
}

#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The isolated session (a unique prefix is enough).
    #[arg(value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    id: String,
    /// One new commit holding all of the branch's changes.
    #[arg(long, conflicts_with = "rebase")]
    squash: bool,
    /// Replay the branch's commits onto the base branch, which moves forward to them.
    #[arg(long)]
    rebase: bool,
    /// The merge or squash commit's message.
    #[arg(short, long, value_name = "TEXT")]
    message: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct DiscardArgs {
    /// The isolated session (a unique prefix is enough).
    #[arg(value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    id: String,
    /// Discard work that was never merged.
    #[arg(long)]
    force: bool,
}

/// A whole diff (every page), shown with its hunks or as a summary.
#[derive(Serialize)]
#[serde(transparent)]
struct Diff {
    result: GetSessionDiffResult,
    #[serde(skip)]
    stat: bool,
}

fn status_mark(status: &DiffStatus) -> String {
    match status {
        DiffStatus::Added => paint(GREEN, "added"),
        DiffStatus::Deleted => paint(RED, "deleted"),
        DiffStatus::Renamed => paint(YELLOW, "renamed"),
        other => other.as_str().to_owned(),
    }
}

/// A file's path (and the one it was renamed from), cleaned: an agent named it.
fn file_name(file: &DiffFile) -> String {
    match &file.old_path {
        Some(old) => format!("{} → {}", clean(old), clean(&file.path)),
        None => clean(&file.path).into_owned(),
    }
}

impl Render for Diff {
    fn human(&self) -> String {
        let r = &self.result;
        let mut out = Vec::new();
        for file in &r.files {
            let counts = format!(
                "{} {}",
                paint(GREEN, format!("+{}", file.additions)),
                paint(RED, format!("-{}", file.deletions))
            );
            if self.stat {
                out.push(format!(
                    "{} {} {counts}",
                    file_name(file),
                    status_mark(&file.status)
                ));
                continue;
            }
            out.push(paint(
                BOLD,
                format!("{} ({})", file_name(file), file.status),
            ));
            if file.hunks_omitted {
                out.push(paint(DIM, format!("{counts}: {}", too_large())));
            }
            // What an agent wrote, cleaned for the terminal as everything from the daemon.
            for hunk in &file.hunks {
                out.push(paint(CYAN, clean(&hunk.header)));
                for line in &hunk.lines {
                    let text = clean(line);
                    out.push(match line.chars().next() {
                        Some('+') => paint(GREEN, text),
                        Some('-') => paint(RED, text),
                        _ => text.into_owned(),
                    });
                }
            }
        }
        // As `git diff --stat` says it.
        let counted =
            |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        out.push(format!(
            "{} changed, {}(+), {}(-)",
            counted(r.total_files, "file", "files"),
            counted(r.additions, "insertion", "insertions"),
            counted(r.deletions, "deletion", "deletions"),
        ));
        out.join("\n")
    }
}

/// Shows `text` through the user's pager (`$PAGER`, else `less -FRX`) on a terminal.
fn page(text: &str) -> Result<(), CliError> {
    let pager = std::env::var("PAGER")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "less".to_owned());
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let text = if no_color {
        anstream::adapter::strip_str(text).to_string()
    } else {
        text.to_owned()
    };
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(&pager)
        .env(
            "LESS",
            std::env::var("LESS").unwrap_or_else(|_| "FRX".into()),
        )
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| CliError::failure(format!("cannot start the pager {pager:?}: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A pager quit early closes its input: not an error.
        let _ = writeln!(stdin, "{text}");
    }
    child.wait()?;
    Ok(())
}

/// Why a file's diff is not shown.
fn too_large() -> String {
    format!("diff over the {} KiB a reply carries", MAX_TEXT_PATCH >> 10)
}

/// The patch `git apply` takes: each file's header, binary patch and hunks as git printed
/// them, byte for byte, and the files left out of it: those whose diff was too large, and
/// binary ones whose binary patch did not come (too large, or from a daemon older than binary
/// patches). Never cleaned, so never for the terminal: it goes to a file or a program.
fn patch(files: &[DiffFile]) -> Result<(String, Vec<&DiffFile>), CliError> {
    let mut out = String::new();
    let mut missing = Vec::new();
    for file in files {
        if file.hunks_omitted {
            missing.push(file);
            continue;
        }
        if file.header.is_empty() {
            return Err(CliError::failure(
                "the daemon sent no patch headers: it is older than hlyr",
            )
            .hint(format!("update hld, then {}", hlyr_daemon(None, "restart"))));
        }
        // `Binary files … differ` is no patch: `git apply` would refuse the whole of it.
        if file.binary_patch_omitted || file.header.iter().any(|l| l.starts_with("Binary files ")) {
            missing.push(file);
            continue;
        }
        let hunks = file.hunks.iter();
        let lines = hunks.flat_map(|h| std::iter::once(&h.header).chain(&h.lines));
        for line in file.header.iter().chain(&file.binary_patch).chain(lines) {
            out.push_str(line);
            out.push('\n');
        }
    }
    Ok((out, missing))
}

/// The error for a patch that lacks the files `missing`: exit 1, so that it never passes for
/// the whole diff.
fn incomplete(missing: &[&DiffFile], worktree: Option<&WorktreeInfo>) -> CliError {
    let binary_over = format!(
        "binary patch over the {} KiB a reply carries",
        MAX_BINARY_PATCH >> 10
    );
    let why = |f: &DiffFile| match (f.hunks_omitted, f.binary_patch_omitted) {
        (true, _) => too_large(),
        (false, true) => binary_over.clone(),
        (false, false) => "the daemon sent no binary patch".to_owned(),
    };
    let older = missing
        .iter()
        .any(|f| !f.hunks_omitted && !f.binary_patch_omitted);
    let mut said: Vec<(String, Vec<&str>)> = Vec::new();
    for file in missing {
        let why = why(file);
        match said.iter_mut().find(|(w, _)| *w == why) {
            Some((_, paths)) => paths.push(&file.path),
            None => said.push((why, vec![&file.path])),
        }
    }
    let said: Vec<String> = said
        .iter()
        .map(|(why, paths)| format!("{} ({why})", paths.join(", ")))
        .collect();
    let error = CliError::failure(format!("the patch lacks {}", said.join(", ")));
    if older {
        let update = hlyr_daemon(None, "restart");
        error.hint(format!(
            "hld may be older than hlyr: update it, then {update}"
        ))
    } else if let Some(w) = worktree {
        error.hint(format!("the files are in the worktree, {}", w.path))
    } else {
        error
    }
}

pub async fn diff(ctx: &Context, args: DiffArgs) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let session = ids::session(&args.id, client.list_sessions().await?)?;
    let refused = |e: hld_client::Error| CliError::from(e).about_session(&args.id);
    let terminal = std::io::stdout().is_terminal();
    // Piped or redirected, as `git diff` is: `hlyr diff ID | git apply` works, binary files too.
    let piped = !terminal && !ctx.out.is_json() && !args.stat;
    let mut params = GetSessionDiffParams {
        session_id: session.id.clone(),
        // The JSON carries them too, so that a script can make the same patch.
        binary: piped || (ctx.out.is_json() && !args.stat),
        ..Default::default()
    };
    let mut whole = client
        .get_session_diff(params.clone())
        .await
        .map_err(refused)?;
    while let Some(next) = whole.next_offset {
        params.offset = Some(next);
        let page = client
            .get_session_diff(params.clone())
            .await
            .map_err(refused)?;
        whole.files.extend(page.files);
        whole.next_offset = page.next_offset;
    }
    let diff = Diff {
        result: whole,
        stat: args.stat,
    };
    if piped {
        let (text, missing) = patch(&diff.result.files)?;
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
        if !missing.is_empty() {
            return Err(incomplete(&missing, session.worktree.as_ref()));
        }
    } else if terminal && !ctx.out.is_json() {
        page(&diff.human())?;
    } else {
        ctx.out.print(&diff)?;
    }
    Ok(Exit::Ok)
}

#[derive(Serialize)]
#[serde(transparent)]
struct Merged {
    result: MergeSessionResult,
    #[serde(skip)]
    id: String,
}

impl Render for Merged {
    fn human(&self) -> String {
        match &self.result.commit {
            Some(commit) if self.result.merged => format!(
                "{} {} at {}\n{}",
                paint(GREEN, "merged"),
                short_id(&self.id),
                &commit[..commit.len().min(12)],
                paint(
                    DIM,
                    format!(
                        "its worktree and branch stay until {} removes them",
                        hlyr(&format!("discard {}", short_id(&self.id)))
                    )
                )
            ),
            _ => format!(
                "{} {}: conflicts in {}",
                paint(RED, "not merged"),
                short_id(&self.id),
                clean(&self.result.conflicts.join(", "))
            ),
        }
    }
}

pub async fn merge(ctx: &Context, args: MergeArgs) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let session = ids::session(&args.id, client.list_sessions().await?)?;
    let strategy = match (args.squash, args.rebase) {
        (true, _) => MergeStrategy::Squash,
        (_, true) => MergeStrategy::Rebase,
        _ => MergeStrategy::Merge,
    };
    let result = client
        .merge_session(MergeSessionParams {
            session_id: session.id.clone(),
            strategy,
            message: args.message,
        })
        .await
        .map_err(|e| CliError::from(e).about_session(&args.id))?;
    let merged = result.merged;
    let id = short_id(&session.id).to_owned();
    ctx.out.print(&Merged {
        result,
        id: session.id,
    })?;
    if merged {
        return Ok(Exit::Ok);
    }
    let refused = CliError::failure("the branch conflicts with its base: nothing was merged");
    let Some(w) = session.worktree else {
        return Err(refused);
    };
    // The conflicts are solved on the session's branch, by its agent or by hand.
    let base = clean(&w.base_branch);
    Err(refused.hint(format!(
        "ask the agent to solve them ({}), or merge {base} into the branch yourself in {}; \
         then {} again",
        hlyr(&format!(
            "send {id} \"merge {base} into this branch and resolve the conflicts\""
        )),
        clean(&w.path),
        hlyr(&format!("merge {id}")),
    )))
}

#[derive(Serialize)]
struct Discarded {
    session_id: String,
    discarded: bool,
}

impl Render for Discarded {
    fn human(&self) -> String {
        format!(
            "{} {}",
            paint(YELLOW, "discarded"),
            short_id(&self.session_id)
        )
    }
}

pub async fn discard(ctx: &Context, args: DiscardArgs) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let session = ids::session(&args.id, client.list_sessions().await?)?;
    if let Err(e) = client.discard_session(&session.id, args.force).await {
        let error = CliError::from(e);
        // The daemon keeps work never merged unless forced: say how, as hlyr spells it.
        return Err(
            match error.message.contains("never merged") && !args.force {
                true => error.hint(format!(
                    "`hlyr discard {} --force` discards it anyway",
                    args.id
                )),
                false => error,
            },
        );
    }
    ctx.out.print(&Discarded {
        session_id: session.id,
        discarded: true,
    })?;
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Piped, the lines are git's, byte for byte: escapes, tabs, CRs, the marker and binary
    /// patches kept; a binary file without its binary patch is left out, and named.
    #[test]
    fn a_patch_is_gits_lines_verbatim() {
        let files: Vec<DiffFile> = serde_json::from_value(json!([
            {"path": "a.txt", "status": "modified", "additions": 1, "deletions": 1,
             "header": ["diff --git a/a.txt b/a.txt", "index 1..2 100644", "--- a/a.txt",
                "+++ b/a.txt"],
             "hunks": [{"header": "@@ -1 +1 @@", "lines": ["-a\tb\r", "+\u{1b}[2Jc",
                "\\ No newline at end of file"]}]},
            {"path": "i.png", "status": "binary", "additions": 0, "deletions": 0,
             "header": ["diff --git a/i.png b/i.png", "new file mode 100644",
                "index 0000000000000000000000000000000000000000..e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"],
             "binary_patch": ["GIT binary patch", "literal 0", "HcmV?d00001", ""],
             "hunks": []},
            {"path": "big.png", "status": "binary", "additions": 0, "deletions": 0,
             "header": ["diff --git a/big.png b/big.png", "index 1..2 100644"],
             "binary_patch_omitted": true, "hunks": []},
            {"path": "old.png", "status": "binary", "additions": 0, "deletions": 0,
             "header": ["diff --git a/old.png b/old.png", "index 1..2 100644",
                "Binary files a/old.png and b/old.png differ"],
             "hunks": []},
            {"path": "lock.json", "status": "modified", "additions": 90000, "deletions": 0,
             "hunks_omitted": true, "hunks": []},
            {"path": "huge.png", "status": "binary", "additions": 0, "deletions": 0,
             "header": ["diff --git a/huge.png b/huge.png", "index 1..2 100644"],
             "binary_patch_omitted": true, "hunks": []},
        ]))
        .unwrap();
        let (text, missing) = patch(&files).unwrap();
        assert_eq!(
            text,
            "diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n\
             @@ -1 +1 @@\n-a\tb\r\n+\u{1b}[2Jc\n\\ No newline at end of file\n\
             diff --git a/i.png b/i.png\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\n\
             GIT binary patch\nliteral 0\nHcmV?d00001\n\n"
        );
        let error = incomplete(&missing, None);
        assert_eq!(error.exit, Exit::Failure);
        assert_eq!(
            error.message,
            "the patch lacks big.png, huge.png (binary patch over the 512 KiB a reply \
             carries), old.png (the daemon sent no binary patch), lock.json (diff over the 256 \
             KiB a reply carries)"
        );
        // A daemon that sends no headers cannot give a patch: said, rather than a wrong one.
        let mut old = files;
        old[0].header.clear();
        let error = patch(&old).unwrap_err();
        assert!(error.message.contains("older than hlyr"), "{error:?}");
    }

    /// A file's name and content are an agent's: their escapes never reach the terminal.
    #[test]
    fn a_diff_is_shown_cleaned() {
        let result: GetSessionDiffResult = serde_json::from_value(json!({
            "files": [{"path": "a\u{1b}]0;pwned\u{7}.txt", "status": "added", "additions": 1,
                "deletions": 0, "hunks": [{"header": "@@ -0,0 +1 @@",
                "lines": ["+echo \u{1b}[2J\tdone"]}]}],
            "total_files": 1, "additions": 1, "deletions": 0,
        }))
        .unwrap();
        let text = Diff {
            result,
            stat: false,
        }
        .human();
        assert!(text.contains("a�]0;pwned�.txt (added)"), "{text:?}");
        assert!(text.contains("+echo �[2J    done"), "{text:?}");
        assert!(
            !text.contains("\u{1b}]0") && !text.contains("\u{1b}[2J"),
            "{text:?}"
        );
    }
}
