//! `hlyr completions SHELL`: the shell code that completes hlyr's commands, flags and values,
//! session and approval ids among them. It runs clap_complete's dynamic completion: at each
//! Tab the shell asks hlyr itself (`COMPLETE=SHELL hlyr -- WORDS…`), which asks the running
//! daemon for ids (see `crate::complete`).

use std::io::Write;
use std::path::PathBuf;

use clap::builder::PossibleValuesParser;
use clap_complete::env::Shells;

use crate::error::{CliError, Exit};
use crate::{Context, COMPLETE_ENV};

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Load them in the shell's start-up file:
  bash   echo 'source <(hlyr completions bash)' >> ~/.bashrc
  zsh    echo 'source <(hlyr completions zsh)' >> ~/.zshrc
  fish   echo 'hlyr completions fish | source' >> ~/.config/fish/config.fish")]
pub struct Args {
    /// The shell.
    #[arg(value_parser = PossibleValuesParser::new(Shells::builtins().names()))]
    shell: String,
}

/// How the shell code calls hlyr back: as it was called here, a relative path made absolute
/// (a bare `hlyr` is looked up on PATH by the shell).
fn completer() -> String {
    let called = std::env::args_os()
        .next()
        .map_or_else(|| PathBuf::from("hlyr"), PathBuf::from);
    let path = if called.components().count() > 1 && called.is_relative() {
        std::env::current_dir()
            .map(|dir| dir.join(&called))
            .unwrap_or(called)
    } else {
        called
    };
    path.to_string_lossy().into_owned()
}

pub fn run(_: &Context, args: Args) -> Result<Exit, CliError> {
    let shells = Shells::builtins();
    let shell = shells
        .completer(&args.shell)
        .ok_or_else(|| CliError::usage(format!("no completions for {}", args.shell)))?;
    let mut script = Vec::new();
    shell.write_registration(COMPLETE_ENV, "hlyr", "hlyr", &completer(), &mut script)?;
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(Exit::Ok)
}
