//! Where a session works, as its user knows the place: an isolated session's worktree is a
//! directory the daemon made, which tells the user nothing, so lists show its repository's
//! checkout instead (the branch tells the worktree apart).

use std::borrow::Cow;
use std::path::Path;

use crate::protocol::WorktreeInfo;

/// `working_dir`, or for a session isolated in `worktree`, the same directory in the
/// repository's main checkout: `/repo/src` for `<worktree>/src`. A directory outside the
/// worktree is returned as it is.
pub fn in_checkout<'a>(working_dir: &'a str, worktree: Option<&WorktreeInfo>) -> Cow<'a, str> {
    let Some(w) = worktree else {
        return Cow::Borrowed(working_dir);
    };
    match Path::new(working_dir).strip_prefix(&w.path) {
        Ok(rest) if rest.as_os_str().is_empty() => Cow::Owned(w.repository.clone()),
        Ok(rest) => Cow::Owned(Path::new(&w.repository).join(rest).display().to_string()),
        Err(_) => Cow::Borrowed(working_dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::WorktreeState;

    #[test]
    fn a_worktree_reads_as_its_repositorys_checkout() {
        let w = WorktreeInfo {
            repository: "/home/me/alpha".into(),
            path: "/home/me/.hld/worktrees/alpha-34e9/feature-x".into(),
            branch: "feature-x".into(),
            base_branch: "main".into(),
            base_commit: "c0369bae".into(),
            state: WorktreeState::Active,
            setup_output: None,
        };
        let worktree = Some(&w);
        assert_eq!(in_checkout(&w.path, worktree), "/home/me/alpha");
        let deep = format!("{}/src/deep", w.path);
        assert_eq!(in_checkout(&deep, worktree), "/home/me/alpha/src/deep");
        // A sibling whose name starts alike is not inside it.
        let sibling = format!("{}-2", w.path);
        assert_eq!(in_checkout(&sibling, worktree), sibling);
        assert_eq!(in_checkout("/srv/plain", None), "/srv/plain");
    }
}
