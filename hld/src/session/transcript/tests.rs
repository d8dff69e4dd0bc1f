//! Unit tests of `transcript`.

use super::*;
use crate::store::ContextTokens;
use hld_client::protocol::ConversationEventType as Kind;
use hld_client::protocol::PermissionMode;
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

/// A recorded transcript and what its lines become.
struct Fixture {
    file: &'static str,
    sid: &'static str,
    model: &'static str,
    kinds: &'static [(Kind, Option<&'static str>)],
    /// The last event's text: a message's content or a tool result's.
    last: &'static str,
    /// The final update's (is_error, num_turns, cost_usd, error_message).
    outcome: (bool, i64, f64, Option<&'static str>),
    aborted: bool,
}

const ASSISTANT: (Kind, Option<&str>) = (Kind::Message, Some("assistant"));
const THINKING: (Kind, Option<&str>) = (Kind::Thinking, Some("assistant"));
const CALL: (Kind, Option<&str>) = (Kind::ToolCall, None);
const RESULT: (Kind, Option<&str>) = (Kind::ToolResult, Some("user"));
const NOT_LOGGED_IN: &str = "Not logged in · Please run /login";

const FIXTURES: [Fixture; 5] = [
    Fixture {
        file: "01-simple-text.jsonl",
        sid: "9c14fa8e-fbea-4f30-99c1-99dc87bfb7d8",
        model: "claude-sonnet-4-5-20250929",
        kinds: &[ASSISTANT],
        last: "The capital of France is Paris.",
        outcome: (false, 1, 0.059895750000000005, None),
        aborted: false,
    },
    Fixture {
        file: "02-tool-use-approved.jsonl",
        sid: "f2e03c37-faaf-4854-b5c8-7d78f25b0edb",
        model: "claude-sonnet-4-5-20250929",
        kinds: &[THINKING, ASSISTANT, CALL, RESULT, ASSISTANT],
        last: "Done - the file hello.txt now contains \"Hello, world!\".",
        outcome: (false, 2, 0.06766065000000002, None),
        aborted: false,
    },
    Fixture {
        file: "03-failed-not-logged-in.jsonl",
        sid: "df8e054f-a139-4537-b6cb-7fa6a33a8c6a",
        model: "claude-opus-4-8[1m]",
        kinds: &[ASSISTANT],
        last: NOT_LOGGED_IN,
        // No `errors` array: the error text is the result text.
        outcome: (true, 1, 0.0, Some(NOT_LOGGED_IN)),
        aborted: false,
    },
    Fixture {
        file: "04-tool-use-denied.jsonl",
        sid: "1899901a-4462-4a44-a898-eac939b82117",
        model: "claude-sonnet-4-5-20250929",
        kinds: &[THINKING, ASSISTANT, CALL, RESULT, ASSISTANT],
        last: "I couldn't create hello.txt because permission to use the Write tool was denied.",
        outcome: (false, 2, 0.06766065000000002, None),
        aborted: false,
    },
    Fixture {
        file: "05-interrupted-sigint.jsonl",
        sid: "b1c0fe5a-fc6a-4e71-9b90-46fc381706e0",
        model: "claude-sonnet-4-5-20250929",
        kinds: &[ASSISTANT, CALL, RESULT, (Kind::Message, Some("user"))],
        last: "[Request interrupted by user for tool use]",
        outcome: (
            true,
            3,
            0.06097575000000001,
            Some("[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use"),
        ),
        aborted: true,
    },
];

#[test]
fn claude_fixtures_become_events_and_updates() {
    for f in FIXTURES {
        let (mut state, lines, ingests) = run(f.file);
        // Every line kept verbatim, one per ingest; every event tagged with the session id.
        assert_eq!(lines.len(), ingests.len(), "{}", f.file);
        for (line, ingest) in lines.iter().zip(&ingests) {
            assert_eq!(ingest.raw_lines, std::slice::from_ref(line));
            assert!(ingest.events.iter().all(|e| e.claude_session_id == f.sid));
        }
        // Only the first ingest sets the session id, with the model.
        let first = ingests[0].update.as_ref().unwrap();
        assert_eq!(first.claude_session_id.as_deref(), Some(f.sid));
        assert_eq!(first.model.as_deref(), Some(f.model), "{}", f.file);
        assert!(ingests[1..].iter().all(|i| i
            .update
            .as_ref()
            .is_none_or(|u| u.claude_session_id.is_none())));
        assert_eq!(state.claude_session_id(), Some(f.sid));

        let evs = events(&ingests);
        assert_eq!(kinds(&evs), f.kinds, "{}", f.file);
        // A tool result answers the call before it.
        for pair in evs.windows(2) {
            if pair[1].event_type == Kind::ToolResult {
                assert_eq!(pair[1].tool_result_for_id, pair[0].tool_id, "{}", f.file);
            }
        }
        let last = evs.last().unwrap();
        let text = last
            .content
            .as_deref()
            .or(last.tool_result_content.as_deref());
        assert_eq!(text, Some(f.last), "{}", f.file);

        let update = ingests.last().unwrap().update.clone().unwrap();
        let outcome = (
            update.result_is_error.unwrap(),
            update.num_turns.unwrap(),
            update.cost_usd.unwrap(),
            update.error_message.as_deref(),
        );
        assert_eq!(outcome, f.outcome, "{}", f.file);
        assert_eq!(
            state.take_result().unwrap().aborted(),
            f.aborted,
            "{}",
            f.file
        );
    }
}

#[test]
fn claude_fixture_figures_and_tool_calls() {
    let (_, _, ingests) = run("01-simple-text.jsonl");
    let update = ingests.last().unwrap().update.clone().unwrap();
    let figures = (
        update.duration_ms,
        update.input_tokens,
        update.output_tokens,
    );
    assert_eq!(figures, (Some(123), Some(4), Some(24)));
    assert_eq!(
        update.context,
        ContextTokens {
            cache_creation_input_tokens: Some(15873),
            cache_read_input_tokens: Some(0),
            context_limit: Some(200_000),
            effective_context_tokens: None,
        }
    );
    // The assistant message's own usage is the context the conversation takes.
    let contexts: Vec<_> = ingests
        .iter()
        .filter_map(|i| i.update.as_ref()?.context.effective_context_tokens)
        .collect();
    assert_eq!(contexts, [4 + 15873]);

    let evs = events(&run("02-tool-use-approved.jsonl").2);
    let call = &evs[2];
    assert_eq!(call.tool_name.as_deref(), Some("Write"));
    // Compact JSON, keys sorted, as the store keeps it.
    assert_eq!(
        call.tool_input_json.as_deref(),
        Some(r#"{"content":"Hello, world!\n","file_path":"/home/dev/project/hello.txt"}"#)
    );
    let denied = &events(&run("04-tool-use-denied.jsonl").2)[3];
    assert!(denied.is_error);
    assert_eq!(
        denied.tool_result_content.as_deref(),
        Some("Denied by reviewer: not allowed to write files here")
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
    let init = state.apply(
        "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"S2\",\"model\":\"m\",\
         \"skills\":[\"debug\"]}",
    );
    assert_eq!(
        init.update,
        Some(SessionUpdate {
            model: Some("m".into()),
            skills: Some(vec!["debug".into()]),
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
fn each_result_of_a_live_process_costs_what_its_turn_added() {
    let mut process = Transcript::new();
    let mut turn = |total: f64| {
        let line = json!({"type": "result", "subtype": "success", "total_cost_usd": total});
        let ingest = process.apply(&line.to_string());
        assert!(process.take_result().is_some());
        ingest.update.unwrap().cost_usd.unwrap()
    };
    // Totals since the process started; an interrupted turn reports 0.
    let costs: Vec<f64> = [0.5, 1.25, 0.0, 1.5].into_iter().map(&mut turn).collect();
    assert_eq!(costs, [0.5, 0.75, 0.0, 0.25]);
}

/// The lines the real CLI 2.1.197 prints for `/compact` (captured, trimmed): the boundary is
/// one system event; the summary it writes for itself and its "Compacted" echo are kept raw.
#[test]
fn a_compaction_is_one_system_event() {
    let lines = [
        json!({"type": "system", "subtype": "status", "status": "compacting", "session_id": "S"}),
        json!({"type": "system", "subtype": "status", "status": null,
            "compact_result": "success", "session_id": "S"}),
        json!({"type": "system", "subtype": "init", "session_id": "S",
            "model": "claude-opus-4-8[1m]"}),
        json!({"type": "system", "subtype": "compact_boundary", "session_id": "S",
            "compact_metadata": {"trigger": "manual", "pre_tokens": 45220, "post_tokens": 582}}),
        json!({"type": "user", "message": {"role": "user", "content":
            "This session is being continued from a previous conversation..."},
            "session_id": "S", "parent_tool_use_id": null, "isReplay": false,
            "isSynthetic": true}),
        json!({"type": "user", "message": {"role": "user", "content":
            "<local-command-stdout>Compacted </local-command-stdout>"},
            "session_id": "S", "parent_tool_use_id": null, "isReplay": true}),
    ];
    let mut transcript = Transcript::new();
    let ingests: Vec<Ingest> = lines
        .iter()
        .map(|l| transcript.apply(&l.to_string()))
        .collect();
    assert!(ingests.iter().all(|i| i.raw_lines.len() == 1));
    let evs = events(&ingests);
    assert_eq!(kinds(&evs), [(Kind::System, Some("system"))]);
    assert_eq!(evs[0].subtype.as_deref(), Some(COMPACT_BOUNDARY));
    assert_eq!(
        evs[0].content.as_deref(),
        Some("Conversation compacted (45,220 tokens before)")
    );
    let auto = json!({"type": "system", "subtype": "compact_boundary",
        "compact_metadata": {"trigger": "auto", "pre_tokens": 1234567}});
    let evs = Transcript::new().apply(&auto.to_string()).events;
    assert_eq!(
        evs[0].content.as_deref(),
        Some("Conversation compacted automatically (1,234,567 tokens before)")
    );
    let bare = json!({"type": "system", "subtype": "compact_boundary"});
    let evs = Transcript::new().apply(&bare.to_string()).events;
    assert_eq!(evs[0].content.as_deref(), Some("Conversation compacted"));
}

#[test]
fn the_context_window_is_the_one_of_the_turns_model() {
    let mut state = Transcript::new();
    let result = |model_usage: Value| {
        json!({"type": "result", "subtype": "success", "session_id": "S1",
            "modelUsage": model_usage})
        .to_string()
    };
    let both = json!({"claude-opus-4-8[1m]": {"contextWindow": 1_000_000},
        "claude-haiku-4-5": {"contextWindow": 200_000}});
    let limit = |ingest: Ingest| ingest.update.unwrap().context.context_limit;
    // Before any init (a resumed turn's result alone): the largest window.
    assert_eq!(limit(state.apply(&result(both.clone()))), Some(1_000_000));
    let init = |model: &str| {
        json!({"type": "system", "subtype": "init", "session_id": "S1", "model": model}).to_string()
    };
    state.apply(&init("claude-haiku-4-5"));
    assert_eq!(limit(state.apply(&result(both.clone()))), Some(200_000));
    state.apply(&init("claude-opus-4-8[1m]"));
    assert_eq!(limit(state.apply(&result(both))), Some(1_000_000));
}

#[test]
fn an_answer_to_the_daemons_request_is_handed_over_not_stored() {
    let mut state = Transcript::new();
    let mut batch = Ingest::default();
    let line = r#"{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{"mode":"plan"}}}"#;
    assert!(!state.apply_to(line, &mut batch));
    assert_eq!(batch, Ingest::default());
    let responses = state.take_responses();
    assert_eq!(responses.len(), 1);
    assert_eq!(responses[0].request_id, "r1");
    assert_eq!(responses[0].outcome, Ok(json!({"mode": "plan"})));
    assert!(state.take_controls().is_empty());
}

#[test]
fn a_commands_output_is_a_system_line_not_the_users_words() {
    let line = json!({"type": "user", "session_id": "S1", "isReplay": true,
        "message": {"role": "user",
            "content": "<local-command-stdout>Set model to claude-haiku-4-5</local-command-stdout>"}});
    let ingest = Transcript::new().apply(&line.to_string());
    assert_eq!(
        ingest.events,
        [NewEvent {
            role: Some("system".into()),
            content: Some("Set model to claude-haiku-4-5".into()),
            subtype: Some(LOCAL_COMMAND.into()),
            ..NewEvent::new("S1", Kind::System)
        }]
    );
}

#[test]
fn the_permission_mode_claude_reports_is_followed() {
    let status = |mode: &str| {
        json!({"type": "system", "subtype": "status", "status": null, "permissionMode": mode,
            "session_id": "S1"})
        .to_string()
    };
    let mode = |line: String| {
        Transcript::new()
            .apply(&line)
            .update
            .and_then(|u| u.permission_mode)
    };
    assert_eq!(mode(status("plan")), Some(PermissionMode::Plan));
    assert_eq!(mode(status("default")), Some(PermissionMode::Default));
    // Modes the daemon never sets are not taken up.
    assert_eq!(mode(status("acceptEdits")), None);
}

#[test]
fn a_turn_the_usage_limit_refused_carries_the_limit_and_its_window() {
    // Recorded from claude 2.1.197 against a stand-in answering 429 with the unified
    // rate-limit headers (an OAuth login: with an API key the CLI prints no such lines).
    let (mut state, _, ingests) = run("06-usage-limit-rejected.jsonl");
    let windows: Vec<_> = ingests.iter().flat_map(|i| i.rate_limits.clone()).collect();
    assert_eq!(windows.len(), 1);
    assert_eq!(windows[0].kind, RateLimitKind::FiveHour);
    assert_eq!(
        windows[0].status,
        hld_client::protocol::RateLimitStatus::Rejected
    );
    let reset = windows[0].resets_at.clone().expect("a reset time");
    assert!(state.take_result().is_some_and(|r| r.is_error()));
    let limit = state
        .take_usage_limit()
        .expect("the turn stopped on a limit");
    assert_eq!(limit.kind, RateLimitKind::FiveHour);
    assert_eq!(limit.resets_at, Some(reset));
    assert_eq!(state.take_usage_limit(), None, "taken once");
}

#[test]
fn a_limit_is_read_from_the_text_alone_and_an_ordinary_failure_is_none() {
    let mut state = Transcript::new();
    let failed = |text: &str| {
        json!({"type": "result", "subtype": "success", "is_error": true, "result": text})
            .to_string()
    };
    state.apply(&failed(
        "You've hit your weekly limit · resets Dec 3, 7am (UTC)",
    ));
    let limit = state.take_usage_limit().expect("a limit");
    assert_eq!(
        (limit.kind, limit.resets_at),
        (RateLimitKind::SevenDay, None)
    );
    state.apply(&failed("API Error: 529 Overloaded."));
    assert_eq!(state.take_usage_limit(), None);
    // A window reported allowed again no longer makes a failure a limit.
    let event = |status: &str| {
        json!({"type": "rate_limit_event", "rate_limit_info": {"status": status,
            "resetsAt": 1_795_938_418, "rateLimitType": "five_hour"}})
        .to_string()
    };
    state.apply(&event("rejected"));
    state.apply(&failed("API Error: Rate limit reached"));
    assert_eq!(
        state.take_usage_limit().map(|l| l.kind),
        Some(RateLimitKind::FiveHour)
    );
    state.apply(&event("allowed"));
    state.apply(&failed("API Error: 529 Overloaded."));
    assert_eq!(state.take_usage_limit(), None);
}
