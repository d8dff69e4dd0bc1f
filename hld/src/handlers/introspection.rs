//! `health` and the introspection methods of spec/004.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use hld_client::protocol::*;

use crate::daemon::Daemon;
use crate::rpc::error::RpcError;

/// The daemon's version (SemVer, no build metadata).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `health`, the most frequent call (every CLI start checks it): its JSON is assembled from
/// the cached JSON of claude's and the approvals server's availability rather than serialised
/// field by field, straight into the reply line.
pub async fn health(daemon: Arc<Daemon>, _: NoParams, line: Vec<u8>) -> Result<Vec<u8>, RpcError> {
    let tools = daemon.sessions.tools_json().await;
    Ok(health_json(
        line,
        &tools,
        daemon.subscriptions.load(Ordering::Relaxed) as u64,
        daemon.sessions.active_count() as u64,
    ))
}

/// Appends to `out` the JSON of a [`HealthResult`] with status `ok`, this version and
/// `tools`, the `claude` and `approvals` members as JSON.
fn health_json(mut out: Vec<u8>, tools: &str, subscribers: u64, active_sessions: u64) -> Vec<u8> {
    // VERSION is SemVer: nothing in it needs escaping.
    out.extend_from_slice(b"{\"status\":\"ok\",\"version\":\"");
    out.extend_from_slice(VERSION.as_bytes());
    out.extend_from_slice(b"\",");
    out.extend_from_slice(tools.as_bytes());
    out.extend_from_slice(b",\"subscribers\":");
    // Numbers through serde_json: `format!` costs more than the rest of the reply.
    serde_json::to_writer(&mut out, &subscribers).expect("a number serialises");
    out.extend_from_slice(b",\"active_sessions\":");
    serde_json::to_writer(&mut out, &active_sessions).expect("a number serialises");
    out.push(b'}');
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_assembled_health_is_the_serialised_result() {
        for claude in [
            ClaudeAvailability {
                available: true,
                path: Some("/opt/bin/claude \"x\"".into()),
                version: Some("2.1.197 (Claude Code)".into()),
            },
            ClaudeAvailability {
                available: false,
                path: None,
                version: None,
            },
        ] {
            let approvals = ApprovalsAvailability {
                available: false,
                command: "/opt/bin/hlyr".into(),
                configured: true,
                error: Some("approvals command /opt/bin/hlyr is missing".into()),
            };
            let json = crate::session::tools_members(&claude, &approvals);
            let typed = HealthResult {
                status: "ok".into(),
                version: VERSION.into(),
                claude: Some(claude),
                approvals: Some(approvals),
                subscribers: 3,
                active_sessions: 1,
            };
            let assembled = health_json(Vec::new(), &json, 3, 1);
            assert_eq!(assembled, serde_json::to_vec(&typed).unwrap());
            let back: HealthResult = serde_json::from_slice(&assembled).unwrap();
            assert_eq!(back, typed);
            // Appended after what the line already holds.
            let line = health_json(crate::rpc::SUCCESS_HEAD.to_vec(), &json, 3, 1);
            assert_eq!(
                line[..crate::rpc::SUCCESS_HEAD.len()],
                *crate::rpc::SUCCESS_HEAD
            );
            assert_eq!(line[crate::rpc::SUCCESS_HEAD.len()..], assembled);
        }
    }
}
