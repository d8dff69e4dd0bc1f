//! The `hld` binary's command line: help text and bad flags.

use std::process::Command;

#[test]
fn help_documents_every_setting() {
    let out = Command::new(env!("CARGO_BIN_EXE_hld"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "--socket",
        "--database",
        "--log-level",
        "--log-file",
        "--no-color",
        "--max-message-size",
        "--claude-path",
        "HUMANLAYER_DAEMON_SOCKET",
        "HUMANLAYER_DATABASE_PATH",
        "HUMANLAYER_CLAUDE_PATH",
        "humanlayer.json",
        "NO_COLOR",
    ] {
        assert!(help.contains(needle), "--help mentions {needle}");
    }
}

#[test]
fn a_bad_log_level_is_refused_before_starting() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hld"))
        .args(["--log-level", "loud", "--socket"])
        .arg(dir.path().join("s.sock"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown log level"));
    assert!(!dir.path().join("s.sock").exists());
}
