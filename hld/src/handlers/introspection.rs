//! `health` and the introspection methods of spec/004.

use std::sync::{Arc, Mutex, PoisonError};

use hld_client::protocol::*;

use crate::daemon::Daemon;
use crate::error::{Error, Result};
use crate::rpc::router::Encoded;
use crate::session::Tools;

/// The daemon's version (SemVer, no build metadata).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The last `health` result, kept while what it says holds: `health` is what every client
/// calls first and most often, so its JSON is made once per change rather than per call.
#[derive(Debug, Default)]
pub struct HealthCache(Mutex<Option<LastHealth>>);

/// A `health` result and what it was made of.
#[derive(Debug)]
struct LastHealth {
    tools: Arc<Tools>,
    subscribers: u64,
    active_sessions: u64,
    json: Encoded<HealthResult>,
}

/// `health`: alive, its version, what it found, how busy it is, and where its files are.
pub async fn health(daemon: Arc<Daemon>, _: NoParams) -> Result<Encoded<HealthResult>> {
    let tools = daemon.sessions.tools().await;
    let subscribers = daemon.bus.subscriber_count() as u64;
    let active_sessions = daemon.sessions.active_count() as u64;
    // A std Mutex: held for a comparison, or to store what was just serialised.
    let mut last = daemon
        .health
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(last) = &*last {
        if Arc::ptr_eq(&last.tools, &tools)
            && (last.subscribers, last.active_sessions) == (subscribers, active_sessions)
        {
            return Ok(last.json.clone());
        }
    }
    let json = Encoded::new(&HealthResult {
        status: "ok".into(),
        version: VERSION.into(),
        claude: Some(tools.claude.clone()),
        approvals: Some(tools.approvals.clone()),
        subscribers,
        active_sessions,
        pid: Some(std::process::id()),
        started_at: Some(daemon.started_at.clone()),
        socket: Some(daemon.config.socket.display().to_string()),
        database: Some(daemon.config.database.display().to_string()),
        log_file: daemon
            .config
            .log_file
            .as_ref()
            .map(|f| f.display().to_string()),
    })?;
    *last = Some(LastHealth {
        tools,
        subscribers,
        active_sessions,
        json: json.clone(),
    });
    Ok(json)
}

pub async fn initialize(_: Arc<Daemon>, _: NoParams) -> Result<InitializeResult> {
    Ok(InitializeResult {
        server_info: ServerInfo {
            name: "hld".into(),
            version: VERSION.into(),
        },
        protocol_version: JSONRPC_VERSION.into(),
    })
}

pub async fn version(_: Arc<Daemon>, _: NoParams) -> Result<VersionResult> {
    Ok(VersionResult {
        version: VERSION.into(),
    })
}

pub async fn list_methods(daemon: Arc<Daemon>, _: NoParams) -> Result<Vec<MethodSummary>> {
    Ok(daemon.router.summaries())
}

pub async fn describe_methods(daemon: Arc<Daemon>, _: NoParams) -> Result<Vec<MethodDescription>> {
    Ok(daemon.router.descriptions())
}

pub async fn set_log_level(
    daemon: Arc<Daemon>,
    params: SetLogLevelParams,
) -> Result<SetLogLevelResult> {
    match daemon.log.set_level(&params.level) {
        Some(level) => {
            tracing::info!(%level, "log level changed");
            Ok(SetLogLevelResult {
                level: level.into(),
                success: true,
            })
        }
        None => Err(Error::not_accepted("level", &params.level, &LOG_LEVELS)),
    }
}

pub async fn shutdown(daemon: Arc<Daemon>, _: NoParams) -> Result<ShutdownResult> {
    tracing::info!("shutdown requested over RPC");
    // The connection writes this reply before it next looks at the token.
    daemon.shutdown.cancel();
    Ok(ShutdownResult {
        message: "Shutting down gracefully".into(),
    })
}
