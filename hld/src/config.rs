//! The daemon's configuration: command-line flags, environment variables and `humanlayer.json`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use hld_client::config::{config_file_value, expand_tilde, humanlayer_dir, resolve_socket_path};
use hld_client::protocol::DEFAULT_MAX_MESSAGE_SIZE;

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
      claude:   --claude-path, claude_path in humanlayer.json, $HUMANLAYER_CLAUDE_PATH, then PATH\n\
      humanlayer.json is read from ./ or $XDG_CONFIG_HOME/humanlayer/ (~/.config/humanlayer/).\n\
      Colour is used only on a terminal, never with NO_COLOR or --no-color."
)]
pub struct Args {
    /// Unix socket to serve JSON-RPC on.
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// SQLite database file.
    #[arg(long, value_name = "PATH")]
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
    /// The `claude` executable.
    #[arg(long, value_name = "PATH")]
    pub claude_path: Option<PathBuf>,
    /// Milliseconds between subscription heartbeats when no event is sent.
    #[arg(long, default_value_t = 30_000, value_name = "MS")]
    pub heartbeat_interval_ms: u64,
    /// Events buffered per subscriber before the oldest are dropped.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub subscriber_buffer: usize,
    /// How long an interrupted `claude` gets before SIGKILL, in milliseconds.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    pub interrupt_grace_ms: u64,
    /// The command serving the approvals MCP server (`<command> mcp claude_approvals`);
    /// by default the `hlyr` next to `hld`, if there is one.
    #[arg(long, env = "HUMANLAYER_APPROVALS_COMMAND", value_name = "PATH")]
    pub approvals_command: Option<PathBuf>,
}

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The socket path.
    pub socket: PathBuf,
    /// The database path.
    pub database: PathBuf,
    /// The initial log level.
    pub log_level: String,
    /// The log file, if any.
    pub log_file: Option<PathBuf>,
    /// Whether colour is forbidden.
    pub no_color: bool,
    /// Largest accepted incoming message.
    pub max_message_size: usize,
    /// An explicitly configured `claude` (flag, config file or environment).
    pub claude_path: Option<PathBuf>,
    /// Heartbeat interval.
    pub heartbeat_interval: Duration,
    /// Per-subscriber buffer.
    pub subscriber_buffer: usize,
    /// Grace period between SIGINT and SIGKILL.
    pub interrupt_grace: Duration,
    /// The command serving the approvals MCP server.
    pub approvals_command: Option<PathBuf>,
}

impl Config {
    /// Resolves flags, environment and config file.
    pub fn from_args(args: Args) -> Result<Config, String> {
        let socket = resolve_socket_path(args.socket.as_deref())?;
        let database = match args.database {
            Some(p) => expand_tilde(&p.to_string_lossy()),
            None => match std::env::var("HUMANLAYER_DATABASE_PATH")
                .ok()
                .filter(|v| !v.is_empty())
            {
                Some(env) => expand_tilde(&env),
                None => match config_file_value("database_path")? {
                    Some(file) => expand_tilde(&file),
                    None => humanlayer_dir().join("daemon.db"),
                },
            },
        };
        let claude_path = match args.claude_path {
            Some(p) => Some(p),
            None => match config_file_value("claude_path")? {
                Some(file) => Some(expand_tilde(&file)),
                None => std::env::var_os("HUMANLAYER_CLAUDE_PATH")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from),
            },
        };
        if args.max_message_size == 0 {
            return Err("--max-message-size must be positive".into());
        }
        Ok(Config {
            socket,
            database,
            log_level: args.log_level,
            log_file: args.log_file,
            no_color: args.no_color || std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            max_message_size: args.max_message_size,
            claude_path,
            heartbeat_interval: Duration::from_millis(args.heartbeat_interval_ms.max(1)),
            subscriber_buffer: args.subscriber_buffer.max(1),
            interrupt_grace: Duration::from_millis(args.interrupt_grace_ms),
            approvals_command: args.approvals_command.or_else(sibling_hlyr),
        })
    }

    /// The daemon's private directory for per-session files (MCP configs), next to the
    /// database.
    pub fn run_dir(&self) -> PathBuf {
        self.database
            .parent()
            .map_or_else(|| PathBuf::from("."), std::path::Path::to_path_buf)
            .join("run")
    }
}

/// `hlyr` in the directory of the running `hld`, if it is there.
fn sibling_hlyr() -> Option<PathBuf> {
    let path = std::env::current_exe().ok()?.parent()?.join("hlyr");
    path.is_file().then_some(path)
}
