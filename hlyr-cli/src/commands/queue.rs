//! `hlyr queue ID`: the messages waiting for a session's turn to end, next first;
//! `hlyr queue ID --cancel MSG` takes one back before it is delivered.

use clap_complete::ArgValueCompleter;
use hld_client::protocol::QueuedMessage;
use hld_client::view::clean;

use crate::complete;
use crate::error::{CliError, Exit};
use crate::output::{age, paint, short_id, shorten, Render, DIM, GREEN};
use crate::table::table;
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The session (a unique prefix is enough).
    #[arg(value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    id: String,
    /// Cancel this queued message (a unique prefix of its id is enough).
    #[arg(long, value_name = "MSG")]
    cancel: Option<String>,
}

#[derive(serde::Serialize)]
#[serde(transparent)]
struct Queue(Vec<QueuedMessage>);

impl Render for Queue {
    fn human(&self) -> String {
        if self.0.is_empty() {
            return paint(DIM, "no queued messages");
        }
        let rows: Vec<Vec<String>> = self
            .0
            .iter()
            .map(|m| {
                vec![
                    short_id(&m.id).to_owned(),
                    age(&m.created_at),
                    m.mode.as_str().to_owned(),
                    shorten(&clean(&m.text).replace('\n', " ")),
                ]
            })
            .collect();
        table(&["ID", "AGE", "MODE", "MESSAGE"], &rows)
    }
}

#[derive(serde::Serialize)]
struct Cancelled {
    message_id: String,
    session_id: String,
}

impl Render for Cancelled {
    fn human(&self) -> String {
        format!(
            "{} {} {}",
            paint(GREEN, "✓ cancelled"),
            short_id(&self.message_id),
            paint(DIM, format!("(session {})", short_id(&self.session_id)))
        )
    }
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let session = ids::session(&args.id, client.list_sessions().await?)?;
    let queued = client.list_queued_messages(&session.id).await?;
    let Some(prefix) = args.cancel else {
        ctx.out.print(&Queue(queued))?;
        return Ok(Exit::Ok);
    };
    let message = ids::message(&prefix, queued)?;
    client.cancel_queued_message(&message.id).await?;
    ctx.out.print(&Cancelled {
        message_id: message.id,
        session_id: session.id,
    })?;
    Ok(Exit::Ok)
}
