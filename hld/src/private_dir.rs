//! Directories only the daemon's user can change (the socket's, the MCP configs'), so that no
//! other user can swap the socket or an MCP config between its creation and its use.

use std::fs::{DirBuilder, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Creates `dir` (0700, with parents) if missing, then checks it; `what` names it in errors.
pub fn ensure(dir: &Path, what: &str) -> io::Result<()> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if std::fs::symlink_metadata(dir).is_err() {
        DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    }
    let refuse = |problem: String, fix: String| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{what} {} {problem}; {fix}", dir.display()),
        )
    };
    // O_NOFOLLOW: a symbolic link fails to open, so the directory itself is checked.
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(dir);
    let file = match opened {
        Ok(file) => file,
        Err(_) if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_symlink()) => {
            return Err(refuse(
                "is a symbolic link".into(),
                "give a real directory of your own (hld creates a missing one with mode 0700)"
                    .into(),
            ))
        }
        Err(e) => {
            return Err(io::Error::new(
                e.kind(),
                format!("{what} {}: {e}", dir.display()),
            ))
        }
    };
    let meta = file.metadata()?;
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(refuse(
            format!(
                "belongs to another user (uid {}, you are uid {me})",
                meta.uid()
            ),
            "use a directory of your own".into(),
        ));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(refuse(
            format!("is writable by others (mode {mode:o})"),
            format!(
                "run `chmod go-w {}` or use another directory",
                dir.display()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // The rest is e2e::security's; giving a directory away takes root.
    #[test]
    fn a_directory_of_another_user_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("theirs");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .unwrap();
        // Giving a directory away takes root, as CI runs; anyone else owns only their own.
        match nix::unistd::chown(&dir, Some(nix::unistd::Uid::from_raw(65534)), None) {
            Ok(()) => {
                let text = ensure(&dir, "the socket directory")
                    .unwrap_err()
                    .to_string();
                assert!(
                    text.contains("belongs to another user (uid 65534"),
                    "{text}"
                );
            }
            Err(e) => {
                assert!(!nix::unistd::geteuid().is_root(), "root cannot chown: {e}");
                ensure(&dir, "d").unwrap();
            }
        }
    }
}
