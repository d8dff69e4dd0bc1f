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
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
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
    /// a rule for the command; MCP tools show their name in words (`mcp__approvals__
    /// contact_human` is "Contact Human"), have no description and offer a rule for the tool.
    pub fn new(cwd: &Path, name: &str, input: &Value, tool_use_id: &str) -> Self {
        let text = |key: &str| input.get(key).and_then(Value::as_str);
        let (description, suggestion) = match name {
            "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
                let path = Path::new(text("file_path").unwrap_or_default());
                let relative = path.strip_prefix(cwd).unwrap_or(path);
                (
                    Some(relative.display().to_string()),
                    Suggestion::SetMode {
                        mode: "acceptEdits",
                        destination: "session",
                    },
                )
            }
            "Bash" => (
                text("description").or(text("command")).map(str::to_string),
                Suggestion::rule(name, text("command")),
            ),
            _ => (None, Suggestion::rule(name, None)),
        };
        let display_name = match name.strip_prefix("mcp__").and_then(|n| n.split_once("__")) {
            Some((_, tool)) => tool
                .split('_')
                .map(|word| {
                    let mut chars = word.chars();
                    chars.next().map_or_else(String::new, |first| {
                        first.to_uppercase().chain(chars).collect()
                    })
                })
                .collect::<Vec<_>>()
                .join(" "),
            None => name.into(),
        };
        Self {
            subtype: "can_use_tool",
            tool_name: name.into(),
            display_name,
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
    /// `file_suggestions`.
    Files {
        suggestions: Vec<crate::files::Suggestion>,
    },
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The requests as the real CLI 2.1.197 printed them for these calls.
    #[test]
    fn can_use_tool_requests_read_as_the_real_ones() {
        let cwd = Path::new("/work");
        let cases = [
            (
                "Write",
                json!({"file_path": "/work/hello.txt", "content": "hi\n"}),
                json!({"display_name": "Write", "description": "hello.txt",
                    "permission_suggestions": [{"type": "setMode", "mode": "acceptEdits",
                        "destination": "session"}]}),
            ),
            (
                "Bash",
                json!({"command": "touch made.txt", "description": "Create made.txt"}),
                json!({"display_name": "Bash", "description": "Create made.txt",
                    "permission_suggestions": [{"type": "addRules", "rules": [
                        {"toolName": "Bash", "ruleContent": "touch made.txt"}],
                        "behavior": "allow", "destination": "localSettings"}]}),
            ),
            (
                "mcp__approver__request_permission",
                json!({"tool_name": "X", "input": {}}),
                json!({"display_name": "Request Permission",
                    "permission_suggestions": [{"type": "addRules", "rules": [
                        {"toolName": "mcp__approver__request_permission"}],
                        "behavior": "allow", "destination": "localSettings"}]}),
            ),
        ];
        for (name, input, expected) in cases {
            let request =
                serde_json::to_value(CanUseTool::new(cwd, name, &input, "toolu_1")).unwrap();
            let mut expected = expected;
            let fields = expected.as_object_mut().unwrap();
            fields.insert("subtype".into(), json!("can_use_tool"));
            fields.insert("tool_name".into(), json!(name));
            fields.insert("input".into(), input);
            fields.insert("tool_use_id".into(), json!("toolu_1"));
            assert_eq!(request, expected, "{name}");
        }
    }
}
