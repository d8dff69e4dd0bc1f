//! `hlyr settings ID [--auto-accept-edits on|off] [--bypass on|off|DURATION]`: a session's
//! approval modes, changed when asked, then shown. The daemon enforces them: turning one on
//! approves the pending approvals it covers, and a bypass with a duration ends on its own.

use clap_complete::ArgValueCompleter;
use std::time::Duration;

use hld_client::protocol::{SessionControl, UpdateSessionSettings, UpdateSessionSettingsParams};

use crate::complete;
use crate::error::{CliError, Exit};
use crate::output::{fields, modes_text, Render};
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The session (a unique prefix is enough).
    #[arg(value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    id: String,
    /// Approve Edit, Write and MultiEdit without asking: on or off.
    #[arg(long, value_name = "on|off", value_parser = switch)]
    auto_accept_edits: Option<bool>,
    /// Approve every tool call without asking: on (until turned off), off, or for a while
    /// (30s, 15m, 2h, 1d). Questions to the human are still asked.
    #[arg(long, value_name = "on|off|DURATION", value_parser = bypass)]
    bypass: Option<Bypass>,
}

/// `--bypass`'s value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bypass {
    Off,
    On,
    For(Duration),
}

/// `on` or `off`.
fn switch(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err("expected on or off".to_owned()),
    }
}

/// `on`, `off`, or a duration (on, for that long).
fn bypass(value: &str) -> Result<Bypass, String> {
    match switch(value) {
        Ok(true) => Ok(Bypass::On),
        Ok(false) => Ok(Bypass::Off),
        Err(_) => crate::duration::parse_positive(value)
            .map(Bypass::For)
            .map_err(|e| format!("expected on, off or a duration: {e}")),
    }
}

/// A session's modes: its control fields flat under `session_id` for `--json`.
#[derive(serde::Serialize)]
struct Settings {
    session_id: String,
    #[serde(flatten)]
    control: SessionControl,
}

impl Render for Settings {
    fn human(&self) -> String {
        fields(&[
            ("Session", self.session_id.clone()),
            ("Title", self.control.title.clone()),
            ("Modes", modes_text(&self.control)),
        ])
    }
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let session = ids::session(&args.id, client.list_sessions().await?)?;
    if args.auto_accept_edits.is_some() || args.bypass.is_some() {
        let (skip, timeout) = match args.bypass {
            None => (None, None),
            Some(Bypass::Off) => (Some(false), None),
            Some(Bypass::On) => (Some(true), None),
            Some(Bypass::For(d)) => (Some(true), Some(crate::duration::millis(d))),
        };
        client
            .call::<UpdateSessionSettings>(UpdateSessionSettingsParams {
                session_id: session.id.clone(),
                auto_accept_edits: args.auto_accept_edits,
                dangerously_skip_permissions: skip,
                dangerously_skip_permissions_timeout_ms: timeout,
                ..Default::default()
            })
            .await?;
    }
    let state = client.get_session_state(&session.id).await?;
    ctx.out.print(&Settings {
        session_id: state.id,
        control: state.control,
    })?;
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bypass_takes_on_off_or_a_duration() {
        assert_eq!(bypass("on"), Ok(Bypass::On));
        assert_eq!(bypass("OFF"), Ok(Bypass::Off));
        assert_eq!(bypass("15m"), Ok(Bypass::For(Duration::from_secs(900))));
        assert!(bypass("0s").is_err());
        assert!(bypass("soon")
            .unwrap_err()
            .contains("on, off or a duration"));
        assert_eq!(switch("on"), Ok(true));
        assert!(switch("yes").is_err());
    }
}
