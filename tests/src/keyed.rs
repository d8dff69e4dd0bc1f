//! Daemon options for sessions asked through the approvals MCP server.

use crate::DaemonOptions;

impl DaemonOptions {
    /// [`fake_claude`](Self::fake_claude) with the approvals MCP server, which the daemon
    /// runs only with a HumanLayer API key: one is set, with the cloud unreachable (a closed
    /// loopback port), so every approval is a local one asked through the server.
    pub fn fake_claude_with_approvals_server() -> DaemonOptions {
        Self::fake_claude()
            .arg("--api-base-url")
            .arg("http://127.0.0.1:9")
            .env("HUMANLAYER_API_KEY", "hl-test-key")
    }
}
