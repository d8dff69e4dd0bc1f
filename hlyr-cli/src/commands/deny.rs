//! `hlyr deny CALL_ID [--comment TEXT]`: deny a pending tool call, telling Claude why (or, without
//! a reason, that the user denied it), as `d` does while a session is followed.

use crate::complete;
use crate::decision::{decide, Decision};
use crate::error::{CliError, Exit};
use crate::Context;
use clap_complete::ArgValueCompleter;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The approval (a unique prefix is enough), or its session's id when only one waits there.
    #[arg(value_name = "CALL_ID", add = ArgValueCompleter::new(complete::approvals))]
    call_id: String,
    /// Why it is denied; Claude reads it [default: "The user denied this tool call."].
    #[arg(short, long, value_name = "TEXT")]
    comment: Option<String>,
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let reason = args.comment.filter(|c| !c.trim().is_empty());
    decide(ctx, &args.call_id, Decision::Deny, reason).await
}
