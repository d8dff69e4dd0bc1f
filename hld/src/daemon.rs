//! The daemon's shared state: config, store, sessions, bus and shutdown token, in one `Arc`.

use std::sync::Arc;

use hld_client::protocol::NotificationChannels;

use tokio_util::sync::CancellationToken;

use crate::approval::api::{ApiError, CloudClient};
use crate::approval::Approvals;
use crate::budget::Budget;
use crate::bus::Bus;
use crate::config::Config;
use crate::logging::LogControl;
use crate::session::{SessionConfig, Sessions};
use crate::store::Store;
use crate::worktree::Worktrees;

pub struct Daemon {
    pub config: Config,
    pub bus: Bus,
    pub store: Store,
    pub sessions: Arc<Sessions>,
    pub approvals: Approvals,
    pub log: LogControl,
    pub shutdown: CancellationToken,
    /// Wakes the task that ends bypasses when one with an expiry may have been set.
    pub bypass_set: Arc<tokio::sync::Notify>,
    /// Wakes the task that resumes sessions when their usage limit resets.
    pub limit_set: Arc<tokio::sync::Notify>,
    /// When the daemon started, RFC 3339 (`health` reports it).
    pub started_at: String,
    /// This process's id, for `health` (read once: each `getpid` is a system call).
    pub pid: u32,
    pub budget: Budget,
    pub worktrees: Worktrees,
    /// Where notifications go (`health.notifications`).
    pub notifications: NotificationChannels,
}

impl AsRef<Budget> for Daemon {
    fn as_ref(&self) -> &Budget {
        &self.budget
    }
}

impl std::fmt::Debug for Daemon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Daemon")
            .field("socket", &self.config.socket)
            .finish_non_exhaustive()
    }
}

impl Daemon {
    /// The daemon's state over an open store; fails only on a bad HumanLayer base URL or key.
    pub fn new(
        config: Config,
        store: Store,
        log: LogControl,
        shutdown: CancellationToken,
        notifications: NotificationChannels,
    ) -> Result<Arc<Daemon>, ApiError> {
        let bus = Bus::new(config.subscriber_buffer);
        let sessions = Sessions::new(
            SessionConfig {
                claude_path: config.claude_path.clone(),
                socket: config.socket.clone(),
                run_dir: config.run_dir(),
                interrupt_grace: config.interrupt_grace,
                max_agent_line: config.max_agent_line,
                approvals_command: config.approvals_command.clone(),
                api_key: config.cloud.as_ref().map(|c| c.api_key.clone()),
                live_idle: config.live_idle,
                max_live: config.max_live,
            },
            store.clone(),
        );
        let cloud = config
            .cloud
            .as_ref()
            .map(|c| CloudClient::new(&c.base_url, &c.api_key))
            .transpose()?;
        let approvals = Approvals::new(store.clone(), cloud);
        let limit_set = Arc::default();
        store.publish_to(crate::publish::Publisher {
            bus: bus.clone(),
            sessions: Arc::clone(&sessions),
            limit_set: Arc::clone(&limit_set),
        });
        let budget = Budget::new(config.max_buffered);
        let worktrees = Worktrees::new(config.worktree_root(), config.worktree_setup.clone());
        Ok(Arc::new(Daemon {
            approvals,
            bus,
            store,
            sessions,
            config,
            log,
            shutdown,
            bypass_set: Arc::default(),
            limit_set,
            budget,
            started_at: crate::time::now(),
            pid: std::process::id(),
            worktrees,
            notifications,
        }))
    }
}
