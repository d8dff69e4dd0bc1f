//! The hlyr commands that hints name, written to reach the daemon they are about: with
//! `--context NAME` when that daemon is not the one a bare command reaches (the context
//! `hlyr context use` chose, else `local`), as when `--context` or `HLD_CONTEXT` chose it, or
//! for a line of `hlyr watch --all-contexts`; and with the `--daemon-socket PATH` the command
//! was given when that daemon is the local one.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::contexts::{Contexts, LOCAL};

/// The contexts the command works with, set once as it starts.
static CHOSEN: OnceLock<Chosen> = OnceLock::new();

#[derive(Debug)]
struct Chosen {
    /// The context of the daemon in use.
    in_force: String,
    /// The context a command without `--context` or `HLD_CONTEXT` reaches.
    bare: String,
    /// The local daemon's socket, when `--daemon-socket` gave it.
    socket: Option<PathBuf>,
}

/// Records the daemon the command works with: the context `given` by `--context` or
/// `HLD_CONTEXT`, else the one a bare command reaches; `socket`, the local one's by
/// `--daemon-socket`.
pub fn choose(contexts: &Contexts, given: Option<&str>, socket: Option<&Path>) {
    let chosen = Chosen {
        in_force: contexts.name_in_force(given),
        bare: contexts.name_in_force(None),
        socket: socket.map(Path::to_path_buf),
    };
    let _ = CHOSEN.set(chosen);
}

/// `` `hlyr ARGS` ``, reaching the daemon in use.
pub fn hlyr(args: &str) -> String {
    hlyr_in(None, args)
}

/// `` `hlyr ARGS` ``, reaching the daemon of `context` (`None`: the one in use).
pub fn hlyr_in(context: Option<&str>, args: &str) -> String {
    let chosen = CHOSEN.get();
    let bare = chosen.map_or(LOCAL, |c| c.bare.as_str());
    let in_force = chosen.map_or(bare, |c| c.in_force.as_str());
    let socket = chosen.and_then(|c| c.socket.as_deref());
    command(context.unwrap_or(in_force), bare, socket, args)
}

/// `` `hlyr ARGS` `` for the daemon of `context`, naming it unless it is `bare`, the one
/// reached without naming any, and giving `socket` when that daemon is the local one. The
/// name and the path are quoted for a POSIX shell when they need to be.
fn command(context: &str, bare: &str, socket: Option<&Path>, args: &str) -> String {
    let mut line = String::from("`hlyr ");
    if context != bare {
        line += &format!("--context {} ", quoted(context));
    }
    if let Some(socket) = socket.filter(|_| context == LOCAL) {
        line += &format!("--daemon-socket {} ", quoted(&socket.to_string_lossy()));
    }
    format!("{line}{args}`")
}

fn quoted(word: &str) -> String {
    shlex::try_quote(word).map_or_else(|_| word.to_owned(), |q| q.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daemon_a_bare_command_reaches_is_not_named() {
        assert_eq!(
            command(LOCAL, LOCAL, None, "approve 1a2b"),
            "`hlyr approve 1a2b`"
        );
        assert_eq!(
            command("box", "box", None, "approve 1a2b"),
            "`hlyr approve 1a2b`"
        );
    }

    #[test]
    fn another_daemon_is_named_before_the_command() {
        assert_eq!(
            command("box", LOCAL, None, "conversation 1a2b --follow"),
            "`hlyr --context box conversation 1a2b --follow`"
        );
        assert_eq!(
            command(LOCAL, "box", None, "interrupt 1a2b"),
            "`hlyr --context local interrupt 1a2b`",
            "local, when `context use` chose another"
        );
    }

    #[test]
    fn a_name_the_shell_would_split_is_quoted() {
        assert_eq!(
            command("dev box", LOCAL, None, "approvals"),
            "`hlyr --context 'dev box' approvals`"
        );
        assert_eq!(
            command("$HOME", LOCAL, None, "approvals"),
            "`hlyr --context '$HOME' approvals`"
        );
    }

    #[test]
    fn the_socket_given_goes_with_the_local_daemon_only() {
        let socket = Some(Path::new("/run/my hld.sock"));
        assert_eq!(
            command(LOCAL, LOCAL, socket, "approve 1a2b"),
            "`hlyr --daemon-socket '/run/my hld.sock' approve 1a2b`"
        );
        assert_eq!(
            command(LOCAL, "box", socket, "approve 1a2b"),
            "`hlyr --context local --daemon-socket '/run/my hld.sock' approve 1a2b`"
        );
        assert_eq!(
            command("box", LOCAL, socket, "approve 1a2b"),
            "`hlyr --context box approve 1a2b`",
            "a remote daemon is not reached through the local socket"
        );
    }
}
