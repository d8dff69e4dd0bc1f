//! Whose files the daemon and its clients take orders from: the configuration file and the
//! daemon's socket must be the user's own, in a directory no one else can change.
//!
//! `humanlayer.json` names programs to run (`claude_path`) and the socket to talk to
//! (`daemon_socket`); the socket receives every decision a client sends. A file someone else
//! owns, or can replace because they can write it or its directory, would let them run code
//! as this user or read and answer this user's approvals. So each is checked before use, and
//! refused with what is wrong and how to fix it.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// Group and other write bits.
const OTHERS_WRITE: u32 = 0o022;

/// The effective uid of this process.
fn me() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// What is wrong with `meta` (the metadata of `path`, a `noun`) and how to fix it, if it is
/// owned by someone other than this user (and root, when `root_may_own`) or writable by
/// group or others.
fn problem(
    path: &Path,
    noun: &str,
    meta: &std::fs::Metadata,
    root_may_own: bool,
) -> Option<(String, String)> {
    let me = me();
    if meta.uid() != me && !(root_may_own && meta.uid() == 0) {
        return Some((
            format!(
                "belongs to another user (uid {}, you are uid {me})",
                meta.uid()
            ),
            format!("use a {noun} of your own"),
        ));
    }
    let mode = meta.mode() & 0o7777;
    (mode & OTHERS_WRITE != 0).then(|| {
        (
            format!("is writable by others (mode {mode:o})"),
            format!("run `chmod go-w {}`", path.display()),
        )
    })
}

/// Checks that the configuration file `path`, and the directory holding it, belong to this
/// user or root and that no one else can write either. The error says what is wrong and how
/// to fix it.
pub fn check_config_file(path: &Path) -> Result<(), String> {
    // Links resolved, so that the directory checked is the one holding the file.
    let real = std::fs::canonicalize(path)
        .map_err(|e| format!("cannot read config file {}: {e}", path.display()))?;
    let dir = real.parent().unwrap_or(Path::new("/"));
    let checks = [
        ("it".to_owned(), real.as_path(), "file"),
        (format!("its directory {}", dir.display()), dir, "directory"),
    ];
    for (what, at, noun) in checks {
        let meta = std::fs::metadata(at)
            .map_err(|e| format!("cannot read config file {}: {e}", path.display()))?;
        if let Some((problem, fix)) = problem(at, noun, &meta, true) {
            return Err(format!(
                "refusing config file {}: {what} {problem}, so someone else could choose the \
                 programs and socket used as you; {fix}",
                path.display()
            ));
        }
    }
    Ok(())
}

/// Checks that the socket at `path` belongs to this user and lies in a directory of theirs
/// that no one else can write, as the daemon makes it, before anything is sent to it. A path
/// where no socket exists passes: connecting then reports that no daemon runs there.
pub fn check_socket(path: &Path) -> Result<(), crate::Error> {
    let Ok(real) = std::fs::canonicalize(path) else {
        return Ok(());
    };
    let dir = real.parent().unwrap_or(Path::new("/"));
    let refuse = |problem: String| crate::Error::UntrustedSocket {
        socket: path.to_owned(),
        problem,
    };
    let meta = std::fs::metadata(&real)?;
    if !meta.file_type().is_socket() {
        return Ok(());
    }
    if let Some((problem, _)) = problem(&real, "socket", &meta, false) {
        return Err(refuse(format!("it {problem}")));
    }
    let dir_meta = std::fs::metadata(dir)?;
    if let Some((problem, _)) = problem(dir, "directory", &dir_meta, false) {
        return Err(refuse(format!("its directory {} {problem}", dir.display())));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_private_config_file_passes_and_writable_ones_are_refused_with_the_fix() {
        let root = tempfile::tempdir().unwrap();
        chmod(root.path(), 0o755);
        let file = root.path().join("humanlayer.json");
        std::fs::write(&file, "{}").unwrap();
        chmod(&file, 0o644);
        check_config_file(&file).unwrap();

        chmod(&file, 0o664);
        let text = check_config_file(&file).unwrap_err();
        assert!(text.contains("writable by others (mode 664)"), "{text}");
        assert!(text.contains("chmod go-w"), "{text}");

        chmod(&file, 0o644);
        chmod(root.path(), 0o1777);
        let text = check_config_file(&file).unwrap_err();
        assert!(text.contains("its directory"), "{text}");
        assert!(text.contains("mode 1777"), "{text}");
    }

    #[test]
    fn a_link_is_judged_by_the_file_it_names() {
        let shared = tempfile::tempdir().unwrap();
        chmod(shared.path(), 0o777);
        let target = shared.path().join("humanlayer.json");
        std::fs::write(&target, "{}").unwrap();
        chmod(&target, 0o644);
        let mine = tempfile::tempdir().unwrap();
        let link = mine.path().join("humanlayer.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let text = check_config_file(&link).unwrap_err();
        assert!(text.contains("writable by others (mode 777)"), "{text}");
    }

    #[test]
    fn a_missing_socket_passes_to_be_reported_by_connect() {
        let root = tempfile::tempdir().unwrap();
        check_socket(&root.path().join("daemon.sock")).unwrap();
    }

    #[test]
    fn a_socket_in_a_directory_others_can_write_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let socket = root.path().join("daemon.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        check_socket(&socket).unwrap();
        chmod(root.path(), 0o777);
        let e = check_socket(&socket).unwrap_err();
        assert!(
            e.to_string().contains("writable by others (mode 777)"),
            "{e}"
        );
    }
}
