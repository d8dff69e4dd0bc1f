//! A peek at the hld daemon that the approvals MCP server talks to (its socket and session
//! come from that server's environment): whether it lists a pending approval yet. Only the
//! `asked_first` scenario uses it, to hold a tool_use line back until its approval exists.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use serde_json::{json, Value};

/// The daemon and the session an MCP server speaks for.
#[derive(Debug)]
pub struct Peer {
    socket: String,
    session_id: String,
}

impl Peer {
    /// From an MCP server's configured environment.
    pub fn from_env(env: &BTreeMap<String, String>) -> Option<Peer> {
        Some(Peer {
            socket: env.get("HUMANLAYER_DAEMON_SOCKET")?.clone(),
            session_id: env.get("HUMANLAYER_SESSION_ID")?.clone(),
        })
    }

    /// Whether the daemon lists a pending approval of this session for tool use
    /// `tool_use_id` (false when it cannot be asked).
    pub fn lists_approval(&self, tool_use_id: &str) -> bool {
        self.pending().is_some_and(|approvals| {
            approvals
                .iter()
                .any(|a| a["tool_use_id"].as_str() == Some(tool_use_id))
        })
    }

    fn pending(&self) -> Option<Vec<Value>> {
        let mut stream = UnixStream::connect(&self.socket).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": "fetchApprovals",
            "params": {"session_id": self.session_id}});
        stream.write_all(format!("{request}\n").as_bytes()).ok()?;
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line).ok()?;
        let reply: Value = serde_json::from_str(&line).ok()?;
        reply["result"]["approvals"].as_array().cloned()
    }
}
