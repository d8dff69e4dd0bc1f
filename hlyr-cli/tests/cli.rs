//! The `hlyr` binary's command line on its own: help documents the exit codes and every
//! subcommand, and a bad flag is a usage error. (This test also makes `cargo test --workspace`
//! build `hlyr`, which the end-to-end tests in `tests/` run.)

use std::process::Command;

#[test]
fn help_lists_the_subcommands_and_exit_codes() {
    let out = Command::new(env!("CARGO_BIN_EXE_hlyr"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "launch",
        "sessions",
        "show",
        "conversation",
        "continue",
        "interrupt",
        "rename",
        "archive",
        "unarchive",
        "settings",
        "search",
        "prune",
        "approvals",
        "approve",
        "deny",
        "respond",
        "events",
        "daemon",
        "mcp",
        "Exit codes:",
        "NO_COLOR",
    ] {
        assert!(help.contains(needle), "--help mentions {needle}:\n{help}");
    }
}

#[test]
fn an_unknown_flag_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_hlyr"))
        .args(["sessions", "--no-such-flag"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--no-such-flag"));
}
