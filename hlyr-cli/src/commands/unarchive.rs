//! `hlyr unarchive ID…`: bring archived sessions back to `hlyr sessions`.

use super::archive::set_archived;
use crate::complete;
use crate::error::{CliError, Exit};
use crate::Context;
use clap_complete::ArgValueCompleter;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The sessions (unique prefixes are enough).
    #[arg(required = true, value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    ids: Vec<String>,
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    set_archived(ctx, &args.ids, false).await
}
