//! `hlyr daemon status`: the daemon's pid, version, uptime, files, `claude` and load, or exit
//! code 3 when it is not running (under `--json`, `{"running": false, …}` first). When the
//! daemon finds no `claude` and hlyr does, it says so and offers a restart on a terminal.
//! What the daemon reports is cleaned for the terminal (a remote context's daemon is another
//! machine's).

use std::path::PathBuf;

use hld_client::protocol::HealthResult;
use hld_client::view::clean;

use crate::connect::{is_not_running, not_running};
use crate::error::{CliError, Exit};
use crate::output::{age, fields, paint, Render, GREEN, RED, YELLOW};
use crate::Context;

#[derive(serde::Serialize)]
struct Status {
    running: bool,
    /// The socket hlyr asked at.
    socket: PathBuf,
    /// Seconds since the daemon started (when it says when).
    #[serde(skip_serializing_if = "Option::is_none")]
    uptime_seconds: Option<i64>,
    /// Where hlyr finds the `claude` that the daemon does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    claude_found_by_hlyr: Option<PathBuf>,
    /// Sessions at work (running, waiting for a person, winding down). `active_sessions`
    /// counts live processes, which include the idle ones kept warm for the next message.
    #[serde(skip_serializing_if = "Option::is_none")]
    sessions_running: Option<usize>,
    #[serde(flatten)]
    health: Option<HealthResult>,
}

impl Render for Status {
    fn human(&self) -> String {
        let Some(h) = &self.health else {
            return String::new();
        };
        let claude = match &h.claude {
            Some(c) if c.available => paint(
                GREEN,
                format!(
                    "available {} {}",
                    clean(c.version.as_deref().unwrap_or_default()),
                    c.path
                        .as_deref()
                        .map(|p| format!("({})", clean(p)))
                        .unwrap_or_default()
                )
                .trim_end(),
            ),
            _ => paint(RED, "not found"),
        };
        let approvals = match &h.approvals {
            Some(a) if a.available => paint(GREEN, format!("asked through {}", clean(&a.command))),
            Some(a) => paint(
                RED,
                clean(&(a.error.clone()).unwrap_or_else(|| format!("{} cannot run", a.command))),
            ),
            None => "unknown (an older daemon)".to_owned(),
        };
        let mut lines = vec![(
            "hld",
            format!("{} ({})", clean(&h.version), paint(GREEN, clean(&h.status))),
        )];
        if let Some(pid) = h.pid {
            lines.push(("pid", pid.to_string()));
        }
        if let Some(started) = &h.started_at {
            lines.push((
                "uptime",
                format!("{} (since {})", age(started), clean(started)),
            ));
        }
        lines.push(("socket", self.socket.display().to_string()));
        if let Some(database) = &h.database {
            lines.push(("database", clean(database).into_owned()));
        }
        if h.started_at.is_some() {
            // A daemon that reports its files and logs to no file logs to its stderr.
            let log = h.log_file.as_deref().unwrap_or("stderr");
            lines.push(("log", clean(log).into_owned()));
        }
        lines.push(("claude", claude));
        if !h.claude.as_ref().is_some_and(|c| c.available) {
            let advice = crate::claude::advice(self.claude_found_by_hlyr.as_ref());
            lines.push(("", paint(YELLOW, advice)));
        }
        lines.extend([
            ("approvals", approvals),
            (
                "sessions",
                sessions(self.sessions_running, h.active_sessions),
            ),
            ("subscribers", h.subscribers.to_string()),
        ]);
        if let Some(n) = &h.notifications {
            let on = |yes: bool| if yes { "on" } else { "off" };
            let text = format!("desktop {} · webhook {}", on(n.desktop), on(n.webhook));
            lines.push(("notify", text));
        }
        fields(&lines)
    }
}

/// `N running · M warm`: sessions at work, and the other live processes, idle until their
/// session's next message.
fn sessions(running: Option<usize>, live: u64) -> String {
    let running = running.unwrap_or_default();
    let warm = live.saturating_sub(running as u64);
    match warm {
        0 => format!("{running} running"),
        _ => format!("{running} running · {warm} warm (idle, ready for a message)"),
    }
}

pub async fn run(ctx: &Context) -> Result<Exit, CliError> {
    let socket = ctx.socket()?;
    let client = match hld_client::Client::connect(&socket).await {
        Ok(client) => client,
        Err(e) if ctx.out.is_json() && is_not_running(&e) => {
            ctx.out.print(&Status {
                running: false,
                socket,
                uptime_seconds: None,
                claude_found_by_hlyr: None,
                sessions_running: None,
                health: None,
            })?;
            // Said on stdout already: the exit code is all that is left.
            return Err(CliError::new(Exit::Unreachable, String::new()));
        }
        Err(e) => return Err(not_running(&hld_client::Address::Socket(socket.clone()), e)),
    };
    let mut health = client.health().await?;
    let sessions = client.list_sessions().await?;
    let sessions_running = Some(sessions.iter().filter(|s| s.status.is_active()).count());
    drop(client);
    // The socket hlyr reached is the one reported.
    health.socket = None;
    let uptime_seconds = health
        .started_at
        .as_deref()
        .and_then(|at| chrono::DateTime::parse_from_rfc3339(at).ok())
        .map(|at| (chrono::Utc::now() - at.to_utc()).num_seconds().max(0));
    let claude_found_by_hlyr = crate::claude::missed_by(&health);
    ctx.out.print(&Status {
        running: true,
        socket,
        uptime_seconds,
        claude_found_by_hlyr: claude_found_by_hlyr.clone(),
        sessions_running,
        health: Some(health),
    })?;
    if let Some(path) = claude_found_by_hlyr.filter(|_| !ctx.out.is_json()) {
        crate::claude::offer_restart(ctx, &path).await?;
    }
    Ok(Exit::Ok)
}
