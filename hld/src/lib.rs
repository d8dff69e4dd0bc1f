//! The hld daemon library; the `hld` binary is a thin wrapper around [`server::run`].

pub mod approval;
pub mod budget;
pub mod bus;
pub mod claude;
pub mod clients;
pub mod config;
pub mod daemon;
pub mod error;
pub mod files;
pub mod handlers;
pub mod logging;
pub mod mcp;
pub mod memory;
pub mod model;
pub mod notify;
pub mod private_dir;
pub mod publish;
pub mod rpc;
pub mod server;
pub mod session;
pub mod stdio;
pub mod store;
pub mod throttle;
pub mod time;
pub mod transport;
pub mod worktree;
