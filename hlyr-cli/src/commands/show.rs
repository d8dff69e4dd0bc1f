//! `hlyr show ID`: one session's state; under `--json` the session object every command
//! prints.

use clap_complete::ArgValueCompleter;
use hld_client::protocol::{SessionState, WorktreeInfo};
use hld_client::view::{clean, count};

use crate::complete;
use crate::error::{CliError, Exit};
use crate::output::{age, cost, fields, mode_text, modes_text, paint, Render, RED};
use crate::session::Session;
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The session (a unique prefix is enough).
    #[arg(value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    id: String,
}

/// The session, and its full state for the text (tokens and context are told there only).
#[derive(serde::Serialize)]
#[serde(transparent)]
struct Show {
    session: Session,
    #[serde(skip)]
    state: SessionState,
}

impl Render for Show {
    fn human(&self) -> String {
        let s = &self.state;
        let mut status_text = self.session.status_text();
        if s.control.archived {
            status_text.push_str(", archived");
        }
        // Every string from the daemon is cleaned for the terminal (an agent wrote some).
        let c = |text: &str| clean(text).into_owned();
        let mut lines: Vec<(&str, String)> = vec![
            ("Session", c(&s.id)),
            ("Run", c(&s.run_id)),
            ("Title", c(&s.control.title)),
            ("Status", status_text),
            ("Mode", mode_text(&s.control)),
            ("Modes", modes_text(&s.control)),
            ("Query", c(&s.query)),
        ];
        let extra_dirs = (!s.control.additional_directories.is_empty())
            .then(|| c(&s.control.additional_directories.join(", ")));
        let optional = [
            ("Claude session", s.claude_session_id.as_deref().map(c)),
            ("Continues", s.parent_session_id.as_deref().map(c)),
            ("Model", s.model.as_deref().map(c)),
            ("Working dir", s.working_dir.as_deref().map(c)),
            ("Extra dirs", extra_dirs),
            (
                "Worktree",
                s.worktree.as_ref().map(|w| c(&worktree_text(w))),
            ),
            (
                "Error",
                s.error_message.as_deref().map(|e| paint(RED, c(e))),
            ),
        ];
        lines.extend(optional.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))));
        lines.push((
            "Started",
            format!("{} ({} ago)", c(&s.created_at), age(&s.created_at)),
        ));
        if let Some(done) = &s.completed_at {
            lines.push(("Ended", c(done)));
        }
        if let Some(turns) = s.num_turns {
            lines.push(("Turns", turns.to_string()));
        }
        if s.cost_usd.is_some() {
            lines.push(("Cost", cost(s.cost_usd)));
        }
        if let Some(tokens) = tokens(s) {
            lines.push(("Tokens", tokens));
        }
        if let Some(context) = context(&self.session) {
            lines.push(("Context", context));
        }
        if let Some(ms) = s.duration_ms {
            lines.push(("Duration", format!("{:.1}s", ms as f64 / 1000.0)));
        }
        if let Some(result) = &s.result_content {
            lines.push(("Result", c(result)));
        }
        fields(&lines)
    }
}

/// An isolated session's branch, its state and where it started.
fn worktree_text(w: &WorktreeInfo) -> String {
    let base = &w.base_commit[..w.base_commit.len().min(12)];
    format!(
        "{} ({}, from {} at {base}) in {}",
        w.branch, w.state, w.base_branch, w.path
    )
}

/// The tokens Claude reported: the total, then its parts that are known.
fn tokens(s: &SessionState) -> Option<String> {
    let parts: Vec<String> = [
        ("in", s.input_tokens),
        ("out", s.output_tokens),
        ("cache read", s.cache_read_input_tokens),
        ("cache written", s.cache_creation_input_tokens),
    ]
    .into_iter()
    .filter_map(|(what, n)| n.map(|n| format!("{what} {n}")))
    .collect();
    let total = s.total_tokens.map(|t| t.to_string());
    match (total, parts.is_empty()) {
        (None, true) => None,
        (Some(total), true) => Some(total),
        (Some(total), false) => Some(format!("{total} ({})", parts.join(", "))),
        (None, false) => Some(parts.join(", ")),
    }
}

/// The context the last model call used, out of the model's window when known (its share a
/// warning near the window's end).
fn context(session: &Session) -> Option<String> {
    let used = session.effective_context_tokens?;
    Some(match (session.context_limit, session.context_text()) {
        (Some(limit), Some(share)) => format!("{used} of {limit} tokens ({share})"),
        _ => count(used as u64, "token"),
    })
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let session = ids::session(&args.id, client.list_sessions().await?)?;
    let state = client.get_session_state(&session.id).await?;
    ctx.out.print(&Show {
        session: state.clone().into(),
        state,
    })?;
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A title, a query, a result: an agent or any local client wrote them, so their escapes
    /// never reach the terminal.
    #[test]
    fn what_the_daemon_says_is_shown_cleaned() {
        let state: SessionState = serde_json::from_value(json!({
            "id": "s-1", "run_id": "r-1", "status": "completed", "query": "q \u{1b}[2J",
            "summary": "", "created_at": "2026-01-01T00:00:00Z",
            "last_activity_at": "2026-01-01T00:00:00Z",
            "title": "T \u{1b}]0;pwned\u{7}", "result_content": "done \u{1b}[31mred",
            "error_message": "failed \u{1b}]8;;x\u{7}",
        }))
        .unwrap();
        let show = Show {
            session: Session::from(state.clone()),
            state,
        };
        let text = show.human();
        for cleaned in ["T �]0;pwned�", "q �[2J", "done �[31mred", "failed �]8;;x�"] {
            assert!(text.contains(cleaned), "{cleaned:?} in {text:?}");
        }
    }
}
