//! Changing course mid-session with the real `claude` CLI 2.1.197 and the Messages API
//! stand-in: a model switch reaches the next API request, live and after a resume; plan mode
//! refuses a Write until its plan (`ExitPlanMode`) is approved; the slash commands listed are
//! the ones the CLI answered to `initialize`.

use hld_client::protocol::{
    Event, LaunchSessionParams, PermissionMode, SlashCommandKind, SubscribeParams,
    UpdateSessionSettings,
};
use hld_e2e::anthropic::{self, AnthropicStandIn, Reply, INPUT_TOKENS};
use hld_e2e::{launch_params, TestDaemon};
use serde_json::{json, Value};

use crate::modes::{kind_of, listed_commands, mode_of, pending, send, settings, tool_results};
use crate::real_claude::{decide, options, recorded, scratch};

/// The plan the stand-in's model proposes.
const PLAN: &str = "# Plan\n\n1. Create `hello.txt` with `Hello, world!`";

/// The `model` of each model turn the stand-in answered, in order.
pub(super) fn models(api: &AnthropicStandIn) -> Vec<String> {
    let turns = api.model_turns();
    turns
        .iter()
        .map(|t| t["model"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn set_model(d: &TestDaemon, id: &str, model: &str) {
    let mut params = settings(id);
    params.model = Some(model.to_owned());
    d.request::<UpdateSessionSettings>(params);
}

#[test]
fn a_model_switched_on_the_live_process_answers_the_next_message() {
    let api = AnthropicStandIn::start(|_| Reply::text("Noted."));
    let d = TestDaemon::start_with(options(Some(&api)));
    let dir = scratch();
    let id = d.launch(launch_params("First", dir.path()));
    let first = d.wait_session(&id, |s| s.live && !s.status.is_active());
    assert_eq!(first.context_limit, Some(1_000_000), "{first:#?}");
    set_model(&d, &id, "claude-haiku-4-5");
    send(&d, &id, "Second");
    api.wait_model_turns(2);
    assert_eq!(models(&api), ["claude-opus-4-8", "claude-haiku-4-5"]);
    let second = d.wait_session(&id, |s| s.num_turns == Some(2) && !s.status.is_active());
    // One process answered both; the context is now measured against the new model's window.
    assert!(second.live);
    assert_eq!(second.context_limit, Some(200_000), "{second:#?}");
    assert_eq!(second.effective_context_tokens, Some(INPUT_TOKENS as i64));
    // The CLI's "Set model to" line shows as a system line, not as the user's words.
    let lines: Vec<(String, String)> = d
        .conversation(&id)
        .into_iter()
        .map(|e| {
            let kind = e.subtype.unwrap_or(e.role.unwrap_or_default());
            (kind, e.content.unwrap_or_default())
        })
        .collect();
    let said = |kind: &str, text: &str| (kind.to_owned(), text.to_owned());
    let switched = said("local_command", "Set model to claude-haiku-4-5");
    assert_eq!(
        lines.iter().filter(|l| **l == switched).count(),
        1,
        "{lines:#?}"
    );
    let words: Vec<_> = lines.iter().filter(|l| **l != switched).cloned().collect();
    assert_eq!(
        words,
        [
            said("user", "First"),
            said("assistant", "Noted."),
            said("user", "Second"),
            said("assistant", "Noted."),
        ]
    );
}

#[test]
fn a_model_set_between_processes_answers_after_the_resume() {
    let api = AnthropicStandIn::start(|_| Reply::text("Noted."));
    let d = TestDaemon::start_with(options(Some(&api)).arg("--live-idle-ms").arg("0"));
    let dir = scratch();
    let id = d.launch(launch_params("First", dir.path()));
    d.wait_session(&id, |s| !s.live && !s.status.is_active());
    set_model(&d, &id, "claude-haiku-4-5");
    send(&d, &id, "Second");
    api.wait_model_turns(2);
    assert_eq!(models(&api), ["claude-opus-4-8", "claude-haiku-4-5"]);
    let s = d.wait_session(&id, |s| !s.status.is_active());
    assert_eq!(s.model.as_deref(), Some("claude-haiku-4-5"));
}

/// The model of the plan scenario: a Write (refused while planning), the plan, the Write
/// again once the plan is approved, a last word.
pub(super) fn plan_then_write(dir: std::path::PathBuf) -> impl Fn(&Value) -> Reply + Send + Sync {
    move |request| {
        let write = |id: &str| {
            let input = json!({"file_path": dir.join("hello.txt"), "content": "Hello, world!\n"});
            Reply::tool_use("I'll create the file.", id, "Write", input)
        };
        let answered = anthropic::tool_results(request);
        match answered.first().and_then(|r| r["tool_use_id"].as_str()) {
            None => write("toolu_01StandInWritePlanned01"),
            Some("toolu_01StandInWritePlanned01") => Reply::tool_use(
                "Here is my plan.",
                "toolu_01StandInExitPlanMode01",
                "ExitPlanMode",
                json!({"plan": PLAN}),
            ),
            Some("toolu_01StandInExitPlanMode01") => write("toolu_01StandInWriteApproved1"),
            Some(_) => Reply::text("hello.txt is written."),
        }
    }
}

#[test]
fn plan_mode_refuses_a_write_until_the_plan_is_approved() {
    let dir = scratch();
    let api = AnthropicStandIn::start(plan_then_write(dir.path().to_owned()));
    let d = TestDaemon::start_with(options(Some(&api)));
    let mut events = d.subscribe(SubscribeParams::default());
    let id = d.launch(LaunchSessionParams {
        permission_mode: Some(PermissionMode::Plan),
        ..launch_params("Create hello.txt", dir.path())
    });
    let plan = pending(&d, &id);
    assert_eq!(plan.function_name.as_deref(), Some("ExitPlanMode"));
    assert_eq!(plan.function_args.as_ref().unwrap()["plan"], PLAN);
    let hello = dir.path().join("hello.txt");
    assert!(!hello.exists());
    // The model was told why its Write was refused.
    let turns = api.model_turns();
    let refusal = &anthropic::tool_results(&turns[1])[0];
    assert_eq!(refusal["is_error"], true, "{refusal:#}");
    assert!(refusal.to_string().contains("plan mode"), "{refusal:#}");
    assert_eq!(mode_of(&d, &id), PermissionMode::Plan);

    assert_eq!(decide(&d, &plan, "approve", None), recorded());
    events.until(|e| {
        matches!(e, Event::SessionSettingsChanged { session_id, control, .. }
            if *session_id == id && control.permission_mode == PermissionMode::Default)
    });
    let write = pending(&d, &id);
    assert_eq!(write.function_name.as_deref(), Some("Write"));
    assert_eq!(decide(&d, &write, "approve", None), recorded());
    let s = d.wait_session(&id, |s| !s.status.is_active());
    assert_eq!(s.result_content.as_deref(), Some("hello.txt is written."));
    assert_eq!(std::fs::read_to_string(&hello).unwrap(), "Hello, world!\n");
    assert_eq!(mode_of(&d, &id), PermissionMode::Default);
    let results = tool_results(&d, &id);
    assert_eq!(results.len(), 3, "{results:#?}");
}

#[test]
fn the_slash_commands_are_those_the_cli_reported() {
    let api = AnthropicStandIn::start(|_| Reply::text("Noted."));
    let d = TestDaemon::start_with(options(Some(&api)));
    let dir = scratch();
    let id = d.launch(launch_params("First", dir.path()));
    let commands = listed_commands(&d, &id);
    let kind = |name: &str| kind_of(&commands, name);
    assert_eq!(kind("compact"), Some(SlashCommandKind::Command));
    assert_eq!(kind("debug"), Some(SlashCommandKind::Skill));
    assert_eq!(kind("Explore"), Some(SlashCommandKind::Agent));
    let compact = commands.iter().find(|c| c.name == "compact").unwrap();
    assert!(compact.argument_hint.is_some(), "{compact:?}");
    assert!(!compact.description.is_empty());
}

#[test]
fn plan_mode_entered_by_the_model_shows_and_refuses_its_edits() {
    let dir = scratch();
    let path = dir.path().join("hello.txt");
    let api = AnthropicStandIn::start(move |request| {
        let answered = anthropic::tool_results(request);
        match answered.first().and_then(|r| r["tool_use_id"].as_str()) {
            None => Reply::tool_use(
                "Let me plan first.",
                "toolu_01StandInEnterPlanMode1",
                "EnterPlanMode",
                json!({}),
            ),
            Some("toolu_01StandInEnterPlanMode1") => Reply::tool_use(
                "I'll create the file.",
                "toolu_01StandInWriteWhilePlan",
                "Write",
                json!({"file_path": path, "content": "Hello, world!\n"}),
            ),
            Some(_) => Reply::text("I will present a plan."),
        }
    });
    let d = TestDaemon::start_with(options(Some(&api)));
    let mut events = d.subscribe(SubscribeParams::default());
    let id = d.launch(launch_params("Create hello.txt", dir.path()));
    events.until(|e| {
        matches!(e, Event::SessionSettingsChanged { session_id, control, .. }
            if *session_id == id && control.permission_mode == PermissionMode::Plan)
    });
    let s = d.wait_session(&id, |s| !s.status.is_active());
    assert_eq!(s.result_content.as_deref(), Some("I will present a plan."));
    assert_eq!(s.control.permission_mode, PermissionMode::Plan);
    assert!(!dir.path().join("hello.txt").exists());
    let refusal = &anthropic::tool_results(&api.model_turns()[2])[0];
    assert!(refusal.to_string().contains("plan mode"), "{refusal:#}");
}
