//! `hlyr deny CALL_ID --comment TEXT`: deny a pending tool call, telling Claude why.

use crate::complete;
use crate::decision::{decide, Decision};
use crate::error::{CliError, Exit};
use crate::Context;
use clap_complete::ArgValueCompleter;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The approval (a unique prefix is enough).
    #[arg(value_name = "CALL_ID", add = ArgValueCompleter::new(complete::approvals))]
    call_id: String,
    /// Why it is denied; Claude reads it.
    #[arg(short, long, value_name = "TEXT", value_parser = super::non_empty)]
    comment: String,
}

pub fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    decide(ctx, &args.call_id, Decision::Deny, Some(args.comment))
}
