//! Changing course mid-session with `fake-claude`: the slash commands its `claude` reported,
//! the model and the permission mode (`updateSessionSettings`, `launchSession`), plan mode and
//! its `ExitPlanMode` approval.

use hld_client::protocol::{
    Approval, ApprovalStatus, ContinueSession, ContinueSessionParams, ConversationEventType, Event,
    LaunchSession, ListSessions, ListSlashCommands, NoParams, PermissionMode, SendMessage,
    SendMessageParams, SessionIdParams, SlashCommand, SlashCommandKind, SubscribeParams,
    UpdateSessionSettings, UpdateSessionSettingsParams,
};
use hld_e2e::{launch_params, wait_for, DaemonOptions, TestDaemon, WAIT};

use crate::real_claude::{decide, recorded};

/// The plan of fake-claude's `plan` scenario.
const PLAN: &str = "# Plan\n\n1. Create `hello.txt` with `Hello, world!`";

fn fake() -> TestDaemon {
    TestDaemon::start_with(DaemonOptions::fake_claude())
}

fn workdir(d: &TestDaemon) -> std::path::PathBuf {
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub(super) fn id_params(session_id: &str) -> SessionIdParams {
    SessionIdParams {
        session_id: session_id.to_owned(),
    }
}

/// `session_id`'s slash commands once its skills are known: the commands are stored at once
/// from `initialize`, the skills come with the turn's `init`.
pub(super) fn listed_commands(d: &TestDaemon, session_id: &str) -> Vec<SlashCommand> {
    wait_for(WAIT, || {
        let listed = d
            .request::<ListSlashCommands>(id_params(session_id))
            .commands;
        let skills = listed.iter().any(|c| c.kind == SlashCommandKind::Skill);
        skills.then_some(listed)
    })
    .unwrap_or_else(|| panic!("no skills listed\nlog:\n{}", d.log_text()))
}

/// The kind of the command named `name`, if listed.
pub(super) fn kind_of(commands: &[SlashCommand], name: &str) -> Option<SlashCommandKind> {
    let command = commands.iter().find(|c| c.name == name);
    command.map(|c| c.kind.clone())
}

#[test]
fn slash_commands_are_what_claude_answered_to_initialize() {
    let d = fake();
    let id = d.launch(launch_params("hello", workdir(&d)));
    let commands = listed_commands(&d, &id);
    let kind = |name: &str| kind_of(&commands, name);
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

/// The one pending approval of a session, once there is one.
pub(super) fn pending(d: &TestDaemon, id: &str) -> Approval {
    let approvals = d.wait_approvals(Some(id), |a| !a.is_empty());
    assert_eq!(approvals.len(), 1, "{approvals:#?}");
    approvals.into_iter().next().unwrap()
}

/// The tool results of a session's conversation: their text, and whether they are errors.
pub(super) fn tool_results(d: &TestDaemon, id: &str) -> Vec<(String, bool)> {
    d.conversation(id)
        .into_iter()
        .filter(|e| e.event_type == ConversationEventType::ToolResult)
        .map(|e| (e.tool_result_content.unwrap_or_default(), e.is_error))
        .collect()
}

pub(super) fn mode_of(d: &TestDaemon, id: &str) -> PermissionMode {
    d.state(id).control.permission_mode
}

/// A plan-mode launch of fake-claude's `plan` scenario; `bypass` turns the bypass on.
fn launch_planning(d: &TestDaemon, bypass: bool) -> String {
    let mut params = launch_params("scenario:plan", workdir(d));
    params.permission_mode = Some(PermissionMode::Plan);
    params.dangerously_skip_permissions = Some(bypass);
    d.launch(params)
}

#[test]
fn plan_mode_refuses_edits_until_the_plan_is_approved() {
    let d = fake();
    let mut events = d.subscribe(SubscribeParams::default());
    let id = launch_planning(&d, false);
    assert_eq!(mode_of(&d, &id), PermissionMode::Plan);
    let listed = d.request::<ListSessions>(NoParams {}).sessions;
    let row = listed.iter().find(|s| s.id == id).unwrap();
    assert_eq!(row.control.permission_mode, PermissionMode::Plan);

    let plan = pending(&d, &id);
    assert_eq!(plan.function_name.as_deref(), Some("ExitPlanMode"));
    assert_eq!(plan.function_args.as_ref().unwrap()["plan"], PLAN);
    // The Write before it was refused by plan mode, and Claude read why.
    let hello = workdir(&d).join("hello.txt");
    assert!(!hello.exists());
    let results = tool_results(&d, &id);
    assert!(
        matches!(&results[..], [(text, true)] if text.contains("plan mode")),
        "{results:#?}"
    );
    assert_eq!(mode_of(&d, &id), PermissionMode::Plan);

    assert_eq!(decide(&d, &plan, "approve", None), recorded());
    let changed = events.until(|e| {
        matches!(e, Event::SessionSettingsChanged { session_id, control, .. }
            if *session_id == id && control.permission_mode == PermissionMode::Default)
    });
    assert!(!changed.is_empty());
    assert_eq!(mode_of(&d, &id), PermissionMode::Default);
    // Out of plan mode, the Write asks as any edit does.
    let write = pending(&d, &id);
    assert_eq!(write.function_name.as_deref(), Some("Write"));
    assert_eq!(decide(&d, &write, "approve", None), recorded());
    d.wait_ended(&id);
    assert_eq!(std::fs::read_to_string(&hello).unwrap(), "Hello, world!\n");
}

#[test]
fn a_plan_waits_for_a_human_under_the_bypass_which_still_cannot_edit_while_planning() {
    let d = fake();
    let id = launch_planning(&d, true);
    let plan = pending(&d, &id);
    assert_eq!(plan.function_name.as_deref(), Some("ExitPlanMode"));
    assert_eq!(plan.status, ApprovalStatus::Pending);
    assert!(!workdir(&d).join("hello.txt").exists());
    assert_eq!(decide(&d, &plan, "approve", None), recorded());
    // Out of plan mode, the bypass approves the Write.
    d.wait_ended(&id);
    assert!(workdir(&d).join("hello.txt").exists());
    assert_eq!(mode_of(&d, &id), PermissionMode::Default);
}

#[test]
fn a_denied_plan_keeps_plan_mode_and_claude_reads_the_comment() {
    let d = fake();
    let id = launch_planning(&d, false);
    let plan = pending(&d, &id);
    let comment = "Add a test first";
    assert_eq!(decide(&d, &plan, "deny", Some(comment)), recorded());
    d.wait_ended(&id);
    assert_eq!(mode_of(&d, &id), PermissionMode::Plan);
    let results = tool_results(&d, &id);
    assert!(
        results
            .last()
            .is_some_and(|(text, error)| *error && text.contains(comment)),
        "{results:#?}"
    );
}

pub(super) fn settings(id: &str) -> UpdateSessionSettingsParams {
    UpdateSessionSettingsParams {
        session_id: id.to_owned(),
        ..Default::default()
    }
}

#[test]
fn settings_that_cannot_be_applied_are_refused() {
    let d = fake();
    let id = d.launch(launch_params("hello", workdir(&d)));
    for mode in ["acceptEdits", "bypassPermissions", "nonsense"] {
        let mut params = settings(&id);
        params.permission_mode = Some(PermissionMode::Unknown(mode.to_owned()));
        let refused = d.try_request::<UpdateSessionSettings>(params).unwrap_err();
        assert_eq!(refused.code, -32602, "{mode}");
        assert!(
            refused.message.contains("auto_accept_edits")
                && refused.message.contains("dangerously_skip_permissions"),
            "{refused:?}"
        );
    }
    for model in ["", "  "] {
        let mut params = settings(&id);
        params.model = Some(model.to_owned());
        let refused = d.try_request::<UpdateSessionSettings>(params).unwrap_err();
        assert_eq!(refused.code, -32602, "{model:?}");
    }
    let mut launch = launch_params("hello", workdir(&d));
    launch.permission_mode = Some(PermissionMode::Unknown("acceptEdits".into()));
    let refused = d.try_request::<LaunchSession>(launch).unwrap_err();
    assert_eq!(refused.code, -32602);
    assert!(refused.message.contains("auto_accept_edits"), "{refused:?}");
    let mut unknown = settings("no-such-session");
    unknown.model = Some("haiku".into());
    let refused = d.try_request::<UpdateSessionSettings>(unknown).unwrap_err();
    assert_eq!(refused.code, -32602);
    // Nothing was stored.
    assert_eq!(mode_of(&d, &id), PermissionMode::Default);
}

/// The invocation fake-claude recorded for session `id`'s latest process.
fn invocation(d: &TestDaemon, id: &str) -> serde_json::Value {
    let claude_id = d
        .wait_session(id, |s| s.claude_session_id.is_some())
        .claude_session_id
        .unwrap();
    d.fake_invocation(&claude_id)
}

/// Whether `argv` holds `flag value`.
fn has_flag(invocation: &serde_json::Value, flag: &str, value: &str) -> bool {
    let argv: Vec<&str> = invocation["argv"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    argv.windows(2).any(|w| w == [flag, value])
}

pub(super) fn send(d: &TestDaemon, id: &str, text: &str) {
    d.request::<SendMessage>(SendMessageParams {
        session_id: id.to_owned(),
        text: text.to_owned(),
        mode: None,
        images: None,
    });
}

#[test]
fn a_model_and_mode_set_on_a_live_process_are_sent_to_it_and_published() {
    let d = fake();
    let mut events = d.subscribe(SubscribeParams::default());
    let id = d.launch(launch_params("hello", workdir(&d)));
    d.wait_session(&id, |s| s.live && !s.status.is_active());
    let mut params = settings(&id);
    params.model = Some("haiku".into());
    params.permission_mode = Some(PermissionMode::Plan);
    d.request::<UpdateSessionSettings>(params);
    let changed = events.until(
        |e| matches!(e, Event::SessionSettingsChanged { session_id, .. } if *session_id == id),
    );
    let Some(Event::SessionSettingsChanged { model, control, .. }) =
        changed.last().map(|e| &e.event)
    else {
        unreachable!()
    };
    assert_eq!(model.as_deref(), Some("haiku"));
    assert_eq!(control.permission_mode, PermissionMode::Plan);
    // Answered before the call returned: the process read both requests.
    let requests: Vec<serde_json::Value> = invocation(&d, &id)["stdin"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["line"].clone())
        .filter(|l| l["type"] == "control_request")
        .map(|l| l["request"].clone())
        .collect();
    assert!(
        requests.contains(&serde_json::json!({"subtype": "set_model", "model": "haiku"})),
        "{requests:#?}"
    );
    assert!(
        requests.contains(&serde_json::json!({"subtype": "set_permission_mode", "mode": "plan"})),
        "{requests:#?}"
    );
    let state = d.state(&id);
    assert_eq!(state.model.as_deref(), Some("haiku"));
    assert!(state.live);
}

#[test]
fn settings_stored_without_a_process_reach_the_resume_and_continuations() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude().arg("--live-idle-ms").arg("0"));
    let id = d.launch(launch_params("hello", workdir(&d)));
    d.wait_session(&id, |s| !s.live && !s.status.is_active());
    let mut params = settings(&id);
    params.model = Some("sonnet".into());
    params.permission_mode = Some(PermissionMode::Plan);
    d.request::<UpdateSessionSettings>(params);
    assert_eq!(mode_of(&d, &id), PermissionMode::Plan);

    send(&d, &id, "again");
    d.wait_session(&id, |s| !s.live && !s.status.is_active());
    let resumed = invocation(&d, &id);
    assert!(resumed["resume"].is_string(), "{resumed:#}");
    assert!(has_flag(&resumed, "--model", "sonnet"), "{resumed:#}");
    assert!(
        has_flag(&resumed, "--permission-mode", "plan"),
        "{resumed:#}"
    );

    let child = d
        .request::<ContinueSession>(ContinueSessionParams {
            session_id: id.clone(),
            query: "and on".into(),
            ..Default::default()
        })
        .session_id;
    assert_eq!(mode_of(&d, &child), PermissionMode::Plan);
    let continued = invocation(&d, &child);
    assert!(has_flag(&continued, "--model", "sonnet"), "{continued:#}");
    assert!(
        has_flag(&continued, "--permission-mode", "plan"),
        "{continued:#}"
    );
}
