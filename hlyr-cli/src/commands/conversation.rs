//! `hlyr conversation ID [--follow]`: print a session's conversation (its whole chain of
//! continued sessions), and with `--follow` keep printing until it ends. `--json` prints one
//! line per item, the same lines as a followed `launch`.

use hld_client::protocol::GetConversationParams;

use crate::error::{CliError, Exit};
use crate::follow::follow;
use crate::output::Update;
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The session (a unique prefix is enough).
    #[arg(value_name = "ID")]
    id: String,
    /// Keep following the session until it ends, answering approvals on a terminal.
    #[arg(short, long)]
    follow: bool,
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let session = ids::session(&client, &args.id).await?;
    if args.follow {
        return follow(&client, ctx.out, &session.id).await;
    }
    let events = client
        .get_conversation(GetConversationParams {
            session_id: Some(session.id),
            ..Default::default()
        })
        .await?;
    for event in events {
        ctx.out.print(&Update::Event(event))?;
    }
    Ok(Exit::Ok)
}
