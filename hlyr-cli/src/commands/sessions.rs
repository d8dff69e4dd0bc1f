//! `hlyr sessions [--all]`: a table of sessions, most recent activity first.

use hld_client::protocol::SessionInfo;

use crate::error::{CliError, Exit};
use crate::output::{age, cost, paint, short_id, status, table, Render, DIM, YELLOW};
use crate::Context;

/// How many sessions are listed without `--all`.
const RECENT: usize = 20;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// List every session, not only the 20 most recently active.
    #[arg(short, long)]
    all: bool,
}

#[derive(serde::Serialize)]
#[serde(transparent)]
struct Sessions {
    sessions: Vec<SessionInfo>,
    #[serde(skip)]
    hidden: usize,
}

impl Render for Sessions {
    fn human(&self) -> String {
        if self.sessions.is_empty() {
            return paint(DIM, "no sessions");
        }
        let rows: Vec<Vec<String>> = self
            .sessions
            .iter()
            .map(|s| {
                vec![
                    short_id(&s.id).to_owned(),
                    if s.interrupting {
                        paint(YELLOW, "interrupting")
                    } else {
                        status(s.status)
                    },
                    age(&s.start_time),
                    s.model.clone().unwrap_or_else(|| "-".to_owned()),
                    cost(s.cost_usd),
                    s.summary.clone(),
                ]
            })
            .collect();
        let mut text = table(&["ID", "STATUS", "AGE", "MODEL", "COST", "SUMMARY"], &rows);
        if self.hidden > 0 {
            let note = format!(
                "{} older sessions not shown (--all lists them)",
                self.hidden
            );
            text.push_str(&format!("\n{}", paint(DIM, note)));
        }
        text
    }
}

pub fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let mut sessions = ctx.connect()?.list_sessions()?;
    let keep = if args.all { sessions.len() } else { RECENT };
    let hidden = sessions.len().saturating_sub(keep);
    sessions.truncate(keep);
    ctx.out.print(&Sessions { sessions, hidden })?;
    Ok(Exit::Ok)
}
