//! `hlyr rename ID TITLE`: set a session's title.

use clap_complete::ArgValueCompleter;
use hld_client::protocol::{UpdateSessionTitle, UpdateSessionTitleParams};
use hld_client::view::clean;

use crate::complete;
use crate::error::{CliError, Exit};
use crate::output::{paint, short_id, Render, DIM, GREEN};
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The session (a unique prefix is enough).
    #[arg(value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    id: String,
    /// The new title, one line (several words are joined with spaces, as are lines); ""
    /// clears it, and the query's first line shows again.
    #[arg(required = true, value_name = "TITLE")]
    title: Vec<String>,
}

#[derive(serde::Serialize)]
struct Renamed {
    session_id: String,
    title: String,
}

impl Render for Renamed {
    fn human(&self) -> String {
        let id = short_id(&self.session_id);
        if self.title.is_empty() {
            format!("{} {id}", paint(GREEN, "✓ cleared the title of"))
        } else {
            format!(
                "{} {id} {} {}",
                paint(GREEN, "✓ renamed"),
                paint(DIM, "to"),
                clean(&self.title)
            )
        }
    }
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let title = super::one_line(&args.title.join(" "));
    let client = ctx.connect().await?;
    let session = ids::session(&args.id, client.list_sessions().await?)?;
    client
        .call::<UpdateSessionTitle>(UpdateSessionTitleParams {
            session_id: session.id.clone(),
            title: title.clone(),
        })
        .await?;
    ctx.out.print(&Renamed {
        session_id: session.id,
        title,
    })?;
    Ok(Exit::Ok)
}
