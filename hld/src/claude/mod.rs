//! The `claude` CLI adapter: the command line ([`command`]) and the stream-json output
//! ([`stream`]) of the Claude Code processes the daemon supervises.

pub mod command;
pub mod stream;

pub use command::{claude_version, write_mcp_config, LaunchSpec};
pub use stream::{parse_line, AgentEvent, Line, RunResult};
