//! The hlyr commands that hints name, written to reach the daemon they are about: with
//! `--context NAME` when that daemon is not the one a bare command reaches (the context
//! `hlyr context use` chose, else `local`), as when `--context` or `HLD_CONTEXT` chose it, or
//! for a line of `hlyr watch --all-contexts`.

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
}

/// Records the daemon the command works with: the context `given` by `--context` or
/// `HLD_CONTEXT`, else the one a bare command reaches.
pub fn choose(contexts: &Contexts, given: Option<&str>) {
    let chosen = Chosen {
        in_force: contexts.name_in_force(given),
        bare: contexts.name_in_force(None),
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
    command(context.unwrap_or(in_force), bare, args)
}

/// `` `hlyr ARGS` `` for the daemon of `context`, naming it unless it is `bare`, the one
/// reached without naming any. The name is quoted for a POSIX shell when it needs to be.
fn command(context: &str, bare: &str, args: &str) -> String {
    if context == bare {
        return format!("`hlyr {args}`");
    }
    let name = shlex::try_quote(context).unwrap_or(context.into());
    format!("`hlyr --context {name} {args}`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daemon_a_bare_command_reaches_is_not_named() {
        assert_eq!(command(LOCAL, LOCAL, "approve 1a2b"), "`hlyr approve 1a2b`");
        assert_eq!(command("box", "box", "approve 1a2b"), "`hlyr approve 1a2b`");
    }

    #[test]
    fn another_daemon_is_named_before_the_command() {
        assert_eq!(
            command("box", LOCAL, "conversation 1a2b --follow"),
            "`hlyr --context box conversation 1a2b --follow`"
        );
        assert_eq!(
            command(LOCAL, "box", "interrupt 1a2b"),
            "`hlyr --context local interrupt 1a2b`",
            "local, when `context use` chose another"
        );
    }

    #[test]
    fn a_name_the_shell_would_split_is_quoted() {
        assert_eq!(
            command("dev box", LOCAL, "approvals"),
            "`hlyr --context 'dev box' approvals`"
        );
        assert_eq!(
            command("$HOME", LOCAL, "approvals"),
            "`hlyr --context '$HOME' approvals`"
        );
    }
}
