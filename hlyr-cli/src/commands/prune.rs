//! `hlyr prune --archived --older-than DURATION [--dry-run]`: delete archived chains' leaves
//! idle for longer than that, with everything stored for them.
//!
//! Only the archived leaves found at the start are deleted: a parent that becomes a leaf
//! when its child goes waits for the next run, so that one run never reaches further back
//! than what it listed.

use std::time::Duration;

use hld_client::protocol::{
    DeleteSession, GetSessionLeaves, GetSessionLeavesParams, LeafFilter, SessionIdParams,
    SessionInfo,
};
use hld_client::view::count;

use crate::error::{CliError, Exit};
use crate::hint::hlyr;
use crate::output::{age, paint, short_id, Render, DIM, RED, YELLOW};
use crate::session::Session;
use crate::table::table;
use crate::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Prune archived sessions (required: only archived sessions are pruned).
    #[arg(long)]
    archived: bool,
    /// Only sessions whose last activity is older than this: 12h, 7d, 30d.
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse)]
    older_than: Duration,
    /// List what would be deleted, and delete nothing.
    #[arg(short = 'n', long)]
    dry_run: bool,
}

/// The sessions deleted (or, with `--dry-run`, that would be): an array of them for `--json`.
#[derive(serde::Serialize)]
#[serde(transparent)]
struct Pruned {
    sessions: Vec<Session>,
    #[serde(skip)]
    dry_run: bool,
    #[serde(skip)]
    older_than: String,
}

impl Render for Pruned {
    fn human(&self) -> String {
        if self.sessions.is_empty() {
            let note = format!(
                "no archived sessions idle for more than {}",
                self.older_than
            );
            return paint(DIM, note);
        }
        let (style, word) = if self.dry_run {
            (YELLOW, "would delete")
        } else {
            (RED, "deleted")
        };
        let n = self.sessions.len();
        let head = format!("{word} {}", count(n as u64, "archived session"));
        let rows: Vec<Vec<String>> = self
            .sessions
            .iter()
            .map(|s| {
                vec![
                    short_id(&s.id).to_owned(),
                    age(&s.last_activity_at),
                    s.shown_title(),
                ]
            })
            .collect();
        format!(
            "{}\n{}",
            paint(style, head),
            table(&["ID", "IDLE", "TITLE"], &rows)
        )
    }
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    if !args.archived {
        return Err(
            CliError::usage("only archived sessions are pruned").hint(format!(
                "archive them with {}, then {}",
                hlyr("archive ID…"),
                hlyr("prune --archived …")
            )),
        );
    }
    let older_than = chrono::Duration::from_std(args.older_than)
        .map_err(|_| CliError::usage("--older-than is too long"))?;
    let cutoff = chrono::Utc::now() - older_than;
    let client = ctx.connect().await?;
    let leaves = client
        .call::<GetSessionLeaves>(GetSessionLeavesParams {
            filter: Some(LeafFilter::Archived),
        })
        .await?
        .sessions;
    let idle = |s: &SessionInfo| {
        chrono::DateTime::parse_from_rfc3339(&s.last_activity_at)
            .is_ok_and(|at| at.to_utc() <= cutoff)
    };
    // A running session cannot be deleted (the daemon refuses): it is not idle anyway.
    let due: Vec<SessionInfo> = leaves
        .into_iter()
        .filter(|s| !s.status.is_active() && idle(s))
        .collect();
    let mut deleted = Vec::new();
    let mut failed = Vec::new();
    if args.dry_run {
        deleted = due;
    } else {
        for session in due {
            let params = SessionIdParams {
                session_id: session.id.clone(),
            };
            match client.call::<DeleteSession>(params).await {
                Ok(_) => deleted.push(session),
                Err(e) => failed.push(format!(
                    "{}: {}",
                    short_id(&session.id),
                    CliError::from(e).message
                )),
            }
        }
    }
    ctx.out.print(&Pruned {
        dry_run: args.dry_run,
        sessions: deleted.into_iter().map(Session::from).collect(),
        older_than: crate::duration::display(args.older_than),
    })?;
    if failed.is_empty() {
        Ok(Exit::Ok)
    } else {
        Err(CliError::failure(format!(
            "could not delete {}",
            failed.join("; ")
        )))
    }
}
