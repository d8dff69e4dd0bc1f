//! `hlyr respond CALL_ID --comment TEXT`: answer a pending question from Claude.

use crate::complete;
use crate::decision::{decide, Decision};
use crate::error::{CliError, Exit};
use crate::Context;
use clap_complete::ArgValueCompleter;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The question (a unique prefix is enough).
    #[arg(value_name = "CALL_ID", add = ArgValueCompleter::new(complete::approvals))]
    call_id: String,
    /// The answer; to several questions asked at once, a line each.
    #[arg(short, long, value_name = "TEXT", value_parser = super::non_empty)]
    comment: String,
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    decide(ctx, &args.call_id, Decision::Respond, Some(args.comment)).await
}
