//! The control channel of `--input-format stream-json` (claude-code.md 3.3, 3.4): the lines
//! the daemon writes on `claude`'s stdin (user messages, control requests such as `interrupt`,
//! permission answers) and the control lines `claude` prints (`can_use_tool` requests, their
//! cancellation, and the responses to the daemon's requests).

use hld_client::protocol::{SlashCommand, SlashCommandKind};
use hld_client::view::read_choice;
use serde::Deserialize;
use serde_json::{json, Value};

use super::prompt::Prompt;

/// The `--permission-prompt-tool` value that asks for permission over the control channel.
pub const STDIO_PROMPT_TOOL: &str = "stdio";

/// The tool whose permission request carries questions to the human.
pub const ASK_USER_QUESTION: &str = "AskUserQuestion";

/// A user message: the next turn's prompt. Text alone is a string; images come as base64
/// `image` blocks before the text block (left out when empty: the API refuses empty text).
pub fn user_message(prompt: &Prompt) -> String {
    let content = if prompt.images.is_empty() {
        Value::String(prompt.text.clone())
    } else {
        let images = prompt.images.iter().map(|image| {
            json!({"type": "image", "source": {"type": "base64",
                "media_type": image.media_type, "data": image.data}})
        });
        let text = (!prompt.text.is_empty()).then(|| json!({"type": "text", "text": prompt.text}));
        Value::Array(images.chain(text).collect())
    };
    line(json!({
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": null,
        "session_id": "",
    }))
}

/// The request that stops the current turn (its `result` follows).
pub fn interrupt(request_id: &str) -> String {
    request(request_id, &json!({"subtype": "interrupt"}))
}

/// A control request to `claude`: `request` names its `subtype`; `claude` answers with a
/// `control_response` carrying `request_id`.
pub fn request(request_id: &str, request: &Value) -> String {
    line(json!({
        "type": "control_request",
        "request_id": request_id,
        "request": request,
    }))
}

/// The answer to a permission request: the tool runs with `input`.
pub fn allow(request_id: &str, input: &Value) -> String {
    answer(
        request_id,
        json!({"behavior": "allow", "updatedInput": input}),
    )
}

/// The answer to a permission request: the tool does not run; the model reads `message`.
pub fn deny(request_id: &str, message: &str) -> String {
    answer(request_id, json!({"behavior": "deny", "message": message}))
}

fn answer(request_id: &str, response: Value) -> String {
    line(json!({
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": response},
    }))
}

fn line(value: Value) -> String {
    let mut text = value.to_string();
    text.push('\n');
    text
}

/// A control line from `claude` that asks the daemon something.
#[derive(Debug, Clone, PartialEq)]
pub enum Control {
    Request(ControlRequest),
    Cancel(ControlCancel),
}

/// `control_request` from `claude`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ControlRequest {
    pub request_id: String,
    pub request: Request,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "subtype")]
pub enum Request {
    /// May the tool run? Answered by [`allow`] or [`deny`].
    #[serde(rename = "can_use_tool")]
    CanUseTool(CanUseTool),
    /// A request the daemon does not serve.
    #[serde(other)]
    Other,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CanUseTool {
    pub tool_name: String,
    #[serde(default)]
    pub input: Value,
    #[serde(default)]
    pub tool_use_id: Option<String>,
}

/// `control_cancel_request`: `claude` no longer waits for the answer to `request_id`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ControlCancel {
    pub request_id: String,
}

/// `control_response`: `claude`'s answer to the daemon's request `request_id`, its `response`
/// (`null` when it has none) or its error text.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "ResponseLine")]
pub struct ControlResponse {
    pub request_id: String,
    pub outcome: std::result::Result<Value, String>,
}

#[derive(Deserialize)]
struct ResponseLine {
    response: Outcome,
}

#[derive(Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
enum Outcome {
    Success {
        request_id: String,
        #[serde(default)]
        response: Value,
    },
    Error {
        request_id: String,
        #[serde(default)]
        error: String,
    },
}

impl From<ResponseLine> for ControlResponse {
    fn from(line: ResponseLine) -> Self {
        let (request_id, outcome) = match line.response {
            Outcome::Success {
                request_id,
                response,
            } => (request_id, Ok(response)),
            Outcome::Error { request_id, error } => (request_id, Err(error)),
        };
        ControlResponse {
            request_id,
            outcome,
        }
    }
}

/// The request `claude` answers with its slash commands and agents (claude-code.md 3.4).
pub fn initialize() -> Value {
    json!({"subtype": "initialize"})
}

/// The slash commands and agents of an answer to [`initialize`]: `commands` as commands
/// (skills are told apart by `init`'s list), `agents` as agents; entries without a name skipped.
pub fn slash_commands(initialized: &Value) -> Vec<SlashCommand> {
    let entries = |key: &str, kind: SlashCommandKind| {
        let items = initialized[key].as_array().cloned().unwrap_or_default();
        items.into_iter().filter_map(move |item| {
            let text = |field: &str| item[field].as_str().unwrap_or_default().to_owned();
            let name = text("name");
            let hint = text("argumentHint");
            (!name.is_empty()).then(|| SlashCommand {
                name,
                description: text("description"),
                argument_hint: (!hint.is_empty()).then_some(hint),
                kind: kind.clone(),
            })
        })
    };
    entries("commands", SlashCommandKind::Command)
        .chain(entries("agents", SlashCommandKind::Agent))
        .collect()
}

/// The items of the JSON array `list` that have a string `key`, each with that string.
fn with_string<'a>(list: &'a Value, key: &'a str) -> impl Iterator<Item = (&'a Value, &'a str)> {
    let items = list.as_array().into_iter().flatten();
    items.filter_map(move |item| Some((item, item[key].as_str()?)))
}

/// The questions of an `AskUserQuestion` input, one a line.
pub fn questions(input: &Value) -> String {
    let texts: Vec<&str> = with_string(&input["questions"], "question")
        .map(|(_, text)| text)
        .collect();
    if texts.is_empty() {
        input.to_string()
    } else {
        texts.join("\n")
    }
}

/// An `AskUserQuestion` input with the human's `answer`: with several questions and as many
/// non-empty lines in the answer, a line each, in order; else the whole answer to each. An
/// answer that is the number of one of its question's choices (1 for the first), and none of
/// their labels, picks that choice.
pub fn answered(input: &Value, answer: &str) -> Value {
    let mut answered = input.clone();
    let asked: Vec<(&Value, &str)> = with_string(&input["questions"], "question").collect();
    let lines: Vec<&str> = answer
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let each = |i: usize| match asked.len() {
        n if n > 1 && lines.len() == n => lines[i],
        _ => answer,
    };
    let answers: serde_json::Map<String, Value> = (asked.iter().enumerate())
        .map(|(i, (question, text))| ((*text).to_owned(), picked(question, each(i)).into()))
        .collect();
    if let Value::Object(fields) = &mut answered {
        fields.insert("answers".to_owned(), Value::Object(answers));
    }
    answered
}

/// The human's `answer` to an `AskUserQuestion` `input` as it is read, for the record: a line
/// for each question when there are as many (the whole answer for one question), a choice's
/// number (or several, see `picked`) as its label. An answer that cannot be split so stays
/// as typed.
pub fn read_answer(input: &Value, answer: &str) -> String {
    let asked: Vec<&Value> = with_string(&input["questions"], "question")
        .map(|(question, _)| question)
        .collect();
    let lines: Vec<&str> = answer
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    match asked[..] {
        [question] => picked(question, answer),
        _ if !asked.is_empty() && lines.len() == asked.len() => {
            let read: Vec<String> = asked.iter().zip(lines).map(|(q, l)| picked(q, l)).collect();
            read.join("\n")
        }
        _ => answer.to_owned(),
    }
}

/// `answer` to `question`, read by [`read_choice`] against its choices' labels as Claude Code
/// gave them (`multiSelect` takes several numbers).
fn picked(question: &Value, answer: &str) -> String {
    let labels: Vec<&str> = with_string(&question["options"], "label")
        .map(|(_, label)| label)
        .collect();
    read_choice(&labels, question["multiSelect"] == true, answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude::prompt::Image;

    #[test]
    fn lines_written_are_one_json_object_each() {
        let parse = |l: String| -> Value {
            assert!(l.ends_with('\n') && !l[..l.len() - 1].contains('\n'));
            serde_json::from_str(&l).unwrap()
        };
        let user = parse(user_message(&Prompt::text("hi\nthere")));
        assert_eq!(user["message"]["content"], "hi\nthere");
        let image = Image {
            path: "/tmp/a.png".into(),
            media_type: "image/png",
            data: "iVBO".into(),
        };
        let mut prompt = Prompt {
            text: "what is this?".into(),
            images: vec![image.clone(), image],
        };
        let blocks = parse(user_message(&prompt))["message"]["content"].clone();
        assert_eq!(blocks.as_array().unwrap().len(), 3);
        assert_eq!(blocks[0]["source"]["media_type"], "image/png");
        assert_eq!(blocks[1]["source"]["data"], "iVBO");
        assert_eq!(blocks[2], json!({"type": "text", "text": "what is this?"}));
        prompt.text.clear();
        let blocks = parse(user_message(&prompt))["message"]["content"].clone();
        assert_eq!(blocks.as_array().unwrap().len(), 2);
        assert_eq!(parse(interrupt("r1"))["request"]["subtype"], "interrupt");
        let allowed = parse(allow("r2", &json!({"a": 1})));
        assert_eq!(allowed["response"]["request_id"], "r2");
        assert_eq!(allowed["response"]["response"]["updatedInput"]["a"], 1);
        let denied = parse(deny("r3", "no"));
        assert_eq!(denied["response"]["response"]["behavior"], "deny");
        let asked = parse(request(
            "r4",
            &json!({"subtype": "set_model", "model": "m"}),
        ));
        assert_eq!(asked["type"], "control_request");
        assert_eq!(asked["request_id"], "r4");
        assert_eq!(asked["request"]["model"], "m");
    }

    #[test]
    fn an_initialize_answer_lists_commands_then_agents() {
        let answer = json!({
            "commands": [
                {"name": "compact", "description": "Compact", "argumentHint": "<instructions>"},
                {"name": "init", "description": "Init", "argumentHint": ""},
                {"description": "no name"},
            ],
            "agents": [{"name": "Explore", "description": "Search", "model": "haiku"}],
        });
        let listed: Vec<_> = slash_commands(&answer)
            .into_iter()
            .map(|c| (c.name, c.argument_hint, c.kind))
            .collect();
        assert_eq!(
            listed,
            [
                (
                    "compact".into(),
                    Some("<instructions>".into()),
                    SlashCommandKind::Command
                ),
                ("init".into(), None, SlashCommandKind::Command),
                ("Explore".into(), None, SlashCommandKind::Agent),
            ]
        );
        assert!(slash_commands(&json!(null)).is_empty());
    }

    #[test]
    fn questions_are_answered_in_the_input() {
        let input = json!({"questions": [{"question": "Which colour?"}, {"question": "Size?"}]});
        assert_eq!(questions(&input), "Which colour?\nSize?");
        let alike = answered(&input, "Blue");
        assert_eq!(alike["answers"]["Size?"], "Blue");
        assert_eq!(alike["questions"], input["questions"]);
        // A line per question answers each in turn; any other count answers all alike.
        let each = answered(&input, "Blue\n\n Large \n");
        assert_eq!(
            each["answers"],
            json!({"Which colour?": "Blue", "Size?": "Large"})
        );
        let three = "Blue\nLarge\nNow";
        assert_eq!(answered(&input, three)["answers"]["Size?"], three);
        let one = json!({"questions": [{"question": "Why?"}]});
        assert_eq!(answered(&one, "a\nb")["answers"]["Why?"], "a\nb");
        // A choice's number picks it, unless a label is that number; out of range, it stays.
        let chosen = json!({"questions": [
            {"question": "Colour?", "options": [{"label": "Blue"}, {"label": "Red"}]},
            {"question": "Retries?", "options": [{"label": "3"}, {"label": "1"}]},
        ]});
        let answers = &answered(&chosen, "2\n1")["answers"];
        assert_eq!(answers, &json!({"Colour?": "Red", "Retries?": "1"}));
        assert_eq!(answered(&chosen, "3\n2")["answers"]["Colour?"], "3");
        assert_eq!(answered(&chosen, "0\n2")["answers"]["Retries?"], "1");
        // Several numbers pick several choices where the question takes several.
        let several = json!({"questions": [{"question": "Which?", "multiSelect": true,
            "options": [{"label": "Rust"}, {"label": "Go"}, {"label": "Zig"}]}]});
        assert_eq!(answered(&several, "1, 3")["answers"]["Which?"], "Rust, Zig");
        assert_eq!(answered(&several, "3 2")["answers"]["Which?"], "Zig, Go");
        assert_eq!(answered(&several, "1, 4")["answers"]["Which?"], "1, 4");
        assert_eq!(answered(&several, "Go")["answers"]["Which?"], "Go");
        assert_eq!(answered(&chosen, "1, 2\n1")["answers"]["Colour?"], "1, 2");
    }

    #[test]
    fn an_answer_is_recorded_as_it_is_read() {
        let chosen = json!({"questions": [
            {"question": "Colour?", "options": [{"label": "Blue"}, {"label": "Red"}]},
            {"question": "Size?", "options": [{"label": "Small"}, {"label": "Large"}]},
        ]});
        assert_eq!(read_answer(&chosen, "1\n 2 "), "Blue\nLarge");
        assert_eq!(read_answer(&chosen, "Green\n9"), "Green\n9");
        // Not a line per question: kept as typed, as each question then reads it whole.
        assert_eq!(read_answer(&chosen, "1"), "1");
        let one = json!({"questions": [{"question": "Which?", "multiSelect": true,
            "options": [{"label": "Rust"}, {"label": "Go"}]}]});
        assert_eq!(read_answer(&one, "2, 1"), "Go, Rust");
        assert_eq!(read_answer(&json!({}), "free text"), "free text");
        // What is recorded is read the same way again.
        let read = read_answer(&chosen, "1\n2");
        assert_eq!(answered(&chosen, &read)["answers"]["Size?"], "Large");
    }
}
