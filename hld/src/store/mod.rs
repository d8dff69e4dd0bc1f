//! SQLite storage: sessions, conversation events, raw stream lines, MCP servers, approvals.

mod types;

pub use types::*;
