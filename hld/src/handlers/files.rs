//! `suggestFiles`: files of a session's working directory for an `@` mention, from its live
//! `claude` (`file_suggestions`) or else a scan.

use std::sync::Arc;
use std::time::Duration;

use hld_client::protocol::{FileSuggestion, SuggestFilesParams, SuggestFilesResult};

use super::sessions::session;
use crate::daemon::Daemon;
use crate::error::{Error, Result};
use crate::files;
use crate::session::ControlError;

/// How many files when the params do not say, and the most they may ask for.
const DEFAULT_LIMIT: usize = 20;
const MAX_LIMIT: usize = 200;
/// How long a completion waits for the live `claude` before the daemon scans instead.
const LIVE_WAIT: Duration = Duration::from_secs(2);

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
    let asked = daemon
        .sessions
        .control(&p.session_id, files::request(&p.query));
    let live = match tokio::time::timeout(LIVE_WAIT, asked).await {
        Ok(Ok(answer)) => files::answered(&answer),
        Ok(Err(ControlError::NotLive)) => Vec::new(),
        Ok(Err(e)) => {
            tracing::debug!(session = %p.session_id, error = %e, "file_suggestions failed; scanning");
            Vec::new()
        }
        Err(_) => {
            tracing::debug!(session = %p.session_id, "claude is slow to suggest files; scanning");
            Vec::new()
        }
    };
    // An empty answer too: claude answers none until its file index is built.
    let paths = if live.is_empty() {
        let query = p.query;
        tokio::task::spawn_blocking(move || files::suggest(&root, &query, limit))
            .await
            .map_err(|e| Error::internal("failed to search the working directory", e))?
    } else {
        live.into_iter().take(limit).collect()
    };
    Ok(SuggestFilesResult {
        files: paths
            .into_iter()
            .map(|path| FileSuggestion { path })
            .collect(),
    })
}
