//! The built-in tools the scenarios use, really executed in the working directory, and the
//! tool_result payloads they produce.

use std::io::Read as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nix::sys::signal::killpg;
use nix::unistd::Pid;

use serde::Serialize;
use serde_json::{json, Value};

use crate::signals::{Signal, Signals, POLL};

/// The content of a tool_result line.
#[derive(Debug)]
pub struct ToolOutput {
    /// A string for built-in tools, an array of blocks for MCP tools.
    pub content: Value,
    /// `None` leaves the field out (as for a successful Write).
    pub is_error: Option<bool>,
    /// The structured `tool_use_result` of the user line.
    pub tool_use_result: Value,
}

impl ToolOutput {
    /// A failed call: `is_error: true` and `tool_use_result` `"Error: ..."` (without any
    /// `<tool_use_error>` tags).
    pub fn error(text: impl Into<String>) -> Self {
        let text = text.into();
        let bare = text
            .strip_prefix("<tool_use_error>")
            .and_then(|rest| rest.strip_suffix("</tool_use_error>"))
            .unwrap_or(&text);
        Self {
            tool_use_result: Value::String(format!("Error: {bare}")),
            content: Value::String(text),
            is_error: Some(true),
        }
    }

    /// A missing tool or MCP server.
    pub fn unavailable(name: &str) -> Self {
        Self::error(format!(
            "<tool_use_error>Error: No such tool available: {name}</tool_use_error>"
        ))
    }

    /// The content as plain text (text blocks joined by newlines).
    pub fn text(&self) -> String {
        match &self.content {
            Value::String(text) => text.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|block| block["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            other => other.to_string(),
        }
    }
}

/// The start of `AskUserQuestion`'s result, before the answers.
const ANSWERED: &str = "User has answered your questions: ";

/// `AskUserQuestion`: the `answers` (question → answer) the permission step put in its input,
/// as the CLI words them for the model.
pub fn answered(input: &Value) -> ToolOutput {
    let answers = input["answers"].as_object().filter(|a| !a.is_empty());
    let Some(answers) = answers else {
        return ToolOutput::error("<tool_use_error>The user did not answer</tool_use_error>");
    };
    let pairs: Vec<String> = answers
        .iter()
        .map(|(q, a)| format!("{}={}", Value::from(q.as_str()), a))
        .collect();
    ToolOutput {
        content: Value::String(format!(
            "{ANSWERED}{}. You can now continue with the user's answers in mind.",
            pairs.join(", ")
        )),
        is_error: None,
        tool_use_result: json!({"questions": input["questions"], "answers": answers}),
    }
}

/// The answers an [`answered`] result gives, joined: `Blue, Large` from
/// `…"Colour?"="Blue", "Size?"="Large". …`.
pub fn answers_in(text: &str) -> Option<String> {
    let pairs = text.strip_prefix(ANSWERED)?;
    let answers: Vec<&str> = pairs
        .split("\"=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    Some(answers.join(", "))
}

/// `tool_use_result` of Write.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct WriteResult {
    #[serde(rename = "type")]
    kind: &'static str,
    file_path: String,
    content: String,
    structured_patch: [(); 0],
    original_file: Option<String>,
    user_modified: bool,
}

/// Write: `{file_path, content}`; relative paths are taken from `cwd`.
pub fn write_file(cwd: &Path, input: &Value) -> ToolOutput {
    let (Some(path), Some(content)) = (input["file_path"].as_str(), input["content"].as_str())
    else {
        return ToolOutput::error(
            "<tool_use_error>InputValidationError: Write failed due to the following issues:\n\
             The required parameters `file_path` and `content` must be strings</tool_use_error>",
        );
    };
    let path = cwd.join(path);
    let original = std::fs::read_to_string(&path).ok();
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, content));
    if let Err(error) = written {
        return ToolOutput::error(format!("{error}"));
    }
    let shown = path.display();
    let message = match original {
        None => format!(
            "File created successfully at: {shown} (file state is current in your context — \
             no need to Read it back)"
        ),
        Some(_) => format!("The file {shown} has been updated successfully."),
    };
    let result = WriteResult {
        kind: if original.is_some() {
            "update"
        } else {
            "create"
        },
        file_path: shown.to_string(),
        content: content.into(),
        structured_patch: [],
        original_file: original,
        user_modified: false,
    };
    ToolOutput {
        content: Value::String(message),
        is_error: None,
        tool_use_result: serde_json::to_value(result).expect("plain struct"),
    }
}

/// `tool_use_result` of Edit.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct EditResult {
    file_path: String,
    old_string: String,
    new_string: String,
    original_file: String,
    replace_all: bool,
    user_modified: bool,
}

/// Edit: `{file_path, old_string, new_string, replace_all?}`; `old_string` must occur in the
/// file, once unless `replace_all`.
pub fn edit_file(cwd: &Path, input: &Value) -> ToolOutput {
    let (Some(path), Some(old), Some(new)) = (
        input["file_path"].as_str(),
        input["old_string"].as_str(),
        input["new_string"].as_str(),
    ) else {
        return ToolOutput::error(
            "<tool_use_error>InputValidationError: Edit failed due to the following issues:\n\
             The required parameters `file_path`, `old_string` and `new_string` must be \
             strings</tool_use_error>",
        );
    };
    let replace_all = input["replace_all"].as_bool().unwrap_or(false);
    let path = cwd.join(path);
    let Ok(original) = std::fs::read_to_string(&path) else {
        return ToolOutput::error("<tool_use_error>File does not exist.</tool_use_error>");
    };
    let edited = match original.matches(old).count() {
        0 => {
            return ToolOutput::error(format!(
                "<tool_use_error>String to replace not found in file.\nString: {old}\
                 </tool_use_error>"
            ))
        }
        1 => original.replacen(old, new, 1),
        _ if replace_all => original.replace(old, new),
        n => {
            return ToolOutput::error(format!(
                "<tool_use_error>Found {n} matches of the string to replace, but replace_all \
                 is false.\nString: {old}</tool_use_error>"
            ))
        }
    };
    if let Err(error) = std::fs::write(&path, edited) {
        return ToolOutput::error(format!("{error}"));
    }
    let result = EditResult {
        file_path: path.display().to_string(),
        old_string: old.into(),
        new_string: new.into(),
        original_file: original,
        replace_all,
        user_modified: false,
    };
    ToolOutput {
        content: Value::String(format!(
            "The file {} has been updated successfully.",
            path.display()
        )),
        is_error: None,
        tool_use_result: serde_json::to_value(result).expect("plain struct"),
    }
}

/// `tool_use_result` of Bash.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct BashResult {
    stdout: String,
    stderr: String,
    interrupted: bool,
    is_image: bool,
    no_output_expected: bool,
}

/// Bash: runs `input.command` with `sh -c` in `cwd`; a signal kills it and is returned.
pub fn bash(cwd: &Path, input: &Value, signals: &Signals) -> Result<ToolOutput, Signal> {
    let Some(command) = input["command"].as_str() else {
        return Ok(ToolOutput::error(
            "<tool_use_error>InputValidationError: Bash failed due to the following issue:\n\
             The required parameter `command` is missing</tool_use_error>",
        ));
    };
    // Its own process group, so that an interrupt can kill everything the command started.
    let spawned = Command::new("sh")
        .arg("-c")
        .arg(command)
        .process_group(0)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(error) => return Ok(ToolOutput::error(format!("{error}"))),
    };
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let mut bytes = Vec::new();
                let _ = pipe.read_to_end(&mut bytes);
                text = String::from_utf8_lossy(&bytes).into_owned();
            }
            text
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let status = loop {
        if let Some(signal) = signals.pending() {
            let group = Pid::from_raw(i32::try_from(child.id()).expect("pids fit in i32"));
            let _ = killpg(group, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            return Err(signal);
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(POLL),
            Err(error) => return Ok(ToolOutput::error(format!("{error}"))),
        }
    };
    let stdout = stdout.join().unwrap_or_default().trim_end().to_string();
    let stderr = stderr.join().unwrap_or_default().trim_end().to_string();
    let combined = [stdout.as_str(), stderr.as_str()]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    if !status.success() {
        let code = status.code().unwrap_or(128);
        return Ok(ToolOutput::error(format!("Exit code {code}\n{combined}")));
    }
    let result = BashResult {
        stdout,
        stderr,
        interrupted: false,
        is_image: false,
        no_output_expected: false,
    };
    Ok(ToolOutput {
        content: Value::String(combined),
        is_error: Some(false),
        tool_use_result: serde_json::to_value(result).expect("plain struct"),
    })
}

/// Glob: the entries of `cwd` (the pattern is not interpreted), as absolute paths.
pub fn glob(cwd: &Path) -> ToolOutput {
    let mut names: Vec<PathBuf> = std::fs::read_dir(cwd)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .collect();
    names.sort();
    let names: Vec<String> = names.iter().map(|p| p.display().to_string()).collect();
    let content = if names.is_empty() {
        "No files found".to_string()
    } else {
        names.join("\n")
    };
    ToolOutput {
        content: Value::String(content),
        is_error: None,
        tool_use_result: json!({
            "filenames": names,
            "durationMs": 1,
            "numFiles": names.len(),
            "truncated": false,
        }),
    }
}

/// Read of a file that is not on disk: `bytes` bytes of numbered text lines in the Read
/// tool's `cat -n` layout (the whole file is also in `tool_use_result`, as the real CLI
/// does, so the line is about twice `bytes` long).
pub fn synthetic_read(path: &Path, bytes: usize) -> ToolOutput {
    let mut content = String::with_capacity(bytes + 80);
    let mut lines = 0;
    while content.len() < bytes {
        lines += 1;
        content.push_str(&format!(
            "{lines:>6}\tThe quick brown fox jumps over the lazy dog ({lines}).\n"
        ));
    }
    content.truncate(bytes);
    ToolOutput {
        tool_use_result: json!({
            "type": "text",
            "file": {
                "filePath": path.display().to_string(),
                "content": content,
                "numLines": lines,
                "startLine": 1,
                "totalLines": lines,
            },
        }),
        content: Value::String(content),
        is_error: None,
    }
}
