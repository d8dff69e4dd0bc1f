//! What a session's `claude` offers a reply box: its slash commands, skills and agents; and
//! the user's settings CodeLayer keeps in the daemon.

use std::sync::Arc;

use hld_client::protocol::{ListSlashCommandsResult, SessionIdParams};

use crate::daemon::Daemon;
use crate::error::Result;
use crate::store::settings::{self, UserSettings};

/// `listSlashCommands`: what the session's `claude` answered to `initialize`.
pub async fn list_slash_commands(
    daemon: Arc<Daemon>,
    p: SessionIdParams,
) -> Result<ListSlashCommandsResult> {
    let commands = daemon.sessions.slash_commands(&p.session_id).await?;
    Ok(ListSlashCommandsResult { commands })
}

/// The user's settings; `None` until one is set.
pub async fn user_settings(daemon: &Daemon) -> Result<Option<UserSettings>> {
    let read = daemon.store.read(settings::user_settings).await;
    read.map_err(super::control::store_error(
        "failed to read the user settings",
    ))
}

/// Sets the user's settings given, and returns them all.
pub async fn set_user_settings(
    daemon: &Daemon,
    advanced_providers: Option<bool>,
    opt_in_telemetry: Option<bool>,
) -> Result<UserSettings> {
    let set = move |w: &mut crate::store::Writer, _: &mut Vec<_>| {
        w.set_user_settings(advanced_providers, opt_in_telemetry)
    };
    let written = daemon.store.write(set).await;
    written.map_err(super::control::store_error(
        "failed to set the user settings",
    ))
}
