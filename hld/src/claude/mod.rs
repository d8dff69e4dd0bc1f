//! The one boundary to `claude`: its command line ([`command`]), process group ([`process`]),
//! stream-json output ([`stream`]), the control channel on its stdin ([`control`]) and the
//! messages written there ([`prompt`]); sessions reach the agent only through here.

pub mod command;
pub mod control;
pub mod process;
pub mod prompt;
pub mod stream;

pub use command::{claude_version, write_mcp_config, LaunchSpec};
pub use stream::{parse_line, AgentEvent, Line, RunResult};
