//! `hlyr approve CALL_ID [--comment TEXT]`: approve a pending tool call.

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
    /// A note for Claude.
    #[arg(short, long, value_name = "TEXT")]
    comment: Option<String>,
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    decide(ctx, &args.call_id, Decision::Approve, args.comment).await
}
