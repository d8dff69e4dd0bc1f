//! A minimal MCP client for stdio servers, doing what Claude Code 2.1.197 does on the wire.
//!
//! Servers are started before `init` and connected with `initialize` (protocol `2025-11-25`),
//! `notifications/initialized` and `tools/list`; later `tools/call` requests carry the
//! `claudecode/toolUseId` `_meta`. Messages are newline-delimited JSON-RPC 2.0. Each server's
//! stdout is read on its own thread and handed over a channel, so every wait polls the signal
//! flags. Dropping [`McpServers`] closes the servers' stdin and kills those that linger.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::mcp_config::{McpConfig, ServerSpec};
use crate::signals::{Signal, Signals, POLL};
use crate::CLI_VERSION;

/// The MCP protocol revision the real CLI offers.
const PROTOCOL_VERSION: &str = "2025-11-25";
/// How long a server may take to answer each handshake request.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long servers get to exit after their stdin is closed before they are killed.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// Why an MCP request produced no result.
#[derive(Debug)]
pub enum CallError {
    /// A signal arrived while waiting.
    Signal(Signal),
    /// The server answered with a JSON-RPC error.
    Rpc { code: i64, message: String },
    /// The server went away (exited, closed its stdout, or its stdin broke).
    Closed,
    /// No answer within the handshake timeout.
    Timeout,
}

impl CallError {
    /// The error text the real CLI shows for a failed MCP request.
    pub fn describe(&self) -> String {
        match self {
            Self::Signal(_) | Self::Closed => "MCP error -32000: Connection closed".into(),
            Self::Rpc { code, message } => format!("MCP error {code}: {message}"),
            Self::Timeout => "MCP error -32001: Request timed out".into(),
        }
    }
}

/// One configured server and, if the handshake succeeded, its connection.
#[derive(Debug)]
pub struct Server {
    pub name: String,
    /// The environment its config gives it.
    pub env: BTreeMap<String, String>,
    connection: Option<Connection>,
    /// The tool names from `tools/list` (empty when not connected).
    tools: Vec<String>,
}

impl Server {
    /// The status shown in `init.mcp_servers`.
    pub fn status(&self) -> &'static str {
        if self.connection.is_some() {
            "connected"
        } else {
            "failed"
        }
    }
}

/// All servers of the run's MCP configuration.
#[derive(Debug, Default)]
pub struct McpServers {
    servers: Vec<Server>,
}

impl McpServers {
    /// Starts and connects every stdio server of `config`.
    ///
    /// A server that cannot be started or does not complete the handshake is kept as
    /// `failed`. SIGINT during start-up fails the remaining servers (the scenario then stops
    /// at its first step); SIGTERM/SIGHUP stop everything: `Err` holds the exit code.
    pub fn start(config: Option<&McpConfig>, cwd: &Path, signals: &Signals) -> Result<Self, i32> {
        let mut servers = Self::default();
        let Some(config) = config else {
            return Ok(servers);
        };
        for (name, spec) in &config.servers {
            let mut server = Server {
                name: name.clone(),
                env: BTreeMap::new(),
                connection: None,
                tools: Vec::new(),
            };
            if let ServerSpec::Stdio { command, args, env } = spec {
                server.env = env.clone();
                if let Ok(mut connection) = Connection::spawn(command, args, env, cwd) {
                    match connection.handshake(signals) {
                        Ok(tools) => {
                            server.tools = tools;
                            server.connection = Some(connection);
                        }
                        Err(CallError::Signal(Signal::Fatal(code))) => {
                            servers.servers.push(Server {
                                connection: Some(connection),
                                ..server
                            });
                            return Err(code);
                        }
                        Err(_) => connection.kill(),
                    }
                }
            }
            servers.servers.push(server);
        }
        Ok(servers)
    }

    /// The configured servers, in name order.
    pub fn servers(&self) -> &[Server] {
        &self.servers
    }

    /// `mcp__<server>__<tool>` for every tool of every connected server.
    pub fn tool_names(&self) -> Vec<String> {
        self.servers
            .iter()
            .flat_map(|server| {
                server
                    .tools
                    .iter()
                    .map(move |tool| format!("mcp__{}__{tool}", server.name))
            })
            .collect()
    }

    /// Whether `server` is connected and lists `tool`.
    pub fn has_tool(&self, server: &str, tool: &str) -> bool {
        self.servers
            .iter()
            .any(|s| s.name == server && s.tools.iter().any(|t| t == tool))
    }

    /// The environment of a configured server.
    pub fn env(&self, server: &str) -> Option<&BTreeMap<String, String>> {
        self.servers
            .iter()
            .find(|s| s.name == server)
            .map(|s| &s.env)
    }

    /// `tools/call` without a timeout (a human may be answering), calling `waiting` at every
    /// poll while the answer is awaited; returns the `CallToolResult`. Callers check
    /// [`Self::has_tool`] first.
    pub fn call_tool_while(
        &mut self,
        server: &str,
        tool: &str,
        arguments: Value,
        tool_use_id: &str,
        signals: &Signals,
        waiting: &mut dyn FnMut(),
    ) -> Result<Value, CallError> {
        let connection = self
            .servers
            .iter_mut()
            .find(|s| s.name == server)
            .and_then(|s| s.connection.as_mut())
            .ok_or(CallError::Closed)?;
        let params = json!({
            "name": tool,
            "arguments": arguments,
            "_meta": {"claudecode/toolUseId": tool_use_id, "progressToken": connection.next_id},
        });
        connection.request("tools/call", params, None, signals, waiting)
    }
}

impl Drop for McpServers {
    fn drop(&mut self) {
        let mut children: Vec<Child> = self
            .servers
            .iter_mut()
            .filter_map(|server| server.connection.take())
            .map(Connection::close)
            .collect();
        let deadline = Instant::now() + SHUTDOWN_GRACE;
        while Instant::now() < deadline {
            children.retain_mut(|child| matches!(child.try_wait(), Ok(None)));
            if children.is_empty() {
                return;
            }
            std::thread::sleep(POLL);
        }
        for child in &mut children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A running stdio server.
#[derive(Debug)]
struct Connection {
    child: Child,
    stdin: ChildStdin,
    /// Parsed JSON lines from the server's stdout; disconnected once it closes.
    incoming: Receiver<Value>,
    next_id: u64,
    /// Announced as the only root when the server asks `roots/list`.
    root_uri: String,
}

impl Connection {
    /// Starts the server with its `env` added to the inherited environment.
    fn spawn(
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        cwd: &Path,
    ) -> std::io::Result<Self> {
        let mut child = Command::new(command)
            .args(args)
            .envs(env)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (sender, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).split(b'\n') {
                let Ok(line) = line else { break };
                if let Ok(message) = serde_json::from_slice::<Value>(&line) {
                    if sender.send(message).is_err() {
                        break;
                    }
                }
            }
        });
        Ok(Self {
            child,
            stdin,
            incoming,
            next_id: 0,
            root_uri: format!("file://{}", cwd.display()),
        })
    }

    /// `initialize`, `notifications/initialized`, then `tools/list` (following cursors).
    fn handshake(&mut self, signals: &Signals) -> Result<Vec<String>, CallError> {
        let timeout = Some(HANDSHAKE_TIMEOUT);
        let initialize = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {"roots": {}, "elicitation": {}},
            "clientInfo": {"name": "claude-code", "title": "Claude Code", "version": CLI_VERSION},
        });
        self.request("initialize", initialize, timeout, signals, &mut || {})?;
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        let mut tools = Vec::new();
        let mut cursor = None;
        loop {
            let params = match cursor.take() {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let page = self.request("tools/list", params, timeout, signals, &mut || {})?;
            let names = page["tools"].as_array().into_iter().flatten();
            tools.extend(names.filter_map(|tool| tool["name"].as_str().map(str::to_string)));
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_string()),
                None => return Ok(tools),
            }
        }
    }

    /// Sends a request and waits for its response, answering server-to-client requests
    /// meanwhile and calling `waiting` at every poll; `timeout` `None` waits until the server
    /// answers, exits, or a signal.
    fn request(
        &mut self,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
        signals: &Signals,
        waiting: &mut dyn FnMut(),
    ) -> Result<Value, CallError> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let deadline = timeout.map(|timeout| Instant::now() + timeout);
        loop {
            if let Some(signal) = signals.pending() {
                return Err(CallError::Signal(signal));
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(CallError::Timeout);
            }
            waiting();
            let message = match self.incoming.recv_timeout(POLL) {
                Ok(message) => message,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return Err(CallError::Closed),
            };
            if let Some(method) = message.get("method").and_then(Value::as_str) {
                if let Some(request_id) = message.get("id") {
                    self.answer(request_id, method)?;
                }
            } else if message.get("id") == Some(&json!(id)) {
                if let Some(error) = message.get("error") {
                    return Err(CallError::Rpc {
                        code: error["code"].as_i64().unwrap_or(0),
                        message: error["message"].as_str().unwrap_or_default().to_string(),
                    });
                }
                return Ok(message.get("result").cloned().unwrap_or(Value::Null));
            }
        }
    }

    /// Answers a request the server sent to the client.
    fn answer(&mut self, request_id: &Value, method: &str) -> Result<(), CallError> {
        let reply = match method {
            "roots/list" => json!({"jsonrpc": "2.0", "id": request_id,
                "result": {"roots": [{"uri": self.root_uri}]}}),
            "ping" => json!({"jsonrpc": "2.0", "id": request_id, "result": {}}),
            _ => json!({"jsonrpc": "2.0", "id": request_id,
                "error": {"code": -32601, "message": format!("Method not found: {method}")}}),
        };
        self.send(&reply)
    }

    /// Writes one JSON-RPC message as a line.
    fn send(&mut self, message: &Value) -> Result<(), CallError> {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.flush())
            .map_err(|_| CallError::Closed)
    }

    /// Closes the server's stdin and hands back the process, for a graceful shutdown.
    fn close(self) -> Child {
        let Self { child, stdin, .. } = self;
        drop(stdin);
        child
    }

    /// Stops a server whose handshake failed.
    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
