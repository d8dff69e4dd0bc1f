//! The one boundary to the agent CLI, `claude`: its command line ([`command`]), its process
//! and process group ([`process`]), and its stream-json output ([`stream`]). Sessions reach
//! the agent only through here; this module knows nothing of sessions beyond `model`.

pub mod command;
pub mod process;
pub mod stream;

pub use command::{claude_version, write_mcp_config, LaunchSpec};
pub use stream::{parse_line, AgentEvent, Line, RunResult};
