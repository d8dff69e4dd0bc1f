//! `hlyr interrupt ID`: ask the daemon to interrupt a running session.

use clap_complete::ArgValueCompleter;
use hld_client::protocol::InterruptSessionResult;

use crate::complete;
use crate::error::{CliError, Exit};
use crate::output::{paint, short_id, Render, YELLOW};
use crate::session::Session;
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The session (a unique prefix is enough).
    #[arg(value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    id: String,
}

#[derive(serde::Serialize)]
#[serde(transparent)]
struct Interrupted(InterruptSessionResult);

impl Render for Interrupted {
    fn human(&self) -> String {
        format!(
            "{} {}: {}",
            paint(YELLOW, "interrupting"),
            short_id(&self.0.session_id),
            self.0.message
        )
    }
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let session = ids::session(&args.id, client.list_sessions().await?)?;
    if !session.status.is_active() {
        // Its state as `show` and `sessions` say it: an interrupted one is not "completed".
        let ended = Session::from(session);
        return Err(CliError::failure(format!(
            "session {} is not running (it is {})",
            short_id(&ended.id),
            ended.status.as_str()
        )));
    }
    let result = client.interrupt_session(&session.id).await?;
    ctx.out.print(&Interrupted(result))?;
    Ok(Exit::Ok)
}
