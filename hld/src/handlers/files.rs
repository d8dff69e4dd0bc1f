//! `suggestFiles`: files of a session's working directory for an `@` mention.

use std::sync::Arc;

use hld_client::protocol::{FileSuggestion, SuggestFilesParams, SuggestFilesResult};

use super::sessions::session;
use crate::daemon::Daemon;
use crate::error::{Error, Result};

/// How many files when the params do not say, and the most they may ask for.
const DEFAULT_LIMIT: usize = 20;
const MAX_LIMIT: usize = 200;

pub async fn suggest_files(
    daemon: Arc<Daemon>,
    p: SuggestFilesParams,
) -> Result<SuggestFilesResult> {
    let limit = match p.limit {
        None => DEFAULT_LIMIT,
        Some(n) => usize::try_from(n)
            .ok()
            .filter(|n| (1..=MAX_LIMIT).contains(n))
            .ok_or_else(|| {
                Error::invalid_param(
                    "limit",
                    &format!("an integer from 1 to {MAX_LIMIT}"),
                    &n.to_string(),
                    format!("limit must be from 1 to {MAX_LIMIT}"),
                )
            })?,
    };
    let row = session(&daemon, &p.session_id).await?;
    let root = row.new.options.working_dir;
    if !root.is_dir() {
        return Err(Error::invalid_param(
            "session_id",
            "a session whose working directory exists",
            "no working directory",
            format!(
                "session {} has no working directory to search",
                p.session_id
            ),
        ));
    }
    let query = p.query;
    let paths = tokio::task::spawn_blocking(move || crate::files::suggest(&root, &query, limit))
        .await
        .map_err(|e| Error::internal("failed to search the working directory", e))?;
    Ok(SuggestFilesResult {
        files: paths
            .into_iter()
            .map(|path| FileSuggestion { path })
            .collect(),
    })
}
