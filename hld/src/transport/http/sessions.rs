//! Session routes: the table of every session operation, and the reads (health, the list, one
//! session, search) over the domain functions of `health`, `getSessionLeaves`, `listSessions`,
//! `getSessionState` and `searchSessions`. The writes are in `launches` and `edits`.

use std::sync::Arc;

use hld_client::protocol::{
    ClaudeAvailability, GetSessionLeavesParams, LeafFilter, NoParams, SearchSessionsParams,
    SessionInfo,
};
use hyper::StatusCode;
use serde_json::{json, Value};

use super::api::{data, domain, Call, Query};
use super::guard::{json, Refusal};
use super::shapes::{session, session_detail};
use super::{edits, launches, Reply};
use crate::daemon::Daemon;
use crate::handlers::{control, introspection, sessions as domain_sessions};

/// `GET /sessions/search`: default and largest `limit`, and the longest `query` (reference
/// section 4).
const SEARCH_LIMIT: (usize, usize) = (10, 50);
const SEARCH_QUERY_MAX: usize = 100;

/// The reply to `call` if it is a session route.
pub async fn route(call: &Call<'_>, daemon: &Arc<Daemon>) -> Option<Result<Reply, Refusal>> {
    let d = daemon;
    let reply = match (call.method.as_str(), call.segments.as_slice()) {
        ("GET", ["health"]) => health(d).await,
        ("GET", ["sessions"]) => sessions(d, &call.query).await,
        ("POST", ["sessions"]) => launches::create(call, d).await,
        ("GET", ["sessions", "search"]) => search(d, &call.query).await,
        ("POST", ["sessions", "archive"]) => edits::archive(call, d).await,
        ("POST", ["sessions", "restore"]) => edits::restore(call, d).await,
        ("GET", ["sessions", id]) => get(d, id).await,
        ("PATCH", ["sessions", id]) => edits::patch(call, d, id).await,
        ("POST", ["sessions", id, "launch"]) => launches::launch(call, d, id).await,
        ("DELETE", ["sessions", id, "launch"]) => launches::discard(d, id).await,
        ("POST", ["sessions", id, "continue"]) => launches::continue_session(call, d, id).await,
        ("POST", ["sessions", id, "interrupt"]) => launches::interrupt(d, id).await,
        ("DELETE", ["sessions", id, "hard-delete-empty"]) => edits::hard_delete(d, id).await,
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

/// The leaves under `filter`, as `getSessionLeaves` lists them.
async fn leaves(daemon: &Arc<Daemon>, filter: LeafFilter) -> Result<Vec<SessionInfo>, Refusal> {
    let params = GetSessionLeavesParams {
        filter: Some(filter),
    };
    control::get_session_leaves(Arc::clone(daemon), params)
        .await
        .map(|r| r.sessions)
        .map_err(domain)
}

/// `GET /sessions`: the leaves (`getSessionLeaves`), or with `leavesOnly=false` every session
/// (`listSessions`), of the list asked (none or another: all, discarded drafts included),
/// newest activity first, with the counts of the normal, archived and draft lists.
async fn sessions(daemon: &Arc<Daemon>, query: &Query) -> Result<Reply, Refusal> {
    let (normal, archived) = if query.get("leavesOnly") == Some("false") {
        let all = domain_sessions::list_sessions(Arc::clone(daemon), NoParams {})
            .await
            .map_err(domain)?
            .sessions;
        all.into_iter().partition(|s| !s.control.archived)
    } else {
        (
            leaves(daemon, LeafFilter::Normal).await?,
            leaves(daemon, LeafFilter::Archived).await?,
        )
    };
    // Drafts never have children: their leaves are all of them.
    let drafts = leaves(daemon, LeafFilter::Draft).await?;
    let counts = json!({"normal": normal.len(), "archived": archived.len(), "draft": drafts.len()});
    let shown = match query.get("filter") {
        Some("normal") => vec![normal],
        Some("archived") => vec![archived],
        Some("draft") => vec![drafts],
        _ => {
            let discarded = leaves(daemon, LeafFilter::Discarded).await?;
            vec![normal, archived, drafts, discarded]
        }
    };
    let mut data: Vec<&SessionInfo> = shown.iter().flatten().collect();
    data.sort_by(|a, b| b.last_activity_at.cmp(&a.last_activity_at));
    let data: Vec<Value> = data.into_iter().map(session).collect();
    Ok(json(
        StatusCode::OK,
        &json!({"data": data, "counts": counts}),
    ))
}

/// `GET /sessions/{id}`: the session `getSessionState` reads, with its figures.
async fn get(daemon: &Arc<Daemon>, id: &str) -> Result<Reply, Refusal> {
    let row = domain_sessions::session(daemon, id).await.map_err(domain)?;
    Ok(data(
        StatusCode::OK,
        session_detail(&row.to_info(), &row.to_state()),
    ))
}

/// `GET /sessions/search`: the normal leaves matching `query` (`searchSessions`); an empty
/// query lists them all. At most `limit` (1 to 50, default 10).
async fn search(daemon: &Arc<Daemon>, query: &Query) -> Result<Reply, Refusal> {
    let bad = |message: String| Refusal::new(StatusCode::BAD_REQUEST, "HLD-3001", message);
    let limit = match query.get("limit") {
        None => SEARCH_LIMIT.0,
        Some(n) => n
            .parse()
            .ok()
            .filter(|n| (1..=SEARCH_LIMIT.1).contains(n))
            .ok_or_else(|| bad(format!("limit must be 1 to {}: {n}", SEARCH_LIMIT.1)))?,
    };
    let text = query.get("query").unwrap_or("").trim();
    if text.chars().count() > SEARCH_QUERY_MAX {
        return Err(bad(format!(
            "query must be at most {SEARCH_QUERY_MAX} characters"
        )));
    }
    let normal = leaves(daemon, LeafFilter::Normal).await?;
    let found = if text.is_empty() {
        normal
    } else {
        let params = SearchSessionsParams {
            query: text.to_owned(),
            limit: None,
        };
        let matching = control::search_sessions(Arc::clone(daemon), params)
            .await
            .map_err(domain)?
            .sessions;
        let leaf = |s: &SessionInfo| normal.iter().any(|n| n.id == s.id);
        matching.into_iter().filter(leaf).collect()
    };
    let shown: Vec<Value> = found.iter().take(limit).map(session).collect();
    Ok(data(StatusCode::OK, Value::from(shown)))
}
