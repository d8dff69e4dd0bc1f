//! hlyr's own desktop notifications, for a daemon that shows none: through the notifier
//! installed (`notify-send`, else macOS's `osascript`), run in the background; its failure
//! is not hlyr's.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The notification's title.
const TITLE: &str = "hlyr";

/// A desktop notifier found on `PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notifier {
    NotifySend(PathBuf),
    Osascript(PathBuf),
}

impl Notifier {
    /// Shows `message` (a line under the title), in the background.
    pub fn show(&self, message: &str) {
        let mut command = match self {
            Notifier::NotifySend(path) => {
                let mut c = Command::new(path);
                c.args(["--app-name", TITLE, TITLE, message]);
                c
            }
            Notifier::Osascript(path) => {
                let mut c = Command::new(path);
                c.arg("-e").arg(format!(
                    "display notification {} with title {}",
                    applescript_string(message),
                    applescript_string(TITLE)
                ));
                c
            }
        };
        // In a process group of its own: neither a Ctrl-C nor the hang-up of a terminal that
        // hlyr leaves as it exits stops a notification on its way.
        command
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // Reaped on its own thread: a notifier that hangs must not hold hlyr up.
        if let Ok(mut child) = command.spawn() {
            std::thread::spawn(move || child.wait());
        }
    }
}

/// `notify-send`, else `osascript`, from `PATH`.
pub fn find() -> Option<Notifier> {
    let path = std::env::var_os("PATH")?;
    let on_path = |name: &str| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|file| executable(file))
    };
    on_path("notify-send")
        .map(Notifier::NotifySend)
        .or_else(|| on_path("osascript").map(Notifier::Osascript))
}

fn executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    file.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `text` as an AppleScript string literal.
fn applescript_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applescript_strings_are_quoted() {
        assert_eq!(
            applescript_string(r#"say "hi" \ bye"#),
            r#""say \"hi\" \\ bye""#
        );
    }
}
