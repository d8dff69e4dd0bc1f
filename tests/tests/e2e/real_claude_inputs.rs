//! Images, `suggestFiles`, `/compact` and several questions at once with the real `claude`
//! CLI (2.1.197) and the Messages API stand-in: what reaches the API, what the CLI answers,
//! what is stored.

use base64::Engine;
use hld_client::protocol::{
    ConversationEventType, LaunchSessionParams, SendMessage, SendMessageParams, SessionStatus,
};
use hld_e2e::anthropic::{self, AnthropicStandIn, Reply, INPUT_TOKENS, OUTPUT_TOKENS};
use hld_e2e::images::{red_png, RED_PNG};
use hld_e2e::{launch_params, wait_for, TestDaemon, WAIT};
use serde_json::{json, Value};

use crate::inputs::{project, send_images, suggest, user_texts, wait_reply};
use crate::real_claude::{
    daemon, decide, message_texts, options, recorded, wait_pending_approval, workdir,
};

/// The content blocks of the last user message of an API request.
fn last_user_blocks(request: &Value) -> Vec<Value> {
    let messages = request["messages"].as_array().unwrap();
    let last = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    last["content"].as_array().cloned().unwrap_or_default()
}

/// Asserts that `blocks` hold one image block per image, the red PNG, before `text`.
fn images_then_text(blocks: &[Value], images: usize, text: &str) {
    let data = base64::engine::general_purpose::STANDARD.encode(RED_PNG);
    let kinds: Vec<&str> = blocks.iter().filter_map(|b| b["type"].as_str()).collect();
    let first_image = kinds
        .iter()
        .position(|k| *k == "image")
        .expect("an image block");
    let image_blocks = &blocks[first_image..first_image + images];
    for block in image_blocks {
        assert_eq!(block["source"]["type"], "base64", "{block}");
        assert_eq!(block["source"]["media_type"], "image/png", "{block}");
        assert_eq!(block["source"]["data"], data.as_str(), "{block}");
    }
    assert_eq!(blocks[first_image + images]["text"], text, "{blocks:?}");
}

#[test]
fn an_attached_image_reaches_the_api_as_an_image_block() {
    let api = AnthropicStandIn::start(|_| Reply::text("A red square."));
    let d = TestDaemon::start_with(options(Some(&api)));
    let png = red_png(&workdir(&d), "red.png");
    let id = d.launch(LaunchSessionParams {
        images: Some(vec![png.display().to_string()]),
        ..launch_params("What is in this picture?", workdir(&d))
    });
    let first = api.wait_model_turns(1).remove(0);
    images_then_text(&last_user_blocks(&first), 1, "What is in this picture?");
    d.wait_session(&id, |s| s.status == SessionStatus::Completed);

    send_images(&d, &id, "And these two?", &[&png, &png]);
    let second = api.wait_model_turns(2).remove(1);
    images_then_text(&last_user_blocks(&second), 2, "And these two?");
    let events = wait_reply(&d, &id, "A red square.");
    assert_eq!(
        user_texts(&events),
        [
            "What is in this picture?\n[image: red.png]",
            "And these two?\n[image: red.png]\n[image: red.png]"
        ]
    );
}

#[test]
fn a_message_queued_with_an_image_reaches_the_api_with_it() {
    let api = AnthropicStandIn::start(|request| {
        let last = message_texts(request)
            .into_iter()
            .rfind(|t| t.starts_with("user: "))
            .unwrap_or_default();
        if last.starts_with("user: Count") {
            let count: String = (1..=60).map(|n| format!("{n} ")).collect();
            Reply::text(&count).slow(std::time::Duration::from_millis(100))
        } else {
            Reply::text("Seen.")
        }
    });
    let d = TestDaemon::start_with(options(Some(&api)));
    let png = red_png(&workdir(&d), "later.png");
    let id = d.launch(launch_params("Count to sixty", workdir(&d)));
    api.wait_deltas(2);
    assert!(send_images(&d, &id, "Then look at this", &[&png]).queued);
    let second = api.wait_model_turns(2).remove(1);
    images_then_text(&last_user_blocks(&second), 1, "Then look at this");
    wait_reply(&d, &id, "Seen.");
}

#[test]
fn suggest_files_gets_the_real_clis_answer_and_skips_an_ignored_file() {
    let api = AnthropicStandIn::start(|_| Reply::text("Hi."));
    let d = TestDaemon::start_with(options(Some(&api)));
    let dir = project(&d);
    // The CLI's file index honours .gitignore inside a git repository.
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&dir)
        .status()
        .expect("git runs");
    assert!(git.success());
    let id = d.launch(launch_params("hello", &dir));
    d.wait_session(&id, |s| s.status == SessionStatus::Completed && s.live);
    assert_eq!(suggest(&d, &id, "main"), ["src/main.rs"]);
    // Once its index is built the CLI answers itself: for an empty query it lists the
    // directory's own entries, the ignored `build/` among them, which the daemon's scan never
    // lists; of them, the daemon leaves `.git/` out.
    let top = wait_for(WAIT, || {
        Some(suggest(&d, &id, "")).filter(|top| top.contains(&"build/".to_owned()))
    })
    .expect("the CLI's own answer");
    assert!(top.contains(&"src/".to_owned()), "{top:?}");
    assert!(!top.contains(&".git/".to_owned()), "{top:?}");
    assert_eq!(suggest(&d, &id, "main"), ["src/main.rs"]);
}

#[test]
fn compact_stores_its_boundary() {
    let api = AnthropicStandIn::start(|request| {
        let compacting = message_texts(request)
            .iter()
            .any(|t| t.contains("Respond with TEXT ONLY"));
        match compacting {
            true => Reply::text("Summary: the user said hello twice."),
            false => Reply::text("Hello."),
        }
    });
    let d = TestDaemon::start_with(options(Some(&api)));
    let id = d.launch(launch_params("hello one", workdir(&d)));
    d.wait_session(&id, |s| s.status == SessionStatus::Completed);
    let send = |text: &str| {
        d.request::<SendMessage>(SendMessageParams {
            session_id: id.clone(),
            text: text.to_owned(),
            mode: None,
            images: None,
        })
    };
    send("hello two");
    wait_for(WAIT, || (api.model_turns().len() >= 2).then_some(()));
    d.wait_session(&id, |s| {
        s.status == SessionStatus::Completed && s.num_turns.is_some()
    });
    send("/compact");
    let boundary = wait_for(WAIT, || {
        d.conversation(&id)
            .into_iter()
            .find(|e| e.subtype.as_deref() == Some("compact_boundary"))
    })
    .unwrap_or_else(|| {
        panic!(
            "no boundary: {:#?}\nlog:\n{}",
            d.conversation(&id),
            d.log_text()
        )
    });
    assert_eq!(boundary.event_type, ConversationEventType::System);
    // The context before: the last call's input and output tokens.
    let before = INPUT_TOKENS + OUTPUT_TOKENS;
    assert_eq!(
        boundary.content.as_deref(),
        Some(
            format!(
                "Conversation compacted ({},{:03} tokens before)",
                before / 1000,
                before % 1000
            )
            .as_str()
        )
    );
    let s = d.wait_session(&id, |s| s.status == SessionStatus::Completed);
    assert_eq!(s.error_message, None);
    assert_eq!(
        user_texts(&d.conversation(&id)),
        ["hello one", "hello two", "/compact"]
    );
    // The next turn runs on the summary.
    send("hello three");
    let last = wait_for(WAIT, || {
        api.model_turns()
            .into_iter()
            .find(|r| message_texts(r).iter().any(|t| t.contains("hello three")))
    })
    .expect("the turn after the compaction");
    let texts = message_texts(&last).join("\n");
    assert!(
        texts.contains("Summary: the user said hello twice."),
        "{texts}"
    );
    d.wait_session(&id, |s| s.status == SessionStatus::Completed);
}

/// A model that asks `questions` with `AskUserQuestion`, then, given the answers, says
/// "Noted.".
fn asking(questions: Value) -> AnthropicStandIn {
    AnthropicStandIn::start(move |request| {
        if anthropic::tool_results(request).is_empty() {
            Reply::tool_use(
                "A question.",
                "toolu_01StandInAskUserQuestion1",
                "AskUserQuestion",
                json!({"questions": questions}),
            )
        } else {
            Reply::text("Noted.")
        }
    })
}

/// Two questions in one `AskUserQuestion`, answered a line each: each answer reaches the
/// model as the answer to its own question.
#[test]
fn two_questions_answered_a_line_each_reach_the_model_each_with_its_answer() {
    let question = |q: &str, a: &str, b: &str| {
        json!({"question": q, "header": q, "multiSelect": false,
            "options": [{"label": a, "description": a}, {"label": b, "description": b}]})
    };
    let questions = json!([
        question("Which colour?", "Blue", "Red"),
        question("Which size?", "Small", "Large"),
    ]);
    let api = asking(questions);
    let d = daemon(Some(&api));
    let id = d.launch(launch_params("Pick a colour and a size", workdir(&d)));
    let approval = wait_pending_approval(&d, &id);
    let asked = approval.human_contact.as_ref().unwrap().spec.msg.clone();
    assert_eq!(asked, "Which colour?\nWhich size?");
    let answer = Some("Red\nLarge");
    assert_eq!(decide(&d, &approval, "respond", answer), recorded());
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
    let turns = api.wait_model_turns(2);
    let results = anthropic::tool_results(&turns[1]);
    let content = results[0]["content"].to_string();
    for pair in [
        r#"\"Which colour?\"=\"Red\""#,
        r#"\"Which size?\"=\"Large\""#,
    ] {
        assert!(content.contains(pair), "{pair} in {content}");
    }
}

/// A question that takes several choices, answered with their numbers: the real CLI reads
/// the labels they pick (joined by ", ") as its answer. The approval carries the question's
/// input, choices and all, for the front ends.
#[test]
fn several_choices_picked_by_their_numbers_reach_the_model_as_their_labels() {
    let questions = json!([{"question": "Which languages?", "header": "Languages",
        "multiSelect": true, "options": [
            {"label": "Rust", "description": "fast"}, {"label": "Go", "description": "simple"},
            {"label": "Zig", "description": "small"}]}]);
    let api = asking(questions.clone());
    let d = daemon(Some(&api));
    let id = d.launch(launch_params("Pick languages", workdir(&d)));
    let approval = wait_pending_approval(&d, &id);
    let input = approval
        .function_args
        .as_ref()
        .expect("the question's input");
    assert_eq!(input["questions"], questions);
    assert_eq!(decide(&d, &approval, "respond", Some("1, 3")), recorded());
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
    let turns = api.wait_model_turns(2);
    let results = anthropic::tool_results(&turns[1]);
    assert_ne!(results[0]["is_error"], true, "{}", results[0]);
    let content = results[0]["content"].to_string();
    let pair = r#"\"Which languages?\"=\"Rust, Zig\""#;
    assert!(content.contains(pair), "{pair} in {content}");
}
