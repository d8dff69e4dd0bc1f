//! The REST API under `/api/v1`, as CodeLayer calls it (reference hld-rest.md): the router and
//! what every route shares. Each route is a thin adapter over the domain function its JSON-RPC
//! method calls, answering in the reference's shapes (`shapes.rs`).

use std::sync::Arc;

use bytes::Bytes;
use hld_client::protocol::UNKNOWN_ID;
use hyper::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::guard::{json, Refusal};
use super::{approvals, conversation, events, mentions, sessions, settings, Reply};
use crate::daemon::Daemon;
use crate::error::Error;

/// One request as a route sees it: the path after `/api/v1/`, split into segments.
pub struct Call<'a> {
    pub method: &'a Method,
    pub segments: Vec<&'a str>,
    pub query: Query,
    pub body: &'a Bytes,
}

impl Call<'_> {
    /// The body decoded as `T`; an empty body reads as `{}`. Malformed JSON is 400 with an
    /// empty body upstream; ours names what is wrong.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, Refusal> {
        let bytes: &[u8] = if self.body.is_empty() {
            b"{}"
        } else {
            self.body
        };
        serde_json::from_slice(bytes).map_err(|e| {
            Refusal::new(
                StatusCode::BAD_REQUEST,
                "HLD-3001",
                format!("bad request body: {e}"),
            )
        })
    }
}

/// A query string, percent-decoded; a key may repeat (`eventTypes`).
#[derive(Debug, Default)]
pub struct Query(Vec<(String, String)>);

impl Query {
    pub fn parse(query: Option<&str>) -> Query {
        Query(
            form_urlencoded::parse(query.unwrap_or("").as_bytes())
                .into_owned()
                .collect(),
        )
    }

    /// The first value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `key`, in order.
    pub fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A domain error as the reference answers it: invalid input 400 `HLD-3001`, an unknown
/// session or approval 404 `HLD-1002`, anything else 500 `HLD-4001`.
pub fn domain(e: Error) -> Refusal {
    match e {
        Error::InvalidParams { message, data } if data.received == UNKNOWN_ID => {
            Refusal::new(StatusCode::NOT_FOUND, "HLD-1002", message)
        }
        Error::InvalidParams { message, .. } => {
            Refusal::new(StatusCode::BAD_REQUEST, "HLD-3001", message)
        }
        Error::Internal { public, source } => {
            tracing::error!(error = %source, "{public}");
            Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, "HLD-4001", public)
        }
    }
}

/// Invalid input: 400 `HLD-3001` with `message`.
pub fn invalid(message: impl Into<String>) -> Refusal {
    Refusal::new(StatusCode::BAD_REQUEST, "HLD-3001", message)
}

/// Runs `f`, work that blocks (the file system), off the runtime's threads; its panic is a
/// 500, never the daemon's end.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Refusal> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, "HLD-4001", e.to_string()))
}

/// `{"data": value}` with `status`, the reference's wrapping.
pub fn data(status: StatusCode, value: impl Serialize) -> Reply {
    #[derive(Serialize)]
    struct Data<T> {
        data: T,
    }
    json(status, &Data { data: value })
}

/// Answers `method` on `path` (after the secret) with `query` and `body`.
pub async fn route(
    method: &Method,
    path: &str,
    query: Option<&str>,
    body: &Bytes,
    daemon: &Arc<Daemon>,
) -> Result<Reply, Refusal> {
    let Some(path) = path.strip_prefix("api/v1/") else {
        return Err(Refusal::new(
            StatusCode::NOT_FOUND,
            "HLD-1002",
            "the API is under /api/v1",
        ));
    };
    let call = Call {
        method,
        segments: path.split('/').collect(),
        query: Query::parse(query),
        body,
    };
    if let Some(reply) = sessions::route(&call, daemon).await {
        return reply;
    }
    if let Some(reply) = conversation::route(&call, daemon).await {
        return reply;
    }
    if let Some(reply) = approvals::route(&call, daemon).await {
        return reply;
    }
    if let Some(reply) = settings::route(&call, daemon).await {
        return reply;
    }
    if let Some(reply) = events::route(&call, daemon).await {
        return reply;
    }
    if let Some(reply) = mentions::route(&call).await {
        return reply;
    }
    match (method.as_str(), path) {
        ("PATCH", "config") => Err(Refusal::new(
            StatusCode::FORBIDDEN,
            "HLD-403",
            "PATCH /config is never served: the claude binary is chosen where hld starts",
        )),
        _ => Err(Refusal::new(
            StatusCode::NOT_FOUND,
            "HLD-1002",
            "no such operation in the API",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_decoded_and_may_repeat() {
        let q = Query::parse(Some(
            "leavesOnly=true&filter=arch%69ved&eventTypes=a&eventTypes=b+c",
        ));
        assert_eq!(q.get("filter"), Some("archived"));
        assert_eq!(q.all("eventTypes").collect::<Vec<_>>(), ["a", "b c"]);
        assert_eq!(q.get("sessionId"), None);
        assert_eq!(Query::parse(None).get("filter"), None);
    }
}
