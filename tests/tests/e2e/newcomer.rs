//! What a newcomer meets on a fresh clone: `hld --help` names the environment variable of
//! each setting the README's table lists; the daemon's first lines name client commands that
//! run from where it was started (and the scripted stand-in when `claude` is missing); and
//! the stand-in chosen with `HUMANLAYER_CLAUDE_PATH` runs sessions that `hlyr` shows.

use std::path::{Path, PathBuf};
use std::process::Command;

use hld_e2e::{fake_claude, wait_for, workspace_bin, DaemonOptions, TestDaemon, WAIT};

use crate::hlyr::{hlyr_command, run_command};

/// The workspace root: the directory `target/<profile>/` lies in, where the README's main
/// command starts the daemon.
fn workspace_root() -> PathBuf {
    workspace_bin("hld")
        .ancestors()
        .nth(3)
        .expect("target/<profile>/hld")
        .to_path_buf()
}

/// A `PATH` without the workspace's binaries or any `claude`.
const SYSTEM_PATH: &str = "/usr/bin:/bin";

/// Starts `hld` from the workspace root with `PATH` = [`SYSTEM_PATH`].
fn started_from_the_root(options: DaemonOptions) -> TestDaemon {
    TestDaemon::start_with(DaemonOptions {
        current_dir: Some(workspace_root()),
        ..options.env("PATH", SYSTEM_PATH)
    })
}

/// The log line containing `marker`, once the daemon has written it.
fn log_line(d: &TestDaemon, marker: &str) -> String {
    wait_for(WAIT, || {
        d.log_text()
            .lines()
            .find(|l| l.contains(marker))
            .map(str::to_owned)
    })
    .unwrap_or_else(|| panic!("no {marker:?} line in:\n{}", d.log_text()))
}

/// The texts between backticks in `line`.
fn quoted(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// Runs `command` with `sh` in the workspace root with `PATH` = [`SYSTEM_PATH`].
fn sh_in_root(command: &str) -> std::process::Output {
    Command::new("sh")
        .args(["-c", command])
        .current_dir(workspace_root())
        .env("PATH", SYSTEM_PATH)
        .output()
        .unwrap()
}

#[test]
fn hld_help_names_the_environment_variable_of_each_setting_in_the_readme() {
    let out = Command::new(workspace_bin("hld"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let rows: Vec<(&str, &str)> = readme
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("`--"))
        .filter_map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let flag = quoted(cells[2]).first()?.split_whitespace().next()?;
            let env = quoted(cells[3]).first().copied()?;
            Some((flag, env))
        })
        .collect();
    for needed in [
        "HUMANLAYER_DAEMON_SOCKET",
        "HUMANLAYER_DATABASE_PATH",
        "HUMANLAYER_CLAUDE_PATH",
    ] {
        assert!(rows.iter().any(|(_, env)| *env == needed), "{rows:?}");
    }
    for (flag, env) in rows {
        // The option's entry: its line, and the indented lines clap wraps it onto.
        let entry: String = help
            .lines()
            .skip_while(|l| !l.trim_start().starts_with(&format!("{flag} ")))
            .take_while({
                let mut first = true;
                move |l| std::mem::take(&mut first) || !l.trim_start().starts_with('-')
            })
            .collect();
        assert!(
            entry.contains(&format!("[env: {env}")),
            "{flag} shows {env}: {entry:?}"
        );
    }
}

#[test]
fn the_first_lines_name_client_commands_that_run_from_where_hld_started() {
    let d = started_from_the_root(DaemonOptions::fake_claude());
    let ready = log_line(&d, "ready:");
    let commands = quoted(&ready);
    assert!(commands.len() >= 3, "{ready}");
    let (launch, tui, path) = (commands[0], commands[1], commands[2]);
    assert!(launch.ends_with("launch \"scenario:tool\""), "{ready}");
    for command in [launch, tui] {
        let program = command.split_whitespace().next().unwrap();
        let out = sh_in_root(&format!("{program} --version"));
        assert!(out.status.success(), "`{program}` does not run: {out:?}");
    }
    assert!(path.starts_with("hlyr"), "{ready}");
    // Its socket is not where front ends look by default: the line says how to reach it.
    let reach = format!("HUMANLAYER_DAEMON_SOCKET={}", d.socket.display());
    assert!(ready.contains(&reach), "{ready}");
    let hint = ready.split("to type just `hlyr`: ").nth(1).expect(&ready);
    let out = sh_in_root(&format!("{hint}; hlyr --version && hld-tui --version"));
    assert!(out.status.success(), "{hint}: {out:?}");
}

#[test]
fn without_claude_the_first_lines_offer_the_scripted_stand_in() {
    let d = started_from_the_root(DaemonOptions::default());
    let warning = log_line(&d, "claude CLI not found");
    let flag = quoted(&warning)
        .into_iter()
        .find(|q| q.starts_with("--claude-path "))
        .unwrap_or_else(|| panic!("{warning}"));
    let fake = Path::new(flag.trim_start_matches("--claude-path "));
    assert!(workspace_root().join(fake).is_file(), "{warning}");
}

#[test]
fn the_stand_in_chosen_by_a_relative_humanlayer_claude_path_runs_sessions_hlyr_shows() {
    // As the README says it, from the workspace root: a path relative to it, while the
    // session runs in a directory of its own.
    let fake = fake_claude();
    let relative = fake.strip_prefix(workspace_root()).unwrap();
    let d = started_from_the_root(
        DaemonOptions::default().env("HUMANLAYER_CLAUDE_PATH", relative.to_str().unwrap()),
    );
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["launch", "scenario:plain say hello"]);
    let run = run_command(cmd);
    run.assert_code(0);
    assert!(run.stdout.contains("completed"), "{}", run.stdout);
}

#[test]
fn the_readme_lists_every_scenario_of_the_stand_in() {
    let out = Command::new(fake_claude())
        .args([
            "--output-format",
            "stream-json",
            "--verbose",
            "--print",
            "--",
            "hi",
        ])
        .env("FAKE_CLAUDE_SCENARIO", "no-such-scenario")
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let known = stderr
        .split("(known: ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_else(|| panic!("{stderr}"));
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    for name in known.split(", ") {
        assert!(
            readme.contains(&format!("| `{name}` ")),
            "scenario {name} is not in the README's table"
        );
    }
}
