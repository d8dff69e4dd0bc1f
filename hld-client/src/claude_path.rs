//! Finding the `claude` CLI: the one search the daemon runs before each launch and `hlyr` runs
//! to tell a user whether a restarted daemon would find it (a daemon searches with the
//! environment it was started in, which may lack the shell's `PATH`).
//!
//! No client ever names a program for the daemon to run: the daemon searches its own
//! configuration and environment, so that reaching the socket is not running code.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The environment variable naming the `claude` executable.
pub const ENV: &str = "HUMANLAYER_CLAUDE_PATH";

/// The daemon's message when a launch finds no `claude`; clients recognise it to explain.
pub const NOT_FOUND: &str = "claude CLI not found: install it or set HUMANLAYER_CLAUDE_PATH";

/// Whether `path` is a regular file (after following links) with an execute bit set.
fn is_executable(path: &Path) -> bool {
    path.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The first executable `name` in the directories of `path_var` (a `PATH`-style list).
/// Empty entries are skipped rather than taken as the current directory.
pub fn find_in_path(name: &str, path_var: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path_var)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// [`locate`] with the search path given explicitly.
fn locate_in(explicit: Option<&Path>, path_var: Option<&OsStr>) -> Option<PathBuf> {
    explicit
        .filter(|p| is_executable(p))
        .map(Path::to_path_buf)
        .or_else(|| find_in_path("claude", path_var?))
}

/// The `claude` binary to run: `explicit` if it is an executable file, otherwise the first
/// executable `claude` on this process's `PATH`; `None` if there is neither.
pub fn locate(explicit: Option<&Path>) -> Option<PathBuf> {
    locate_in(explicit, std::env::var_os("PATH").as_deref())
}

/// `HUMANLAYER_CLAUDE_PATH` from this process's environment, when set and not empty.
pub fn from_env() -> Option<PathBuf> {
    std::env::var_os(ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes an executable shell script.
    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn an_explicit_executable_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let exe = script(dir.path(), "my-claude", "exit 0");
        assert_eq!(locate_in(Some(&exe), None), Some(exe.clone()));
        assert_eq!(locate(Some(&exe)), Some(exe));
    }

    #[test]
    fn path_is_searched_for_an_executable_claude() {
        let empty = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        // A non-executable `claude` earlier on the path is skipped.
        let not_exec = empty.path().join("claude");
        std::fs::write(&not_exec, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&not_exec, std::fs::Permissions::from_mode(0o644)).unwrap();
        let exe = script(bin.path(), "claude", "exit 0");
        let path_var = std::env::join_paths([empty.path(), bin.path()]).unwrap();

        assert_eq!(locate_in(None, Some(&path_var)), Some(exe.clone()));
        // An explicit path that is not executable falls back to the search.
        assert_eq!(locate_in(Some(&not_exec), Some(&path_var)), Some(exe));
        // A directory is not an executable file.
        assert_eq!(
            locate_in(Some(bin.path()), Some(empty.path().as_os_str())),
            None
        );
        assert_eq!(locate_in(None, None), None);
    }
}
