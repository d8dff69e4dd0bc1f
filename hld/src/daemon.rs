//! The daemon's shared state: configuration, the method table, the bus and the shutdown
//! token. One `Arc<Daemon>` is handed to every connection and handler.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::bus::Bus;
use crate::config::Config;
use crate::logging::LogControl;
use crate::rpc::table::MethodTable;

/// Everything a handler can reach.
pub struct Daemon {
    /// The resolved configuration.
    pub config: Config,
    /// The served methods.
    pub methods: MethodTable,
    /// The event bus.
    pub bus: Bus,
    /// Changes the log level.
    pub log: LogControl,
    /// Cancelled when the daemon shuts down.
    pub shutdown: CancellationToken,
}

impl std::fmt::Debug for Daemon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Daemon")
            .field("socket", &self.config.socket)
            .finish_non_exhaustive()
    }
}

impl Daemon {
    /// Builds the daemon's state.
    pub fn new(config: Config, log: LogControl, shutdown: CancellationToken) -> Arc<Daemon> {
        Arc::new(Daemon {
            bus: Bus::new(config.subscriber_buffer),
            methods: crate::handlers::table(),
            config,
            log,
            shutdown,
        })
    }
}
