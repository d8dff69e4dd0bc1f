//! Changing course mid-session with `fake-claude`: the slash commands its `claude` reported,
//! the model and the permission mode (`updateSessionSettings`, `launchSession`), plan mode and
//! its `ExitPlanMode` approval.

use hld_client::protocol::{ListSlashCommands, SessionIdParams, SlashCommandKind};
use hld_e2e::{launch_params, wait_for, DaemonOptions, TestDaemon, WAIT};

fn fake() -> TestDaemon {
    TestDaemon::start_with(DaemonOptions::fake_claude())
}

fn workdir(d: &TestDaemon) -> std::path::PathBuf {
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn id_params(session_id: &str) -> SessionIdParams {
    SessionIdParams {
        session_id: session_id.to_owned(),
    }
}

#[test]
fn slash_commands_are_what_claude_answered_to_initialize() {
    let d = fake();
    let id = d.launch(launch_params("hello", workdir(&d)));
    let commands = wait_for(WAIT, || {
        let listed = d.request::<ListSlashCommands>(id_params(&id)).commands;
        // Stored at once from `initialize`; the skills come with the turn's `init`.
        listed
            .iter()
            .any(|c| c.kind == SlashCommandKind::Skill)
            .then_some(listed)
    })
    .unwrap_or_else(|| panic!("no skills listed\nlog:\n{}", d.log_text()));
    let kind = |name: &str| {
        let command = commands.iter().find(|c| c.name == name);
        command.map(|c| c.kind.clone())
    };
    // `initialize.json` of fake-claude, as the real CLI 2.1.197 answered: `compact` is a
    // command, `debug` a skill named by `init`, `Explore` an agent.
    assert_eq!(kind("compact"), Some(SlashCommandKind::Command));
    assert_eq!(kind("debug"), Some(SlashCommandKind::Skill));
    assert_eq!(kind("Explore"), Some(SlashCommandKind::Agent));
    let debug = commands.iter().find(|c| c.name == "debug").unwrap();
    assert_eq!(debug.argument_hint.as_deref(), Some("[issue description]"));
    let reported: serde_json::Value =
        serde_json::from_str(include_str!("../../src/bin/fake_claude/initialize.json")).unwrap();
    let mut expected: Vec<&str> = ["commands", "agents"]
        .iter()
        .flat_map(|key| reported[key].as_array().unwrap())
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let mut listed: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    expected.sort_unstable();
    listed.sort_unstable();
    assert_eq!(listed, expected);
    let agents_first_at = commands
        .iter()
        .position(|c| c.kind == SlashCommandKind::Agent)
        .unwrap();
    assert!(commands[agents_first_at..]
        .iter()
        .all(|c| c.kind == SlashCommandKind::Agent));
    let names: Vec<&str> = commands[..agents_first_at]
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert!(names.windows(2).all(|w| w[0] <= w[1]), "{names:?}");

    let unknown = d
        .try_request::<ListSlashCommands>(id_params("no-such-session"))
        .unwrap_err();
    assert_eq!(unknown.code, -32602);
}
