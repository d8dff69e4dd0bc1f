//! How to run `hlyr`, `hld-tui` and `fake-claude` from where the daemon started, so that a
//! printed command pastes: a name `PATH` finds, else the binary next to `hld`.

use std::path::{Path, PathBuf};

use hld_client::claude_path::find_in_path;

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| find_in_path(name, &path).is_some())
}

/// How to run `name` from here: its name when `PATH` finds it, else [`beside`]; `None` if neither.
pub fn command(name: &str) -> Option<String> {
    if on_path(name) {
        return Some(name.to_owned());
    }
    beside(name).map(|path| path.display().to_string())
}

/// `name` next to this executable, relative to here when below it (`target/release/hlyr`).
pub fn beside(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe.parent()?.join(name);
    if !path.is_file() {
        return None;
    }
    Some(
        std::env::current_dir()
            .ok()
            .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
            .unwrap_or(path),
    )
}

/// The directory to put on `PATH` for `name`: this executable's, if `name` is there but not on it.
pub fn path_hint(name: &str) -> Option<PathBuf> {
    if on_path(name) {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    dir.join(name).is_file().then(|| dir.to_path_buf())
}
