//! `getSessionDiff`: a worktree against its base commit, with what is uncommitted and untracked
//! (not ignored), read through a copy of the worktree's index so that git's own is untouched.
//! A page carries at most [`MAX_TEXT_PATCH`] of git's text diff, a larger file's left out; a
//! binary file's patch, when asked for, is `git diff --binary`'s of that file alone, read no
//! further than [`MAX_BINARY_PATCH`] allows.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use hld_client::protocol::{
    DiffFile, DiffHunk, DiffStatus, GetSessionDiffResult, MAX_BINARY_PATCH, MAX_TEXT_PATCH,
};

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

/// Copies the index at `from` to `to` with its modification time. Git takes a file changed in
/// the second its index was written for changed only by comparing the file's time with the
/// index's ("racily clean"); a copy stamped later would hide such a change.
async fn copy_index(from: PathBuf, to: PathBuf) -> std::io::Result<()> {
    tokio::task::spawn_blocking(move || {
        std::fs::copy(&from, &to)?;
        let written = std::fs::metadata(&from)?.modified()?;
        std::fs::File::options()
            .write(true)
            .open(&to)?
            .set_modified(written)
    })
    .await?
}

/// The first line of a binary patch: what `git diff --binary` prints instead of `Binary files
/// … differ`.
const BINARY_PATCH: &str = "GIT binary patch";

/// What a binary file's `git diff --binary` prints besides its binary patch: its header.
const HEADER_ROOM: usize = 64 << 10;

/// The diff of the worktree at `dir` against `base`, files `offset..offset + limit`; with
/// `binary`, each binary file's binary patch too.
pub async fn session_diff(
    dir: &Path,
    base: &str,
    offset: u64,
    limit: u64,
    binary: bool,
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
    copy_index(PathBuf::from(index), temp.0.clone())
        .await
        .map_err(|e| Error::internal("cannot copy the worktree's git index", e))?;
    let env = [("GIT_INDEX_FILE", temp.0.as_os_str())];
    git::run_env(dir, ["add", "-A", "--", "."], &env)
        .await?
        .succeeded()?;
    let diff = |extra: &'static [&'static str]| {
        let mut args = vec!["diff", "--cached", "-M", "--no-color", "--no-ext-diff"];
        args.extend_from_slice(extra);
        args.push(base);
        args
    };
    // One run lists each file twice: its status (`--raw`), then its line counts.
    let listed = git::run_env(dir, diff(&["--raw", "--numstat", "-z"]), &env)
        .await?
        .succeeded()?;
    let entries = entries(&listed.stdout);
    let total = entries.len() as u64;
    let (additions, deletions) = entries
        .iter()
        .fold((0, 0), |(a, d), e| (a + e.additions, d + e.deletions));
    let start = offset.min(total) as usize;
    let asked = &entries[start..offset.saturating_add(limit).min(total) as usize];
    let mut files = text_files(dir, base, &env, asked).await?;
    if binary {
        let page = &asked[..files.len()];
        let kept = add_binary_patches(dir, base, &env, page, &mut files).await?;
        files.truncate(kept);
    }
    let end = start + files.len();
    Ok(GetSessionDiffResult {
        files,
        total_files: total,
        additions,
        deletions,
        next_offset: (end < entries.len()).then_some(end as u64),
    })
}

/// The files of `page` with their headers and hunks, as many as come whole in the first
/// [`MAX_TEXT_PATCH`] bytes of git's diff; when the first file alone is more, that file
/// without them (`hunks_omitted`).
async fn text_files(
    dir: &Path,
    base: &str,
    env: &[(&str, &OsStr)],
    page: &[Entry],
) -> Result<Vec<DiffFile>> {
    let Some(first) = page.first() else {
        return Ok(Vec::new());
    };
    let cap = MAX_TEXT_PATCH as usize;
    let patch = git::run_capped(dir, patch_args(base, &[], page), env, cap).await?;
    let cut = patch.cut;
    let patch = if cut { patch } else { patch.succeeded()? };
    // Every file has its `diff --git` part (a binary one has no hunks in it); cut short, the
    // last part read is only a file's beginning.
    let chunks = split_files(&patch.stdout);
    let whole = if cut {
        chunks.len().saturating_sub(1)
    } else {
        page.len()
    };
    if whole == 0 {
        let omitted = DiffFile {
            hunks_omitted: true,
            ..diff_file(first, "")
        };
        return Ok(vec![omitted]);
    }
    let mut chunks = chunks.into_iter();
    let files = page.iter().take(whole);
    Ok(files
        .map(|e| diff_file(e, chunks.next().unwrap_or_default()))
        .collect())
}

/// The file of `entry`, with the header and hunks of `patch`, its part of git's diff.
fn diff_file(entry: &Entry, patch: &str) -> DiffFile {
    let (header, hunks) = file_patch(patch);
    DiffFile {
        path: entry.path.clone(),
        old_path: entry.old_path.clone(),
        status: entry.status.clone(),
        additions: entry.additions,
        deletions: entry.deletions,
        header,
        binary_patch: Vec::new(),
        binary_patch_omitted: false,
        hunks,
        hunks_omitted: false,
    }
}

/// `git diff` of `base` against the index, with `extra` flags, for the files of `page`.
fn patch_args<'a>(base: &'a str, extra: &[&'a str], page: &'a [Entry]) -> Vec<&'a OsStr> {
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
    ];
    let mut args: Vec<&OsStr> = fixed.iter().chain(extra).map(|a| OsStr::new(*a)).collect();
    args.extend([OsStr::new(base), OsStr::new("--")]);
    for e in page {
        args.push(OsStr::new(&e.path));
        if let Some(old) = &e.old_path {
            args.push(OsStr::new(old));
        }
    }
    args
}

/// Gives the binary files of `files` (the diff of `page`) their binary patches, at most
/// [`MAX_BINARY_PATCH`] bytes of them in all unless one alone is more; how many files the
/// page keeps: those before the patch that would take it over.
async fn add_binary_patches(
    dir: &Path,
    base: &str,
    env: &[(&str, &OsStr)],
    page: &[Entry],
    files: &mut [DiffFile],
) -> Result<usize> {
    let mut carried = 0;
    for (at, (entry, file)) in page.iter().zip(files.iter_mut()).enumerate() {
        if entry.status != DiffStatus::Binary {
            continue;
        }
        let args = patch_args(base, &["--binary"], std::slice::from_ref(entry));
        let cap = MAX_BINARY_PATCH as usize + HEADER_ROOM;
        let out = git::run_capped(dir, args, env, cap).await?;
        if out.cut {
            file.binary_patch_omitted = true;
            continue;
        }
        let out = out.succeeded()?;
        let (header, lines) = binary_file(&out.stdout);
        let size = patch_bytes(&lines);
        if size > MAX_BINARY_PATCH {
            file.binary_patch_omitted = true;
            continue;
        }
        if carried > 0 && carried + size > MAX_BINARY_PATCH {
            return Ok(at);
        }
        carried += size;
        if !lines.is_empty() {
            (file.header, file.binary_patch) = (header, lines);
        }
    }
    Ok(files.len())
}

/// One binary file's `git diff --binary`: its header and its binary patch (from the
/// `GIT binary patch` line on; none for a file renamed unchanged).
fn binary_file(patch: &str) -> (Vec<String>, Vec<String>) {
    let (mut header, _) = file_patch(patch);
    let lines = match header.iter().position(|l| l == BINARY_PATCH) {
        Some(at) => header.split_off(at),
        None => Vec::new(),
    };
    (header, lines)
}

/// The bytes `lines` take in a patch, each with its `\n`.
fn patch_bytes(lines: &[String]) -> u64 {
    lines.iter().map(|l| l.len() as u64 + 1).sum()
}

/// The files of `git diff --raw --numstat -z`: raw records (`:modes shas STATUS\0path\0`, or
/// `…\0old\0new\0` for a rename or copy), then as many numstat records in the same order.
fn entries(listed: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut fields = listed.split('\0').peekable();
    // A raw record's header starts with `:`; a numstat record never does.
    while let Some(header) = fields.next_if(|f| f.starts_with(':')) {
        let code = header.rsplit(' ').next().unwrap_or_default();
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
    for entry in &mut out {
        let Some(record) = fields.next() else { break };
        let mut cols = record.splitn(3, '\t');
        let (add, del, path) = (cols.next(), cols.next(), cols.next().unwrap_or(""));
        if path.is_empty() {
            fields.next();
            fields.next();
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

    /// Runs git in `repo`; what it printed.
    fn git_in(repo: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .current_dir(repo)
            .args(["-c", "user.name=Ada", "-c", "user.email=ada@example.com"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    #[tokio::test]
    async fn a_page_carries_at_most_max_text_patch_and_a_larger_file_comes_without_hunks() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        git_in(repo, &["init", "-q"]);
        git_in(repo, &["commit", "-q", "--allow-empty", "-m", "base"]);
        let base = git_in(repo, &["rev-parse", "HEAD"]);
        let lines = |n| (0..n).map(|i| format!("line {i:05}\n")).collect::<String>();
        // Diffs of about 180 KiB (two take a page over), a few bytes, and 360 KiB (over the cap
        // alone: a page of its own, without its hunks).
        for (name, n) in [
            ("a.txt", 15_000),
            ("b.txt", 15_000),
            ("c.txt", 1),
            ("d.txt", 30_000),
        ] {
            std::fs::write(repo.join(name), lines(n)).unwrap();
        }
        let summary = |files: &[DiffFile]| {
            let lines = |f: &DiffFile| f.hunks.iter().map(|h| h.lines.len()).sum::<usize>();
            let each = files
                .iter()
                .map(|f| (f.path.clone(), f.additions, lines(f), f.hunks_omitted));
            each.collect::<Vec<_>>()
        };

        let first = session_diff(repo, base.trim(), 0, 10, false).await.unwrap();
        assert_eq!(
            summary(&first.files),
            [("a.txt".into(), 15_000, 15_000, false)]
        );
        assert_eq!((first.total_files, first.next_offset), (4, Some(1)));
        let second = session_diff(repo, base.trim(), 1, 10, false).await.unwrap();
        assert_eq!(
            summary(&second.files),
            [
                ("b.txt".into(), 15_000, 15_000, false),
                ("c.txt".into(), 1, 1, false),
            ]
        );
        assert_eq!(second.next_offset, Some(3));
        let third = session_diff(repo, base.trim(), 3, 10, false).await.unwrap();
        assert_eq!(summary(&third.files), [("d.txt".into(), 30_000, 0, true)]);
        assert_eq!(third.next_offset, None);
        assert!(third.files[0].header.is_empty());
    }

    #[tokio::test]
    async fn a_change_in_the_tick_the_index_was_written_is_in_the_diff() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        let git = |args: &[&str]| git_in(repo, args);
        git(&["init", "-q"]);
        // A change's ctime cannot be set back; the file's time and size are what git compares.
        git(&["config", "core.trustctime", "false"]);
        let stamp = |path: &Path, time| {
            let f = std::fs::File::options().write(true).open(path).unwrap();
            f.set_modified(time).unwrap();
        };
        // A minute ago, so that a copy stamped now is seconds apart from the file.
        let then = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        let file = repo.join("a.txt");
        std::fs::write(&file, "one\n").unwrap();
        stamp(&file, then);
        git(&["add", "."]);
        git(&["commit", "-q", "-m", "base"]);
        let base = git(&["rev-parse", "HEAD"]);
        // The same size, and the file and the index stamped with the file's time as added: a
        // change made in the tick the index was written.
        std::fs::write(&file, "two\n").unwrap();
        stamp(&file, then);
        stamp(&repo.join(".git/index"), then);

        let diff = session_diff(repo, base.trim(), 0, 10, false).await.unwrap();
        let files: Vec<_> = diff.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(files, ["a.txt"]);
        assert_eq!((diff.additions, diff.deletions), (1, 1));
    }

    #[test]
    fn statuses_counts_renames_and_binaries_are_read() {
        let raw = ":100644 100644 1a 2b M\0a.txt\0:100644 100644 3c 4d R090\0old.rs\0new.rs\0\
                   :000000 100644 00 5e A\0img.png\0:100644 000000 6f 00 D\0gone\0\
                   :100644 100644 7a 8b M\0:colon\0";
        let counts = "1\t2\ta.txt\x003\t0\t\0old.rs\0new.rs\0-\t-\timg.png\x000\t4\tgone\0\
                      5\t6\t:colon\0";
        let got = entries(&format!("{raw}{counts}"));
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
                (":colon", None, "modified", 5, 6),
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

    /// `git diff --binary` of a modified file: both ways, each block ending with an empty line.
    #[test]
    fn a_binary_patch_is_split_from_its_header() {
        let out = "diff --git a/a.bin b/a.bin\nindex 5e07d261855586626d75321e8ab899341f972802..7681056fc9496b2dda6da6885643aca893021d91 100644\nGIT binary patch\nliteral 6\nNcmZQzWJ*j*0RRGC0V@Ci\n\nliteral 6\nNcmZQzWJ*j*1^@zG0V)6h\n\n";
        let (header, lines) = binary_file(out);
        assert_eq!(
            header,
            [
                "diff --git a/a.bin b/a.bin",
                "index 5e07d261855586626d75321e8ab899341f972802..7681056fc9496b2dda6da6885643aca893021d91 100644"
            ]
        );
        assert_eq!(
            lines,
            [
                "GIT binary patch",
                "literal 6",
                "NcmZQzWJ*j*0RRGC0V@Ci",
                "",
                "literal 6",
                "NcmZQzWJ*j*1^@zG0V)6h",
                ""
            ]
        );
        // As written back, line by line, the patch is git's byte for byte.
        let written: String = header
            .iter()
            .chain(&lines)
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(written, out);
        assert_eq!(patch_bytes(&lines), 83);
    }

    #[test]
    fn a_binary_file_renamed_unchanged_has_no_binary_patch() {
        let out = "diff --git a/r.bin b/r2.bin\nsimilarity index 100%\nrename from r.bin\nrename to r2.bin\n";
        let (header, lines) = binary_file(out);
        assert_eq!(header.len(), 4);
        assert!(lines.is_empty());
        assert_eq!(patch_bytes(&lines), 0);
    }
}
