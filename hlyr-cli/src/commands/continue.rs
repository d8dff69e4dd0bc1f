//! `hlyr continue ID QUERY`: continue a session with a new query (a new session resuming the
//! Claude conversation), then follow it, printing the conversation so far first.

use hld_client::protocol::ContinueSessionParams;

use super::launch::{query, tools, AgentArgs};
use crate::connect::StartArgs;
use crate::error::{CliError, Exit};
use crate::follow::follow;
use crate::output::Update;
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The session to continue (a unique prefix is enough).
    #[arg(value_name = "ID")]
    id: String,
    /// What to ask next (several words are joined with spaces).
    #[arg(required = true, value_name = "QUERY")]
    query: Vec<String>,
    #[command(flatten)]
    agent: AgentArgs,
    /// Print the new session and run ids and return, without following.
    #[arg(long)]
    detach: bool,
    #[command(flatten)]
    start: StartArgs,
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let query = query(&args.query)?;
    let mcp_config = args.agent.mcp_config()?;
    let (client, started) = ctx.connect_or_start(&args.start).await?;
    if let Some(started) = started {
        crate::connect::announce(&started);
    }
    let parent = ids::session(&args.id, client.list_sessions().await?)?;
    let continued = client
        .continue_session(ContinueSessionParams {
            session_id: parent.id,
            query,
            mcp_config,
            model: args.agent.model,
            max_turns: args.agent.max_turns.map(i64::from),
            system_prompt: args.agent.system_prompt,
            append_system_prompt: args.agent.append_system_prompt,
            allowed_tools: tools(&args.agent.allowed_tools),
            disallowed_tools: tools(&args.agent.disallowed_tools),
            ..Default::default()
        })
        .await?;
    ctx.out.print(&Update::Started {
        session_id: continued.session_id.clone(),
        run_id: continued.run_id,
        parent_session_id: Some(continued.parent_session_id),
    })?;
    if args.detach {
        return Ok(Exit::Ok);
    }
    follow(&client, ctx.out, &continued.session_id).await
}
