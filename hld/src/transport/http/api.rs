//! The REST API under `/api/v1`, as CodeLayer calls it (reference hld-rest.md): each route a
//! thin adapter over the domain function its JSON-RPC method calls, with the reference's shapes.

use std::sync::Arc;

use bytes::Bytes;
use hld_client::protocol::{
    ClaudeAvailability, GetSessionLeavesParams, LeafFilter, NoParams, SessionInfo,
};
use http_body_util::Full;
use hyper::{Method, Response, StatusCode};
use serde_json::{json, Value};

use super::guard::{json, Refusal};
use crate::daemon::Daemon;
use crate::error::Error;
use crate::handlers::{control, introspection};

/// The reference's context window, reported for every session.
const CONTEXT_LIMIT: u64 = 168_000;

/// The reference's operations not served yet (method, path pattern): 501 names them.
const NOT_SERVED: [(&str, &str); 27] = [
    ("POST", "sessions"),
    ("GET", "sessions/{id}"),
    ("PATCH", "sessions/{id}"),
    ("POST", "sessions/{id}/launch"),
    ("DELETE", "sessions/{id}/launch"),
    ("POST", "sessions/{id}/continue"),
    ("POST", "sessions/{id}/interrupt"),
    ("GET", "sessions/{id}/messages"),
    ("GET", "sessions/{id}/snapshots"),
    ("POST", "sessions/archive"),
    ("POST", "sessions/restore"),
    ("GET", "sessions/search"),
    ("DELETE", "sessions/{id}/hard-delete-empty"),
    ("GET", "approvals"),
    ("POST", "approvals"),
    ("GET", "approvals/{id}"),
    ("POST", "approvals/{id}/decide"),
    ("GET", "user-settings"),
    ("PATCH", "user-settings"),
    ("GET", "recent-paths"),
    ("GET", "stream/events"),
    ("POST", "fuzzy-search/files"),
    ("GET", "debug-info"),
    ("POST", "validate-directory"),
    ("POST", "directories"),
    ("GET", "slash-commands"),
    ("POST", "agents/discover"),
];

/// Whether `path` fits `pattern`, where `{id}` stands for any one segment.
fn fits(pattern: &str, path: &str) -> bool {
    let (mut p, mut s) = (pattern.split('/'), path.split('/'));
    loop {
        match (p.next(), s.next()) {
            (None, None) => return true,
            (Some("{id}"), Some(seg)) if !seg.is_empty() => {}
            (Some(a), Some(b)) if a == b => {}
            _ => return false,
        }
    }
}

fn domain(e: Error) -> Refusal {
    match e {
        Error::InvalidParams { message, .. } => {
            Refusal::new(StatusCode::BAD_REQUEST, "HLD-3001", message)
        }
        Error::Internal { public, source } => {
            tracing::error!(error = %source, "{public}");
            Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, "HLD-4001", public)
        }
    }
}

/// Answers `method` on `path` (after the secret) with `query` and `body`.
pub async fn route(
    method: &Method,
    path: &str,
    query: Option<&str>,
    _body: &Bytes,
    daemon: &Arc<Daemon>,
) -> Result<Response<Full<Bytes>>, Refusal> {
    let Some(path) = path.strip_prefix("api/v1/") else {
        return Err(Refusal::new(
            StatusCode::NOT_FOUND,
            "HLD-1002",
            "the API is under /api/v1",
        ));
    };
    match (method.as_str(), path) {
        ("GET", "health") => health(daemon).await,
        ("GET", "sessions") => sessions(daemon, query).await,
        ("PATCH", "config") => Err(Refusal::new(
            StatusCode::FORBIDDEN,
            "HLD-403",
            "PATCH /config is never served: the claude binary is chosen where hld starts",
        )),
        (m, p) => match NOT_SERVED.iter().find(|(nm, np)| *nm == m && fits(np, p)) {
            Some((nm, np)) => Err(Refusal::new(
                StatusCode::NOT_IMPLEMENTED,
                "HLD-501",
                format!("{nm} /api/v1/{np} is not served by this daemon yet"),
            )),
            None => Err(Refusal::new(
                StatusCode::NOT_FOUND,
                "HLD-1002",
                "no such operation in the API",
            )),
        },
    }
}

/// `GET /health`: `health`'s result in the reference's shape.
async fn health(daemon: &Arc<Daemon>) -> Result<Response<Full<Bytes>>, Refusal> {
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

/// The value of `key` in a query string, if any (no percent-decoding: the values are words).
fn param<'a>(query: Option<&'a str>, key: &str) -> Option<&'a str> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find_map(|(k, v)| (k == key).then_some(v))
}

/// `GET /sessions`: `getSessionLeaves` of each list asked, newest activity first, with counts.
async fn sessions(
    daemon: &Arc<Daemon>,
    query: Option<&str>,
) -> Result<Response<Full<Bytes>>, Refusal> {
    if param(query, "leavesOnly") == Some("false") {
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
    let shown = match param(query, "filter") {
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

/// A session in the reference's shape (section 2): a draft's status is its draft state, and
/// the figures lists leave out (tokens, duration) are null, as upstream's lists send them.
fn session(s: &SessionInfo) -> Value {
    let control = &s.control;
    let status = match (&control.draft, s.interrupting) {
        (Some(draft), _) => Value::from(draft.to_string()),
        (None, true) => Value::from("interrupting"),
        (None, false) => serde_json::to_value(&s.status).unwrap_or(Value::Null),
    };
    let mut v = json!({
        "id": s.id,
        "run_id": s.run_id,
        "status": status,
        "created_at": s.start_time,
        "last_activity_at": s.last_activity_at,
        "query": s.query,
        "completed_at": s.end_time,
        "dangerously_skip_permissions_expires_at": control.dangerously_skip_permissions_expires_at,
        "cost_usd": s.cost_usd.filter(|c| *c > 0.0),
        "duration_ms": null,
        "input_tokens": null,
        "output_tokens": null,
        "cache_creation_input_tokens": null,
        "cache_read_input_tokens": null,
        "effective_context_tokens": null,
        "context_limit": CONTEXT_LIMIT,
        "auto_accept_edits": control.auto_accept_edits,
        "dangerously_skip_permissions": control.dangerously_skip_permissions,
        "archived": control.archived,
        "proxy_enabled": false,
        "editor_state": control.editor_state.as_deref().filter(|e| !e.is_empty()),
    });
    let optional = [
        ("claude_session_id", s.claude_session_id.as_deref()),
        ("parent_session_id", s.parent_session_id.as_deref()),
        (
            "summary",
            Some(s.summary.as_str()).filter(|t| !t.is_empty()),
        ),
        ("title", Some(control.title.as_str())),
        ("model", s.model.as_deref()),
        ("working_dir", s.working_dir.as_deref()),
        ("error_message", s.error.as_deref()),
    ];
    for (key, value) in optional {
        if let Some(value) = value.filter(|t| !t.is_empty()) {
            v[key] = Value::from(value);
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_fit_one_segment_per_id() {
        assert!(fits("sessions/{id}/launch", "sessions/abc/launch"));
        assert!(!fits("sessions/{id}/launch", "sessions//launch"));
        assert!(!fits("sessions/{id}", "sessions/abc/launch"));
        assert!(fits("recent-paths", "recent-paths"));
    }

    #[test]
    fn query_params_are_found_by_name() {
        let q = Some("leavesOnly=true&filter=archived");
        assert_eq!(param(q, "filter"), Some("archived"));
        assert_eq!(param(q, "sessionId"), None);
        assert_eq!(param(None, "filter"), None);
    }
}
