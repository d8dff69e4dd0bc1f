//! Isolated sessions: the git worktree a session runs in (its record on [`SessionInfo`] and
//! [`SessionState`]), and the methods that review, merge and discard its branch.

use serde::{Deserialize, Serialize};

use super::SuccessResult;
#[cfg(doc)]
use super::{SessionInfo, SessionState};

/// `received` of [`InvalidParamsData`](super::InvalidParamsData) when the session's worktree
/// directory no longer exists (removed by hand): `getSessionDiff`, `mergeSession`,
/// `sendMessage` and `continueSession` (in it or in a new worktree: Claude finds a
/// conversation through the directory it was held in) are refused. Made again at its path
/// from its branch, the worktree serves the session again; `discardSession` deletes the branch.
pub const WORKTREE_MISSING: &str = "missing worktree";

/// `worktree` on `launchSession` and `continueSession`: run the session in a worktree of its
/// own, on a new branch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorktreeParams {
    /// The new branch's name; else one made from the title or query. Sanitised to git's rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// What the branch starts from (a branch, tag or commit); else the current branch's HEAD.
    /// Only on `launchSession`: a continuation branches from its parent's branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
}

open_enum!(
    /// Where an isolated session's worktree stands.
    WorktreeState {
        /// The worktree exists and the session works in it.
        Active = "active",
        /// Its branch was merged into the base branch; the worktree stays until discarded.
        Merged = "merged",
        /// The worktree and its branch were removed.
        Discarded = "discarded",
    }
);

/// The worktree an isolated session runs in (shared by the continuations that work in it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorktreeInfo {
    /// The main checkout of the repository, absolute.
    pub repository: String,
    /// The worktree's directory, under the daemon's worktree root.
    pub path: String,
    /// The session's branch.
    pub branch: String,
    /// The branch it merges into.
    pub base_branch: String,
    /// The commit the branch started from.
    pub base_commit: String,
    /// `active`, `merged` or `discarded`.
    pub state: WorktreeState,
    /// What the repository's `worktree_setup` command printed, if one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_output: Option<String>,
}

/// The most bytes of binary patch ([`DiffFile::binary_patch`]) a `getSessionDiff` reply
/// carries, per file and per page: a page of them leaves room for its text in one WebSocket
/// message (1 MiB). A file's larger patch is left out ([`DiffFile::binary_patch_omitted`]);
/// one that would take a page over ends it, the next page starting with that file.
pub const MAX_BINARY_PATCH: u64 = 512 << 10;

/// The most bytes of git's text diff (headers and hunks) a `getSessionDiff` reply carries, per
/// file and per page, leaving room for [`MAX_BINARY_PATCH`] in one WebSocket message. A file's
/// larger diff comes without its header and hunks ([`DiffFile::hunks_omitted`]); one that
/// would take a page over ends it, the next page starting with that file.
pub const MAX_TEXT_PATCH: u64 = 256 << 10;

/// Params of `getSessionDiff`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetSessionDiffParams {
    /// An isolated session.
    pub session_id: String,
    /// The first file of the page (0-based); default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Files per page; default 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// Each binary file with git's binary patch (`binary_patch`), as `git diff --binary`
    /// makes it, for a patch that recreates it; default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
}

open_enum!(
    /// How a file changed.
    DiffStatus {
        /// New on the branch (untracked files count).
        Added = "added",
        /// Changed.
        Modified = "modified",
        /// Removed.
        Deleted = "deleted",
        /// Moved (`old_path` names where from), maybe changed too.
        Renamed = "renamed",
        /// A binary file, added, changed or removed: no hunks.
        Binary = "binary",
    }
);

/// One hunk of a file's diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffHunk {
    /// The `@@ -a,b +c,d @@ …` line.
    pub header: String,
    /// The lines, each starting with `' '`, `'+'`, `'-'` or `'\'` (`\ No newline at end of
    /// file`), without their `\n` but with a `\r` of the file's own.
    pub lines: Vec<String>,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffFile {
    /// Its path on the branch (the old path for a deleted file).
    pub path: String,
    /// For a rename, where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// How it changed.
    pub status: DiffStatus,
    /// Lines added (0 for a binary file).
    pub additions: u64,
    /// Lines removed (0 for a binary file).
    pub deletions: u64,
    /// Git's lines before the hunks, verbatim: `diff --git a/… b/…`, modes, rename lines,
    /// `index`, `--- a/…` and `+++ b/…`, or `Binary files … differ`. With the binary patch and
    /// the hunks, they make the patch `git apply` takes. Empty from a daemon older than this
    /// field. With `binary_patch`, they are `git diff --binary`'s (full `index` ids, no
    /// `Binary files … differ`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub header: Vec<String>,
    /// A binary file's content, asked for with `binary`: git's `GIT binary patch` line, then
    /// its `literal` or `delta` blocks of base85 lines, each block ending with an empty line.
    /// Empty when not asked for, for a binary file renamed unchanged, and when left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub binary_patch: Vec<String>,
    /// The binary patch asked for was larger than [`MAX_BINARY_PATCH`] and left out: the file
    /// cannot be in a patch made of this reply.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary_patch_omitted: bool,
    /// The hunks (none for a binary file or a pure rename).
    pub hunks: Vec<DiffHunk>,
    /// The file's diff was larger than [`MAX_TEXT_PATCH`]: its header and hunks are left out
    /// (its counts stand), and it cannot be in a patch made of this reply.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hunks_omitted: bool,
}

/// Result of `getSessionDiff`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetSessionDiffResult {
    /// This page's files, by path.
    pub files: Vec<DiffFile>,
    /// Files changed in all.
    pub total_files: u64,
    /// Lines added over every file.
    pub additions: u64,
    /// Lines removed over every file.
    pub deletions: u64,
    /// The `offset` of the next page, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
}

method!(
    /// An isolated session's changes: its branch against its base commit, with what it has
    /// not committed and its untracked files (not the ignored ones).
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"getSessionDiff","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","limit":50},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"files":[{"path":"src/lib.rs","status":"modified","additions":1,"deletions":1,"header":["diff --git a/src/lib.rs b/src/lib.rs","index 3b18e51..a9c0f2d 100644","--- a/src/lib.rs","+++ b/src/lib.rs"],"hunks":[{"header":"@@ -1 +1 @@","lines":["-fn parse() {}","+fn parse(s: &str) {}"]}]}],"total_files":1,"additions":1,"deletions":1},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// -32602 when `session_id` names no session, a session that is not isolated, or one whose
    /// worktree was discarded or removed by hand ([`WORKTREE_MISSING`]); -32603 when git fails
    /// (its reason in plain words).
    ///
    /// From Rust: `client.get_session_diff(params)`.
    GetSessionDiff, "getSessionDiff", "An isolated session's changes against its base, by file, with hunks",
    ["session_id: string", "offset?: number", "limit?: number"],
    "{files: [DiffFile], total_files: number, additions: number, deletions: number, next_offset?: number}",
    GetSessionDiffParams, GetSessionDiffResult
);

open_enum!(
    /// How `mergeSession` brings a branch into its base branch.
    #[derive(Default)]
    MergeStrategy {
        /// A merge commit.
        #[default]
        Merge = "merge",
        /// One new commit holding all of the branch's changes.
        Squash = "squash",
        /// The branch's commits replayed onto the base branch, which then moves forward to them.
        Rebase = "rebase",
    }
);

/// Params of `mergeSession`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MergeSessionParams {
    /// An isolated session.
    pub session_id: String,
    /// `merge` (default), `squash` or `rebase`.
    #[serde(default)]
    pub strategy: MergeStrategy,
    /// The merge or squash commit's message; else one naming the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Result of `mergeSession`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeSessionResult {
    /// Whether the base branch now holds the session's work.
    pub merged: bool,
    /// The files that conflict, when not merged (the main checkout is left as it was).
    pub conflicts: Vec<String>,
    /// The base branch's new HEAD, when merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

method!(
    /// Merges an isolated session's branch into its base branch, in the main checkout.
    ///
    /// What the agent left uncommitted in the worktree is committed on its branch first (the
    /// commit's message says so). A warm process in the worktree is ended first. With
    /// conflicts nothing is merged and the main checkout is untouched.
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"mergeSession","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","strategy":"squash"},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"merged":true,"conflicts":[],"commit":"9f2c4e1d7b3a5c8e0f6d2b4a1c3e5f7a9b0d2c4e"},"id":1}
    /// ```
    ///
    /// With conflicts:
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"merged":false,"conflicts":["src/lib.rs"]},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// -32602 when the session is not isolated, already merged or discarded, its worktree
    /// removed by hand ([`WORKTREE_MISSING`]), still running a turn, or when the main checkout
    /// has uncommitted changes or is not on the base branch (each said so); -32603 when git
    /// fails.
    ///
    /// From Rust: `client.merge_session(params)`.
    MergeSession, "mergeSession", "Merge an isolated session's branch into its base branch",
    ["session_id: string", "strategy?: \"merge\" | \"squash\" | \"rebase\"", "message?: string"],
    "{merged: boolean, conflicts: [string], commit?: string}",
    MergeSessionParams, MergeSessionResult
);

/// Params of `discardSession`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiscardSessionParams {
    /// An isolated session.
    pub session_id: String,
    /// Discard work that was never merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
}

method!(
    /// Removes an isolated session's worktree and branch (ending a warm process in it first).
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"discardSession","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","force":true},"id":1}
    /// {"jsonrpc":"2.0","result":{"success":true},"id":1}
    /// ```
    ///
    /// -32602 when the session is not isolated, already discarded, running a turn, or holds
    /// work never merged (commits or uncommitted changes) and `force` is not true.
    ///
    /// From Rust: `client.discard_session(params)`.
    DiscardSession, "discardSession", "Remove an isolated session's worktree and branch",
    ["session_id: string", "force?: boolean"], "{success: boolean}",
    DiscardSessionParams, SuccessResult
);

/// A worktree `health` reports: found at start-up, and left alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StrayWorktree {
    /// Its directory.
    pub path: String,
    /// Why it is reported: `session gone`, `directory vanished` or `not made by this daemon`.
    pub reason: String,
}
