//! `--mcp-config` values: JSON files or inline JSON, merged into one `mcpServers` map.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

/// How to reach one configured MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerSpec {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    /// An `http`, `sse` or `ws` server; the fake lists it in `init` as `failed`.
    Remote,
}

/// The merged configuration of all `--mcp-config` values.
#[derive(Debug)]
pub struct McpConfig {
    /// `{"mcpServers": {...}}` exactly as given (merged), for the invocation log.
    pub raw: Value,
    /// The entries that passed the schema, by server name; invalid ones are silently dropped
    /// like the real CLI does.
    pub servers: BTreeMap<String, ServerSpec>,
}

/// Loads and merges the `--mcp-config` values (later ones win); `None` without any.
///
/// A value that starts with `{` is inline JSON, anything else is a path resolved against
/// `cwd`. Errors carry the real CLI's stderr text.
pub fn load(values: &[String], cwd: &Path) -> Result<Option<McpConfig>, String> {
    if values.is_empty() {
        return Ok(None);
    }
    let mut merged = Map::new();
    for value in values {
        let text = if value.trim_start().starts_with('{') {
            value.clone()
        } else {
            let path = cwd.join(value);
            std::fs::read_to_string(&path)
                .map_err(|_| invalid(&format!("MCP config file not found: {}", path.display())))?
        };
        let parsed: Value =
            serde_json::from_str(&text).map_err(|_| invalid("MCP config is not a valid JSON"))?;
        let Some(Value::Object(servers)) = parsed.get("mcpServers") else {
            return Err(invalid(
                "mcpServers: Does not adhere to MCP server configuration schema",
            ));
        };
        merged.extend(servers.clone());
    }
    let servers = merged
        .iter()
        .filter_map(|(name, entry)| Some((name.clone(), server_spec(entry)?)))
        .collect();
    let mut raw = Map::new();
    raw.insert("mcpServers".into(), Value::Object(merged));
    Ok(Some(McpConfig {
        raw: Value::Object(raw),
        servers,
    }))
}

/// The stderr text of a configuration error.
fn invalid(detail: &str) -> String {
    format!("Error: Invalid MCP configuration:\n{detail}")
}

/// Validates one server entry; `None` drops it.
fn server_spec(entry: &Value) -> Option<ServerSpec> {
    match entry.get("type").and_then(Value::as_str) {
        None | Some("stdio") => {
            let command = entry.get("command")?.as_str()?.to_string();
            let args = match entry.get("args") {
                None => Vec::new(),
                Some(args) => args
                    .as_array()?
                    .iter()
                    .map(|arg| arg.as_str().map(str::to_string))
                    .collect::<Option<_>>()?,
            };
            let env = match entry.get("env") {
                None => BTreeMap::new(),
                Some(env) => env
                    .as_object()?
                    .iter()
                    .map(|(key, value)| Some((key.clone(), value.as_str()?.to_string())))
                    .collect::<Option<_>>()?,
            };
            Some(ServerSpec::Stdio { command, args, env })
        }
        Some("http" | "sse" | "ws") => entry.get("url")?.as_str().map(|_| ServerSpec::Remote),
        Some(_) => None,
    }
}
