//! `hlyr events [--type T] [--session ID] [--run ID]`: the daemon's events, one JSON line
//! each, until `--count` events were printed, or Ctrl-C (exit 130). A daemon lost is said on
//! stderr and waited for ([`Reconnect`]); once it is back, the events are subscribed to again.

use clap::builder::PossibleValuesParser;
use clap_complete::ArgValueCompleter;
use futures::StreamExt;
use hld_client::protocol::{EventType, SubscribeParams, TimedEvent, EVENT_TYPES};
use hld_client::{SubscribeOptions, Subscription, SubscriptionItem};
use tokio::signal::unix::{signal, Signal, SignalKind};

use crate::complete;
use crate::error::{CliError, Exit};
use crate::output::Render;
use crate::reconnect::Reconnect;
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
#[command(after_help = "Ctrl-C stops watching and exits 130.")]
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
    let mut client = ctx.connect().await?;
    let session_id = match &args.session {
        Some(prefix) => Some(ids::session(prefix, client.list_sessions().await?)?.id),
        None => None,
    };
    let params = SubscribeParams {
        event_types: (!args.types.is_empty()).then(|| {
            args.types
                .iter()
                .map(|t| EventType::from(t.as_str()))
                .collect()
        }),
        session_id,
        run_id: args.run,
    };
    let mut sigint = signal(SignalKind::interrupt())
        .map_err(|e| CliError::failure(format!("cannot listen for Ctrl-C: {e}")))?;
    let mut reconnect = Reconnect::new(client.address());
    let mut left = args.count;
    loop {
        let printed = async {
            let events = client
                .subscribe(params.clone(), SubscribeOptions::default())
                .await?;
            reconnect.resumed();
            print(ctx, events, &mut left, &mut sigint).await
        };
        let lost = match printed.await {
            Err(e) if e.exit == Exit::Unreachable => e,
            done => return done,
        };
        // Subscribed again once the daemon is back: what it published meanwhile is not told.
        client = tokio::select! {
            client = reconnect.connect(&lost.message) => client,
            _ = sigint.recv() => return Ok(Exit::CtrlC),
        };
    }
}

/// Prints each of `events` until `left` (the events `--count` still takes) is down to 0, or
/// Ctrl-C; else returns the error that ended them (the daemon lost: [`Exit::Unreachable`]).
async fn print(
    ctx: &Context,
    mut events: Subscription,
    left: &mut Option<u64>,
    sigint: &mut Signal,
) -> Result<Exit, CliError> {
    while *left != Some(0) {
        let item = tokio::select! {
            item = events.next() => item,
            // Only watching stops: nothing is left half-printed.
            _ = sigint.recv() => return Ok(Exit::CtrlC),
        };
        match item {
            Some(Ok(SubscriptionItem::Event(event))) => {
                ctx.out.print(&EventLine(*event))?;
                if let Some(left) = left.as_mut() {
                    *left -= 1;
                }
            }
            // An item this version does not know: nothing to print.
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e.into()),
            None => return Err(CliError::unreachable("the daemon closed the event stream")),
        }
    }
    Ok(Exit::Ok)
}
