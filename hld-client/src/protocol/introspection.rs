//! Introspection (spec/004): `health`, `initialize`, `version`, `listMethods`,
//! `describeMethods`, `setLogLevel` and `shutdown`.

use serde::{Deserialize, Serialize};

use super::NoParams;

/// Result of `health`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthResult {
    /// Always `"ok"` while the daemon serves.
    pub status: String,
    /// The daemon's version.
    pub version: String,
    /// Whether the `claude` CLI was found, and its version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claude: Option<ClaudeAvailability>,
    /// Whether the approvals MCP server that sessions get can run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvals: Option<ApprovalsAvailability>,
    /// Live `Subscribe` connections.
    #[serde(default)]
    pub subscribers: u64,
    /// Sessions with a live process.
    #[serde(default)]
    pub active_sessions: u64,
    /// The daemon's process id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// When the daemon started, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// The socket it serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<String>,
    /// Its SQLite database.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// Its log file; none when it logs to stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_file: Option<String>,
    /// The one directory isolated sessions' worktrees are made in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree_root: Option<String>,
    /// Worktrees found at start-up whose session is gone or whose directory vanished, and
    /// directories under the root the daemon did not make (none is deleted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stray_worktrees: Vec<super::StrayWorktree>,
    /// Where the daemon sends notifications (never the webhook's URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notifications: Option<super::NotificationChannels>,
    /// Where `--http` serves the REST API (never its secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_address: Option<String>,
    /// Whether `--http` serves https (`--http-tls-cert`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub http_tls: bool,
    /// Where `--ws` serves WebSocket (never its token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ws_address: Option<String>,
    /// The SHA-256 fingerprint of the certificate `--ws-tls-cert` serves, as openssl prints
    /// it: what a remote client pins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ws_tls_fingerprint: Option<String>,
}

/// Where `claude` was found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaudeAvailability {
    /// Whether a `claude` binary was found.
    pub available: bool,
    /// Its path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// What `claude --version` printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// The approvals MCP server each launched session gets (`hld mcp claude_approvals`, unless
/// `--approvals-command` names another).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalsAvailability {
    /// Whether the command is there and executable. When false, launches that need it fail.
    pub available: bool,
    /// The command.
    pub command: String,
    /// Whether it was configured, rather than the daemon's own binary.
    #[serde(default)]
    pub configured: bool,
    /// Why it is unavailable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

method!(
    /// Liveness and versions.
    ///
    /// The most frequent call: every CLI start checks it. It also says whether launches can work:
    /// `claude` must be `available`, and so must `approvals` unless the launch brings its own
    /// permission-prompt tool or sets `no_approvals`. The daemon's process id, start time,
    /// socket, database and log file follow; each is optional, so that a client reads an older
    /// daemon's reply too.
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"health","params":{},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"status":"ok","version":"0.1.0","claude":{"available":true,"path":"/usr/local/bin/claude","version":"2.1.197 (Claude Code)"},"approvals":{"available":true,"command":"/usr/local/bin/hld","configured":false},"subscribers":2,"active_sessions":1,"pid":4242,"started_at":"2025-06-12T09:02:41.517Z","socket":"/home/me/.humanlayer/daemon.sock","database":"/home/me/.humanlayer/daemon.db","log_file":"/home/me/.humanlayer/daemon.log"},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// None of its own: a daemon that serves answers `ok`. A missing `claude` or a broken approvals
    /// command is reported in the result (`available: false`, and `error` for the approvals
    /// server), not as an error. A client that cannot reach the socket gets
    /// [`crate::Error::Io`] from connecting.
    ///
    /// # Example
    ///
    /// ```no_run
    /// use hld_client::protocol::{Health, NoParams};
    /// use hld_client::Client;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = Client::connect_default().await?;
    /// // Or `client.health()`, the same call.
    /// let health = client.call::<Health>(NoParams {}).await?;
    /// println!("hld {} is {}", health.version, health.status);
    /// if !health.claude.as_ref().is_some_and(|c| c.available) {
    ///     eprintln!("claude was not found: launchSession will fail");
    /// }
    /// if let Some(problem) = health.approvals.as_ref().and_then(|a| a.error.as_deref()) {
    ///     eprintln!("the approvals MCP server cannot run: {problem}");
    /// }
    /// # Ok(())
    /// # }
    /// ```
    Health, "health", "Report that the daemon is alive, its version, and whether claude was found",
    [], "{status: string, version: string, claude?: object, approvals?: object, subscribers: number, active_sessions: number, pid?: number, started_at?: string, socket?: string, database?: string, log_file?: string}",
    NoParams, HealthResult
);

/// `serverInfo` of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// Always `"hld"`.
    pub name: String,
    /// The daemon's version.
    pub version: String,
}

/// Result of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// Who answers.
    pub server_info: ServerInfo,
    /// Always `"2.0"`.
    pub protocol_version: String,
}

method!(
    /// Server metadata.
    ///
    /// For clients that begin with an `initialize` handshake; the daemon needs none.
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"initialize","params":{},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"serverInfo":{"name":"hld","version":"0.1.0"},"protocolVersion":"2.0"},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// None of its own. From Rust: `client.initialize()`.
    Initialize, "initialize", "Return server metadata (name, version, protocol version)",
    [], "{serverInfo: {name: string, version: string}, protocolVersion: string}",
    NoParams, InitializeResult
);

/// Result of `version`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersionResult {
    /// The daemon's version (SemVer).
    pub version: String,
}

method!(
    /// The daemon's version.
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"version","params":{},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"version":"0.1.0"},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// None of its own. From Rust: `client.version()`.
    Version, "version", "Return the daemon's version", [], "{version: string}",
    NoParams, VersionResult
);

/// One entry of `listMethods`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodSummary {
    /// The method name.
    pub name: String,
    /// What it does.
    pub description: String,
}

method!(
    /// The methods served.
    ///
    /// One entry per method served (the reply below is shortened to two).
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"listMethods","params":{},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":[{"name":"health","description":"Report that the daemon is alive, its version, and whether claude was found"},{"name":"launchSession","description":"Launch a new Claude Code session"}],"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// None of its own. From Rust: `client.list_methods()`.
    ListMethods, "listMethods", "List every method the daemon serves, with a description",
    [], "[{name: string, description: string}]",
    NoParams, Vec<MethodSummary>
);

/// One entry of `describeMethods`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodDescription {
    /// The method name.
    pub name: String,
    /// `name: type` strings; optional params end in `?`.
    pub params: Vec<String>,
    /// The result type.
    pub returns: String,
}

method!(
    /// The methods served, with signatures.
    ///
    /// One entry per method served (the reply below is shortened to two); optional params end in
    /// `?`.
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"describeMethods","params":{},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":[{"name":"getSessionState","params":["session_id: string"],"returns":"{session: SessionState}"},{"name":"fetchApprovals","params":["session_id?: string"],"returns":"{approvals: [Approval]}"}],"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// None of its own. From Rust: `client.describe_methods()`.
    DescribeMethods, "describeMethods", "Describe every method's params and result",
    [], "[{name: string, params: [string], returns: string}]",
    NoParams, Vec<MethodDescription>
);

/// Params of `setLogLevel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetLogLevelParams {
    /// `debug`, `info`, `warn` or `error`, in any case.
    pub level: String,
}

/// Result of `setLogLevel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetLogLevelResult {
    /// The level now in force, lower-case.
    pub level: String,
    /// Always true.
    pub success: bool,
}

/// The accepted log levels.
pub const LOG_LEVELS: [&str; 4] = ["debug", "info", "warn", "error"];

method!(
    /// Change the log level at run time.
    ///
    /// The level is one of [`LOG_LEVELS`], in any case; the reply gives it lower-case.
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"setLogLevel","params":{"level":"DEBUG"},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"level":"debug","success":true},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// -32602 when `level` is missing (`level is required`) or not one of [`LOG_LEVELS`]
    /// (`data.accepted` lists them):
    ///
    /// ```json
    /// {"jsonrpc":"2.0","error":{"code":-32602,"message":"invalid level: verbose","data":{"param":"level","expected":"one of debug|info|warn|error","received":"verbose","accepted":["debug","info","warn","error"]}},"id":1}
    /// ```
    ///
    /// From Rust: `client.set_log_level("debug")`.
    SetLogLevel, "setLogLevel", "Change the daemon's log level (debug|info|warn|error, any case)",
    ["level: string"], "{level: string, success: boolean}",
    SetLogLevelParams, SetLogLevelResult
);

/// Result of `shutdown`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShutdownResult {
    /// Always `"Shutting down gracefully"`.
    pub message: String,
}

method!(
    /// Stop the daemon gracefully.
    ///
    /// The daemon replies first, then stops: expect the connection to close.
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"shutdown","params":{},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"message":"Shutting down gracefully"},"id":1}
    /// ```
    ///
    /// # Errors
    ///
    /// None of its own. From Rust: `client.shutdown()`.
    Shutdown, "shutdown", "Reply, then shut the daemon down gracefully (over stdio and WebSocket: close that connection only)",
    [], "{message: string}",
    NoParams, ShutdownResult
);
