//! One module per `hlyr` subcommand.

pub mod mcp;
