//! Ids given as unique prefixes, as in git: sessions are looked up in `listSessions`, approvals
//! in `fetchApprovals` (callers pass the list, fetched with whichever client they hold). A
//! prefix may leave out an id's leading word (`local-`).

use hld_client::protocol::{Approval, QueuedMessage, SessionInfo};
use hld_client::view::clean;

use crate::error::{CliError, Kind};
use crate::hint::hlyr;
use crate::output::{bare_id, short_id};
use crate::session::shown_title;

/// The one candidate whose id starts with `prefix`; none or several is an error.
fn unique<'a, T>(
    what: &str,
    prefix: &str,
    candidates: &'a [T],
    id: impl Fn(&T) -> &str,
    describe: impl Fn(&T) -> String,
) -> Result<Option<&'a T>, CliError> {
    if prefix.is_empty() {
        return Err(CliError::usage(format!("an empty {what} id")));
    }
    if let Some(exact) = candidates.iter().find(|c| id(c) == prefix) {
        return Ok(Some(exact));
    }
    let matches: Vec<&T> = candidates
        .iter()
        .filter(|c| id(c).starts_with(prefix) || bare_id(id(c)).starts_with(prefix))
        .collect();
    match matches.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        many => {
            let list: Vec<String> = many.iter().map(|c| describe(c)).collect();
            Err(CliError::usage(format!(
                "{what} id `{prefix}` is ambiguous; it matches {}",
                list.join(", ")
            ))
            .kind(Kind::Ambiguous)
            .hint("give more characters of the id"))
        }
    }
}

/// The session, among `sessions` (`listSessions`), whose id is `prefix` or starts with it.
pub fn session(prefix: &str, sessions: Vec<SessionInfo>) -> Result<SessionInfo, CliError> {
    let mut found = self::sessions(&[prefix], sessions)?;
    Ok(found.remove(0))
}

/// The sessions, among `sessions` (`listSessions`), that `prefixes` name, in their order and
/// each once. Prefixes that name none are one error naming them all: a usage error (exit 2),
/// as an ambiguous prefix is.
pub fn sessions(
    prefixes: &[&str],
    sessions: Vec<SessionInfo>,
) -> Result<Vec<SessionInfo>, CliError> {
    let describe = |s: &SessionInfo| {
        let title = shown_title(&s.control.title, &s.summary, &s.query);
        format!("{} ({}, {title:?})", short_id(&s.id), s.status)
    };
    let mut found: Vec<SessionInfo> = Vec::new();
    let mut missing = Vec::new();
    for prefix in prefixes {
        match unique("session", prefix, &sessions, |s| &s.id, describe)? {
            Some(s) if found.iter().any(|f| f.id == s.id) => {}
            Some(s) => found.push(s.clone()),
            None => missing.push(*prefix),
        }
    }
    if missing.is_empty() {
        return Ok(found);
    }
    let what = if missing.len() == 1 {
        "session"
    } else {
        "sessions"
    };
    // The daemon's own approvals are `local-…`; a session's id never is.
    let hint = match missing.iter().any(|p| p.starts_with("local-")) {
        true => format!(
            "`local-…` names an approval: {} lists them, {} answers a question",
            hlyr("approvals"),
            hlyr("respond ID")
        ),
        false => format!("{} lists every session", hlyr("sessions --all")),
    };
    Err(CliError::not_found(format!("{what} not found: {}", missing.join(", "))).hint(hint))
}

/// The approval, among `pending` (`fetchApprovals`), whose id is `prefix` or starts with it.
/// `None` when no pending approval matches: the caller asks the daemon about the id as given
/// (it may name a decided approval).
pub fn approval(prefix: &str, pending: Vec<Approval>) -> Result<Option<Approval>, CliError> {
    let describe = |a: &Approval| {
        let what = a
            .function_name
            .as_deref()
            .or(a.message.as_deref())
            .unwrap_or_default();
        format!("{} ({what})", short_id(&a.id))
    };
    Ok(unique("approval", prefix, &pending, |a| &a.id, describe)?.cloned())
}

/// The message, among a session's `queued` ones (`listQueuedMessages`), whose id is `prefix`
/// or starts with it. None is an error: it was never queued there, or has left the queue.
pub fn message(prefix: &str, queued: Vec<QueuedMessage>) -> Result<QueuedMessage, CliError> {
    let describe = |m: &QueuedMessage| format!("{} ({:?})", short_id(&m.id), clean(&m.text));
    unique("message", prefix, &queued, |m| &m.id, describe)?
        .cloned()
        .ok_or_else(|| {
            CliError::not_found(format!("no queued message {prefix} in this session"))
                .hint("it may have been delivered or cancelled already")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An approval's id given where a session's goes: the hint says what it names.
    #[test]
    fn an_approval_id_given_for_a_session_is_named_an_approval() {
        let error = sessions(&["local-8ad5fb81"], Vec::new()).unwrap_err();
        assert!(error.message.contains("session not found: local-8ad5fb81"));
        let hint = error.hint.unwrap_or_default();
        assert!(hint.contains("names an approval"), "{hint}");
        let other = sessions(&["3f2a"], Vec::new()).unwrap_err();
        assert!(other
            .hint
            .unwrap_or_default()
            .contains("lists every session"));
    }

    fn pick<'a>(prefix: &str, ids: &'a [&'a str]) -> Result<Option<&'a &'a str>, CliError> {
        unique("session", prefix, ids, |s| s, |s| s.to_string())
    }

    #[test]
    fn prefixes_resolve_like_git() {
        let ids = ["abc123", "abd456", "abc", "local-fe12"];
        assert_eq!(pick("fe", &ids).unwrap(), Some(&"local-fe12"));
        assert_eq!(pick("local-f", &ids).unwrap(), Some(&"local-fe12"));
        assert_eq!(pick("abd", &ids).unwrap(), Some(&"abd456"));
        // An exact id wins over the longer ids it prefixes.
        assert_eq!(pick("abc", &ids).unwrap(), Some(&"abc"));
        assert_eq!(pick("zz", &ids).unwrap(), None);
        let err = pick("ab", &ids).unwrap_err();
        assert_eq!(err.exit, crate::error::Exit::Usage);
        assert!(err.message.contains("abc123") && err.message.contains("abd456"));
        assert_eq!(pick("", &ids).unwrap_err().exit, crate::error::Exit::Usage);
    }
}
