//! The candidates that shell completion offers for ids: the sessions and pending approvals
//! of the running daemon, asked for while completing (`hlyr completions`). Without a daemon
//! there are none; completion never starts one.

use std::ffi::OsStr;
use std::future::Future;
use std::time::Duration;

use clap_complete::CompletionCandidate;
use hld_client::Client;

use crate::output::{bare_id, short_id, title};
use crate::session::Session;

/// How long completion waits for the daemon: a shell must not hang on a stuck one.
const TIMEOUT: Duration = Duration::from_millis(500);

/// What `call` gets from the daemon at the default socket (environment, `humanlayer.json`,
/// then the usual path), on a runtime of its own: completion runs before hlyr's.
fn ask<T, F>(call: impl FnOnce(Client) -> F) -> Option<T>
where
    F: Future<Output = Result<T, hld_client::Error>>,
{
    let socket = hld_client::config::resolve_socket_path(None).ok()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    runtime.block_on(async {
        let client = Client::connect_with_timeout(&socket, TIMEOUT).await.ok()?;
        call(client).await.ok()
    })
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
