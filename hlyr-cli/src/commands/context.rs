//! `hlyr context add|list|use|remove`: named daemons, on this machine or others, kept in
//! `contexts.json` (see [`crate::contexts`]).

use std::path::PathBuf;

use clap::Subcommand;
use hld_client::address::Fingerprint;

use crate::contexts::{save, Contexts, Entry, LOCAL};
use crate::error::{CliError, Exit};
use crate::Context;

// The `context` group: one of its commands. (`//`: clap would take a doc comment here for the
// group's description.)
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Name a daemon: `wss://HOST:PORT` with its token file (`hlyr daemon url` on its machine
    /// prints what to give), or another socket's path.
    Add(AddArgs),
    /// List the contexts; `*` marks the one in force.
    List,
    /// Make a context the default for every later command (`local` for this machine's).
    Use {
        /// The context's name.
        name: String,
    },
    /// Forget a context (its token file is left where it is).
    Remove {
        /// The context's name.
        name: String,
    },
}

#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// The name to give it.
    name: String,
    /// `wss://HOST:PORT` (`ws://` only to this machine), or a socket path.
    url: String,
    /// The file holding the daemon's WebSocket token (its `daemon.ws-token`), private to you.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Trust the certificates signed by the root in this PEM file [default: the system's
    /// roots].
    #[arg(long, value_name = "FILE", conflicts_with = "fingerprint")]
    ca: Option<PathBuf>,
    /// Trust exactly the certificate with this SHA-256 fingerprint (a self-signed one), as
    /// `openssl x509 -noout -fingerprint -sha256` prints it; colons optional.
    #[arg(long, value_name = "SHA256")]
    fingerprint: Option<String>,
}

impl Command {
    pub async fn run(self, ctx: &Context) -> Result<Exit, CliError> {
        let mut contexts = Contexts::load()?;
        match self {
            Command::Add(args) => {
                let entry = entry(&args)?;
                contexts.contexts.insert(args.name.clone(), entry);
                save(&contexts)?;
                ctx.out
                    .line(&format!("added context {} ({})", args.name, args.url))?;
            }
            Command::List => list(ctx, &contexts)?,
            Command::Use { name } => {
                contexts.get(&name)?;
                contexts.current = (name != LOCAL).then(|| name.clone());
                save(&contexts)?;
                ctx.out.line(&format!("now using context {name}"))?;
            }
            Command::Remove { name } => {
                if name == LOCAL {
                    return Err(CliError::usage(
                        "`local` is this machine's daemon; it stays",
                    ));
                }
                contexts.get(&name)?;
                contexts.contexts.remove(&name);
                if contexts.current.as_deref() == Some(name.as_str()) {
                    contexts.current = None;
                }
                save(&contexts)?;
                ctx.out.line(&format!("removed context {name}"))?;
            }
        }
        Ok(Exit::Ok)
    }
}

/// The entry `args` describe, checked as a connection would check it (the token file read).
fn entry(args: &AddArgs) -> Result<Entry, CliError> {
    if args.name == LOCAL || args.name.is_empty() {
        return Err(CliError::usage(
            "`local` is this machine's daemon: choose another name",
        ));
    }
    let absolute = |path: &PathBuf| std::path::absolute(path).unwrap_or_else(|_| path.clone());
    let fingerprint = args
        .fingerprint
        .as_deref()
        .map(|pin| pin.parse::<Fingerprint>().map(|f| f.to_string()))
        .transpose()?;
    let entry = Entry {
        url: args.url.clone(),
        token_file: args.token_file.as_ref().map(absolute),
        ca: args.ca.as_ref().map(absolute),
        fingerprint,
    };
    entry.address()?;
    Ok(entry)
}

fn list(ctx: &Context, contexts: &Contexts) -> Result<(), CliError> {
    let current = ctx.context_name(contexts);
    let mut rows = vec![(LOCAL.to_owned(), "this machine's socket".to_owned())];
    rows.extend(
        contexts
            .contexts
            .iter()
            .map(|(n, e)| (n.clone(), e.url.clone())),
    );
    if ctx.out.is_json() {
        let items: Vec<_> = rows
            .iter()
            .map(|(name, url)| {
                serde_json::json!({"name": name, "url": url, "current": *name == current})
            })
            .collect();
        return ctx.out.line(&serde_json::Value::Array(items).to_string());
    }
    for line in lines(&rows, &current) {
        ctx.out.line(&line)?;
    }
    Ok(())
}

/// A line per context: `*` marks the one in force, and the addresses start in one column.
fn lines(rows: &[(String, String)], current: &str) -> Vec<String> {
    let width = rows.iter().map(|(name, _)| name.chars().count()).max();
    let width = width.unwrap_or(0);
    rows.iter()
        .map(|(name, url)| {
            let mark = if name == current { "*" } else { " " };
            format!("{mark} {name:<width$}  {url}")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_addresses_start_in_one_column_and_the_one_in_force_is_marked() {
        let rows = [
            ("local", "this machine's socket"),
            ("devbox", "wss://devbox:7777"),
        ];
        let rows: Vec<_> = rows
            .iter()
            .map(|(n, u)| (n.to_string(), u.to_string()))
            .collect();
        assert_eq!(
            lines(&rows, "devbox"),
            [
                "  local   this machine's socket",
                "* devbox  wss://devbox:7777"
            ]
        );
    }
}
