//! The hlyr commands that hints name, written to reach the daemon they are about: with
//! `--context NAME` when that daemon is not the one a bare command reaches (the context
//! `hlyr context use` chose, else `local`), as when `--context` or `HLD_CONTEXT` chose it, or
//! for a line of `hlyr watch --all-contexts`; and with the `--daemon-socket PATH` the command
//! was given when that daemon is the local one. `hlyr daemon …` works on a daemon of this
//! machine: for a remote daemon, a hint says to run it on that daemon's machine.

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
    /// The contexts whose daemons are on other machines.
    remote: Vec<String>,
}

/// Records the daemon the command works with: the context `given` by `--context` or
/// `HLD_CONTEXT`, else the one a bare command reaches; `socket`, the local one's by
/// `--daemon-socket`.
pub fn choose(contexts: &Contexts, given: Option<&str>, socket: Option<&Path>) {
    let chosen = Chosen {
        in_force: contexts.name_in_force(given),
        bare: contexts.name_in_force(None),
        socket: socket.map(Path::to_path_buf),
        remote: (contexts.contexts.iter())
            .filter(|(_, entry)| entry.is_remote())
            .map(|(name, _)| name.clone())
            .collect(),
    };
    let _ = CHOSEN.set(chosen);
}

/// What was chosen; before [`choose`], the local daemon, reached by a bare command.
fn chosen() -> &'static Chosen {
    static NONE: OnceLock<Chosen> = OnceLock::new();
    CHOSEN.get().unwrap_or_else(|| {
        NONE.get_or_init(|| Chosen {
            in_force: LOCAL.into(),
            bare: LOCAL.into(),
            socket: None,
            remote: Vec::new(),
        })
    })
}

/// `` `hlyr ARGS` ``, reaching the daemon in use.
pub fn hlyr(args: &str) -> String {
    chosen().command(None, args)
}

/// `` `hlyr ARGS` ``, reaching the daemon of `context` (`None`: the one in use).
pub fn hlyr_in(context: Option<&str>, args: &str) -> String {
    chosen().command(context, args)
}

/// `` `hlyr daemon ARGS` `` for the daemon of `context` (`None`: the one in use).
pub fn hlyr_daemon(context: Option<&str>, args: &str) -> String {
    chosen().daemon_command(context, args)
}

/// Whether the daemon in use is on another machine.
pub fn is_remote() -> bool {
    chosen().is_remote(None)
}

impl Chosen {
    fn is_remote(&self, context: Option<&str>) -> bool {
        let context = context.unwrap_or(&self.in_force);
        self.remote.iter().any(|name| name == context)
    }

    /// `` `hlyr ARGS` `` for the daemon of `context` (`None`: the one in use), naming it
    /// unless a bare command reaches it, and giving the socket `--daemon-socket` gave when it
    /// is the local one. The name and the path are quoted for a POSIX shell when need be.
    fn command(&self, context: Option<&str>, args: &str) -> String {
        let context = context.unwrap_or(&self.in_force);
        let mut line = String::from("`hlyr ");
        if context != self.bare {
            line += &format!("--context {} ", quoted(context));
        }
        if let Some(socket) = self.socket.as_ref().filter(|_| context == LOCAL) {
            line += &format!("--daemon-socket {} ", quoted(&socket.to_string_lossy()));
        }
        format!("{line}{args}`")
    }

    /// `` `hlyr daemon ARGS` ``; for a remote daemon, to be run on its machine, where that
    /// daemon is the local one.
    fn daemon_command(&self, context: Option<&str>, args: &str) -> String {
        if self.is_remote(context) {
            return format!("`hlyr daemon {args}` on the daemon's machine");
        }
        self.command(context, &format!("daemon {args}"))
    }
}

fn quoted(word: &str) -> String {
    shlex::try_quote(word).map_or_else(|_| word.to_owned(), |q| q.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `in_force` chosen where a bare command reaches `bare`; `box` is remote.
    fn chosen(in_force: &str, bare: &str, socket: Option<&str>) -> Chosen {
        Chosen {
            in_force: in_force.into(),
            bare: bare.into(),
            socket: socket.map(PathBuf::from),
            remote: vec!["box".into()],
        }
    }

    #[test]
    fn the_daemon_a_bare_command_reaches_is_not_named() {
        let approve = "approve 1a2b";
        assert_eq!(
            chosen(LOCAL, LOCAL, None).command(None, approve),
            "`hlyr approve 1a2b`"
        );
        assert_eq!(
            chosen("box", "box", None).command(None, approve),
            "`hlyr approve 1a2b`"
        );
    }

    #[test]
    fn another_daemon_is_named_before_the_command() {
        assert_eq!(
            chosen("box", LOCAL, None).command(None, "conversation 1a2b --follow"),
            "`hlyr --context box conversation 1a2b --follow`"
        );
        assert_eq!(
            chosen(LOCAL, "box", None).command(None, "interrupt 1a2b"),
            "`hlyr --context local interrupt 1a2b`",
            "local, when `context use` chose another"
        );
        assert_eq!(
            chosen(LOCAL, LOCAL, None).command(Some("box"), "approve 1a2b"),
            "`hlyr --context box approve 1a2b`",
            "a line of `watch --all-contexts` names its own"
        );
    }

    #[test]
    fn a_name_the_shell_would_split_is_quoted() {
        assert_eq!(
            chosen("dev box", LOCAL, None).command(None, "approvals"),
            "`hlyr --context 'dev box' approvals`"
        );
        assert_eq!(
            chosen("$HOME", LOCAL, None).command(None, "approvals"),
            "`hlyr --context '$HOME' approvals`"
        );
    }

    #[test]
    fn the_socket_given_goes_with_the_local_daemon_only() {
        let socket = Some("/run/my hld.sock");
        assert_eq!(
            chosen(LOCAL, LOCAL, socket).command(None, "approve 1a2b"),
            "`hlyr --daemon-socket '/run/my hld.sock' approve 1a2b`"
        );
        assert_eq!(
            chosen(LOCAL, "box", socket).command(None, "approve 1a2b"),
            "`hlyr --context local --daemon-socket '/run/my hld.sock' approve 1a2b`"
        );
        assert_eq!(
            chosen("box", LOCAL, socket).command(None, "approve 1a2b"),
            "`hlyr --context box approve 1a2b`",
            "a remote daemon is not reached through the local socket"
        );
    }

    #[test]
    fn a_remote_daemons_daemon_commands_are_for_its_machine() {
        assert_eq!(
            chosen("box", LOCAL, None).daemon_command(None, "status"),
            "`hlyr daemon status` on the daemon's machine"
        );
        assert_eq!(
            chosen(LOCAL, LOCAL, None).daemon_command(Some("box"), "logs"),
            "`hlyr daemon logs` on the daemon's machine"
        );
        assert_eq!(
            chosen(LOCAL, "box", None).daemon_command(None, "restart"),
            "`hlyr --context local daemon restart`"
        );
        let other_socket = Chosen {
            remote: Vec::new(),
            ..chosen("mine", LOCAL, None)
        };
        assert_eq!(
            other_socket.daemon_command(None, "status"),
            "`hlyr --context mine daemon status`",
            "a context on a socket of this machine is no remote one"
        );
    }
}
