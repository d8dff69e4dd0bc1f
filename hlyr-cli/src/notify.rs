//! `--notify`: when an approval waits or the session ends, ring the terminal's bell and, where
//! a desktop notifier is installed (`notify-send`, else macOS's `osascript`), show a
//! notification. The notifier runs in the background; its failure is not hlyr's.

use std::io::{IsTerminal, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The notification's title.
const TITLE: &str = "hlyr";

/// A desktop notifier found on `PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Notifier {
    NotifySend(PathBuf),
    Osascript(PathBuf),
}

/// Rings and notifies, when `--notify` was given.
#[derive(Debug)]
pub struct Notify {
    enabled: bool,
    notifier: Option<Notifier>,
}

impl Notify {
    /// Notifications when `enabled`, through the notifier found on `PATH`.
    pub fn new(enabled: bool) -> Notify {
        let notifier = enabled.then(find).flatten();
        Notify { enabled, notifier }
    }

    /// Rings the bell and shows `message` (a line under the title).
    pub fn send(&self, message: &str) {
        if !self.enabled {
            return;
        }
        let mut err = std::io::stderr();
        if err.is_terminal() {
            let _ = err.write_all(b"\x07");
            let _ = err.flush();
        }
        let mut command = match &self.notifier {
            Some(Notifier::NotifySend(path)) => {
                let mut c = Command::new(path);
                c.args(["--app-name", TITLE, TITLE, message]);
                c
            }
            Some(Notifier::Osascript(path)) => {
                let mut c = Command::new(path);
                c.arg("-e").arg(format!(
                    "display notification {} with title {}",
                    applescript_string(message),
                    applescript_string(TITLE)
                ));
                c
            }
            None => return,
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
fn find() -> Option<Notifier> {
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
