//! `hlyr approvals [--session ID]`: pending approvals, oldest first.

use clap_complete::ArgValueCompleter;
use hld_client::protocol::{Approval, ApprovalType};

use crate::complete;
use crate::error::{CliError, Exit};
use crate::output::{age, paint, short_id, shorten, Render, DIM};
use crate::table::table;
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this session's approvals (a unique prefix is enough).
    #[arg(short, long, value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    session: Option<String>,
}

#[derive(serde::Serialize)]
#[serde(transparent)]
struct Approvals(Vec<Approval>);

impl Render for Approvals {
    fn human(&self) -> String {
        if self.0.is_empty() {
            return paint(DIM, "no pending approvals");
        }
        let rows: Vec<Vec<String>> = self
            .0
            .iter()
            .map(|a| {
                let (kind, what) = match a.kind {
                    ApprovalType::FunctionCall => {
                        let args = a
                            .function_args
                            .as_ref()
                            .map(|v| v.to_string())
                            .unwrap_or_default();
                        let name = a.function_name.as_deref().unwrap_or("tool");
                        ("tool", format!("{name} {args}"))
                    }
                    ApprovalType::HumanContact => {
                        ("question", a.message.clone().unwrap_or_default())
                    }
                    // A kind this version does not know: its name.
                    other => (other.as_str(), String::new()),
                };
                let what = shorten(&what.replace('\n', " "));
                vec![
                    short_id(&a.id).to_owned(),
                    short_id(&a.session_id).to_owned(),
                    kind.to_owned(),
                    age(&a.requested_at),
                    what,
                ]
            })
            .collect();
        table(&["ID", "SESSION", "TYPE", "AGE", "REQUEST"], &rows)
    }
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let session = match &args.session {
        Some(prefix) => Some(ids::session(prefix, client.list_sessions().await?)?.id),
        None => None,
    };
    let approvals = client.fetch_approvals(session.as_deref()).await?;
    ctx.out.print(&Approvals(approvals))?;
    Ok(Exit::Ok)
}
