//! What a session's `claude` offers a reply box: its slash commands, skills and agents.

use std::sync::Arc;

use hld_client::protocol::{ListSlashCommandsResult, SessionIdParams};

use crate::daemon::Daemon;
use crate::error::Result;

/// `listSlashCommands`: what the session's `claude` answered to `initialize`.
pub async fn list_slash_commands(
    daemon: Arc<Daemon>,
    p: SessionIdParams,
) -> Result<ListSlashCommandsResult> {
    let commands = daemon.sessions.slash_commands(&p.session_id).await?;
    Ok(ListSlashCommandsResult { commands })
}
