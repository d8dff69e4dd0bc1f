//! `getSessionDiff`: a worktree against its base commit, with what is uncommitted and untracked
//! (not ignored), read through a copy of the worktree's index so that git's own is untouched.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use hld_client::protocol::{DiffFile, DiffHunk, DiffStatus, GetSessionDiffResult};

use super::git;
use crate::error::{Error, Result};

/// Files per page unless the request says.
pub const DEFAULT_LIMIT: u64 = 100;

/// One changed file as git lists it, before its hunks are read.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    path: String,
    old_path: Option<String>,
    status: DiffStatus,
    additions: u64,
    deletions: u64,
}

/// A copy of a worktree's index holding every file of it (`git add -A`), removed when dropped.
struct TempIndex(PathBuf);

impl Drop for TempIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The diff of the worktree at `dir` against `base`, files `offset..offset + limit`.
pub async fn session_diff(
    dir: &Path,
    base: &str,
    offset: u64,
    limit: u64,
) -> Result<GetSessionDiffResult> {
    let index = git::ok(
        dir,
        ["rev-parse", "--path-format=absolute", "--git-path", "index"],
    )
    .await?
    .line();
    let temp = TempIndex(PathBuf::from(format!(
        "{index}.hld-{}",
        uuid::Uuid::new_v4()
    )));
    tokio::fs::copy(&index, &temp.0)
        .await
        .map_err(|e| Error::internal("cannot copy the worktree's git index", e))?;
    let env = [("GIT_INDEX_FILE", temp.0.as_os_str())];
    let add = git::run_env(dir, ["add", "-A", "--", "."], &env).await?;
    if !add.ok {
        return Err(git::failure(&add.stderr));
    }
    let diff = |extra: &'static [&'static str]| {
        let mut args = vec!["diff", "--cached", "-M", "--no-color", "--no-ext-diff"];
        args.extend_from_slice(extra);
        args.push(base);
        args
    };
    let status = git::run_env(dir, diff(&["--name-status", "-z"]), &env).await?;
    let counts = git::run_env(dir, diff(&["--numstat", "-z"]), &env).await?;
    for out in [&status, &counts] {
        if !out.ok {
            return Err(git::failure(&out.stderr));
        }
    }
    let entries = entries(&status.stdout, &counts.stdout);
    let total = entries.len() as u64;
    let (additions, deletions) = entries
        .iter()
        .fold((0, 0), |(a, d), e| (a + e.additions, d + e.deletions));
    let start = offset.min(total) as usize;
    let end = offset.saturating_add(limit).min(total) as usize;
    let page = &entries[start..end];
    let mut files = Vec::with_capacity(page.len());
    if !page.is_empty() {
        // The prefixes are git's defaults whatever the user's `diff.noprefix` or
        // `diff.mnemonicPrefix` say: the headers are handed on as a patch `git apply` takes.
        let fixed = [
            "--literal-pathspecs",
            "diff",
            "--cached",
            "-M",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            base,
            "--",
        ];
        let mut args: Vec<&OsStr> = fixed.iter().map(OsStr::new).collect();
        for e in page {
            args.push(OsStr::new(&e.path));
            if let Some(old) = &e.old_path {
                args.push(OsStr::new(old));
            }
        }
        let patch = git::run_env(dir, args, &env).await?;
        if !patch.ok {
            return Err(git::failure(&patch.stderr));
        }
        let mut chunks = split_files(&patch.stdout).into_iter();
        for e in page {
            // Every file has its `diff --git` part; a binary one has no hunks in it.
            let (header, hunks) = file_patch(chunks.next().unwrap_or_default());
            files.push(DiffFile {
                path: e.path.clone(),
                old_path: e.old_path.clone(),
                status: e.status.clone(),
                additions: e.additions,
                deletions: e.deletions,
                header,
                hunks,
            });
        }
    }
    Ok(GetSessionDiffResult {
        files,
        total_files: total,
        additions,
        deletions,
        next_offset: (end < entries.len()).then_some(end as u64),
    })
}

/// The files of `--name-status -z` with the counts of `--numstat -z` (same order).
fn entries(status: &str, counts: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut fields = status.split('\0').filter(|f| !f.is_empty());
    while let Some(code) = fields.next() {
        let renamed = code.starts_with('R') || code.starts_with('C');
        let first = fields.next().unwrap_or_default().to_owned();
        let (path, old_path) = if renamed {
            (fields.next().unwrap_or_default().to_owned(), Some(first))
        } else {
            (first, None)
        };
        let status = match code.chars().next() {
            Some('A') => DiffStatus::Added,
            Some('D') => DiffStatus::Deleted,
            Some('R') => DiffStatus::Renamed,
            Some('C') => DiffStatus::Added,
            _ => DiffStatus::Modified,
        };
        out.push(Entry {
            path,
            old_path,
            status,
            additions: 0,
            deletions: 0,
        });
    }
    // numstat -z: `add\tdel\tpath\0`, or `add\tdel\t\0old\0new\0` for a rename.
    let mut records = counts.split('\0');
    for entry in &mut out {
        let Some(record) = records.next() else { break };
        let mut cols = record.splitn(3, '\t');
        let (add, del, path) = (cols.next(), cols.next(), cols.next().unwrap_or(""));
        if path.is_empty() {
            records.next();
            records.next();
        }
        match (
            add.and_then(|a| a.parse().ok()),
            del.and_then(|d| d.parse().ok()),
        ) {
            (Some(a), Some(d)) => (entry.additions, entry.deletions) = (a, d),
            _ => entry.status = DiffStatus::Binary,
        }
    }
    out
}

/// A patch split at each file's `diff --git` line.
fn split_files(patch: &str) -> Vec<&str> {
    let mut starts: Vec<usize> = Vec::new();
    let mut at = 0;
    for line in patch.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            starts.push(at);
        }
        at += line.len();
    }
    starts.push(patch.len());
    starts.windows(2).map(|w| &patch[w[0]..w[1]]).collect()
}

/// One file's patch: the lines before its first hunk, and its hunks. Lines end at `\n` only:
/// a `\r` before it is the file's own (CRLF), kept so that the patch still applies.
fn file_patch(chunk: &str) -> (Vec<String>, Vec<DiffHunk>) {
    let mut header = Vec::new();
    let mut hunks: Vec<DiffHunk> = Vec::new();
    let lines = chunk.split_inclusive('\n');
    for line in lines.map(|l| l.strip_suffix('\n').unwrap_or(l)) {
        if line.starts_with("@@") {
            hunks.push(DiffHunk {
                header: line.to_owned(),
                lines: Vec::new(),
            });
        } else if let Some(hunk) = hunks.last_mut() {
            hunk.lines.push(line.to_owned());
        } else {
            header.push(line.to_owned());
        }
    }
    (header, hunks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_counts_renames_and_binaries_are_read() {
        let status = "M\0a.txt\0R090\0old.rs\0new.rs\0A\0img.png\0D\0gone\0";
        let counts = "1\t2\ta.txt\x003\t0\t\0old.rs\0new.rs\0-\t-\timg.png\x000\t4\tgone\0";
        let got = entries(status, counts);
        let summary: Vec<_> = got
            .iter()
            .map(|e| {
                (
                    e.path.as_str(),
                    e.old_path.as_deref(),
                    e.status.as_str(),
                    e.additions,
                    e.deletions,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("a.txt", None, "modified", 1, 2),
                ("new.rs", Some("old.rs"), "renamed", 3, 0),
                ("img.png", None, "binary", 0, 0),
                ("gone", None, "deleted", 0, 4),
            ]
        );
    }

    #[test]
    fn a_patch_splits_into_files_and_hunks() {
        let patch = "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n@@ -9 +9,2 @@\n c\n+d\ndiff --git a/y b/y\nnew file mode 100644\n@@ -0,0 +1 @@\n+y\n";
        let files = split_files(patch);
        assert_eq!(files.len(), 2);
        let (header, x) = file_patch(files[0]);
        assert_eq!(
            header,
            [
                "diff --git a/x b/x",
                "index 1..2 100644",
                "--- a/x",
                "+++ b/x"
            ]
        );
        assert_eq!(x.len(), 2);
        assert_eq!(x[0].header, "@@ -1 +1 @@");
        assert_eq!(x[0].lines, ["-a", "+b"]);
        assert_eq!(x[1].lines, [" c", "+d"]);
        assert_eq!(file_patch(files[1]).1[0].lines, ["+y"]);
    }

    #[test]
    fn a_files_lines_keep_their_carriage_returns_tabs_and_missing_newline() {
        let chunk = "diff --git a/w b/w\n--- a/w\n+++ b/w\n@@ -1 +1 @@\n-a\tb\r\n+c\n\\ No newline at end of file\n";
        let (_, hunks) = file_patch(chunk);
        assert_eq!(
            hunks[0].lines,
            ["-a\tb\r", "+c", "\\ No newline at end of file"]
        );
    }

    #[test]
    fn a_binary_file_is_all_header() {
        let chunk = "diff --git a/i.png b/i.png\nnew file mode 100644\nindex 0000000..e69de29\nBinary files /dev/null and b/i.png differ\n";
        let (header, hunks) = file_patch(chunk);
        assert!(hunks.is_empty());
        assert_eq!(header[3], "Binary files /dev/null and b/i.png differ");
    }
}
