//! Whose files `hld` and `hlyr` take orders from: a `humanlayer.json` another user planted or
//! could change is never read (in the current directory) or refused with the reason and the
//! fix (in the config directory), so its `claude_path` never runs; a socket that is not the
//! user's own gets nothing from `hlyr`.

use std::io::ErrorKind;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use hld_e2e::{DaemonOptions, TestDaemon};
use serde_json::json;

use crate::hlyr::{hlyr_command, run_command};

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A fresh private directory with a short path (sockets live there).
fn scratch() -> tempfile::TempDir {
    hld_e2e::short_tempdir()
}

/// Gives `path` to uid 65534 (nobody). Only root can, as CI runs; `false` for anyone else.
fn give_away(path: &Path) -> bool {
    match nix::unistd::chown(path, Some(nix::unistd::Uid::from_raw(65534)), None) {
        Ok(()) => true,
        Err(e) => {
            assert!(!nix::unistd::geteuid().is_root(), "root cannot chown: {e}");
            false
        }
    }
}

/// Another user's program: it leaves `marker` behind if it ever runs.
fn planted_script(dir: &Path, marker: &Path) -> PathBuf {
    let script = dir.join("evil-claude");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch '{}'\necho 1.0.0\n", marker.display()),
    )
    .unwrap();
    chmod(&script, 0o755);
    script
}

/// A listening socket that never answers, non-blocking so that a test can ask whether anyone
/// connected.
fn listener(path: &Path) -> UnixListener {
    let listener = UnixListener::bind(path).unwrap();
    listener.set_nonblocking(true).unwrap();
    listener
}

#[track_caller]
fn assert_nobody_connected(listener: &UnixListener) {
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("something connected to the untrusted socket: {other:?}"),
    }
}

#[test]
fn a_humanlayer_json_in_the_current_directory_is_never_read() {
    let root = scratch();
    let shared = root.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    chmod(&shared, 0o1777);
    let marker = root.path().join("planted-script-ran");
    let script = planted_script(&shared, &marker);
    let their_socket = shared.join("theirs.sock");
    let theirs = listener(&their_socket);
    let planted = shared.join("humanlayer.json");
    std::fs::write(
        &planted,
        json!({"claude_path": script, "daemon_socket": their_socket}).to_string(),
    )
    .unwrap();
    give_away(&planted);

    let d = TestDaemon::start_with(DaemonOptions {
        current_dir: Some(shared.clone()),
        ..Default::default()
    });
    let health = d.call("health", json!({}));
    assert_ne!(
        health["result"]["claude"]["path"].as_str(),
        Some(script.to_str().unwrap()),
        "{health}"
    );
    let log = d.log_text();
    assert!(log.contains("./humanlayer.json is not read"), "{log}");
    assert!(log.contains("config/humanlayer/humanlayer.json"), "{log}");

    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.env_remove("HUMANLAYER_DAEMON_SOCKET")
        .current_dir(&shared)
        .arg("sessions");
    let run = run_command(cmd);
    run.assert_code(3);
    let default_socket = d.dir.join(".humanlayer/daemon.sock");
    assert!(
        run.stderr.contains(&default_socket.display().to_string()),
        "{}",
        run.stderr
    );
    assert_nobody_connected(&theirs);
    assert!(!marker.exists(), "the planted claude_path ran");
}

#[test]
fn a_config_file_someone_else_could_change_is_refused_by_hld_and_hlyr_with_the_fix() {
    // Each case: how the file is made unsafe, and what the refusal says.
    type Spoil = fn(&Path) -> Option<(&'static str, &'static str)>;
    let cases: [Spoil; 3] = [
        |file| give_away(file).then_some(("belongs to another user (uid 65534", "of your own")),
        |file| {
            chmod(file, 0o666);
            Some(("it is writable by others (mode 666)", "chmod go-w"))
        },
        |file| {
            chmod(file.parent().unwrap(), 0o777);
            Some(("its directory", "is writable by others (mode 777)"))
        },
    ];
    for spoil in cases {
        let root = scratch();
        let marker = root.path().join("planted-script-ran");
        let script = planted_script(root.path(), &marker);
        let config_dir = root.path().join("config/humanlayer");
        std::fs::create_dir_all(&config_dir).unwrap();
        let file = config_dir.join("humanlayer.json");
        let config = json!({"claude_path": script, "daemon_socket": "/nonexistent/hld.sock"});
        std::fs::write(&file, config.to_string()).unwrap();
        chmod(&file, 0o644);
        let Some((problem, fix)) = spoil(&file) else {
            continue;
        };

        // `timeout` ends a daemon that started anyway.
        let d = TestDaemon::spawn(DaemonOptions {
            dir: Some(root.path().to_owned()),
            wrapper: vec!["timeout".into(), "20".into()],
            ..Default::default()
        });
        let (status, stderr) = d.wait_failure();
        assert_eq!(status.code(), Some(2), "{stderr}");
        for text in ["refusing config file", problem, fix] {
            assert!(stderr.contains(text), "{text:?} in {stderr}");
        }

        let mut cmd = hlyr_command(Path::new("/unused"), root.path());
        cmd.env_remove("HUMANLAYER_DAEMON_SOCKET").arg("sessions");
        let run = run_command(cmd);
        run.assert_code(2);
        for text in ["refusing config file", problem, fix] {
            assert!(run.stderr.contains(text), "{text:?} in {}", run.stderr);
        }
        assert!(!marker.exists(), "the planted claude_path ran");
    }
}

#[test]
fn hlyr_sends_nothing_to_a_socket_that_is_not_the_users_own() {
    let root = scratch();
    // Another user's socket in a private directory.
    let socket = root.path().join("hld.sock");
    let theirs = listener(&socket);
    let mut cases = Vec::new();
    if give_away(&socket) {
        cases.push((socket.clone(), "it belongs to another user (uid 65534"));
    }
    // The user's own socket in a directory others can write (and so could swap it).
    let shared = root.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let in_shared = shared.join("hld.sock");
    let swappable = listener(&in_shared);
    chmod(&shared, 0o777);
    cases.push((in_shared.clone(), "is writable by others (mode 777)"));

    for (socket, problem) in cases {
        for args in [&["sessions"][..], &["launch", "hello"]] {
            let mut cmd = hlyr_command(&socket, root.path());
            cmd.env("HLD_PATH", "/nonexistent/hld").args(args);
            let run = run_command(cmd);
            run.assert_code(3);
            for text in ["refusing to talk to", problem, "HUMANLAYER_DAEMON_SOCKET"] {
                assert!(run.stderr.contains(text), "{text:?} in {}", run.stderr);
            }
        }
    }
    assert_nobody_connected(&theirs);
    assert_nobody_connected(&swappable);
}
