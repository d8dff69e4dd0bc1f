//! The end-to-end tests, one binary with a module per area, over the real `hld`, `hlyr` and
//! `fake-claude` binaries of the target directory in use (build them first:
//! `cargo build --workspace --all-targets`, then `cargo test -p hld-e2e`).
//!
//! Every test starts what it needs (daemons on private sockets and databases, stand-ins on
//! loopback ports the kernel picks) and changes nothing process-wide: no environment
//! variables, working directory, resource limits or signal handlers of the test process, so
//! the tests run in parallel in this one process.
//!
//! The wire shapes that the anchor's clients decode are pinned by golden files in
//! `tests/golden/` (see [`golden`]); `UPDATE_GOLDEN=1 cargo test -p hld-e2e golden` rewrites
//! them from the live daemon.

mod approvals;
mod approvals_head;
mod browser;
mod client;
mod cloud;
mod cloud_ended;
mod contexts;
mod contexts_complete;
mod contexts_hints;
mod contexts_watch;
mod control;
mod cost;
mod drafts;
mod envelope;
mod events;
mod fake_claude;
mod fake_claude_live;
mod full_disk;
mod golden;
mod hlyr;
mod hlyr_admin;
mod hlyr_control;
mod hlyr_converse;
mod hlyr_converse_idle;
mod hlyr_follow;
mod hlyr_limits;
mod hlyr_lists;
mod hlyr_live;
mod hlyr_modes;
mod hlyr_notify;
mod hlyr_outcomes;
mod hlyr_restart;
mod hlyr_usage;
mod hlyr_watch;
mod http;
mod http_conversation;
mod http_events;
mod http_mentions;
mod http_safety;
mod http_sessions;
mod inputs;
mod limits;
mod live;
mod locked_db;
mod logging;
mod modes;
mod neovim;
mod newcomer;
mod notify;
mod real_claude;
mod real_claude_cost;
mod real_claude_hlyr;
mod real_claude_inputs;
mod real_claude_limits;
mod real_claude_modes;
mod real_claude_worktrees;
mod rpc;
mod schema;
mod sdk;
mod security;
mod sessions;
mod sessions_continue;
mod slow_frames;
mod stdio;
mod stdio_relay;
mod subscribe;
mod trust;
mod tui;
mod tui_drafts;
mod tui_fleet;
mod tui_fleet_down;
mod tui_fleet_usage;
mod tui_modes;
mod tui_start;
mod tui_usage;
mod tui_worktrees;
mod usage_limits;
mod websocket;
mod websocket_connection;
mod worktrees;
mod worktrees_hlyr;
mod worktrees_large;
mod worktrees_removed;
mod worktrees_setup;
mod ws_flood;
