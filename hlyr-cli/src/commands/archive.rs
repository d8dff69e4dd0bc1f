//! `hlyr archive ID…`: hide sessions from `hlyr sessions` (archiving a chain's leaf hides the
//! chain); also [`set_archived`], which `unarchive` shares.

use clap_complete::ArgValueCompleter;
use hld_client::protocol::{BulkArchiveSessions, BulkArchiveSessionsParams};

use crate::complete;
use crate::error::{CliError, Exit};
use crate::output::{paint, short_id, Render, GREEN};
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The sessions (unique prefixes are enough).
    #[arg(required = true, value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    ids: Vec<String>,
}

#[derive(serde::Serialize)]
struct Archived {
    session_ids: Vec<String>,
    archived: bool,
}

impl Render for Archived {
    fn human(&self) -> String {
        let word = if self.archived {
            "✓ archived"
        } else {
            "✓ unarchived"
        };
        let ids: Vec<&str> = self.session_ids.iter().map(|id| short_id(id)).collect();
        format!("{} {}", paint(GREEN, word), ids.join(" "))
    }
}

/// Archives (or restores) the sessions `prefixes` name, all or none: an unknown or ambiguous
/// id stops the command before anything changes.
pub async fn set_archived(
    ctx: &Context,
    prefixes: &[String],
    archived: bool,
) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let prefixes: Vec<&str> = prefixes.iter().map(String::as_str).collect();
    let sessions = ids::sessions(&prefixes, client.list_sessions().await?)?;
    let session_ids: Vec<String> = sessions.into_iter().map(|s| s.id).collect();
    let result = client
        .call::<BulkArchiveSessions>(BulkArchiveSessionsParams {
            session_ids: session_ids.clone(),
            archived,
        })
        .await?;
    if !result.failed_sessions.is_empty() {
        // Deleted between the listing and the change.
        return Err(CliError::failure(format!(
            "session not found: {}",
            result.failed_sessions.join(", ")
        )));
    }
    ctx.out.print(&Archived {
        session_ids,
        archived,
    })?;
    Ok(Exit::Ok)
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    set_archived(ctx, &args.ids, true).await
}
