//! `hlyr events [--type T] [--session ID] [--run ID]`: the daemon's events, one JSON line
//! each, until the daemon stops (or `--count` events were printed).

use clap::builder::PossibleValuesParser;
use clap_complete::ArgValueCompleter;
use futures::StreamExt;
use hld_client::protocol::{SubscribeParams, TimedEvent, EVENT_TYPES};
use hld_client::{SubscribeOptions, SubscriptionItem};

use crate::complete;
use crate::error::{CliError, Exit};
use crate::output::Render;
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only events of these types (comma-separated, or repeat the flag).
    #[arg(
        long = "type",
        value_name = "TYPE",
        value_delimiter = ',',
        value_parser = PossibleValuesParser::new(EVENT_TYPES)
    )]
    types: Vec<String>,
    /// Only events of this session (a unique prefix is enough).
    #[arg(short, long, value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    session: Option<String>,
    /// Only events of this run.
    #[arg(long, value_name = "RUN_ID")]
    run: Option<String>,
    /// Exit after this many events.
    #[arg(short = 'n', long, value_name = "N")]
    count: Option<u64>,
}

/// An event is printed as its JSON line with or without `--json`.
#[derive(serde::Serialize)]
#[serde(transparent)]
struct EventLine(TimedEvent);

impl Render for EventLine {
    fn human(&self) -> String {
        serde_json::to_string(&self.0).unwrap_or_default()
    }
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let client = ctx.connect_async().await?;
    let session_id = match &args.session {
        Some(prefix) => Some(ids::session(prefix, client.list_sessions().await?)?.id),
        None => None,
    };
    let params = SubscribeParams {
        event_types: (!args.types.is_empty()).then_some(args.types),
        session_id,
        run_id: args.run,
    };
    let mut events = client
        .subscribe(params, SubscribeOptions::default())
        .await?;
    let mut printed = 0;
    while args.count.is_none_or(|n| printed < n) {
        match events.next().await {
            Some(Ok(SubscriptionItem::Event(event))) => {
                ctx.out.print(&EventLine(*event))?;
                printed += 1;
            }
            Some(Ok(SubscriptionItem::Reconnected { .. })) => {}
            Some(Err(e)) => return Err(e.into()),
            None => {
                return Err(CliError::unreachable("the daemon closed the event stream")
                    .hint("it may have stopped; check with `hlyr daemon status`"))
            }
        }
    }
    Ok(Exit::Ok)
}
