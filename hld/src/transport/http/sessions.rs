//! Session routes: health and the session list, over the domain functions of `getSessionLeaves`
//! and `health`.

use std::sync::Arc;

use hld_client::protocol::{ClaudeAvailability, GetSessionLeavesParams, LeafFilter, NoParams};
use hyper::StatusCode;
use serde_json::{json, Value};

use super::api::{domain, Call, Query};
use super::guard::{json, Refusal};
use super::shapes::session;
use super::Reply;
use crate::daemon::Daemon;
use crate::handlers::{control, introspection};

/// The reply to `call` if it is a session route.
pub async fn route(call: &Call<'_>, daemon: &Arc<Daemon>) -> Option<Result<Reply, Refusal>> {
    let reply = match (call.method.as_str(), call.segments.as_slice()) {
        ("GET", ["health"]) => health(daemon).await,
        ("GET", ["sessions"]) => sessions(daemon, &call.query).await,
        _ => return None,
    };
    Some(reply)
}

/// `GET /health`: `health`'s result in the reference's shape.
async fn health(daemon: &Arc<Daemon>) -> Result<Reply, Refusal> {
    let health = introspection::health(Arc::clone(daemon), NoParams {})
        .await
        .map_err(domain)?;
    let claude = health.claude.unwrap_or(ClaudeAvailability {
        available: false,
        path: None,
        version: None,
    });
    let status = if claude.available { "ok" } else { "degraded" };
    let error = (!claude.available).then_some("claude CLI not found");
    let body = json!({
        "status": status,
        "version": health.version,
        "dependencies": {"claude": {
            "available": claude.available,
            "path": claude.path,
            "version": claude.version,
            "version_error": null,
            "error": error,
        }},
    });
    Ok(json(StatusCode::OK, &body))
}

/// `GET /sessions`: `getSessionLeaves` of each list asked, newest activity first, with counts.
async fn sessions(daemon: &Arc<Daemon>, query: &Query) -> Result<Reply, Refusal> {
    if query.get("leavesOnly") == Some("false") {
        return Err(Refusal::new(
            StatusCode::NOT_IMPLEMENTED,
            "HLD-501",
            "GET /api/v1/sessions?leavesOnly=false is not served by this daemon yet",
        ));
    }
    let leaves = |filter| async move {
        let params = GetSessionLeavesParams {
            filter: Some(filter),
        };
        control::get_session_leaves(Arc::clone(daemon), params)
            .await
            .map(|r| r.sessions)
            .map_err(domain)
    };
    let normal = leaves(LeafFilter::Normal).await?;
    let archived = leaves(LeafFilter::Archived).await?;
    let drafts = leaves(LeafFilter::Draft).await?;
    let counts = json!({"normal": normal.len(), "archived": archived.len(), "draft": drafts.len()});
    let shown = match query.get("filter") {
        Some("normal") => vec![normal],
        Some("archived") => vec![archived],
        Some("draft") => vec![drafts],
        _ => vec![normal, archived, drafts],
    };
    let mut data: Vec<(&str, Value)> = shown
        .iter()
        .flatten()
        .map(|s| (s.last_activity_at.as_str(), session(s)))
        .collect();
    data.sort_by(|a, b| b.0.cmp(a.0));
    let data: Vec<Value> = data.into_iter().map(|(_, s)| s).collect();
    Ok(json(
        StatusCode::OK,
        &json!({"data": data, "counts": counts}),
    ))
}
