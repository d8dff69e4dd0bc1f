//! Names made from the user's text: branch names that follow git's ref rules, and worktree
//! directories confined under the daemon's root.

use std::path::{Path, PathBuf};

/// The longest branch name made or taken (git allows more; paths stay short).
pub const MAX_BRANCH: usize = 60;

/// `text` as a branch name git accepts (`git check-ref-format --branch`): letters, digits and
/// `._-/` only; no empty, dot-led or `.lock` component; no `..`; `None` if nothing is left.
pub fn sanitize_branch(text: &str) -> Option<String> {
    let mapped: String = text
        .trim()
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' | '/' => c,
            _ => '-',
        })
        .collect();
    let mut parts = Vec::new();
    for part in mapped.split('/') {
        let mut part = part.to_owned();
        while part.contains("..") {
            part = part.replace("..", ".");
        }
        while part.contains("--") {
            part = part.replace("--", "-");
        }
        let mut part = part.trim_start_matches(['.', '-']).to_owned();
        while let Some(stem) = part.strip_suffix(".lock") {
            part = stem.to_owned();
        }
        let part = part.trim_end_matches(['.', '-']);
        if !part.is_empty() {
            parts.push(part.to_owned());
        }
    }
    let mut name = parts.join("/");
    if name.len() > MAX_BRANCH {
        name.truncate(MAX_BRANCH);
        name = name.trim_end_matches(['.', '-', '/']).to_owned();
        while let Some(stem) = name.strip_suffix(".lock") {
            name = stem.to_owned();
        }
    }
    (!name.is_empty() && name != "HEAD").then_some(name)
}

/// A branch name made from a session's title or query: `hld/` and its first words, with a
/// short suffix of `unique` so that two sessions on one query get two branches.
pub fn branch_from_text(text: &str, unique: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().take(6).collect();
    let slug = sanitize_branch(&words.join("-").replace('/', "-").to_ascii_lowercase())
        .map(|s| s.chars().take(40).collect::<String>())
        .map(|s| s.trim_end_matches(['.', '-']).to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "session".to_owned());
    let short: String = unique
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(6)
        .collect();
    format!("hld/{slug}-{short}")
}

/// The directory of a repository's worktrees under `root`: its name and a hash of its path,
/// so that two repositories of one name never share it.
pub fn repo_dir(root: &Path, repository: &Path) -> PathBuf {
    let name = repository
        .file_name()
        .and_then(|n| sanitize_branch(&n.to_string_lossy()))
        .map(|n| n.replace('/', "-"))
        .unwrap_or_else(|| "repo".to_owned());
    root.join(format!("{name}-{:016x}", fnv1a(repository)))
}

/// A worktree's directory: its branch with `/` as `-`, under its repository's directory.
pub fn worktree_dir(repo_dir: &Path, branch: &str) -> PathBuf {
    repo_dir.join(branch.replace('/', "-"))
}

/// FNV-1a over a path's bytes: stable across builds, unlike `std`'s hasher.
fn fnv1a(path: &Path) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str()
        .as_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |hash, b| {
            (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names_follow_gits_rules() {
        assert_eq!(
            sanitize_branch("fix the parser").as_deref(),
            Some("fix-the-parser")
        );
        assert_eq!(sanitize_branch("feat//x..y").as_deref(), Some("feat/x.y"));
        assert_eq!(
            sanitize_branch(".hidden/a.lock").as_deref(),
            Some("hidden/a")
        );
        assert_eq!(sanitize_branch("a@{b}~^:?*[\\c").as_deref(), Some("a-b-c"));
        assert_eq!(sanitize_branch("../../etc").as_deref(), Some("etc"));
        assert_eq!(sanitize_branch(" / . "), None);
        assert_eq!(sanitize_branch("HEAD"), None);
        assert!(sanitize_branch(&"x".repeat(200)).unwrap().len() <= MAX_BRANCH);
    }

    #[test]
    fn made_names_carry_the_query_and_a_suffix() {
        let name = branch_from_text(
            "Fix the flaky test in src/lib.rs now please",
            "4f7c1a52-9a0e",
        );
        assert_eq!(name, "hld/fix-the-flaky-test-in-src-lib.rs-4f7c1a");
        assert_eq!(branch_from_text("???", "ab"), "hld/session-ab");
    }

    #[test]
    fn worktree_dirs_stay_under_the_root() {
        let root = Path::new("/state/worktrees");
        let dir = repo_dir(root, Path::new("/home/ada/src/my app"));
        assert!(dir.starts_with(root));
        assert!(dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("my-app-"));
        assert_ne!(dir, repo_dir(root, Path::new("/home/bob/my app")));
        let branch = sanitize_branch("../../x/y").unwrap();
        assert_eq!(worktree_dir(&dir, &branch), dir.join("x-y"));
    }
}
