//! `hlyr sessions [--archived | --drafts | --all]`: a table of sessions, most recent activity first (the
//! daemon's order), with each one's working directory. By default one row per chain of continued sessions (its leaf:
//! `getSessionLeaves`), archived chains left out, the 20 most recent in the table and every one
//! with `--json`.

use hld_client::protocol::{GetSessionLeaves, GetSessionLeavesParams, LeafFilter, WorktreeState};
use hld_client::view::{clean, count, in_checkout, short_model};

use crate::error::{CliError, Exit};
use crate::output::{age, cost, mode_marks, paint, short_id, Render, DIM};
use crate::session::Session;
use crate::table::{table_giving, Gives};
use crate::Context;

/// How many sessions the table lists without `--all` (`--json` lists every one).
const RECENT: usize = 20;

#[derive(Debug, clap::Args)]
#[command(after_help = MARKS)]
pub struct Args {
    /// List every session: each one a chain continued, and archived ones.
    #[arg(short, long, conflicts_with = "archived")]
    all: bool,
    /// List the archived chains instead.
    #[arg(long)]
    archived: bool,
    /// List the drafts instead: sessions composed but not launched.
    #[arg(long, conflicts_with_all = ["all", "archived"])]
    drafts: bool,
}

/// What the marks before a title mean (`sessions`, `search`).
pub const MARKS: &str = "\
Marks before a title: ⚠15m permissions are bypassed (time left; ⚠∞ until turned off),
✎ edits are accepted automatically, [archived] (with --all) an archived session.";

/// When the table is too wide, the model gives way first, then the working directory (its
/// end kept: it tells agents in different repositories apart), then the model is left out,
/// and only then is the title cut.
const GIVES: [Gives; 5] = [
    Gives::start(3, 6),
    Gives::end(6, 12),
    Gives::start(3, 0),
    Gives::end(6, 10),
    Gives::start(7, 10),
];

/// `dir` with the home directory written `~`, cleaned for the terminal (an agent may have
/// named it).
pub(super) fn home_as_tilde(dir: &str) -> String {
    let home = std::env::var("HOME").unwrap_or_default();
    let shown = match dir.strip_prefix(home.as_str()) {
        Some(rest) if !home.is_empty() && (rest.is_empty() || rest.starts_with('/')) => {
            format!("~{rest}")
        }
        _ => dir.to_owned(),
    };
    clean(&shown).into_owned()
}

/// A list of sessions: an array of [`Session`]s for `--json`, a table otherwise.
#[derive(serde::Serialize)]
#[serde(transparent)]
pub struct Sessions {
    pub sessions: Vec<Session>,
    /// How many more there were (told below the table).
    #[serde(skip)]
    pub hidden: usize,
    /// What an empty list says.
    #[serde(skip)]
    pub empty: &'static str,
    /// Whether archived sessions are marked (a list that mixes them in).
    #[serde(skip)]
    pub mark_archived: bool,
}

impl Render for Sessions {
    fn human(&self) -> String {
        if self.sessions.is_empty() {
            return paint(DIM, self.empty);
        }
        let rows: Vec<Vec<String>> = self
            .sessions
            .iter()
            .map(|s| {
                let mut marks = mode_marks(&s.control);
                if self.mark_archived && s.control.archived {
                    marks.push_str(&paint(DIM, "[archived] "));
                }
                // An isolated session's directory is its repository's: its branch tells it
                // apart.
                if let Some(w) = &s.worktree {
                    let state = match w.state {
                        WorktreeState::Active => String::new(),
                        ref done => format!(" ({})", done.as_str()),
                    };
                    marks.push_str(&paint(DIM, format!("⎇ {}{state} ", clean(&w.branch))));
                }
                vec![
                    short_id(&s.id).to_owned(),
                    s.status_cell(),
                    age(&s.last_activity_at),
                    s.model
                        .as_deref()
                        .map_or("-".into(), |m| clean(short_model(m)).into_owned()),
                    cost(s.cost_usd),
                    s.context_text().unwrap_or_else(|| "-".to_owned()),
                    s.working_dir.as_deref().map_or_else(
                        || "-".to_owned(),
                        |dir| home_as_tilde(&in_checkout(dir, s.worktree.as_ref())),
                    ),
                    format!("{marks}{}", s.shown_title()),
                ]
            })
            .collect();
        // AGE is the time since the last activity; CTX the share of the context window the
        // last model call used; the last column shows the title (the query's first line
        // unless one was given).
        let header = [
            "ID", "STATUS", "AGE", "MODEL", "COST", "CTX", "DIR", "TITLE",
        ];
        let mut text = table_giving(&header, &rows, &GIVES);
        if self.hidden > 0 {
            let older = count(self.hidden as u64, "older session");
            let note = format!("{older} not shown (--all lists them)");
            text.push_str(&format!("\n{}", paint(DIM, note)));
        }
        text
    }
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let (mut sessions, empty) = if args.all {
        (client.list_sessions().await?, "no sessions")
    } else {
        let (filter, empty) = match (args.archived, args.drafts) {
            (true, _) => (LeafFilter::Archived, "no archived sessions"),
            (_, true) => (LeafFilter::Draft, "no drafts"),
            _ => (LeafFilter::Normal, "no sessions"),
        };
        let params = GetSessionLeavesParams {
            filter: Some(filter),
        };
        (
            client.call::<GetSessionLeaves>(params).await?.sessions,
            empty,
        )
    };
    // A screenful on a terminal; a script (`--json`) gets every one.
    let keep = if args.all || ctx.out.is_json() {
        sessions.len()
    } else {
        RECENT
    };
    let hidden = sessions.len().saturating_sub(keep);
    sessions.truncate(keep);
    ctx.out.print(&Sessions {
        sessions: sessions.into_iter().map(Session::from).collect(),
        hidden,
        empty,
        mark_archived: args.all,
    })?;
    Ok(Exit::Ok)
}
