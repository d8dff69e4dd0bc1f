//! The command serving the approvals MCP server (by default this binary's `mcp
//! claude_approvals`), checked at start-up and before each launch that needs it.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use hld_client::protocol::ApprovalsAvailability;

/// The arguments that make the command serve the server.
pub const ARGS: [&str; 2] = ["mcp", "claude_approvals"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalsCommand {
    pub path: PathBuf,
    /// Whether it was configured, rather than the daemon's own binary.
    pub configured: bool,
}

impl ApprovalsCommand {
    /// `configured` if given, else this very executable.
    pub fn resolve(configured: Option<PathBuf>) -> Result<ApprovalsCommand, String> {
        match configured {
            Some(path) => Ok(ApprovalsCommand {
                path,
                configured: true,
            }),
            None => std::env::current_exe()
                .map(|path| ApprovalsCommand {
                    path,
                    configured: false,
                })
                .map_err(|e| format!("cannot find the hld executable itself: {e}")),
        }
    }

    /// Why the command cannot run, if it cannot: missing, not a file, or not executable.
    pub fn problem(&self) -> Option<String> {
        let path = self.path.display();
        match std::fs::metadata(&self.path) {
            Err(e) => Some(format!("approvals command {path} is missing: {e}")),
            Ok(m) if !m.is_file() => Some(format!("approvals command {path} is not a file")),
            Ok(m) if m.permissions().mode() & 0o111 == 0 => {
                Some(format!("approvals command {path} is not executable"))
            }
            Ok(_) => None,
        }
    }

    /// What `health` reports, given what [`Self::problem`] last said.
    pub fn availability(&self, problem: Option<String>) -> ApprovalsAvailability {
        ApprovalsAvailability {
            available: problem.is_none(),
            command: self.path.to_string_lossy().into_owned(),
            configured: self.configured,
            error: problem,
        }
    }
}
