//! MCP configuration as a session takes it: the `--mcp-config` JSON and the two shapes
//! clients send it in.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One MCP server entry of an `--mcp-config` file. Stdio servers use `command`/`args`/`env`;
/// other kinds (`type: "http"`, `url`, `headers`) are kept verbatim in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpServer {
    /// The executable of a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// Extra environment for the server process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    /// Any other keys, kept as given.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `--mcp-config` JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpConfig {
    /// Servers by name; Claude exposes their tools as `mcp__<name>__<tool>`.
    #[serde(rename = "mcpServers", default)]
    pub mcp_servers: BTreeMap<String, McpServer>,
}

/// `mcp_config` as clients send it: an object in `launchSession`, a JSON string in
/// `continueSession` (spec/003). Both shapes are accepted by both methods.
/// Exhaustive: it is the shape of a request, and the daemon must handle every shape it
/// accepts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum McpConfigParam {
    /// The config as an object.
    Object(McpConfig),
    /// The config as a string holding JSON.
    Json(String),
}
