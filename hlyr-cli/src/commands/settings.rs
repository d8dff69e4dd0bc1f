//! `hlyr settings ID [--model M] [--mode plan|default] [--auto-accept-edits on|off]
//! [--bypass on|off|DURATION] [--resume-on-reset on|off]`: a session's model, mode, approval
//! modes and resume at a usage limit's reset, changed when asked, then shown. A live session takes a new model or mode at once, another at its next
//! resume. The daemon enforces the approval modes: turning one on approves the pending
//! approvals it covers, and a bypass with a duration ends on its own.

use clap_complete::ArgValueCompleter;
use std::time::Duration;

use hld_client::protocol::{PermissionMode, SessionControl, UpdateSessionSettingsParams};
use hld_client::view::clean;

use crate::complete;
use crate::error::{CliError, Exit};
use crate::output::{fields, mode_text, modes_text, Render};
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The session (a unique prefix is enough).
    #[arg(value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    id: String,
    /// The model: an alias (opus, sonnet, haiku) or a full model id, passed to claude as is.
    #[arg(short, long, value_parser = super::non_empty)]
    model: Option<String>,
    /// plan (Claude plans and edits nothing until its plan is approved) or default.
    #[arg(long, value_name = "plan|default", value_parser = super::permission_mode)]
    mode: Option<PermissionMode>,
    /// Approve Edit, Write and MultiEdit without asking: on or off.
    #[arg(long, value_name = "on|off", value_parser = switch)]
    auto_accept_edits: Option<bool>,
    /// Approve every tool call without asking: on (until turned off), off, or for a while
    /// (30s, 15m, 2h, 1d). Questions to the human are still asked.
    #[arg(long, value_name = "on|off|DURATION", value_parser = bypass)]
    bypass: Option<Bypass>,
    /// When a usage limit stops the session, resume it when the limit resets: on or off.
    #[arg(long, value_name = "on|off", value_parser = switch)]
    resume_on_reset: Option<bool>,
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
    // launch's switches are written true/false: the same words are taken here.
    match value.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
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

/// A session's settings: its model and control fields flat under `session_id` for `--json`.
#[derive(serde::Serialize)]
struct Settings {
    session_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(flatten)]
    control: SessionControl,
}

impl Render for Settings {
    fn human(&self) -> String {
        let model = match &self.model {
            Some(model) => clean(model).into_owned(),
            None => "claude's default".to_owned(),
        };
        fields(&[
            ("Session", clean(&self.session_id).into_owned()),
            ("Title", clean(&self.control.title).into_owned()),
            ("Model", model),
            ("Mode", mode_text(&self.control)),
            ("Modes", modes_text(&self.control)),
            (
                "Limit",
                if self.control.resume_on_reset {
                    "resumed when it resets"
                } else {
                    "the session stops"
                }
                .to_owned(),
            ),
        ])
    }
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let session = ids::session(&args.id, client.list_sessions().await?)?;
    let change = args.model.is_some()
        || args.mode.is_some()
        || args.auto_accept_edits.is_some()
        || args.bypass.is_some()
        || args.resume_on_reset.is_some();
    let (skip, timeout) = match args.bypass {
        None => (None, None),
        Some(Bypass::Off) => (Some(false), None),
        Some(Bypass::On) => (Some(true), None),
        Some(Bypass::For(d)) => (Some(true), Some(crate::duration::millis(d))),
    };
    let params = UpdateSessionSettingsParams {
        session_id: session.id.clone(),
        auto_accept_edits: args.auto_accept_edits,
        dangerously_skip_permissions: skip,
        dangerously_skip_permissions_timeout_ms: timeout,
        model: args.model,
        permission_mode: args.mode,
        resume_on_reset: args.resume_on_reset,
        additional_directories: None,
    };
    if change {
        client.update_session_settings(params).await?;
    }
    let state = client.get_session_state(&session.id).await?;
    ctx.out.print(&Settings {
        session_id: state.id,
        model: state.model,
        control: state.control,
    })?;
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A title any local client set: its escapes never reach the terminal.
    #[test]
    fn the_title_is_shown_cleaned() {
        let settings = Settings {
            session_id: "s-1".into(),
            model: None,
            control: SessionControl {
                title: "T \u{1b}]0;pwned\u{7}".into(),
                ..Default::default()
            },
        };
        let text = settings.human();
        assert!(text.contains("T �]0;pwned�"), "{text:?}");
    }

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
        assert_eq!(switch("true"), Ok(true));
        assert_eq!(switch("Yes"), Ok(true));
        assert_eq!(switch("false"), Ok(false));
        assert!(switch("maybe").is_err());
        assert_eq!(bypass("true"), Ok(Bypass::On));
    }

    #[test]
    fn mode_takes_plan_or_default_and_points_elsewhere_for_accepting_edits() {
        use crate::commands::permission_mode;
        assert_eq!(permission_mode("plan"), Ok(PermissionMode::Plan));
        assert_eq!(permission_mode(" Default"), Ok(PermissionMode::Default));
        for wrong in ["acceptEdits", "bypassPermissions", ""] {
            assert!(permission_mode(wrong)
                .unwrap_err()
                .contains("--auto-accept-edits"));
        }
    }
}
