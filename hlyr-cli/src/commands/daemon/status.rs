//! `hlyr daemon status`: the daemon's health, or exit code 3 when it is not running.

use std::path::PathBuf;

use hld_client::protocol::HealthResult;

use crate::error::{CliError, Exit};
use crate::output::{paint, Render, BOLD, GREEN, RED};
use crate::Context;

#[derive(serde::Serialize)]
struct Status {
    socket: PathBuf,
    #[serde(flatten)]
    health: HealthResult,
}

impl Render for Status {
    fn human(&self) -> String {
        let h = &self.health;
        let claude = match &h.claude {
            Some(c) if c.available => paint(
                GREEN,
                format!(
                    "available {} {}",
                    c.version.as_deref().unwrap_or_default(),
                    c.path
                        .as_deref()
                        .map(|p| format!("({p})"))
                        .unwrap_or_default()
                )
                .trim_end(),
            ),
            _ => paint(RED, "not found"),
        };
        let approvals = match &h.approvals {
            Some(a) if a.available => paint(GREEN, format!("asked through {}", a.command)),
            Some(a) => paint(
                RED,
                a.error
                    .clone()
                    .unwrap_or_else(|| format!("{} cannot run", a.command)),
            ),
            None => "unknown (an older daemon)".to_owned(),
        };
        [
            (
                "hld",
                format!("{} ({})", h.version, paint(GREEN, &h.status)),
            ),
            ("socket", self.socket.display().to_string()),
            ("claude", claude),
            ("approvals", approvals),
            ("subscribers", h.subscribers.to_string()),
            ("active sessions", h.active_sessions.to_string()),
        ]
        .iter()
        .map(|(k, v)| format!("{}  {v}", paint(BOLD, format!("{k:<15}"))))
        .collect::<Vec<_>>()
        .join("\n")
    }
}

pub fn run(ctx: &Context) -> Result<Exit, CliError> {
    let socket = ctx.socket()?;
    let health = ctx.connect()?.health()?;
    ctx.out.print(&Status { socket, health })?;
    Ok(Exit::Ok)
}
