//! `hlyr`: the terminal workflow for the hld daemon.

mod commands;
mod mcp;

use clap::{Parser, Subcommand};

/// The terminal workflow for the hld daemon.
#[derive(Debug, Parser)]
#[command(name = "hlyr", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve an MCP server on stdio (started by Claude Code, not by hand).
    #[command(subcommand)]
    Mcp(commands::mcp::McpCommand),
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Mcp(command) => commands::mcp::run(command).await,
    }
}
