//! The real `claude` CLI (npm `@anthropic-ai/claude-code` 2.1.197, installed on first use) under
//! the real daemon, with its Messages API calls answered by the loopback stand-in
//! `hld_e2e::anthropic`: failures, plain answers, approvals and questions through the real
//! `hlyr` MCP server, interrupts, resumes and system prompts as the real CLI produces them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use hld_client::protocol::{
    Approval, ApprovalStatus, ContinueSession, ContinueSessionParams, ConversationEvent,
    ConversationEventType, GetApproval, GetApprovalParams, Health, InterruptSession,
    LaunchSessionParams, NoParams, SendDecision, SendDecisionParams, SendDecisionResult,
    SessionIdParams, SessionStatus,
};
use hld_e2e::anthropic::{self, AnthropicStandIn, Reply, INPUT_TOKENS, OUTPUT_TOKENS};
use hld_e2e::{launch_params, wait_for, DaemonOptions, TestDaemon, WAIT};
use serde_json::{json, Value};

/// The pinned CLI version (the one `claude-code.md` documents).
const CLI_VERSION: &str = "2.1.197";

/// The CLI's default model in 2.1.197, as `system/init` reports it.
const DEFAULT_MODEL: &str = "claude-opus-4-8[1m]";

/// The installed `claude` binary: `<CARGO_TARGET_TMPDIR>/claude-code-<version>`, installed with
/// npm once and reused afterwards. Panics with the reason when it cannot be installed.
fn claude_cli() -> &'static Path {
    static CLI: OnceLock<PathBuf> = OnceLock::new();
    CLI.get_or_init(install_cli)
}

fn install_cli() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("claude-code-{CLI_VERSION}"));
    let bin = dir.join("node_modules/.bin/claude");
    let expected = format!("{CLI_VERSION} (Claude Code)");
    if cli_version(&bin).as_deref() == Some(expected.as_str()) {
        return bin;
    }
    std::fs::create_dir_all(&dir).expect("create the CLI install directory");
    // Without a package.json here npm would install into the nearest ancestor that has one.
    std::fs::write(
        dir.join("package.json"),
        r#"{"name":"claude-code-under-test","private":true}"#,
    )
    .expect("write package.json");
    let package = format!("@anthropic-ai/claude-code@{CLI_VERSION}");
    let output = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", &package])
        .current_dir(&dir)
        .output()
        .unwrap_or_else(|e| {
            panic!("the real-claude tests install {package} with npm, which cannot run: {e}")
        });
    assert!(
        output.status.success(),
        "npm install {package} failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        cli_version(&bin).as_deref(),
        Some(expected.as_str()),
        "{} --version after npm install {package} (its postinstall script puts the native \
         binary in place)",
        bin.display()
    );
    bin
}

fn cli_version(bin: &Path) -> Option<String> {
    let output = Command::new(bin).arg("--version").output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// A daemon running the real CLI with the real approvals server; `api` answers its model calls
/// (without one the CLI has no credentials and no endpoint).
pub(super) fn daemon(api: Option<&AnthropicStandIn>) -> TestDaemon {
    TestDaemon::start_with(options(api))
}

/// The options of [`daemon`].
pub(super) fn options(api: Option<&AnthropicStandIn>) -> DaemonOptions {
    let mut options = DaemonOptions::default()
        .arg("--claude-path")
        .arg(&claude_cli().display().to_string())
        .arg("--interrupt-grace-ms")
        .arg("5000")
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    if let Some(api) = api {
        options = options
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("ANTHROPIC_BASE_URL", &api.base_url());
    }
    options
}

/// A working directory of its own for the session.
pub(super) fn workdir(d: &TestDaemon) -> PathBuf {
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `event_type/role` of each conversation event.
pub(super) fn kinds(events: &[ConversationEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            format!(
                "{}/{}",
                e.event_type.as_str(),
                e.role.as_deref().unwrap_or("-")
            )
        })
        .collect()
}

/// The first event of a type.
pub(super) fn event(
    events: &[ConversationEvent],
    event_type: ConversationEventType,
) -> &ConversationEvent {
    events
        .iter()
        .find(|e| e.event_type == event_type)
        .unwrap_or_else(|| panic!("no {event_type:?} in {events:#?}"))
}

/// Polls `fetchApprovals` until the session has one pending approval.
pub(super) fn wait_pending_approval(d: &TestDaemon, session_id: &str) -> Approval {
    let approvals = d.wait_approvals(Some(session_id), |a| !a.is_empty());
    assert_eq!(approvals.len(), 1, "{approvals:?}");
    approvals.into_iter().next().unwrap()
}

pub(super) fn decide(
    d: &TestDaemon,
    approval: &Approval,
    decision: &str,
    comment: Option<&str>,
) -> SendDecisionResult {
    d.request::<SendDecision>(SendDecisionParams {
        call_id: Some(approval.id.clone()),
        kind: Some(approval.kind.as_str().to_owned()),
        decision: Some(decision.to_owned()),
        comment: comment.map(str::to_owned),
    })
}

/// The reply to a decision that was recorded.
pub(super) fn recorded() -> SendDecisionResult {
    SendDecisionResult {
        success: true,
        error: None,
        reason: None,
    }
}

/// The text of every message in a request, in order, as `role: text` (strings and text blocks,
/// trimmed).
pub(super) fn message_texts(request: &Value) -> Vec<String> {
    let mut texts = Vec::new();
    for message in request["messages"].as_array().unwrap() {
        let role = message["role"].as_str().unwrap_or("-");
        let mut push = |text: &str| texts.push(format!("{role}: {}", text.trim()));
        match &message["content"] {
            Value::String(s) => push(s),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .for_each(push),
            _ => {}
        }
    }
    texts
}

/// Whether a request carries the user prompt `prompt`.
pub(super) fn asks(request: &Value, prompt: &str) -> bool {
    message_texts(request).contains(&format!("user: {prompt}"))
}

/// Replies with a `Write` of `<dir>/hello.txt`, then (once the tool result is in) with a final
/// text.
pub(super) fn write_hello(dir: PathBuf) -> impl Fn(&Value) -> Reply + Send + Sync + 'static {
    move |request| {
        if anthropic::tool_results(request).is_empty() {
            Reply::tool_use(
                "I'll create that file for you.",
                "toolu_01StandInWriteHello0001",
                "Write",
                json!({"file_path": dir.join("hello.txt"), "content": "Hello, world!\n"}),
            )
        } else {
            Reply::text("Finished with hello.txt.")
        }
    }
}

/// A work directory made before the daemon, for stand-ins that need its path.
pub(super) fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("real-claude-")
        .tempdir()
        .expect("tempdir")
}

#[test]
fn without_credentials_the_session_fails_not_logged_in() {
    let d = daemon(None);
    let claude = d.request::<Health>(NoParams {}).claude.unwrap();
    assert!(claude.available, "{claude:?}");
    assert_eq!(claude.version.as_deref(), Some("2.1.197 (Claude Code)"));

    let id = d.launch(launch_params("hello", workdir(&d)));
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Failed, "{s:?}");
    assert!(
        s.error_message
            .as_deref()
            .unwrap()
            .contains("Not logged in"),
        "{s:?}"
    );
    // The turn failed; the process stays warm for the next message.
    assert!(s.live && s.exit_code.is_none(), "{s:?}");
    assert_eq!(s.claude_session_id.as_deref().unwrap().len(), 36, "{s:?}");
    assert_eq!(
        s.model.as_deref(),
        Some(DEFAULT_MODEL),
        "the model comes from system/init"
    );
    let events = d.conversation(&id);
    assert_eq!(kinds(&events), ["message/user", "message/assistant"]);
    assert_eq!(events[0].content.as_deref(), Some("hello"));
    assert_eq!(
        events[1].content.as_deref(),
        Some("Not logged in · Please run /login")
    );
}

/// The CLI retries an API call that fails; each retry shows in the conversation as it happens
/// (a session that retries for minutes is not silently `running`).
#[test]
fn api_retries_show_in_the_conversation() {
    let api = AnthropicStandIn::start(|_| {
        Reply::http_error(401, "authentication_error", "invalid x-api-key")
    });
    let mut options = options(Some(&api));
    options.env.retain(|(k, _)| k != "CLAUDE_CODE_MAX_RETRIES");
    let d = TestDaemon::start_with(options.env("CLAUDE_CODE_MAX_RETRIES", "2"));
    let id = d.launch(launch_params("hello", workdir(&d)));
    let s = d.wait_ended(&id);
    assert_eq!(s.status, SessionStatus::Failed, "{s:?}");
    let events = d.conversation(&id);
    let retries: Vec<&ConversationEvent> = events
        .iter()
        .filter(|e| {
            e.event_type == ConversationEventType::System
                && e.subtype.as_deref() == Some("api_retry")
        })
        .collect();
    let texts: Vec<&str> = retries
        .iter()
        .filter_map(|e| e.content.as_deref())
        .collect();
    assert_eq!(texts.len(), 2, "{events:#?}");
    for (i, text) in texts.iter().enumerate() {
        let attempt = format!("retrying ({}/2) in ", i + 1);
        assert!(
            text.starts_with("API error 401 (authentication_failed), "),
            "{text}"
        );
        assert!(text.contains(&attempt), "{text}");
        assert!(text.ends_with(" s"), "{text}");
    }
    assert!(retries.iter().all(|e| e.is_error));
    // The retries come before the failure the CLI reports.
    let last_retry = retries.last().unwrap().sequence;
    let failure = events
        .iter()
        .find(|e| e.role.as_deref() == Some("assistant"))
        .expect("the CLI's failure message");
    assert!(failure.sequence > last_retry);
}

#[test]
fn a_text_answer_completes_the_session() {
    let api = AnthropicStandIn::start(|_| Reply::text("The capital of France is Paris."));
    // A short idle window: the process closes soon after the turn.
    let d = TestDaemon::start_with(options(Some(&api)).arg("--live-idle-ms").arg("1000"));
    let wd = workdir(&d);
    let id = d.launch(launch_params("What is the capital of France?", &wd));
    let s = d.wait_ended(&id);
    assert_eq!(
        s.status,
        SessionStatus::Completed,
        "{s:?}\nlog:\n{}",
        d.log_text()
    );
    assert!(s.live && s.exit_code.is_none(), "{s:?}");
    assert_eq!(s.num_turns, Some(1));
    assert_eq!(
        s.model.as_deref(),
        Some(DEFAULT_MODEL),
        "the model comes from system/init"
    );
    assert_eq!(
        s.result_content.as_deref(),
        Some("The capital of France is Paris.")
    );
    // The CLI prices the stand-in's token counts itself: $5/$25 per million for this model.
    let expected_cost = (INPUT_TOKENS * 5 + OUTPUT_TOKENS * 25) as f64 / 1e6;
    let cost = s.cost_usd.unwrap();
    assert!(
        (cost - expected_cost).abs() < 1e-9,
        "{cost} vs {expected_cost}"
    );

    // The Claude session is the one the CLI stored under the private HOME, once it closed.
    assert_eq!(d.wait_session(&id, |s| !s.live).exit_code, Some(0));
    let claude_id = s.claude_session_id.unwrap();
    let project = wd.display().to_string().replace(['/', '.'], "-");
    let stored = d
        .dir
        .join(".claude/projects")
        .join(project)
        .join(format!("{claude_id}.jsonl"));
    assert!(stored.exists(), "{} exists", stored.display());

    let events = d.conversation(&id);
    assert_eq!(kinds(&events), ["message/user", "message/assistant"]);
    assert_eq!(
        events[0].content.as_deref(),
        Some("What is the capital of France?")
    );
    assert_eq!(
        events[1].content.as_deref(),
        Some("The capital of France is Paris.")
    );
    for e in &events {
        assert_eq!(e.claude_session_id, claude_id);
    }

    let turns = api.model_turns();
    assert_eq!(turns.len(), 1, "one model call");
    assert_eq!(turns[0]["model"], "claude-opus-4-8");
    // Permissions come over the control channel (no API key): no approvals server runs, and
    // the model is offered the CLI's own question tool.
    let tools: Vec<&str> = turns[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(tools.contains(&"Write"), "{tools:?}");
    assert!(tools.contains(&"AskUserQuestion"), "{tools:?}");
    assert!(!tools.iter().any(|t| t.starts_with("mcp__")), "{tools:?}");
    assert!(
        asks(&turns[0], "What is the capital of France?"),
        "{:?}",
        message_texts(&turns[0])
    );
}

#[test]
fn an_approved_write_runs_through_the_real_approvals_server() {
    let wd = scratch();
    let api = AnthropicStandIn::start(write_hello(wd.path().to_path_buf()));
    let d = daemon(Some(&api));
    let id = d.launch(launch_params("Create hello.txt", wd.path()));
    let approval = wait_pending_approval(&d, &id);
    let hello = wd.path().join("hello.txt");
    let spec = &approval
        .function_call
        .as_ref()
        .expect("a function call")
        .spec;
    assert_eq!(spec.function, "Write", "{approval:?}");
    assert_eq!(spec.kwargs["file_path"], hello.display().to_string());

    d.wait_session(&id, |s| s.status == SessionStatus::WaitingInput);
    let call = event(&d.conversation(&id), ConversationEventType::ToolCall).clone();
    assert_eq!(call.tool_name.as_deref(), Some("Write"));
    assert_eq!(
        call.tool_id.as_deref(),
        Some("toolu_01StandInWriteHello0001")
    );
    assert_eq!(call.approval_status.as_deref(), Some("pending"));
    assert_eq!(call.approval_id.as_deref(), Some(approval.id.as_str()));
    assert!(!hello.exists(), "nothing is written before the decision");

    assert_eq!(decide(&d, &approval, "approve", None), recorded());
    let s = d.wait_ended(&id);
    assert_eq!(
        s.status,
        SessionStatus::Completed,
        "{s:?}\nlog:\n{}",
        d.log_text()
    );
    assert_eq!(std::fs::read_to_string(&hello).unwrap(), "Hello, world!\n");
    assert_eq!(s.num_turns, Some(2));

    let events = d.conversation(&id);
    assert_eq!(
        kinds(&events),
        [
            "message/user",
            "message/assistant",
            "tool_call/-",
            "tool_result/user",
            "message/assistant"
        ]
    );
    let call = event(&events, ConversationEventType::ToolCall);
    assert_eq!(call.approval_status.as_deref(), Some("approved"));
    assert!(call.is_completed);
    let result = event(&events, ConversationEventType::ToolResult);
    assert_eq!(result.tool_result_for_id, call.tool_id);
    assert!(!result.is_error, "{result:?}");
    assert!(result
        .tool_result_content
        .as_deref()
        .unwrap()
        .starts_with(&format!(
            "File created successfully at: {}",
            hello.display()
        )));

    // The model got the tool's success back.
    let turns = api.wait_model_turns(2);
    let results = anthropic::tool_results(&turns[1]);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["tool_use_id"], "toolu_01StandInWriteHello0001");
    assert_ne!(results[0]["is_error"], true);
}

#[test]
fn a_denied_write_tells_the_model_the_reviewers_comment() {
    let wd = scratch();
    let api = AnthropicStandIn::start(write_hello(wd.path().to_path_buf()));
    let d = daemon(Some(&api));
    let id = d.launch(launch_params("Create hello.txt", wd.path()));
    let approval = wait_pending_approval(&d, &id);
    assert_eq!(
        decide(&d, &approval, "deny", Some("Use notes.txt instead")),
        recorded()
    );
    let s = d.wait_ended(&id);
    assert_eq!(
        s.status,
        SessionStatus::Completed,
        "{s:?}\nlog:\n{}",
        d.log_text()
    );
    assert!(!wd.path().join("hello.txt").exists());

    let turns = api.wait_model_turns(2);
    let results = anthropic::tool_results(&turns[1]);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["is_error"], true);
    assert_eq!(results[0]["content"], "Use notes.txt instead");

    let events = d.conversation(&id);
    let result = event(&events, ConversationEventType::ToolResult);
    assert!(result.is_error);
    assert_eq!(
        result.tool_result_content.as_deref(),
        Some("Use notes.txt instead")
    );
    assert_eq!(
        event(&events, ConversationEventType::ToolCall)
            .approval_status
            .as_deref(),
        Some("denied")
    );
    assert_eq!(
        events.last().unwrap().content.as_deref(),
        Some("Finished with hello.txt.")
    );
}

#[test]
fn a_question_to_the_human_is_answered_over_the_control_channel() {
    let questions = json!([{
        "question": "What colour should the button be?",
        "header": "Colour",
        "options": [
            {"label": "Blue", "description": "like the sky"},
            {"label": "Red", "description": "like a cherry"}
        ],
        "multiSelect": false
    }]);
    let api = AnthropicStandIn::start(move |request| {
        if anthropic::tool_results(request).is_empty() {
            Reply::tool_use(
                "Let me ask.",
                "toolu_01StandInAskHuman00001",
                "AskUserQuestion",
                json!({"questions": questions}),
            )
        } else {
            Reply::text("Blue it is.")
        }
    });
    let d = daemon(Some(&api));
    let id = d.launch(launch_params("Pick a colour", workdir(&d)));
    // The CLI's permission request for its question tool is a question to the human.
    let approval = wait_pending_approval(&d, &id);
    assert!(approval.function_call.is_none(), "{approval:?}");
    assert_eq!(
        approval.human_contact.as_ref().unwrap().spec.msg,
        "What colour should the button be?"
    );
    assert_eq!(decide(&d, &approval, "respond", Some("Blue")), recorded());
    let s = d.wait_ended(&id);
    assert_eq!(
        s.status,
        SessionStatus::Completed,
        "{s:?}\nlog:\n{}",
        d.log_text()
    );

    // The answer reached the model as the question tool's result.
    let turns = api.wait_model_turns(2);
    let results = anthropic::tool_results(&turns[1]);
    assert_eq!(results.len(), 1, "{results:?}");
    let content = results[0]["content"].to_string();
    assert!(
        content.contains(r#"\"What colour should the button be?\"=\"Blue\""#),
        "{content}"
    );
    let events = d.conversation(&id);
    let call = event(&events, ConversationEventType::ToolCall);
    assert_eq!(call.tool_name.as_deref(), Some("AskUserQuestion"));
    assert_eq!(call.approval_id.as_deref(), Some(approval.id.as_str()));
    assert_eq!(
        events.last().unwrap().content.as_deref(),
        Some("Blue it is.")
    );
}

#[test]
fn an_interrupt_while_an_approval_is_pending_rejects_the_tool_and_expires_the_approval() {
    let wd = scratch();
    let api = AnthropicStandIn::start(write_hello(wd.path().to_path_buf()));
    let d = daemon(Some(&api));
    let id = d.launch(launch_params("Create hello.txt", wd.path()));
    let approval_id = wait_pending_approval(&d, &id).id;
    d.wait_session(&id, |s| s.status == SessionStatus::WaitingInput);
    let r = d.request::<InterruptSession>(SessionIdParams {
        session_id: id.clone(),
    });
    assert!(r.success, "{r:?}");
    let s = d.wait_ended(&id);
    assert_eq!(
        s.status,
        SessionStatus::Completed,
        "{s:?}\nlog:\n{}",
        d.log_text()
    );
    assert!(s.interrupted);
    assert!(!wd.path().join("hello.txt").exists());
    assert_eq!(api.model_turns().len(), 1, "the model is not asked again");

    // The interrupt control request: the CLI withdraws its permission request, rejects the
    // call and records the interrupt.
    let events = d.conversation(&id);
    let result = event(&events, ConversationEventType::ToolResult);
    assert!(result.is_error);
    let content = result.tool_result_content.as_deref().unwrap();
    assert!(
        content.starts_with("The user doesn't want to proceed with this tool use."),
        "{events:#?}"
    );
    assert_eq!(
        events.last().unwrap().content.as_deref(),
        Some("[Request interrupted by user for tool use]")
    );
    // Nobody can decide the approval any more: it expired with its session.
    // It expires as the daemon hears of the session's end, a moment after it.
    let approval = wait_for(WAIT, || {
        Some(
            d.request::<GetApproval>(GetApprovalParams {
                approval_id: approval_id.clone(),
            })
            .approval,
        )
        .filter(|a| a.status != ApprovalStatus::Pending)
    })
    .expect("the approval left pending");
    assert_eq!(approval.status, ApprovalStatus::Resolved, "{approval:?}");
    assert_eq!(
        approval.comment.as_deref(),
        Some("the session ended before a decision")
    );
    let events = d.conversation(&id);
    assert_eq!(
        event(&events, ConversationEventType::ToolCall)
            .approval_status
            .as_deref(),
        Some("resolved")
    );
    assert!(d.approvals(Some(&id)).is_empty());
}

#[test]
fn an_interrupted_stream_can_be_resumed_with_its_history() {
    let count: String = (1..=100).map(|n| format!("{n} ")).collect();
    let reply = Reply::text(&count).slow(Duration::from_millis(100));
    let api = AnthropicStandIn::start(move |request| {
        if asks(request, "go on") {
            Reply::text("Resumed.")
        } else {
            reply.clone()
        }
    });
    let d = daemon(Some(&api));
    let id = d.launch(launch_params("Count to a hundred", workdir(&d)));
    // Interrupt mid-stream, once a few words have gone out.
    api.wait_deltas(5);
    let r = d.request::<InterruptSession>(SessionIdParams {
        session_id: id.clone(),
    });
    assert!(r.success, "{r:?}");
    let s = d.wait_ended(&id);
    assert_eq!(
        s.status,
        SessionStatus::Completed,
        "{s:?}\nlog:\n{}",
        d.log_text()
    );
    assert!(s.interrupted);
    // The CLI prints what had streamed so far, then the interrupt marker.
    let events = d.conversation(&id);
    assert_eq!(
        kinds(&events),
        ["message/user", "message/assistant", "message/user"]
    );
    let partial = events[1].content.as_deref().unwrap();
    assert!(
        partial.starts_with("1 2 ") && partial.len() < count.len(),
        "{partial:?}"
    );
    assert_eq!(
        events[2].content.as_deref(),
        Some("[Request interrupted by user]")
    );
    let parent_claude = s.claude_session_id.unwrap();

    let c = d.request::<ContinueSession>(ContinueSessionParams {
        session_id: id.clone(),
        query: "go on".into(),
        ..Default::default()
    });
    let cs = d.wait_ended(&c.session_id);
    assert_eq!(
        cs.status,
        SessionStatus::Completed,
        "{cs:?}\nlog:\n{}",
        d.log_text()
    );
    assert_eq!(cs.parent_session_id, Some(id));
    // A continuation forks (`--fork-session`): it has a Claude session of its own.
    assert!(cs.claude_session_id.is_some());
    assert_ne!(cs.claude_session_id, Some(parent_claude));

    let turns = api.wait_model_turns(2);
    let texts = message_texts(&turns[1]);
    let first = texts.iter().position(|t| t == "user: Count to a hundred");
    let second = texts.iter().position(|t| t == "user: go on");
    assert!(
        first.is_some() && first < second,
        "the resumed request carries the earlier query first: {texts:?}"
    );
    let chain = d.conversation(&c.session_id);
    assert_eq!(chain[0].content.as_deref(), Some("Count to a hundred"));
    assert!(chain.iter().any(|e| e.content.as_deref() == Some("go on")));
    assert_eq!(chain.last().unwrap().content.as_deref(), Some("Resumed."));
}

#[test]
fn two_continuations_of_one_parent_are_independent_branches() {
    let api = AnthropicStandIn::start(|request| {
        let texts = message_texts(request);
        let last = texts.last().cloned().unwrap_or_default();
        Reply::text(&format!("Noted: {last}"))
    });
    let d = daemon(Some(&api));
    let parent = d.launch(launch_params("The base", workdir(&d)));
    assert_eq!(d.wait_ended(&parent).status, SessionStatus::Completed);
    let branch = |query: &str| {
        let c = d.request::<ContinueSession>(ContinueSessionParams {
            session_id: parent.clone(),
            query: query.into(),
            ..Default::default()
        });
        let s = d.wait_ended(&c.session_id);
        assert_eq!(
            s.status,
            SessionStatus::Completed,
            "{s:?}
log:
{}",
            d.log_text()
        );
        s
    };
    let first = branch("First branch turn");
    let second = branch("Second branch turn");
    assert_ne!(first.claude_session_id, second.claude_session_id);
    let turns = api.wait_model_turns(3);
    let second_request = turns
        .iter()
        .find(|t| asks(t, "Second branch turn"))
        .expect("the second branch asked the model");
    let texts = message_texts(second_request);
    assert!(
        texts.contains(&"user: The base".to_owned()),
        "the branch carries the parent's history: {texts:?}"
    );
    assert!(
        !texts.iter().any(|t| t.contains("First branch turn")),
        "the second branch saw the first branch's turn: {texts:?}"
    );
    // Each branch's conversation holds its own turn and the parent's, not its sibling's.
    let second_chain = d.conversation(&second.id);
    assert!(second_chain.iter().all(|e| !e
        .content
        .as_deref()
        .unwrap_or("")
        .contains("First branch")));
    // The real CLI's usage reaches the session's token figures.
    assert!(first.effective_context_tokens.is_some() && first.context_limit.is_some());
}

#[test]
fn system_prompts_and_custom_instructions_reach_the_model() {
    let api = AnthropicStandIn::start(|_| Reply::text("Noted."));
    let d = daemon(Some(&api));
    let wd = workdir(&d);
    let appended = d.launch(LaunchSessionParams {
        append_system_prompt: Some("APPEND-MARKER".into()),
        custom_instructions: Some("CUSTOM-MARKER".into()),
        ..launch_params("first", &wd)
    });
    let replaced = d.launch(LaunchSessionParams {
        system_prompt: Some("SYSTEM-MARKER only".into()),
        ..launch_params("second", &wd)
    });
    for id in [&appended, &replaced] {
        let s = d.wait_ended(id);
        assert_eq!(
            s.status,
            SessionStatus::Completed,
            "{s:?}\nlog:\n{}",
            d.log_text()
        );
    }
    let turns = api.model_turns();
    let system_of = |query: &str| {
        let turn = turns
            .iter()
            .find(|t| asks(t, query))
            .unwrap_or_else(|| panic!("no model call for {query}"));
        anthropic::system_text(turn)
    };
    let system = system_of("first");
    assert!(
        system.contains("APPEND-MARKER\n\nCUSTOM-MARKER"),
        "appended after the default prompt: {system}"
    );
    assert!(system.contains("You are an interactive agent"), "{system}");
    let system = system_of("second");
    assert!(system.contains("SYSTEM-MARKER only"), "{system}");
    assert!(!system.contains("You are an interactive agent"), "{system}");
}
