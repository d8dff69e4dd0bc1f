//! Directories that only the daemon's user can change: the socket's, and the one holding the
//! per-session MCP configs.
//!
//! A file in a directory that someone else can write can be replaced between the daemon's
//! creating it and its use: another user could swap the live socket for one of their own (and
//! receive the owner's decisions), or an MCP config before `claude` reads it (and run code as
//! the owner). So such a directory is checked, not trusted: it must be a real directory (not a
//! symbolic link), owned by the daemon's user, and not writable by group or others. Inside a
//! directory that passes, a path names what the daemon put there.

use std::fs::{DirBuilder, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Creates `dir` (mode 0700, with missing parents) if it is missing, then checks it. `what`
/// names it in the error, which says what is wrong and how to fix it.
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
    // O_NOFOLLOW: a symbolic link as the last component fails to open, so what is checked
    // below is the directory itself.
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
    use std::os::unix::fs::PermissionsExt;

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_missing_directory_is_created_private() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        ensure(&dir, "the socket directory").unwrap();
        let mode = std::fs::metadata(&dir).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn a_directory_others_can_write_is_refused_with_the_fix() {
        let root = tempfile::tempdir().unwrap();
        chmod(root.path(), 0o777);
        let e = ensure(root.path(), "the socket directory").unwrap_err();
        let text = e.to_string();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert!(text.contains("writable by others (mode 777)"), "{text}");
        assert!(text.contains("chmod go-w"), "{text}");
        chmod(root.path(), 0o775);
        assert!(ensure(root.path(), "d").is_err(), "group-writable");
        chmod(root.path(), 0o755);
        ensure(root.path(), "d").unwrap();
    }

    #[test]
    fn a_symbolic_link_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let text = ensure(&link, "the socket directory")
            .unwrap_err()
            .to_string();
        assert!(text.contains("is a symbolic link"), "{text}");
    }

    #[test]
    fn a_directory_of_another_user_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("theirs");
        std::fs::create_dir(&dir).unwrap();
        chmod(&dir, 0o700);
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
