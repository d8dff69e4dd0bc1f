//! The candidates that shell completion offers for ids: the sessions and pending approvals
//! of the daemon in force for the command line being completed (its `--context` or
//! `--daemon-socket`, else as any command resolves it), asked for while completing (`hlyr
//! completions`). Without a daemon there are none; completion never starts one.

use std::ffi::OsStr;
use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use clap_complete::CompletionCandidate;
use hld_client::Client;

use crate::output::{bare_id, short_id, title, Printer};
use crate::session::Session;
use crate::Context;

/// How long completion waits for the daemon: a shell must not hang on a stuck one.
const TIMEOUT: Duration = Duration::from_millis(500);

/// What `call` gets from the daemon in force for the command line being completed, on a
/// runtime of its own: completion runs before hlyr's.
fn ask<T, F>(call: impl FnOnce(Client) -> F) -> Option<T>
where
    F: Future<Output = Result<T, hld_client::Error>>,
{
    // The shell gives the words being completed after `--`.
    let words: Vec<String> = std::env::args().skip_while(|a| a != "--").collect();
    let address = chosen(&words).address().ok()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    runtime.block_on(async {
        let connecting = Client::connect_to_with_timeout(&address, TIMEOUT);
        let client = tokio::time::timeout(TIMEOUT, connecting).await.ok()?.ok()?;
        call(client).await.ok()
    })
}

/// The daemon `words` (a command line being completed) choose: the last `--context` and
/// `--daemon-socket` given, else `HLD_CONTEXT`, as parsing them would.
fn chosen(words: &[String]) -> Context {
    let mut context = std::env::var("HLD_CONTEXT").ok();
    let mut daemon_socket = None;
    let mut words = words.iter();
    while let Some(word) = words.next() {
        let (flag, value) = match word.split_once('=') {
            Some((flag, value)) => (flag, Some(value.to_owned())),
            None => (word.as_str(), None),
        };
        // The value after `=`, else the next word.
        let given = || value.clone().or_else(|| words.clone().next().cloned());
        match flag {
            "--context" => context = given(),
            "--daemon-socket" => daemon_socket = given().map(PathBuf::from),
            _ => {}
        }
    }
    Context {
        daemon_socket,
        context: context.filter(|name| !name.is_empty()),
        out: Printer::new(false),
    }
}

/// `id` in the form the word being completed started (with or without its leading word such
/// as `local-`), when `id` matches it: its short form, or the whole id once the word is
/// longer than that.
fn matching(id: &str, current: &str) -> Option<String> {
    [id, bare_id(id)].into_iter().find_map(|form| {
        let short = short_id(form);
        if short.starts_with(current) {
            Some(short.to_owned())
        } else {
            form.starts_with(current).then(|| form.to_owned())
        }
    })
}

/// Session ids, newest activity first, each with its status and title as help.
pub fn sessions(current: &OsStr) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    let Some(sessions) = ask(|c| async move { c.list_sessions().await }) else {
        return Vec::new();
    };
    sessions
        .into_iter()
        .filter_map(|s| {
            let id = matching(&s.id, &current)?;
            let s = Session::from(s);
            let help = format!("{} {}", s.status.as_str(), s.shown_title());
            Some(CompletionCandidate::new(id).help(Some(help.into())))
        })
        .collect()
}

/// Pending approval ids, each with its tool or question as help.
pub fn approvals(current: &OsStr) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    let Some(approvals) = ask(|c| async move { c.fetch_approvals(None).await }) else {
        return Vec::new();
    };
    approvals
        .into_iter()
        .filter_map(|a| {
            let id = matching(&a.id, &current)?;
            let what = a
                .function_name
                .as_deref()
                .or(a.message.as_deref())
                .map(title)
                .unwrap_or_default();
            Some(CompletionCandidate::new(id).help(Some(what.into())))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daemon_is_the_one_the_completed_line_chooses() {
        let words = |line: &str| line.split(' ').map(str::to_owned).collect::<Vec<_>>();
        let ctx = chosen(&words("-- hlyr --context box approve 3f"));
        assert_eq!(ctx.context.as_deref(), Some("box"));
        let ctx = chosen(&words(
            "-- hlyr --context=a show --context=b --daemon-socket /s x",
        ));
        assert_eq!(ctx.context.as_deref(), Some("b"));
        assert_eq!(
            ctx.daemon_socket.as_deref(),
            Some(std::path::Path::new("/s"))
        );
    }

    #[test]
    fn ids_are_offered_in_the_form_being_typed() {
        let local = "local-5e51132b-7b51-47b6-926e-69deebd9bcb0";
        assert_eq!(matching(local, "").as_deref(), Some("local-5e51132b"));
        assert_eq!(
            matching(local, "local-5e").as_deref(),
            Some("local-5e51132b")
        );
        assert_eq!(matching(local, "5e5").as_deref(), Some("5e51132b"));
        assert_eq!(matching(local, "6"), None);
        let uuid = "1e2409fa-b27b-4e30-9bb4-242ec0adf33d";
        assert_eq!(matching(uuid, "1e").as_deref(), Some("1e2409fa"));
        // Typed past the short id: the whole id.
        assert_eq!(matching(uuid, "1e2409fa-b2").as_deref(), Some(uuid));
        assert_eq!(
            matching(local, "5e51132b-7").as_deref(),
            Some(bare_id(local))
        );
        assert_eq!(matching(uuid, "1f"), None);
    }
}
