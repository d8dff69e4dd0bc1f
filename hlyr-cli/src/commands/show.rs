//! `hlyr show ID`: one session's state.

use hld_client::protocol::SessionState;

use crate::error::{CliError, Exit};
use crate::output::{age, cost, paint, status, Render, BOLD, RED};
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The session (a unique prefix is enough).
    #[arg(value_name = "ID")]
    id: String,
}

#[derive(serde::Serialize)]
#[serde(transparent)]
struct Show(SessionState);

impl Render for Show {
    fn human(&self) -> String {
        let s = &self.0;
        let mut status_text = status(s.status);
        if s.interrupted {
            status_text.push_str(" (interrupted)");
        }
        let mut fields: Vec<(&str, String)> = vec![
            ("Session", s.id.clone()),
            ("Run", s.run_id.clone()),
            ("Status", status_text),
            ("Query", s.query.clone()),
        ];
        let optional = [
            ("Claude session", s.claude_session_id.clone()),
            ("Continues", s.parent_session_id.clone()),
            ("Model", s.model.clone()),
            ("Working dir", s.working_dir.clone()),
            ("Error", s.error_message.as_ref().map(|e| paint(RED, e))),
        ];
        fields.extend(optional.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))));
        fields.push((
            "Started",
            format!("{} ({} ago)", s.created_at, age(&s.created_at)),
        ));
        if let Some(done) = &s.completed_at {
            fields.push(("Ended", done.clone()));
        }
        if let Some(turns) = s.num_turns {
            fields.push(("Turns", turns.to_string()));
        }
        if s.cost_usd.is_some() {
            fields.push(("Cost", cost(s.cost_usd)));
        }
        if let Some(tokens) = s.total_tokens {
            fields.push(("Tokens", tokens.to_string()));
        }
        if let Some(ms) = s.duration_ms {
            fields.push(("Duration", format!("{:.1}s", ms as f64 / 1000.0)));
        }
        if let Some(result) = &s.result_content {
            fields.push(("Result", result.clone()));
        }
        let width = fields.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        fields
            .iter()
            .map(|(k, v)| format!("{}  {v}", paint(BOLD, format!("{k:<width$}"))))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

pub fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let client = ctx.connect()?;
    let session = ids::session(&args.id, client.list_sessions()?)?;
    let state = client.get_session_state(&session.id)?;
    ctx.out.print(&Show(state))?;
    Ok(Exit::Ok)
}
