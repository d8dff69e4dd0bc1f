//! Unit tests of `transcript`.

use super::*;
use crate::claude::stream::{McpServerStatus, System};
use crate::store::ContextTokens;
use hld_client::protocol::ConversationEventType as Kind;
use serde_json::json;

/// One line on its own: [`Transcript::apply_to`] an empty batch.
trait ApplyOne {
    fn apply(&mut self, line: &str) -> Ingest;
}

impl ApplyOne for Transcript {
    fn apply(&mut self, line: &str) -> Ingest {
        let mut ingest = Ingest::default();
        self.apply_to(line, &mut ingest);
        ingest
    }
}

/// Feeds a fixture transcript through a fresh mapper.
fn run(name: &str) -> (Transcript, Vec<String>, Vec<Ingest>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/transcripts")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut state = Transcript::new();
    let ingests = lines.iter().map(|l| state.apply(l)).collect();
    (state, lines, ingests)
}

fn events(ingests: &[Ingest]) -> Vec<NewEvent> {
    ingests.iter().flat_map(|i| i.events.clone()).collect()
}

fn kinds(events: &[NewEvent]) -> Vec<(Kind, Option<&str>)> {
    events
        .iter()
        .map(|e| (e.event_type, e.role.as_deref()))
        .collect()
}

/// Every line kept verbatim, one per ingest; every event tagged with `sid`.
fn assert_raw_and_sid(lines: &[String], ingests: &[Ingest], sid: &str) {
    assert_eq!(lines.len(), ingests.len());
    for (line, ingest) in lines.iter().zip(ingests) {
        assert_eq!(ingest.raw_lines, std::slice::from_ref(line));
        for e in &ingest.events {
            assert_eq!(e.claude_session_id, sid);
            assert_eq!(e.parent_tool_use_id, None);
        }
    }
}

/// The only update that sets the claude session id is the first ingest's.
fn assert_session_id_set_once(ingests: &[Ingest], sid: &str, model: &str) {
    let first = ingests[0].update.as_ref().unwrap();
    assert_eq!(first.claude_session_id.as_deref(), Some(sid));
    assert_eq!(first.model.as_deref(), Some(model));
    assert!(ingests[0].events.is_empty());
    for later in &ingests[1..] {
        if let Some(u) = &later.update {
            assert_eq!(u.claude_session_id, None);
        }
    }
}

#[test]
fn claude_fixture_01_simple_text() {
    let (state, lines, ingests) = run("01-simple-text.jsonl");
    let sid = "9c14fa8e-fbea-4f30-99c1-99dc87bfb7d8";
    assert_raw_and_sid(&lines, &ingests, sid);
    assert_session_id_set_once(&ingests, sid, "claude-sonnet-4-5-20250929");
    let evs = events(&ingests);
    assert_eq!(
        evs,
        [NewEvent::message(
            sid,
            "assistant",
            "The capital of France is Paris."
        )]
    );

    let update = ingests.last().unwrap().update.clone().unwrap();
    assert_eq!(
        update,
        SessionUpdate {
            cost_usd: Some(0.059895750000000005),
            duration_ms: Some(123),
            num_turns: Some(1),
            result_content: Some("The capital of France is Paris.".into()),
            result_is_error: Some(false),
            input_tokens: Some(4),
            output_tokens: Some(24),
            context: ContextTokens {
                cache_creation_input_tokens: Some(15873),
                cache_read_input_tokens: Some(0),
                context_limit: Some(200_000),
                effective_context_tokens: None,
            },
            ..SessionUpdate::default()
        }
    );
    // The assistant message's own usage is the context the conversation takes.
    let contexts: Vec<_> = ingests
        .iter()
        .filter_map(|i| i.update.as_ref()?.context.effective_context_tokens)
        .collect();
    assert_eq!(contexts, [4 + 15873]);
    let result = state.result().unwrap();
    assert_eq!(result.subtype.as_deref(), Some("success"));
    assert!(!result.is_error());
    assert!(!result.aborted());
    assert_eq!(result.terminal_reason.as_deref(), Some("completed"));
    assert_eq!(result.duration_api_ms, Some(17));
    assert_eq!(state.claude_session_id(), Some(sid));
}

#[test]
fn claude_fixture_02_tool_use_approved() {
    let (state, lines, ingests) = run("02-tool-use-approved.jsonl");
    let sid = "f2e03c37-faaf-4854-b5c8-7d78f25b0edb";
    assert_raw_and_sid(&lines, &ingests, sid);
    assert_session_id_set_once(&ingests, sid, "claude-sonnet-4-5-20250929");
    // The thinking_tokens system line is kept raw only.
    assert!(ingests[1].events.is_empty() && ingests[1].update.is_none());

    let evs = events(&ingests);
    assert_eq!(
        kinds(&evs),
        [
            (Kind::Thinking, Some("assistant")),
            (Kind::Message, Some("assistant")),
            (Kind::ToolCall, None),
            (Kind::ToolResult, Some("user")),
            (Kind::Message, Some("assistant")),
        ]
    );
    assert!(evs[0]
        .content
        .as_deref()
        .unwrap()
        .starts_with("The user wants a new file hello.txt"));
    assert_eq!(
        evs[1].content.as_deref(),
        Some("I'll create that file for you.")
    );

    let call = &evs[2];
    assert_eq!(
        call.tool_id.as_deref(),
        Some("toolu_01A9cXk3mQ7ZrT2bVnW8pLsE")
    );
    assert_eq!(call.tool_name.as_deref(), Some("Write"));
    let input: Value = serde_json::from_str(call.tool_input_json.as_deref().unwrap()).unwrap();
    assert_eq!(
        input,
        json!({"file_path": "/home/dev/project/hello.txt", "content": "Hello, world!\n"})
    );
    assert!(!call.tool_input_json.as_deref().unwrap().contains(": "));

    let res = &evs[3];
    assert_eq!(res.tool_result_for_id, call.tool_id);
    assert_eq!(
        res.tool_result_content.as_deref(),
        Some("File created successfully at: /home/dev/project/hello.txt (file state is current in your context — no need to Read it back)")
    );
    assert!(!res.is_error);
    assert_eq!(res.content, None);
    assert_eq!(
        evs[4].content.as_deref(),
        Some("Done - the file hello.txt now contains \"Hello, world!\".")
    );

    let update = ingests.last().unwrap().update.clone().unwrap();
    assert_eq!(update.cost_usd, Some(0.06766065000000002));
    assert_eq!(update.num_turns, Some(2));
    assert_eq!(update.input_tokens, Some(10));
    assert_eq!(update.output_tokens, Some(120));
    assert_eq!(update.result_is_error, Some(false));
    assert_eq!(update.error_message, None);
    assert!(!state.result().unwrap().is_error());
}

#[test]
fn claude_fixture_03_failed_not_logged_in() {
    let (state, lines, ingests) = run("03-failed-not-logged-in.jsonl");
    let sid = "df8e054f-a139-4537-b6cb-7fa6a33a8c6a";
    assert_raw_and_sid(&lines, &ingests, sid);
    assert_session_id_set_once(&ingests, sid, "claude-opus-4-8[1m]");
    assert_eq!(
        events(&ingests),
        [NewEvent::message(
            sid,
            "assistant",
            "Not logged in · Please run /login"
        )]
    );
    match parse_line(&lines[1]).event {
        AgentEvent::Assistant(msg) => {
            assert_eq!(msg.message.model.as_deref(), Some("<synthetic>"));
            assert_eq!(msg.error.as_deref(), Some("authentication_failed"));
        }
        other => panic!("expected assistant, got {other:?}"),
    }

    let update = ingests.last().unwrap().update.clone().unwrap();
    assert_eq!(update.result_is_error, Some(true));
    assert_eq!(update.cost_usd, Some(0.0));
    assert_eq!(update.num_turns, Some(1));
    // No `errors` array: the error text is the result text.
    assert_eq!(
        update.error_message.as_deref(),
        Some("Not logged in · Please run /login")
    );
    assert_eq!(
        update.result_content.as_deref(),
        Some("Not logged in · Please run /login")
    );
    let result = state.result().unwrap();
    assert_eq!(result.subtype.as_deref(), Some("success"));
    assert!(result.is_error());
    assert!(result.errors.is_empty());
}

#[test]
fn claude_fixture_04_tool_use_denied() {
    let (state, lines, ingests) = run("04-tool-use-denied.jsonl");
    let sid = "1899901a-4462-4a44-a898-eac939b82117";
    assert_raw_and_sid(&lines, &ingests, sid);
    assert_session_id_set_once(&ingests, sid, "claude-sonnet-4-5-20250929");
    let evs = events(&ingests);
    assert_eq!(
        kinds(&evs),
        [
            (Kind::Thinking, Some("assistant")),
            (Kind::Message, Some("assistant")),
            (Kind::ToolCall, None),
            (Kind::ToolResult, Some("user")),
            (Kind::Message, Some("assistant")),
        ]
    );
    let denied = &evs[3];
    assert_eq!(
        denied.tool_result_for_id.as_deref(),
        Some("toolu_01A9cXk3mQ7ZrT2bVnW8pLsE")
    );
    assert_eq!(denied.tool_result_for_id, evs[2].tool_id);
    assert!(denied.is_error);
    assert_eq!(
        denied.tool_result_content.as_deref(),
        Some("Denied by reviewer: not allowed to write files here")
    );
    let result = state.result().unwrap();
    assert!(!result.is_error());
    assert_eq!(result.num_turns, Some(2));
    assert_eq!(
        result.result.as_deref(),
        Some("I couldn't create hello.txt because permission to use the Write tool was denied.")
    );
}

#[test]
fn claude_fixture_05_interrupted() {
    let (state, lines, ingests) = run("05-interrupted-sigint.jsonl");
    let sid = "b1c0fe5a-fc6a-4e71-9b90-46fc381706e0";
    assert_raw_and_sid(&lines, &ingests, sid);
    assert_session_id_set_once(&ingests, sid, "claude-sonnet-4-5-20250929");
    // task_started / task_notification lines: raw only.
    for i in 3..=5 {
        assert_eq!(
            parse_line(&lines[i]).event,
            AgentEvent::System(System::Other)
        );
        assert!(ingests[i].events.is_empty() && ingests[i].update.is_none());
    }
    let evs = events(&ingests);
    assert_eq!(
        kinds(&evs),
        [
            (Kind::Message, Some("assistant")),
            (Kind::ToolCall, None),
            (Kind::ToolResult, Some("user")),
            (Kind::Message, Some("user")),
        ]
    );
    assert_eq!(
        evs[1].tool_id.as_deref(),
        Some("toolu_01Sl33pXq9RkVb4nTzW2mYdA")
    );
    assert_eq!(evs[1].tool_name.as_deref(), Some("Bash"));
    assert_eq!(evs[2].tool_result_for_id, evs[1].tool_id);
    assert!(evs[2].is_error);
    assert!(evs[2]
        .tool_result_content
        .as_deref()
        .unwrap()
        .starts_with("The user doesn't want to proceed with this tool use."));
    assert_eq!(
        evs[3].content.as_deref(),
        Some("[Request interrupted by user for tool use]")
    );

    let update = ingests.last().unwrap().update.clone().unwrap();
    assert_eq!(update.result_is_error, Some(true));
    assert_eq!(update.result_content, None);
    assert_eq!(update.num_turns, Some(3));
    assert_eq!(update.duration_ms, Some(3668));
    assert_eq!(update.cost_usd, Some(0.06097575000000001));
    assert_eq!(
        update.error_message.as_deref(),
        Some("[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use")
    );
    let result = state.result().unwrap();
    assert_eq!(result.subtype.as_deref(), Some("error_during_execution"));
    assert_eq!(result.terminal_reason.as_deref(), Some("aborted_tools"));
    assert!(result.aborted());
    assert!(result.is_error());
}

#[test]
fn claude_malformed_and_unknown_lines_kept_raw_without_events() {
    let lines = [
        "",
        "not json",
        "{\"type\":\"assistant\"",
        "[1,2]",
        "\"a string\"",
        "null",
        "{}",
        "{\"type\":5}",
        "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\"}}",
        "{\"type\":\"assistant\",\"message\":\"oops\"}",
        "{\"type\":\"assistant\",\"message\":{\"content\":[1,null,{\"type\":\"text\"},{\"type\":\"tool_use\",\"id\":3},{\"type\":\"redacted_thinking\",\"data\":\"x\"},{\"type\":\"server_tool_use\"}]}}",
        "{\"type\":\"user\",\"message\":{\"content\":{\"weird\":true}}}",
    ];
    let mut state = Transcript::new();
    for line in lines {
        let ingest = state.apply(line);
        assert_eq!(ingest.raw_lines, [line.to_owned()], "{line}");
        assert!(ingest.events.is_empty(), "{line}");
        assert!(ingest.update.is_none(), "{line}");
    }
    assert_eq!(state.claude_session_id(), None);
    assert_eq!(state.result(), None);
}

/// Each `api_retry` line becomes a system event saying the attempt, the error and the
/// delay.
#[test]
fn claude_api_retries_become_system_events() {
    let line = json!({"type": "system", "subtype": "api_retry", "attempt": 3,
        "max_retries": 10, "retry_delay_ms": 4100, "error_status": 401,
        "error": "authentication_failed", "session_id": "S1", "uuid": "u"})
    .to_string();
    let mut state = Transcript::new();
    let ingest = state.apply(&line);
    assert_eq!(ingest.raw_lines, std::slice::from_ref(&line));
    let [event] = &ingest.events[..] else {
        panic!("one event: {:?}", ingest.events)
    };
    assert_eq!(event.event_type, Kind::System);
    assert_eq!(event.subtype.as_deref(), Some("api_retry"));
    assert_eq!(event.role.as_deref(), Some("system"));
    assert!(event.is_error);
    assert_eq!(
        event.content.as_deref(),
        Some("API error 401 (authentication_failed), retrying (3/10) in 4.1 s")
    );
}

#[test]
fn claude_session_id_from_first_line_that_carries_one() {
    let mut state = Transcript::new();
    // An unknown line with a session id sets it, even before init.
    let first = state.apply("{\"type\":\"rate_limit_event\",\"session_id\":\"S1\"}");
    assert_eq!(
        first.update,
        Some(SessionUpdate {
            claude_session_id: Some("S1".into()),
            ..SessionUpdate::default()
        })
    );
    // A later, different id does not replace it.
    let init = state
        .apply("{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"S2\",\"model\":\"m\"}");
    assert_eq!(
        init.update,
        Some(SessionUpdate {
            model: Some("m".into()),
            ..SessionUpdate::default()
        })
    );
    assert_eq!(state.claude_session_id(), Some("S1"));

    // Events before any session id carry "".
    let mut fresh = Transcript::new();
    let early = fresh.apply(
        "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}",
    );
    assert_eq!(early.events, [NewEvent::message("", "assistant", "hi")]);
}

#[test]
fn claude_failed_resume_session_id_from_result() {
    let line = "{\"type\":\"result\",\"subtype\":\"error_during_execution\",\"duration_ms\":0,\"is_error\":true,\"num_turns\":0,\"stop_reason\":null,\"session_id\":\"0d9c2f8e-1111-4222-8333-944445555666\",\"total_cost_usd\":0,\"errors\":[\"No conversation found with session ID: 0d9c2f8e-1111-4222-8333-944445555666\"]}";
    let mut state = Transcript::new();
    let ingest = state.apply(line);
    let update = ingest.update.unwrap();
    assert_eq!(
        update.claude_session_id.as_deref(),
        Some("0d9c2f8e-1111-4222-8333-944445555666")
    );
    assert_eq!(
        update.error_message.as_deref(),
        Some("No conversation found with session ID: 0d9c2f8e-1111-4222-8333-944445555666")
    );
    assert_eq!(update.num_turns, Some(0));
    assert_eq!(update.result_content, None);
    assert!(!state.result().unwrap().aborted());
}

#[test]
fn claude_several_blocks_in_one_line_and_parent_tool_use_id() {
    let line = json!({
        "type": "assistant",
        "parent_tool_use_id": "toolu_TASK",
        "session_id": "S",
        "message": {"content": [
            {"type": "thinking", "thinking": "hmm", "signature": "x"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_R", "name": "Read", "input": {"file_path": "/a"}},
            {"type": "image", "source": {}}
        ]}
    })
    .to_string();
    let ingest = Transcript::new().apply(&line);
    assert_eq!(
        kinds(&ingest.events),
        [
            (Kind::Thinking, Some("assistant")),
            (Kind::Message, Some("assistant")),
            (Kind::ToolCall, None),
        ]
    );
    for e in &ingest.events {
        assert_eq!(e.parent_tool_use_id.as_deref(), Some("toolu_TASK"));
        assert_eq!(e.claude_session_id, "S");
    }
    assert_eq!(
        ingest.events[2].tool_input_json.as_deref(),
        Some("{\"file_path\":\"/a\"}")
    );
}

#[test]
fn claude_tool_result_array_content_and_user_text() {
    let line = json!({
        "type": "user",
        "session_id": "S",
        "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_M", "is_error": false, "content": [
                {"type": "text", "text": "line one"},
                {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
                {"type": "text", "text": "line two"}
            ]},
            {"type": "tool_result", "tool_use_id": "toolu_N"},
            {"type": "text", "text": "[Request interrupted by user]"}
        ]}
    })
    .to_string();
    let evs = Transcript::new().apply(&line).events;
    assert_eq!(
        kinds(&evs),
        [
            (Kind::ToolResult, Some("user")),
            (Kind::ToolResult, Some("user")),
            (Kind::Message, Some("user")),
        ]
    );
    assert_eq!(
        evs[0].tool_result_content.as_deref(),
        Some("line one\n[image]\nline two")
    );
    assert_eq!(evs[0].tool_result_for_id.as_deref(), Some("toolu_M"));
    assert_eq!(evs[1].tool_result_for_id.as_deref(), Some("toolu_N"));
    assert_eq!(evs[1].tool_result_content, None);
    assert!(!evs[1].is_error);
    assert_eq!(
        evs[2].content.as_deref(),
        Some("[Request interrupted by user]")
    );

    // A plain-string user message (replayed input) is one user message.
    let replay = Transcript::new()
        .apply("{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"do it\"}}");
    assert_eq!(replay.events, [NewEvent::message("", "user", "do it")]);
}

#[test]
fn claude_five_megabyte_tool_result_line() {
    let big = "x".repeat(5 * 1024 * 1024);
    for content in [json!(big), json!([{"type": "text", "text": big}])] {
        let line = json!({
            "type": "user",
            "session_id": "S",
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_BIG", "content": content}
            ]}
        })
        .to_string();
        assert!(line.len() > 5 * 1024 * 1024);
        let ingest = Transcript::new().apply(&line);
        assert_eq!(ingest.raw_lines[0].len(), line.len());
        assert_eq!(ingest.events.len(), 1);
        let text = ingest.events[0].tool_result_content.as_deref().unwrap();
        assert_eq!(text.len(), big.len());
        assert_eq!(
            ingest.events[0].tool_result_for_id.as_deref(),
            Some("toolu_BIG")
        );
    }
}

#[test]
fn claude_init_info_parsed() {
    let (_, lines, _) = run("02-tool-use-approved.jsonl");
    let AgentEvent::System(System::Init(init)) = parse_line(&lines[0]).event else {
        panic!("expected init")
    };
    assert_eq!(init.cwd.as_deref(), Some("/home/dev/project"));
    assert_eq!(init.permission_mode.as_deref(), Some("default"));
    assert_eq!(init.claude_code_version.as_deref(), Some("2.1.197"));
    assert_eq!(
        init.mcp_servers,
        [McpServerStatus {
            name: Some("approver".into()),
            status: Some("connected".into()),
        }]
    );
}
