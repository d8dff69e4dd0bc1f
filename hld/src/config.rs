//! The daemon's configuration: command-line flags, environment variables and `humanlayer.json`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use hld_client::config::{
    config_file, config_file_path, config_file_value, expand_tilde, humanlayer_dir,
    resolve_socket_path,
};
use hld_client::protocol::DEFAULT_MAX_MESSAGE_SIZE;

use crate::approval::api::{ApiKey, DEFAULT_BASE_URL};
use crate::approval::cloud::{PollSettings, DEFAULT_POLL_INTERVAL, MAX_BACKOFF};
use crate::approval::server::ApprovalsCommand;

/// Command-line flags of `hld`.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "hld",
    version,
    about = "The hld daemon: launches and supervises Claude Code sessions, stores every \
             conversation, and routes tool approvals to a human.",
    after_help = "Resolution order:\n  \
      socket:   --socket, $HUMANLAYER_DAEMON_SOCKET, daemon_socket in humanlayer.json, ~/.humanlayer/daemon.sock\n  \
      database: --database, $HUMANLAYER_DATABASE_PATH, database_path in humanlayer.json, ~/.humanlayer/daemon.db\n  \
      claude:   --claude-path, $HUMANLAYER_CLAUDE_PATH, claude_path in humanlayer.json, then PATH\n  \
      API key:  --api-key, $HUMANLAYER_API_KEY, api_key in humanlayer.json (enables cloud approvals)\n  \
      API URL:  --api-base-url, $HUMANLAYER_API_BASE_URL, $HUMANLAYER_API_BASE, api_base_url in humanlayer.json\n  \
      WebSocket: --ws, ws_address in humanlayer.json; TLS: --ws-tls-cert/--ws-tls-key, ws_tls_cert/ws_tls_key;\n             \
      origins: --ws-allowed-origin, ws_allowed_origins (an array); token: ws_token in humanlayer.json,\n             \
      else the file daemon.ws-token next to the socket (made 0600 at first start)\n  \
      worktrees: <database dir>/worktrees; worktree_setup in humanlayer.json, {\"REPO PATH\": \"COMMAND\"}\n  \
      notify:   --notify-desktop, notify_desktop (default: on when a session D-Bus answers);\n             \
      --notify-webhook, $HUMANLAYER_NOTIFY_WEBHOOK, notify_webhook; --notify-quiet-ms, notify_quiet_ms;\n             \
      --notify-approval|question|completed|failed|usage-limit|bypass-expiring, notify_approval …\n\
      humanlayer.json is read from $XDG_CONFIG_HOME/humanlayer/ (~/.config/humanlayer/), never from ./,\n  \
      and only if it and its directory are yours (or root's) and no one else can write them.\n\
      Colour is used only on a terminal, never with NO_COLOR or --no-color."
)]
pub struct Args {
    /// Unix socket to serve JSON-RPC on.
    #[arg(long, env = "HUMANLAYER_DAEMON_SOCKET", value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// SQLite database file.
    #[arg(long, env = "HUMANLAYER_DATABASE_PATH", value_name = "PATH")]
    pub database: Option<PathBuf>,
    /// Log level: debug, info, warn or error.
    #[arg(
        long,
        env = "HUMANLAYER_LOG_LEVEL",
        default_value = "info",
        value_name = "LEVEL"
    )]
    pub log_level: String,
    /// Write logs to this file instead of stderr.
    #[arg(long, env = "HUMANLAYER_LOG_FILE", value_name = "PATH")]
    pub log_file: Option<PathBuf>,
    /// Never colour the logs.
    #[arg(long)]
    pub no_color: bool,
    /// Largest accepted incoming message, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_MESSAGE_SIZE, value_name = "BYTES")]
    pub max_message_size: usize,
    /// The most bytes all connections together hold: replies being built or not yet read by
    /// their clients. A connection's next request waits while the budget is full.
    #[arg(long, default_value_t = 256 << 20, value_name = "BYTES")]
    pub max_buffered: usize,
    /// Longest line of `claude`'s output stored whole, in bytes; a longer one is stored cut
    /// to this length, with a marker.
    #[arg(long, default_value_t = 64 << 20, value_name = "BYTES")]
    pub max_agent_line: usize,
    /// The `claude` executable (the scripted stand-in `fake-claude` to try hld without it).
    #[arg(long, env = "HUMANLAYER_CLAUDE_PATH", value_name = "PATH")]
    pub claude_path: Option<PathBuf>,
    /// Milliseconds between subscription heartbeats when no event is sent.
    #[arg(long, default_value_t = 30_000, value_name = "MS")]
    pub heartbeat_interval_ms: u64,
    /// How long a Content-Length-framed message may stay incomplete before it is discarded
    /// and the framing starts again, in milliseconds.
    #[arg(long, default_value_t = 30_000, value_name = "MS")]
    pub frame_timeout_ms: u64,
    /// Relay JSON-RPC with Content-Length framing between stdin/stdout (an editor) and the
    /// daemon at --socket (started if none answers), which shares its sessions with every
    /// front end. `shutdown` ends this connection, not the daemon.
    #[arg(long)]
    pub stdio: bool,
    /// Events a subscriber may fall behind before the oldest are dropped for it (and it is
    /// told how many, with a `lagged` event). The buffer is shared by all subscribers: it
    /// holds the last N events published.
    #[arg(long, default_value_t = 4096, value_name = "N")]
    pub subscriber_buffer: usize,
    /// How long an interrupted `claude` gets before SIGKILL, in milliseconds.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    pub interrupt_grace_ms: u64,
    /// How long a session's `claude` stays warm after a turn, for the next message, in
    /// milliseconds.
    #[arg(long, default_value_t = 300_000, value_name = "MS")]
    pub live_idle_ms: u64,
    /// At most this many warm `claude` processes between turns; the least recently used
    /// closes first.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub max_live: usize,
    /// Resume a session stopped by a usage limit when the limit resets, unless its launch
    /// says otherwise [default: resume_on_reset in humanlayer.json, else false].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub resume_on_reset: Option<bool>,
    /// The command serving the approvals MCP server (`<command> mcp claude_approvals`)
    /// [default: this hld itself]. Checked at start-up: when it is missing, `health` says so
    /// and launches that need it fail.
    #[arg(long, env = "HUMANLAYER_APPROVALS_COMMAND", value_name = "PATH")]
    pub approvals_command: Option<PathBuf>,
    /// Worker threads of the async runtime: 0 (the default) serves everything on one thread;
    /// N uses a multi-thread runtime with N workers.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub worker_threads: usize,
    /// HumanLayer API key: enables cloud approvals. Prefer the environment variable, which
    /// other users cannot read in the process list.
    #[arg(
        long,
        env = "HUMANLAYER_API_KEY",
        hide_env_values = true,
        value_name = "KEY"
    )]
    pub api_key: Option<ApiKey>,
    /// HumanLayer API base URL [default: https://api.humanlayer.dev/humanlayer/v1].
    #[arg(long, env = "HUMANLAYER_API_BASE_URL", value_name = "URL")]
    pub api_base_url: Option<String>,
    /// Also serve every method over WebSocket, subprotocol `holon-rpc` (spec/002), on this
    /// address, e.g. 127.0.0.1:7777: for browser tools and remote dashboards. Every
    /// connection presents the token (`Authorization: Bearer` or `?token=`). Loopback only,
    /// unless --ws-allow-remote.
    #[arg(long = "ws", value_name = "ADDR", help_heading = "WebSocket")]
    pub ws: Option<String>,
    /// Allow a --ws address other machines can reach. Needs TLS (--ws-tls-cert and
    /// --ws-tls-key), so that the token never crosses the network in clear.
    #[arg(long, help_heading = "WebSocket")]
    pub ws_allow_remote: bool,
    /// PEM certificate chain: serve wss:// (TLS) instead of ws://.
    #[arg(long, value_name = "PATH", help_heading = "WebSocket")]
    pub ws_tls_cert: Option<PathBuf>,
    /// The certificate's PEM private key.
    #[arg(long, value_name = "PATH", help_heading = "WebSocket")]
    pub ws_tls_key: Option<PathBuf>,
    /// A browser origin allowed to connect, e.g. http://localhost:5173 (repeat the flag for
    /// more). None by default: a handshake with an `Origin` header is then refused (403); a
    /// native client sends none and needs only the token.
    #[arg(
        long = "ws-allowed-origin",
        value_name = "ORIGIN",
        help_heading = "WebSocket"
    )]
    pub ws_allowed_origins: Vec<String>,
    /// The most WebSocket connections at once; a handshake beyond gets 503.
    #[arg(
        long,
        default_value_t = 64,
        value_name = "N",
        help_heading = "WebSocket"
    )]
    pub ws_max_connections: usize,
    /// The most connections in their handshake at once, apart from the open ones; each has
    /// 3 s to finish it. Beyond, the oldest that has sent nothing yet (else the oldest) is closed.
    #[arg(
        long,
        default_value_t = 256,
        value_name = "N",
        help_heading = "WebSocket"
    )]
    pub ws_max_handshakes: usize,
    /// The most events a WebSocket client may leave unanswered; later ones are dropped,
    /// and the next one sent is a `lagged` event with their count.
    #[arg(
        long,
        default_value_t = 256,
        value_name = "N",
        help_heading = "WebSocket"
    )]
    pub ws_max_pending: usize,
    /// Milliseconds between the server's `rpc.heartbeat` requests.
    #[arg(
        long,
        default_value_t = 15_000,
        value_name = "MS",
        help_heading = "WebSocket"
    )]
    pub ws_heartbeat_ms: u64,
    /// Milliseconds a WebSocket client has to send anything after a heartbeat request
    /// before it is closed (1008).
    #[arg(
        long,
        default_value_t = 5_000,
        value_name = "MS",
        help_heading = "WebSocket"
    )]
    pub ws_heartbeat_timeout_ms: u64,
    /// Milliseconds after which an unanswered server request is forgotten.
    #[arg(long, default_value_t = 30_000, value_name = "MS", hide = true)]
    pub ws_stale_ms: u64,
    /// Milliseconds between cloud approval polls.
    #[arg(long, default_value_t = millis(DEFAULT_POLL_INTERVAL), value_name = "MS", hide = true)]
    pub approval_poll_interval_ms: u64,
    /// The longest wait between cloud approval polls after failures, in milliseconds.
    #[arg(long, default_value_t = millis(MAX_BACKOFF), value_name = "MS", hide = true)]
    pub approval_max_backoff_ms: u64,
    #[command(flatten)]
    pub notify: crate::notify::NotifyArgs,
    #[command(flatten)]
    pub http: crate::transport::http::HttpArgs,
    /// Something else to run than the daemon.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// What `hld` runs instead of the daemon.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Command {
    /// Serve an MCP server on stdio, for a session's `claude` (the daemon starts it).
    Mcp {
        /// The server.
        #[command(subcommand)]
        server: McpServer,
    },
}

/// The MCP servers `hld mcp` serves.
#[derive(Debug, Clone, Copy, clap::Subcommand)]
pub enum McpServer {
    /// Claude Code's permission-prompt tool (`request_permission`) and `contact_human`,
    /// answered by a human through the daemon at `--socket` (or `HUMANLAYER_DAEMON_SOCKET`).
    #[command(name = "claude_approvals")]
    ClaudeApprovals,
}

/// Cloud approvals: the HumanLayer API and its poll timing (`Debug` redacts the key).
#[derive(Debug, Clone)]
pub struct CloudConfig {
    pub api_key: ApiKey,
    pub base_url: String,
    pub poll: PollSettings,
}

/// The WebSocket transport (`--ws`): the flags of its heading, resolved.
#[derive(Debug, Clone)]
pub struct WsConfig {
    pub address: SocketAddr,
    /// The certificate and key files, for wss://.
    pub tls: Option<crate::transport::tls::TlsFiles>,
    /// The SHA-256 fingerprint of the certificate served, once it is read at bind.
    pub tls_fingerprint: Option<hld_client::address::Fingerprint>,
    /// The token from `ws_token` in humanlayer.json; else the token file's.
    pub token: Option<WsToken>,
    /// Browser origins allowed to connect (lower case, no trailing `/`).
    pub allowed_origins: Vec<String>,
    pub max_connections: usize,
    pub max_handshakes: usize,
    /// The most server-initiated requests waiting for a reply, per connection.
    pub max_pending: usize,
    pub heartbeat: Duration,
    pub heartbeat_timeout: Duration,
    /// When an unanswered server request is forgotten.
    pub stale_after: Duration,
}

/// The WebSocket token: at least 16 letters, digits or `-._~`, so it travels as it is in
/// `?token=` and in a header. Compared in constant time; its `Debug` shows `<redacted>`.
#[derive(Clone, PartialEq, Eq)]
pub struct WsToken(String);

impl std::fmt::Debug for WsToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WsToken(<redacted>)")
    }
}

impl WsToken {
    /// Checks `token` (trimmed).
    pub fn new(token: &str) -> Result<WsToken, String> {
        let token = token.trim();
        if token.len() < 16 {
            return Err("a token has at least 16 characters".into());
        }
        if !token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
        {
            return Err("a token has only letters, digits and -._~".into());
        }
        Ok(WsToken(token.to_owned()))
    }

    /// Whether `presented` is the token, in time that does not depend on where they differ.
    pub fn matches(&self, presented: &str) -> bool {
        subtle::ConstantTimeEq::ct_eq(self.0.as_bytes(), presented.as_bytes()).into()
    }
}

impl WsConfig {
    /// The WebSocket settings, if any; a non-loopback address needs `--ws-allow-remote` and TLS.
    fn resolve(args: &Args) -> Result<Option<WsConfig>, String> {
        let Some(address) = args.ws.clone().or(config_file_value("ws_address")?) else {
            return Ok(None);
        };
        let address: SocketAddr = address.trim().parse().map_err(|_| {
            format!("--ws {address:?} is not an address and port, e.g. 127.0.0.1:7777")
        })?;
        let tls = crate::transport::tls::resolve(
            "ws",
            address,
            args.ws_allow_remote,
            args.ws_tls_cert.as_deref(),
            args.ws_tls_key.as_deref(),
        )?;
        let token = config_file_value("ws_token")?
            .map(|t| WsToken::new(&t).map_err(|e| format!("ws_token in humanlayer.json: {e}")))
            .transpose()?;
        let mut origins = args.ws_allowed_origins.clone();
        if origins.is_empty() {
            origins = config_file_list("ws_allowed_origins")?;
        }
        let allowed_origins = origins
            .iter()
            .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
            .filter(|o| !o.is_empty())
            .collect();
        Ok(Some(WsConfig {
            address,
            tls,
            tls_fingerprint: None,
            token,
            allowed_origins,
            max_connections: args.ws_max_connections.max(1),
            max_handshakes: args.ws_max_handshakes.max(1),
            max_pending: args.ws_max_pending.max(1),
            heartbeat: Duration::from_millis(args.ws_heartbeat_ms.max(1)),
            heartbeat_timeout: Duration::from_millis(args.ws_heartbeat_timeout_ms.max(1)),
            stale_after: Duration::from_millis(args.ws_stale_ms.max(1)),
        }))
    }
}

/// An array of strings under `key` in `humanlayer.json` (empty if absent). A file that is
/// refused or malformed, or a value that is not an array of strings, is an error.
fn config_file_list(key: &str) -> Result<Vec<String>, String> {
    match config_file()?.as_ref().and_then(|value| value.get(key)) {
        None | Some(serde_json::Value::Null) => Ok(Vec::new()),
        Some(list) => serde_json::from_value(list.clone()).map_err(|_| {
            format!(
                "{key} in {} must be an array of strings",
                config_file_path().display()
            )
        }),
    }
}

/// The resolved configuration: [`Args`] with paths found, durations made, limits checked.
#[derive(Debug, Clone)]
pub struct Config {
    pub socket: PathBuf,
    pub database: PathBuf,
    pub log_level: String,
    pub log_file: Option<PathBuf>,
    /// `--no-color`, or `NO_COLOR` set.
    pub no_color: bool,
    pub max_message_size: usize,
    pub max_buffered: usize,
    pub max_agent_line: usize,
    /// An explicitly configured `claude` (flag, config file or environment), made absolute.
    pub claude_path: Option<PathBuf>,
    pub heartbeat_interval: Duration,
    pub frame_timeout: Duration,
    pub stdio: bool,
    pub subscriber_buffer: usize,
    pub interrupt_grace: Duration,
    pub live_idle: Duration,
    pub max_live: usize,
    /// Whether sessions resume when their usage limit resets, when a launch does not say.
    pub resume_on_reset: bool,
    pub approvals_command: ApprovalsCommand,
    /// 0 for the single-thread runtime.
    pub worker_threads: usize,
    /// Cloud approvals, when an API key is configured.
    pub cloud: Option<CloudConfig>,
    pub websocket: Option<WsConfig>,
    /// `worktree_setup` in humanlayer.json: each repository's command for a new worktree.
    pub worktree_setup: crate::worktree::SetupCommands,
    pub notify: crate::notify::NotifyConfig,
    pub http: Option<crate::transport::http::HttpConfig>,
}

impl Config {
    /// Resolves flags, environment and config file.
    pub fn from_args(args: Args) -> Result<Config, String> {
        let socket = resolve_socket_path(args.socket.as_deref())?;
        let websocket = WsConfig::resolve(&args)?;
        let database = match args.database {
            Some(p) => expand_tilde(&p.to_string_lossy()),
            None => match config_file_value("database_path")? {
                Some(file) => expand_tilde(&file),
                None => humanlayer_dir().join("daemon.db"),
            },
        };
        let claude_path = match args.claude_path {
            Some(p) => Some(p),
            None => config_file_value("claude_path")?.map(|file| expand_tilde(&file)),
        };
        // Sessions run in their own working directories: a relative path (as in
        // `--claude-path target/release/fake-claude`) means one from here.
        let claude_path = claude_path
            .map(|p| std::path::absolute(&p))
            .transpose()
            .map_err(|e| format!("--claude-path: {e}"))?;
        let api_key = match args.api_key.filter(|k| !k.is_empty()) {
            Some(key) => Some(key),
            None => config_file_value("api_key")?.map(ApiKey::new),
        };
        let cloud = match api_key {
            Some(api_key) => Some(CloudConfig {
                api_key,
                base_url: resolve_api_base_url(args.api_base_url)?,
                poll: PollSettings {
                    interval: Duration::from_millis(args.approval_poll_interval_ms.max(1)),
                    max_backoff: Duration::from_millis(args.approval_max_backoff_ms.max(1)),
                },
            }),
            None => None,
        };
        if args.max_message_size == 0 {
            return Err("--max-message-size must be positive".into());
        }
        if args.max_buffered < 1 << 20 {
            return Err("--max-buffered must be at least 1 MiB (1048576)".into());
        }
        Ok(Config {
            socket,
            database,
            log_level: args.log_level,
            log_file: args.log_file,
            no_color: args.no_color || std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            max_message_size: args.max_message_size,
            max_buffered: args.max_buffered,
            max_agent_line: args.max_agent_line.max(1),
            claude_path,
            heartbeat_interval: Duration::from_millis(args.heartbeat_interval_ms.max(1)),
            frame_timeout: Duration::from_millis(args.frame_timeout_ms.max(1)),
            stdio: args.stdio,
            subscriber_buffer: args.subscriber_buffer.max(1),
            interrupt_grace: Duration::from_millis(args.interrupt_grace_ms),
            live_idle: Duration::from_millis(args.live_idle_ms),
            max_live: args.max_live,
            resume_on_reset: match args.resume_on_reset {
                Some(resume) => resume,
                None => config_file_bool("resume_on_reset")?.unwrap_or(false),
            },
            approvals_command: ApprovalsCommand::resolve(args.approvals_command)?,
            cloud,
            worker_threads: args.worker_threads,
            websocket,
            worktree_setup: crate::worktree::setup_commands()?,
            notify: crate::notify::NotifyConfig::resolve(&args.notify)?,
            http: crate::transport::http::HttpConfig::resolve(&args.http)?,
        })
    }

    /// The WebSocket token's file: `daemon.ws-token` in the socket's private directory.
    pub fn ws_token_file(&self) -> PathBuf {
        self.socket
            .parent()
            .unwrap_or(Path::new("."))
            .join("daemon.ws-token")
    }

    /// The REST API's secret: `daemon.http-token` beside the WebSocket's.
    pub fn http_token_file(&self) -> PathBuf {
        self.ws_token_file().with_file_name("daemon.http-token")
    }

    /// The daemon's private directory for per-session files (MCP configs), by the database.
    pub fn run_dir(&self) -> PathBuf {
        self.database
            .parent()
            .map_or_else(|| PathBuf::from("."), std::path::Path::to_path_buf)
            .join("run")
    }

    /// The one directory isolated sessions' worktrees are made in, by the database.
    pub fn worktree_root(&self) -> PathBuf {
        self.run_dir().with_file_name("worktrees")
    }
}

/// A boolean key of humanlayer.json; anything but `true` or `false` is an error.
fn config_file_bool(key: &str) -> Result<Option<bool>, String> {
    match config_file()?.as_ref().and_then(|file| file.get(key)) {
        None => Ok(None),
        Some(serde_json::Value::Bool(value)) => Ok(Some(*value)),
        Some(other) => Err(format!(
            "{key} in {} must be true or false, not {other}",
            config_file_path().display()
        )),
    }
}

/// A duration as whole milliseconds (for flag defaults).
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The API base URL: the flag or `$HUMANLAYER_API_BASE_URL`, `$HUMANLAYER_API_BASE`,
/// `api_base_url` in humanlayer.json, then the HumanLayer default.
fn resolve_api_base_url(flag: Option<String>) -> Result<String, String> {
    let env = || {
        std::env::var("HUMANLAYER_API_BASE")
            .ok()
            .filter(|v| !v.trim().is_empty())
    };
    Ok(match flag.filter(|v| !v.trim().is_empty()).or_else(env) {
        Some(url) => url,
        None => config_file_value("api_base_url")?.unwrap_or_else(|| DEFAULT_BASE_URL.into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(extra: &[&str]) -> Args {
        let base = [
            "hld",
            "--socket",
            "/tmp/hld-t.sock",
            "--database",
            "/tmp/hld-t.db",
        ];
        Args::try_parse_from(base.iter().chain(extra)).unwrap()
    }

    #[test]
    fn a_configured_ws_token_must_be_long_and_plain() {
        assert!(WsToken::new("short").is_err());
        assert!(WsToken::new("has a space in it, sadly").is_err());
        assert!(WsToken::new(" 0123456789abcdef-._~ ").is_ok());
    }

    #[test]
    fn the_api_key_enables_cloud_approvals_and_never_shows_in_debug_output() {
        let key = ["--api-key", "hl-secret-key-123"];
        let args = parse(&[&key[..], &["--approval-poll-interval-ms", "50"]].concat());
        assert!(!format!("{args:?}").contains("hl-secret-key-123"));
        let config = Config::from_args(args).unwrap();
        let debug = format!("{config:?}");
        assert!(!debug.contains("hl-secret-key-123"), "{debug}");
        let cloud = config.cloud.expect("cloud approvals enabled");
        assert_eq!(cloud.api_key, ApiKey::new("hl-secret-key-123"));
        assert_eq!(cloud.poll.interval, Duration::from_millis(50));
        // The backoff defaults to the spec's constant.
        assert_eq!(cloud.poll.max_backoff, Duration::from_millis(300_000));
        let blank = Config::from_args(parse(&["--api-key", " "])).unwrap();
        assert!(blank.cloud.is_none(), "an empty key leaves them off");
    }

    #[test]
    fn the_help_hides_the_poll_knobs() {
        use clap::CommandFactory;
        let help = Args::command().render_long_help().to_string();
        assert!(help.contains("--api-key"));
        assert!(!help.contains("--approval-poll-interval-ms"));
    }
}
