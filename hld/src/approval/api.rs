//! The HumanLayer cloud API client (hld-anchor.md §4.1–4.4): pending calls and contacts, and the
//! respond calls. The key goes only in the `Authorization` header, marked sensitive.

use std::convert::Infallible;
use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, NaiveDateTime, SecondsFormat, Utc};
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use reqwest::{StatusCode, Url};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The HumanLayer API used when none is configured.
pub const DEFAULT_BASE_URL: &str = "https://api.humanlayer.dev/humanlayer/v1";

pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A HumanLayer API key: no `Display`, and `Debug` prints `<redacted>`, so no log shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// Whether the key is empty (an empty key means "not configured").
    pub fn is_empty(&self) -> bool {
        self.0.trim().is_empty()
    }

    /// The key, for the one child that may hold it: the approvals server, via its MCP config.
    pub fn expose(&self) -> &str {
        self.0.trim()
    }

    /// The `Authorization` header value, marked sensitive.
    fn bearer(&self) -> Result<HeaderValue, ApiError> {
        let mut value = HeaderValue::from_str(&format!("Bearer {}", self.0.trim()))
            .map_err(|_| ApiError::Config("the API key contains invalid characters".into()))?;
        value.set_sensitive(true);
        Ok(value)
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl FromStr for ApiKey {
    type Err = Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(ApiKey::new(s))
    }
}

/// Why an API call failed. The messages carry no response body and no key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// 409: the item was already responded to (elsewhere).
    #[error("API error (status 409): already responded to")]
    Conflict,
    /// Any other HTTP status of 400 or more.
    #[error("API error (status {0})")]
    Status(u16),
    /// No response (connection refused, timeout, TLS failure, …).
    #[error("API request failed: {0}")]
    Transport(String),
    #[error("API response not understood: {0}")]
    Decode(String),
    #[error("API client misconfigured: {0}")]
    Config(String),
}

impl From<reqwest::Error> for ApiError {
    fn from(e: reqwest::Error) -> Self {
        // `without_url`: the URL holds nothing secret, but the error reads better without it.
        ApiError::Transport(e.without_url().to_string())
    }
}

/// A page of pending items; only `items` is used (the API does not page at 100 or fewer).
#[derive(Debug, Deserialize)]
struct Page<T> {
    /// Missing or null means none.
    items: Option<Vec<T>>,
}

/// The `spec` of a cloud function call (the fields the daemon uses).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FunctionCallSpec {
    #[serde(rename = "fn")]
    pub function: String,
    /// The tool input (may be null).
    #[serde(default)]
    pub kwargs: Value,
}

/// The `status` of a cloud item (the fields the daemon uses); times as the API sent them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ItemStatus {
    #[serde(default)]
    pub requested_at: Option<String>,
    /// When it was answered; an answered item is no longer pending.
    #[serde(default)]
    pub responded_at: Option<String>,
}

/// A HumanLayer `FunctionCall` (a permission request) or `HumanContact` (a question), by `spec`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CloudCall<S> {
    /// The run (the daemon's session run id) it belongs to.
    #[serde(default)]
    pub run_id: String,
    pub call_id: String,
    pub spec: S,
    #[serde(default)]
    pub status: Option<ItemStatus>,
}

pub type CloudFunctionCall = CloudCall<FunctionCallSpec>;
pub type CloudHumanContact = CloudCall<HumanContactSpec>;

/// The `spec` of a cloud human contact (the fields the daemon uses).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct HumanContactSpec {
    pub msg: String,
    #[serde(default)]
    pub subject: Option<String>,
}

impl<S> CloudCall<S> {
    /// Not answered yet (no `responded_at`).
    fn is_pending(&self) -> bool {
        self.status
            .as_ref()
            .and_then(|s| s.responded_at.as_ref())
            .is_none()
    }

    /// When it was requested, normalised to RFC 3339 UTC, if the API said so readably.
    pub fn requested_at(&self) -> Option<String> {
        self.status
            .as_ref()
            .and_then(|s| s.requested_at.as_deref())
            .and_then(parse_time)
    }
}

/// Parses an API time (RFC 3339, or zoneless as UTC) into RFC 3339 UTC with milliseconds.
pub fn parse_time(text: &str) -> Option<String> {
    let text = text.trim();
    let utc = match DateTime::parse_from_rfc3339(text) {
        Ok(t) => t.with_timezone(&Utc),
        Err(_) => ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"]
            .iter()
            .find_map(|format| NaiveDateTime::parse_from_str(text, format).ok())?
            .and_utc(),
    };
    Some(utc.to_rfc3339_opts(SecondsFormat::Millis, true))
}

#[derive(Debug, Serialize)]
struct FunctionCallResponse<'a> {
    approved: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    comment: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct HumanContactResponse<'a> {
    response: &'a str,
}

/// A client of the HumanLayer API. Cheap to clone.
#[derive(Clone)]
pub struct CloudClient {
    http: reqwest::Client,
    base: Url,
}

impl std::fmt::Debug for CloudClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudClient")
            .field("base", &self.base.as_str())
            .field("api_key", &"<redacted>")
            .finish()
    }
}

impl CloudClient {
    /// A client of the API at `base_url` with `key`; requests time out after [`REQUEST_TIMEOUT`].
    pub fn new(base_url: &str, key: &ApiKey) -> Result<Self, ApiError> {
        let base = Url::parse(base_url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
            .ok_or_else(|| {
                ApiError::Config(format!(
                    "the API base URL {base_url:?} is not an http(s) URL"
                ))
            })?;
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, key.bearer()?);
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .timeout(REQUEST_TIMEOUT)
            .user_agent(concat!("hld/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ApiError::Config(e.without_url().to_string()))?;
        Ok(CloudClient { http, base })
    }

    /// The URL of `segments` under the base URL (each segment percent-encoded).
    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    /// `GET /agent/function_calls/pending`: the pending items (answered ones filtered out).
    pub async fn pending_function_calls(&self) -> Result<Vec<CloudFunctionCall>, ApiError> {
        self.pending(&["agent", "function_calls", "pending"]).await
    }

    /// `GET /agent/human_contacts/pending`: the pending items (answered ones filtered out).
    pub async fn pending_human_contacts(&self) -> Result<Vec<CloudHumanContact>, ApiError> {
        self.pending(&["agent", "human_contacts", "pending"]).await
    }

    async fn pending<S: DeserializeOwned>(
        &self,
        segments: &[&str],
    ) -> Result<Vec<CloudCall<S>>, ApiError> {
        let response = self.http.get(self.url(segments)).send().await?;
        let body = check(response).await?.bytes().await?;
        let page: Page<CloudCall<S>> =
            serde_json::from_slice(&body).map_err(|e| ApiError::Decode(e.to_string()))?;
        Ok(page
            .items
            .unwrap_or_default()
            .into_iter()
            .filter(CloudCall::is_pending)
            .collect())
    }

    /// `POST /agent/function_calls/{call_id}/respond` with `{"approved", "comment"?}`.
    pub async fn respond_function_call(
        &self,
        call_id: &str,
        approved: bool,
        comment: Option<&str>,
    ) -> Result<(), ApiError> {
        let body = FunctionCallResponse { approved, comment };
        self.post(&["agent", "function_calls", call_id, "respond"], &body)
            .await
    }

    /// `POST /agent/human_contacts/{call_id}/respond` with `{"response"}`.
    pub async fn respond_human_contact(
        &self,
        call_id: &str,
        response: &str,
    ) -> Result<(), ApiError> {
        let body = HumanContactResponse { response };
        self.post(&["agent", "human_contacts", call_id, "respond"], &body)
            .await
    }

    async fn post(&self, segments: &[&str], body: &impl Serialize) -> Result<(), ApiError> {
        let response = self.http.post(self.url(segments)).json(body).send().await?;
        check(response).await.map(drop)
    }
}

/// Turns an HTTP status of 400 or more into an error (409 into [`ApiError::Conflict`]).
async fn check(response: reqwest::Response) -> Result<reqwest::Response, ApiError> {
    let status = response.status();
    if status == StatusCode::CONFLICT {
        Err(ApiError::Conflict)
    } else if status.as_u16() >= 400 {
        Err(ApiError::Status(status.as_u16()))
    } else {
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_with_an_offset_or_without_a_zone_are_read_as_utc() {
        let cases = [
            (
                "2026-03-01T10:20:30.123456",
                Some("2026-03-01T10:20:30.123Z"),
            ),
            ("2026-03-01T10:20:30", Some("2026-03-01T10:20:30.000Z")),
            ("2026-03-01 10:20:30.5", Some("2026-03-01T10:20:30.500Z")),
            (
                "2026-03-01T12:20:30+02:00",
                Some("2026-03-01T10:20:30.000Z"),
            ),
            (
                "2026-03-01T10:20:30.987654321Z",
                Some("2026-03-01T10:20:30.987Z"),
            ),
            ("yesterday", None),
            ("", None),
        ];
        for (text, utc) in cases {
            assert_eq!(parse_time(text).as_deref(), utc, "{text}");
        }
    }

    #[test]
    fn urls_extend_the_base_path_and_encode_the_call_id() {
        let key = ApiKey::new("k");
        for base in ["http://h/humanlayer/v1", "http://h/humanlayer/v1/"] {
            let client = CloudClient::new(base, &key).unwrap();
            assert_eq!(
                client
                    .url(&["agent", "function_calls", "a/b?c", "respond"])
                    .as_str(),
                "http://h/humanlayer/v1/agent/function_calls/a%2Fb%3Fc/respond"
            );
        }
        let bad = CloudClient::new("not a url", &key).unwrap_err();
        assert!(matches!(bad, ApiError::Config(_)), "{bad:?}");
        let bad = CloudClient::new("ftp://h/x", &key).unwrap_err();
        assert!(matches!(bad, ApiError::Config(_)), "{bad:?}");
    }
}
