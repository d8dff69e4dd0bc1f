//! Helpers for tests of the REST transport (`hld --http`, issue 41): a daemon serving it, calls
//! with reqwest, and strict mirrors of the reference's shapes (hld-rest.md section 2): `Option`
//! for "null", `#[serde(default)]` for "omit", unknown fields refused.

use std::net::SocketAddr;
use std::time::Duration;

use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::Value;

use crate::{wait_for, DaemonOptions, TestDaemon};

/// A daemon on `fake-claude` serving REST on a loopback port (plus `extra` flags), and its
/// base URL with the secret, as CodeLayer is given it.
pub fn daemon(extra: &[&str]) -> (TestDaemon, SocketAddr, String) {
    let mut options = DaemonOptions::fake_claude();
    for arg in extra {
        options = options.arg(arg);
    }
    daemon_with(options)
}

/// A daemon started with `options` serving REST on a loopback port, and its base URL.
pub fn daemon_with(options: DaemonOptions) -> (TestDaemon, SocketAddr, String) {
    daemon_at(options, "127.0.0.1:0")
}

/// [`daemon_with`] serving on `address` (the address bound is returned; the URL is `http://`).
pub fn daemon_at(options: DaemonOptions, address: &str) -> (TestDaemon, SocketAddr, String) {
    let daemon = TestDaemon::start_with(options.arg("--http").arg(address));
    let address = wait_for(Duration::from_secs(10), || {
        let text = std::fs::read_to_string(&daemon.log).ok()?;
        let line = text.lines().find(|l| l.contains("http listening"))?;
        let at = line.find("address=")? + "address=".len();
        line[at..].split_whitespace().next()?.parse().ok()
    })
    .unwrap_or_else(|| panic!("no HTTP address; log:\n{}", daemon.log_text()));
    let secret = std::fs::read_to_string(daemon.dir.join("daemon.http-token")).unwrap();
    let base = format!("http://{address}/t/{}", secret.trim());
    (daemon, address, base)
}

/// The status and JSON body of a request.
pub async fn call(request: reqwest::RequestBuilder) -> (StatusCode, Value) {
    let response = request.send().await.expect("an HTTP answer");
    let status = response.status();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    (status, body)
}

/// The refusal's status and its error message.
pub async fn refused(request: reqwest::RequestBuilder) -> (u16, String) {
    let (status, body) = call(request).await;
    let message = body["error"]["message"].as_str().unwrap_or_default();
    (status.as_u16(), message.to_owned())
}

/// `GET /health` (reference section 3), strictly.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Health {
    pub status: String,
    pub version: String,
    pub dependencies: Dependencies,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dependencies {
    pub claude: ClaudeDependency,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaudeDependency {
    pub available: bool,
    pub path: Option<String>,
    pub version: Option<String>,
    pub version_error: Option<String>,
    pub error: Option<String>,
}

/// `GET /sessions`, strictly.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sessions {
    pub data: Vec<Session>,
    pub counts: Counts,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Counts {
    pub normal: u64,
    pub archived: u64,
    pub draft: u64,
}

/// A Session of reference section 2: `Option` for "null", `#[serde(default)]` for "omit".
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    pub id: String,
    pub run_id: String,
    pub status: String,
    pub created_at: String,
    pub last_activity_at: String,
    pub query: String,
    #[serde(default)]
    pub claude_session_id: Option<String>,
    #[serde(default)]
    pub parent_session_id: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub working_dir: Option<String>,
    #[serde(default)]
    pub error_message: Option<String>,
    /// Only in `GET /sessions/{id}` and the replies that return one session.
    #[serde(default)]
    pub model_id: Option<String>,
    #[serde(default)]
    pub additional_directories: Option<Vec<String>>,
    pub completed_at: Option<String>,
    pub dangerously_skip_permissions_expires_at: Option<String>,
    pub cost_usd: Option<f64>,
    pub duration_ms: Option<i64>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub cache_creation_input_tokens: Option<i64>,
    pub cache_read_input_tokens: Option<i64>,
    pub effective_context_tokens: Option<i64>,
    pub context_limit: u64,
    pub auto_accept_edits: bool,
    pub dangerously_skip_permissions: bool,
    pub archived: bool,
    pub proxy_enabled: bool,
    pub editor_state: Option<String>,
}

/// `{"data": …}`, the reference's wrapping.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Data<T> {
    pub data: T,
}

/// `POST /sessions` → 201.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Created {
    pub session_id: String,
    pub run_id: String,
}

/// `POST /sessions/{id}/continue` → 201.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Continued {
    pub session_id: String,
    pub run_id: String,
    pub claude_session_id: String,
    pub parent_session_id: String,
}

/// `POST /sessions/{id}/interrupt`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interrupted {
    pub success: bool,
    pub session_id: String,
    pub status: String,
}

/// `POST /sessions/archive` and `/sessions/restore`: 200, or 207 with the failures.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bulk {
    pub success: bool,
    #[serde(default)]
    pub failed_sessions: Option<Vec<String>>,
}

/// The flat 422 of a working directory that does not exist.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectoryNotFound {
    pub error: String,
    pub message: String,
    pub path: String,
    #[serde(rename = "requiresCreation")]
    pub requires_creation: bool,
}

/// `{"error": {"code", "message"}}`, a handler's error.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorReply {
    pub error: ErrorBody,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
}

/// The status and error code of a refusal (empty when the body has none).
pub async fn code(request: reqwest::RequestBuilder) -> (u16, String) {
    let (status, body) = call(request).await;
    let code = body["error"]["code"].as_str().unwrap_or_default();
    (status.as_u16(), code.to_owned())
}
