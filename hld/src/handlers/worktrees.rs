//! Isolated sessions' methods: `getSessionDiff`, `mergeSession`, `discardSession`; and the
//! checks the session methods make of a session's worktree.

use std::sync::Arc;

use hld_client::protocol::*;

use super::sessions::{required, session};
use crate::daemon::Daemon;
use crate::error::{Error, Result};
use crate::model::SessionOptions;
use crate::store::SessionRow;
use crate::worktree::{self, refused, session_diff, Made};

/// The session's worktree id, or a refusal for a session that is not isolated.
fn worktree_id(row: &SessionRow) -> Result<&str> {
    row.new
        .options
        .worktree
        .as_deref()
        .ok_or_else(|| refused("the session is not isolated (it has no worktree)"))
}

/// Refuses to work further in a session whose worktree was merged, discarded or removed by
/// hand.
pub(super) fn still_open(row: &SessionRow) -> Result<()> {
    let Some(info) = row.worktree.as_ref() else {
        return Ok(());
    };
    match &info.state {
        WorktreeState::Merged => Err(refused(
            "the session's branch was merged: its worktree takes no more work (continue it \
             with a worktree of its own, or launch a new session)",
        )),
        WorktreeState::Discarded => Err(refused(
            "the session's worktree was discarded: it takes no more work",
        )),
        _ => worktree::present(info),
    }
}

/// Refuses a continuation of `parent` that cannot be: in a worktree merged, discarded or
/// removed by hand, or in a worktree of its own (`isolate`) off a parent that has none, or with a base.
pub(super) fn continuable(parent: &SessionRow, isolate: Option<&WorktreeParams>) -> Result<()> {
    let Some(isolate) = isolate else {
        return still_open(parent);
    };
    if isolate.base.is_some() {
        return Err(Error::invalid_param(
            "worktree.base",
            "no base (a continuation branches from its parent's branch)",
            "a base",
            "worktree.base is for launchSession: a continuation branches from its parent's branch",
        ));
    }
    match parent.worktree.as_ref() {
        None => Err(refused(
            "the parent session is not isolated: a worktree of its own is branched from its \
             parent's",
        )),
        Some(info) if info.state == WorktreeState::Discarded => still_open(parent),
        // Claude finds the conversation to resume through the worktree it was held in.
        Some(info) => worktree::present(info),
    }
}

/// Runs the agent in the worktree made for it, if one was.
pub(super) fn run_in(options: &mut SessionOptions, made: Option<&Made>) {
    if let Some(made) = made {
        options.working_dir.clone_from(&made.dir);
        options.worktree = Some(made.id.clone());
    }
}

/// A launch's outcome; when it failed, the worktree made for it is removed.
pub(super) async fn settle<T>(
    daemon: &Daemon,
    launched: Result<T>,
    made: Option<&Made>,
) -> Result<T> {
    if let (Err(_), Some(made)) = (&launched, made) {
        daemon.worktrees.abandon(&daemon.store, made).await;
    }
    launched
}

pub async fn get_session_diff(
    daemon: Arc<Daemon>,
    p: GetSessionDiffParams,
) -> Result<GetSessionDiffResult> {
    let row = session(&daemon, &p.session_id).await?;
    worktree_id(&row)?;
    let Some(info) = row
        .worktree
        .as_ref()
        .filter(|w| w.state != WorktreeState::Discarded)
    else {
        return Err(refused("the session's worktree was discarded"));
    };
    worktree::present(info)?;
    if p.limit == Some(0) {
        return Err(Error::invalid_param(
            "limit",
            "positive integer",
            "0",
            "limit must be positive",
        ));
    }
    let limit = p.limit.unwrap_or(worktree::DEFAULT_LIMIT);
    session_diff(
        std::path::Path::new(&info.path),
        &info.base_commit,
        p.offset.unwrap_or(0),
        limit,
        p.binary,
    )
    .await
}

pub async fn merge_session(
    daemon: Arc<Daemon>,
    p: MergeSessionParams,
) -> Result<MergeSessionResult> {
    let row = session(&daemon, &p.session_id).await?;
    let id = worktree_id(&row)?;
    if let MergeStrategy::Unknown(other) = &p.strategy {
        return Err(Error::not_accepted(
            "strategy",
            other,
            &MergeStrategy::NAMES,
        ));
    }
    let title = row.control().title;
    daemon
        .worktrees
        .merge(
            &daemon.store,
            &daemon.sessions,
            id,
            &p.strategy,
            p.message,
            &title,
        )
        .await
}

pub async fn discard_session(
    daemon: Arc<Daemon>,
    p: DiscardSessionParams,
) -> Result<SuccessResult> {
    required(&p.session_id, "session_id")?;
    let row = session(&daemon, &p.session_id).await?;
    let id = worktree_id(&row)?;
    let force = p.force.unwrap_or(false);
    daemon
        .worktrees
        .discard(&daemon.store, &daemon.sessions, id, force)
        .await?;
    Ok(SuccessResult { success: true })
}

/// Before a session is deleted: the worktree only it uses goes with it (discarded: work never
/// merged is refused, as `discardSession` without `force` does).
pub(super) async fn release(daemon: &Daemon, row: &SessionRow) -> Result<()> {
    let (Some(id), Some(info)) = (&row.new.options.worktree, &row.worktree) else {
        return Ok(());
    };
    if info.state == WorktreeState::Discarded {
        return Ok(());
    }
    let key = id.clone();
    let users = daemon
        .store
        .read(move |c| crate::store::worktrees::sessions_using(c, &key))
        .await
        .map_err(|e| Error::internal("failed to read the worktree", e))?;
    if users.len() > 1 {
        return Ok(());
    }
    daemon
        .worktrees
        .discard(&daemon.store, &daemon.sessions, id, false)
        .await
}
