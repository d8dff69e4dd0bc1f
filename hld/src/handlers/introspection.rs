//! `health` and the introspection methods of spec/004.

use std::sync::Arc;

use hld_client::protocol::*;

use crate::daemon::Daemon;
use crate::rpc::error::RpcError;

/// The daemon's version (SemVer, no build metadata).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub async fn health(daemon: Arc<Daemon>, _: NoParams) -> Result<HealthResult, RpcError> {
    Ok(HealthResult {
        status: "ok".into(),
        version: VERSION.into(),
        claude: Some(daemon.sessions.claude().await),
        subscribers: daemon
            .subscriptions
            .load(std::sync::atomic::Ordering::Relaxed) as u64,
        active_sessions: daemon.sessions.active_count() as u64,
    })
}

pub async fn initialize(_: Arc<Daemon>, _: NoParams) -> Result<InitializeResult, RpcError> {
    Ok(InitializeResult {
        server_info: ServerInfo {
            name: "hld".into(),
            version: VERSION.into(),
        },
        protocol_version: JSONRPC_VERSION.into(),
    })
}

pub async fn version(_: Arc<Daemon>, _: NoParams) -> Result<VersionResult, RpcError> {
    Ok(VersionResult {
        version: VERSION.into(),
    })
}

pub async fn list_methods(
    daemon: Arc<Daemon>,
    _: NoParams,
) -> Result<Vec<MethodSummary>, RpcError> {
    Ok(daemon.methods.summaries())
}

pub async fn describe_methods(
    daemon: Arc<Daemon>,
    _: NoParams,
) -> Result<Vec<MethodDescription>, RpcError> {
    Ok(daemon.methods.descriptions())
}

pub async fn set_log_level(
    daemon: Arc<Daemon>,
    params: SetLogLevelParams,
) -> Result<SetLogLevelResult, RpcError> {
    match daemon.log.set_level(&params.level) {
        Some(level) => {
            tracing::info!(level, "log level changed");
            Ok(SetLogLevelResult {
                level: level.into(),
                success: true,
            })
        }
        None => Err(RpcError::not_accepted("level", &params.level, &LOG_LEVELS)),
    }
}

pub async fn shutdown(daemon: Arc<Daemon>, _: NoParams) -> Result<ShutdownResult, RpcError> {
    tracing::info!("shutdown requested over RPC");
    // The connection writes this reply before it next looks at the token.
    daemon.shutdown.cancel();
    Ok(ShutdownResult {
        message: "Shutting down gracefully".into(),
    })
}
