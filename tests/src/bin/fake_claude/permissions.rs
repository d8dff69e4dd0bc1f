//! Which tool calls may run: `--allowedTools`/`--disallowedTools` rules, the permission
//! mode, and the reply format of the `--permission-prompt-tool` (claude-code.md §3.2).

use serde_json::Value;

use crate::cli::Args;

/// What the permission system says about one tool call before anyone is asked.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Refused with this tool_result text; listed in `permission_denials`.
    Deny(String),
    /// Ask the `--permission-prompt-tool` (its full `mcp__server__tool` name).
    Ask(String),
}

/// The permission settings of a run.
#[derive(Debug)]
pub struct Policy {
    allowed: Vec<Rule>,
    disallowed: Vec<Rule>,
    /// `bypassPermissions` / `--dangerously-skip-permissions`.
    bypass: bool,
    /// `acceptEdits`: file edits need no permission.
    accept_edits: bool,
    prompt_tool: Option<String>,
}

impl Policy {
    pub fn new(args: &Args) -> Self {
        let mode = args.permission_mode.as_deref();
        Self {
            allowed: Rule::parse_all(&args.allowed_tools),
            disallowed: Rule::parse_all(&args.disallowed_tools),
            bypass: args.skip_permissions || mode == Some("bypassPermissions"),
            accept_edits: mode == Some("acceptEdits"),
            prompt_tool: args.permission_prompt_tool.clone(),
        }
    }

    /// Follows a `set_permission_mode` control request.
    pub fn set_mode(&mut self, mode: &str) {
        self.bypass = mode == "bypassPermissions";
        self.accept_edits = mode == "acceptEdits";
    }

    /// Decides a call of tool `name` with `input`.
    pub fn check(&self, name: &str, input: &Value) -> Verdict {
        if self.disallowed.iter().any(|rule| rule.matches(name, input)) {
            return Verdict::Deny(format!("Permission to use {name} has been denied."));
        }
        let is_edit = matches!(name, "Write" | "Edit" | "MultiEdit" | "NotebookEdit");
        // A plan is always shown to the user: `ExitPlanMode` asks (claude-code.md §3.4), and
        // so does a question (`AskUserQuestion`), whose answer comes with the permission.
        let needs_permission = is_edit
            || matches!(
                name,
                "Bash" | "WebFetch" | "ExitPlanMode" | "AskUserQuestion"
            )
            || name.starts_with("mcp__");
        // A question needs its answer from the human, bypass or not.
        let question = name == "AskUserQuestion";
        if !needs_permission
            || (self.bypass && !question)
            || (is_edit && self.accept_edits)
            || self.allowed.iter().any(|rule| rule.matches(name, input))
        {
            return Verdict::Allow;
        }
        if let Some(tool) = &self.prompt_tool {
            return Verdict::Ask(tool.clone());
        }
        Verdict::Deny(match input.get("file_path").and_then(Value::as_str) {
            Some(path) if is_edit => format!(
                "Claude requested permissions to write to {path}, but you haven't granted it yet."
            ),
            _ => format!(
                "Claude requested permissions to use {name}, but you haven't granted it yet."
            ),
        })
    }
}

/// One rule: `Tool`, `Tool(pattern)`, `mcp__server` or `mcp__server__*`.
#[derive(Debug)]
struct Rule {
    tool: String,
    pattern: Option<String>,
}

impl Rule {
    /// Splits flag values into rules at commas and whitespace outside parentheses.
    fn parse_all(values: &[String]) -> Vec<Self> {
        let mut rules = Vec::new();
        for value in values {
            let mut depth = 0usize;
            let mut current = String::new();
            for c in value.chars() {
                match c {
                    '(' => depth += 1,
                    ')' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                if depth == 0 && (c == ',' || c.is_whitespace()) {
                    rules.extend(Self::parse(&std::mem::take(&mut current)));
                } else {
                    current.push(c);
                }
            }
            rules.extend(Self::parse(&current));
        }
        rules
    }

    fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        Some(match text.split_once('(') {
            Some((tool, rest)) if rest.ends_with(')') => Self {
                tool: tool.into(),
                pattern: Some(rest[..rest.len() - 1].into()),
            },
            _ => Self {
                tool: text.into(),
                pattern: None,
            },
        })
    }

    fn matches(&self, name: &str, input: &Value) -> bool {
        let tool_matches = self.tool == name
            || name.strip_prefix("mcp__").is_some_and(|rest| {
                let server = rest.split_once("__").map_or(rest, |(server, _)| server);
                self.tool == format!("mcp__{server}") || self.tool == format!("mcp__{server}__*")
            });
        let Some(pattern) = &self.pattern else {
            return tool_matches;
        };
        let subject = ["command", "file_path"]
            .iter()
            .find_map(|key| input.get(*key).and_then(Value::as_str));
        tool_matches && subject.is_some_and(|subject| pattern_matches(pattern, subject))
    }
}

/// `prefix:*` and `prefix*` match by prefix, anything else exactly.
fn pattern_matches(pattern: &str, subject: &str) -> bool {
    match pattern
        .strip_suffix(":*")
        .or_else(|| pattern.strip_suffix('*'))
    {
        Some(prefix) => subject.starts_with(prefix.trim_end()),
        None => subject == pattern,
    }
}

/// The answer of the permission-prompt tool.
#[derive(Debug, PartialEq)]
pub enum Reply {
    /// Run the tool with this input.
    Allow(Value),
    /// Refuse with `message`; `interrupt` also aborts the turn.
    Deny { message: String, interrupt: bool },
    /// Not JSON of the documented shape.
    Invalid,
}

impl Reply {
    /// Reads the first text block of a `CallToolResult` as `{"behavior": ...}`.
    pub fn parse(call_result: &Value) -> Self {
        let reply =
            first_text(call_result).and_then(|text| serde_json::from_str::<Value>(&text).ok());
        reply.map_or(Self::Invalid, |reply| Self::from_value(&reply))
    }

    /// Reads `{"behavior": ...}` (also the `response` of a `can_use_tool` control response).
    pub fn from_value(reply: &Value) -> Self {
        match reply["behavior"].as_str() {
            Some("allow") if reply["updatedInput"].is_object() => {
                Self::Allow(reply["updatedInput"].clone())
            }
            Some("deny") => match reply["message"].as_str() {
                Some(message) => Self::Deny {
                    message: message.into(),
                    interrupt: reply["interrupt"].as_bool().unwrap_or(false),
                },
                None => Self::Invalid,
            },
            _ => Self::Invalid,
        }
    }
}

/// The text of the first `text` block of a `CallToolResult`.
pub fn first_text(call_result: &Value) -> Option<String> {
    call_result["content"]
        .as_array()?
        .iter()
        .find(|block| block["type"] == "text")
        .and_then(|block| block["text"].as_str())
        .map(str::to_string)
}
