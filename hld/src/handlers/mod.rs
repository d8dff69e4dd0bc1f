//! The method handlers, each `async fn(Arc<Daemon>, Params) -> Result<…>`, tabled by `server`.

pub mod approvals;
pub mod control;
pub mod drafts;
pub mod files;
pub mod introspection;
pub mod limits;
pub mod messages;
pub mod sessions;
pub mod settings;
pub mod usage;
pub mod worktrees;

pub use introspection::VERSION;

use hld_client::protocol::{EventType, SubscribeParams, EVENT_TYPES};

use crate::bus::{Filter, Subscriber};
use crate::daemon::Daemon;
use crate::error::{Error, Result};

/// `Subscribe`: the events its filter lets through; unknown event types are refused.
pub fn subscribe(daemon: &Daemon, params: SubscribeParams) -> Result<Subscriber> {
    for (i, t) in params.event_types.iter().flatten().enumerate() {
        if EventType::parse(t.as_str()).is_none() {
            return Err(Error::not_accepted(
                &format!("event_types[{i}]"),
                t.as_str(),
                &EVENT_TYPES,
            ));
        }
    }
    Ok(daemon.bus.subscribe(Filter::from(params)))
}
