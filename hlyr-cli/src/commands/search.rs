//! `hlyr search TEXT…`: sessions whose title, query or summary hold the words (each word as
//! a prefix), in the daemon's order; listed as `sessions` lists them.

use hld_client::protocol::{SearchSessions, SearchSessionsParams};

use super::sessions::Sessions;
use crate::error::{CliError, Exit};
use crate::session::Session;
use crate::Context;

#[derive(Debug, clap::Args)]
#[command(after_help = super::sessions::MARKS)]
pub struct Args {
    /// The words to find (several words are joined with spaces).
    #[arg(required = true, value_name = "TEXT")]
    text: Vec<String>,
    /// List at most this many.
    #[arg(short = 'n', long, value_name = "N", default_value_t = 50,
          value_parser = clap::value_parser!(i64).range(1..))]
    limit: i64,
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let query = args.text.join(" ");
    if query.trim().is_empty() {
        return Err(CliError::usage("the search text is empty"));
    }
    let client = ctx.connect().await?;
    let sessions = client
        .call::<SearchSessions>(SearchSessionsParams {
            query,
            limit: Some(args.limit),
        })
        .await?
        .sessions;
    ctx.out.print(&Sessions {
        sessions: sessions.into_iter().map(Session::from).collect(),
        hidden: 0,
        empty: "no sessions match",
        mark_archived: true,
    })?;
    Ok(Exit::Ok)
}
