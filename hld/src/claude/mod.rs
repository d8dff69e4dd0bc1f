//! The one boundary to `claude`: its command line ([`command`]), process group ([`process`]),
//! stream-json output ([`stream`]) and the control channel on its stdin ([`control`]);
//! sessions reach the agent only through here.

pub mod command;
pub mod control;
pub mod process;
pub mod stream;

pub use command::{claude_version, write_mcp_config, LaunchSpec};
pub use stream::{parse_line, AgentEvent, Line, RunResult};
