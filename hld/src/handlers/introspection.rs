//! `health` and the introspection methods of spec/004.

use std::sync::Arc;

use hld_client::protocol::*;

use crate::daemon::Daemon;
use crate::error::{Error, Result};

/// The daemon's version (SemVer, no build metadata).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `health`: alive, its version, what it found, how busy it is, and where its files are.
pub async fn health(daemon: Arc<Daemon>, _: NoParams) -> Result<HealthResult> {
    let tools = daemon.sessions.tools().await;
    Ok(HealthResult {
        status: "ok".into(),
        version: VERSION.into(),
        claude: Some(tools.claude),
        approvals: Some(tools.approvals),
        subscribers: daemon.bus.subscriber_count() as u64,
        active_sessions: daemon.sessions.active_count() as u64,
        pid: Some(daemon.pid),
        started_at: Some(daemon.started_at.clone()),
        socket: Some(daemon.config.socket.to_string_lossy().into_owned()),
        database: Some(daemon.config.database.to_string_lossy().into_owned()),
        log_file: daemon
            .config
            .log_file
            .as_ref()
            .map(|f| f.to_string_lossy().into_owned()),
        worktree_root: Some(daemon.worktrees.root().to_string_lossy().into_owned()),
        stray_worktrees: daemon.worktrees.stray(),
        notifications: Some(daemon.notifications.clone()),
        http_address: daemon.config.http.as_ref().map(|h| h.address.to_string()),
        http_tls: daemon.config.http.as_ref().is_some_and(|h| h.tls.is_some()),
        ws_address: daemon
            .config
            .websocket
            .as_ref()
            .map(|w| w.address.to_string()),
        ws_tls_fingerprint: daemon
            .config
            .websocket
            .as_ref()
            .and_then(|w| w.tls_fingerprint)
            .map(|f| f.to_string()),
    })
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

/// The database file and what it holds (`GET /debug-info` of the REST API).
#[derive(Debug)]
pub struct DatabaseInfo {
    pub path: std::path::PathBuf,
    pub size: u64,
    /// When the file last changed, RFC 3339.
    pub last_modified: Option<String>,
    pub tables: i64,
    /// Rows of sessions, approvals and conversation events, by those names.
    pub rows: Vec<(&'static str, i64)>,
}

pub async fn database_info(daemon: &Daemon) -> Result<DatabaseInfo> {
    let path = daemon.config.database.clone();
    let meta = tokio::fs::metadata(&path)
        .await
        .map_err(|e| Error::internal("failed to read the database file", e))?;
    let last_modified = meta.modified().ok().map(|t| {
        chrono::DateTime::<chrono::Utc>::from(t)
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    });
    let (tables, rows) = daemon
        .store
        .read(crate::store::debug::stats)
        .await
        .map_err(|e| Error::internal("failed to count the database's rows", e))?;
    Ok(DatabaseInfo {
        path,
        size: meta.len(),
        last_modified,
        tables,
        rows,
    })
}
