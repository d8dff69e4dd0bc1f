//! The SDK control protocol of stream-json input (claude-code.md §3.3, §3.4): the lines the
//! CLI prints for it, in the real CLI's field order, and the permission request it sends
//! with `--permission-prompt-tool stdio`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

/// What the real CLI answers to `initialize` besides its account and pid (2.1.197, captured
/// from the real CLI; the command list matches `init.slash_commands`).
const CATALOG: &str = include_str!("initialize.json");

/// A `control_request` line: the CLI asks the SDK host (only `can_use_tool` here).
#[derive(Debug, Serialize)]
pub struct Request {
    pub request_id: String,
    pub request: CanUseTool,
}

/// The `request` of a `can_use_tool` control request.
#[derive(Debug, Serialize)]
pub struct CanUseTool {
    subtype: &'static str,
    tool_name: String,
    display_name: String,
    input: Value,
    description: String,
    permission_suggestions: Vec<Suggestion>,
    tool_use_id: String,
}

/// A permission update offered with a request (as the real CLI words them).
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum Suggestion {
    SetMode {
        mode: &'static str,
        destination: &'static str,
    },
    AddRules {
        rules: Vec<Rule>,
        behavior: &'static str,
        destination: &'static str,
    },
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    tool_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule_content: Option<String>,
}

impl CanUseTool {
    /// The request for a call of `name` with `input` in `cwd`: file tools are described by
    /// their path relative to `cwd` and offer `acceptEdits`, Bash by its description and offers
    /// a rule for the command, other tools by their name and offer a rule for the tool.
    pub fn new(cwd: &Path, name: &str, input: &Value, tool_use_id: &str) -> Self {
        let text = |key: &str| input.get(key).and_then(Value::as_str);
        let (description, suggestion) = match name {
            "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
                let path = Path::new(text("file_path").unwrap_or_default());
                let relative = path.strip_prefix(cwd).unwrap_or(path);
                (
                    relative.display().to_string(),
                    Suggestion::SetMode {
                        mode: "acceptEdits",
                        destination: "session",
                    },
                )
            }
            "Bash" => (
                text("description")
                    .or(text("command"))
                    .unwrap_or_default()
                    .to_string(),
                Suggestion::rule(name, text("command")),
            ),
            _ => (name.to_string(), Suggestion::rule(name, None)),
        };
        Self {
            subtype: "can_use_tool",
            tool_name: name.into(),
            display_name: name.into(),
            input: input.clone(),
            description,
            permission_suggestions: vec![suggestion],
            tool_use_id: tool_use_id.into(),
        }
    }
}

impl Suggestion {
    /// "Always allow" `tool` (with `content`, e.g. a command), in the local settings.
    fn rule(tool: &str, content: Option<&str>) -> Self {
        Self::AddRules {
            rules: vec![Rule {
                tool_name: tool.into(),
                rule_content: content.map(str::to_string),
            }],
            behavior: "allow",
            destination: "localSettings",
        }
    }
}

/// A `control_response` line: the answer to a control request from stdin.
#[derive(Debug, Serialize)]
pub struct Response {
    response: Outcome,
}

#[derive(Debug, Serialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
enum Outcome {
    Success {
        request_id: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        response: Option<Answer>,
    },
    Error {
        request_id: Value,
        error: String,
    },
}

/// The `response` of a successful control request.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Answer {
    /// `set_permission_mode`.
    Mode { mode: String },
    /// `initialize`.
    Initialized(Box<Initialized>),
}

/// The answer to `initialize`.
#[derive(Debug, Serialize)]
pub struct Initialized {
    commands: Box<RawValue>,
    agents: Box<RawValue>,
    output_style: &'static str,
    available_output_styles: Box<RawValue>,
    models: Box<RawValue>,
    account: Account,
    pid: u32,
}

#[derive(Debug, Deserialize)]
struct Catalog {
    commands: Box<RawValue>,
    agents: Box<RawValue>,
    available_output_styles: Box<RawValue>,
    models: Box<RawValue>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Account {
    token_source: &'static str,
    api_key_source: &'static str,
    api_provider: &'static str,
}

impl Initialized {
    /// The answer, with `apiKeySource` as `init` reports it.
    pub fn new(api_key_source: &'static str) -> Self {
        let catalog: Catalog = serde_json::from_str(CATALOG).expect("initialize.json is valid");
        Self {
            commands: catalog.commands,
            agents: catalog.agents,
            output_style: "default",
            available_output_styles: catalog.available_output_styles,
            models: catalog.models,
            account: Account {
                token_source: "none",
                api_key_source,
                api_provider: "firstParty",
            },
            pid: std::process::id(),
        }
    }
}

impl Response {
    pub fn success(request_id: Value, response: Option<Answer>) -> Self {
        Self {
            response: Outcome::Success {
                request_id,
                response,
            },
        }
    }

    pub fn error(request_id: Value, error: String) -> Self {
        Self {
            response: Outcome::Error { request_id, error },
        }
    }
}

/// A `control_cancel_request` line: the CLI withdraws its pending request `request_id`.
#[derive(Debug, Serialize)]
pub struct Cancel {
    pub request_id: String,
}
