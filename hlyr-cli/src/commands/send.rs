//! `hlyr send ID [TEXT] [--steer] [--image PATH]…`: a message into a session, which goes on
//! as the same session. While the agent works it is queued until the turn ends (or, with
//! `--steer`, interrupts the turn); after a turn it starts the next one at once.

use clap_complete::ArgValueCompleter;
use hld_client::protocol::{MessageMode, SendMessageParams};

use crate::complete;
use crate::error::{CliError, Exit};
use crate::hint::hlyr;
use crate::output::{paint, short_id, Render, DIM, GREEN, YELLOW};
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The session (a unique prefix is enough).
    #[arg(value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    id: String,
    /// The message (several words are joined with spaces; `-` reads it from stdin); with
    /// `--image`, it may be left out.
    #[arg(required_unless_present = "images", value_name = "TEXT")]
    text: Vec<String>,
    /// Interrupt the agent's current turn and send the message at once, instead of queueing
    /// it until the turn ends.
    #[arg(long)]
    steer: bool,
    /// An image to attach: a PNG, JPEG, GIF or WebP file (repeat the flag for more).
    #[arg(long = "image", value_name = "PATH")]
    images: Vec<std::path::PathBuf>,
}

#[derive(serde::Serialize)]
struct Sent {
    session_id: String,
    message_id: String,
    queued: bool,
    #[serde(skip)]
    steer: bool,
}

impl Render for Sent {
    fn human(&self) -> String {
        let id = short_id(&self.session_id);
        if self.queued {
            format!(
                "{} {} {}\n{}",
                paint(YELLOW, "queued"),
                short_id(&self.message_id),
                paint(
                    DIM,
                    format!("for session {id}: delivered when its turn ends")
                ),
                paint(
                    DIM,
                    format!(
                        "  {} lists the queue; {} takes it back",
                        hlyr(&format!("queue {id}")),
                        hlyr(&format!(
                            "queue {id} --cancel {}",
                            short_id(&self.message_id)
                        ))
                    )
                )
            )
        } else {
            let how = if self.steer { "steered" } else { "sent" };
            format!(
                "{} {}\n{}",
                paint(GREEN, format!("✓ {how}")),
                paint(DIM, format!("· session {id} is on a new turn")),
                paint(
                    DIM,
                    format!(
                        "  follow it with {}",
                        hlyr(&format!("conversation {id} --follow"))
                    )
                )
            )
        }
    }
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    // Images alone are a message too.
    let text = match args.text.is_empty() {
        true => String::new(),
        false => super::launch::text(&args.text, "message")?,
    };
    let images = super::launch::images(&args.images)?;
    let client = ctx.connect().await?;
    let session = ids::session(&args.id, client.list_sessions().await?)?;
    let mode = if args.steer {
        MessageMode::Steer
    } else {
        MessageMode::Queue
    };
    let sent = client
        .send_message_with(SendMessageParams {
            session_id: session.id.clone(),
            text,
            mode: Some(mode),
            images,
        })
        .await
        .map_err(|e| CliError::from(e).about_session(&args.id))?;
    ctx.out.print(&Sent {
        session_id: session.id,
        message_id: sent.message_id,
        queued: sent.queued,
        steer: args.steer,
    })?;
    Ok(Exit::Ok)
}
