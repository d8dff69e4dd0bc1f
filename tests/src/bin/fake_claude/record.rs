//! The invocation log for tests: with `FAKE_CLAUDE_LOG_DIR` set, every run writes
//! `<dir>/<session id>.json` (the latest run of that session) and appends the same object
//! as one line to `<dir>/invocations.jsonl` (all runs, in order). With `--input-format
//! stream-json`, `<dir>/<session id>.json` is rewritten as each stdin line arrives: `stdin`
//! lists the lines with the times they were read, and `prompt` is the first user message's
//! text (empty until it comes, and in `invocations.jsonl`). With `FAKE_CLAUDE_ASK_LOG`
//! set, every permission request is stamped in that file as it is sent.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::cli::Args;

/// What one invocation was asked to do.
#[derive(Debug, Serialize)]
pub struct Invocation {
    /// The arguments after the program name.
    pub argv: Vec<String>,
    pub cwd: String,
    /// Only the `HUMANLAYER_*` and `FAKE_CLAUDE_*` variables.
    pub env: BTreeMap<String, String>,
    /// The merged `--mcp-config` (`{"mcpServers": {...}}`), or null.
    pub mcp_config: Option<Value>,
    pub prompt: String,
    pub system_prompt: Option<String>,
    pub append_system_prompt: Option<String>,
    /// `--model` as given.
    pub model: Option<String>,
    pub session_id: String,
    pub resume: Option<String>,
    pub fork_session: bool,
    pub permission_prompt_tool: Option<String>,
    pub allowed_tools: Vec<String>,
    pub disallowed_tools: Vec<String>,
    pub max_turns: Option<u32>,
    pub scenario: &'static str,
    pub pid: u32,
    /// With stream-json input: every stdin line, in the order read.
    pub stdin: Vec<StdinLine>,
}

/// A stdin line and when fake-claude read it.
#[derive(Debug, Serialize)]
pub struct StdinLine {
    /// The line as JSON (a string when it is not JSON).
    pub line: Value,
    /// CLOCK_MONOTONIC, in ns: comparable with any process's monotonic clock.
    pub monotonic_ns: i128,
    /// Wall-clock time, in ns since the Unix epoch.
    pub unix_ns: i128,
}

impl StdinLine {
    /// `line`, stamped now.
    pub fn now(line: &str) -> Self {
        let unix_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| i128::try_from(since.as_nanos()).unwrap_or(0));
        Self {
            line: serde_json::from_str(line).unwrap_or_else(|_| Value::String(line.into())),
            monotonic_ns: monotonic_ns().unwrap_or(0),
            unix_ns,
        }
    }
}

impl Invocation {
    /// The record of a run of `session_id` in `cwd`.
    pub fn new(
        args: &Args,
        cwd: &Path,
        mcp_config: Option<&Value>,
        prompt: &str,
        session_id: &str,
        scenario: &'static str,
    ) -> Self {
        Self {
            argv: args.argv.clone(),
            cwd: cwd.display().to_string(),
            env: Self::recorded_env(),
            mcp_config: mcp_config.cloned(),
            prompt: prompt.into(),
            system_prompt: args.system_prompt.clone(),
            append_system_prompt: args.append_system_prompt.clone(),
            model: args.model.clone(),
            session_id: session_id.into(),
            resume: args.resume.clone().flatten(),
            fork_session: args.fork_session,
            permission_prompt_tool: args.permission_prompt_tool.clone(),
            allowed_tools: args.allowed_tools.clone(),
            disallowed_tools: args.disallowed_tools.clone(),
            max_turns: args.max_turns,
            scenario,
            pid: std::process::id(),
            stdin: Vec::new(),
        }
    }

    /// Records the first user message's text as the prompt, and its scenario (later ones
    /// are in `stdin`).
    pub fn first_prompt(&mut self, text: &str, scenario: &'static str) {
        if !self.stdin.iter().any(|line| line.line["type"] == "user") {
            self.prompt = text.into();
            self.scenario = scenario;
        }
    }

    /// Rewrites `<dir>/<session id>.json` if `FAKE_CLAUDE_LOG_DIR` is set.
    pub fn rewrite(&self) -> io::Result<()> {
        let Some(dir) = std::env::var_os("FAKE_CLAUDE_LOG_DIR") else {
            return Ok(());
        };
        let path = Path::new(&dir).join(format!("{}.json", self.session_id));
        write_json_atomically(&path, &serde_json::to_value(self)?)
    }

    /// The environment variables worth recording.
    fn recorded_env() -> BTreeMap<String, String> {
        std::env::vars()
            .filter(|(key, _)| key.starts_with("HUMANLAYER_") || key.starts_with("FAKE_CLAUDE_"))
            .collect()
    }

    /// Writes the log files if `FAKE_CLAUDE_LOG_DIR` is set.
    pub fn write(&self) -> io::Result<()> {
        let Some(dir) = std::env::var_os("FAKE_CLAUDE_LOG_DIR") else {
            return Ok(());
        };
        let dir = Path::new(&dir);
        std::fs::create_dir_all(dir)?;
        let value = serde_json::to_value(self)?;
        write_json_atomically(&dir.join(format!("{}.json", self.session_id)), &value)?;
        let mut line = value.to_string();
        line.push('\n');
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("invocations.jsonl"))?
            .write_all(line.as_bytes())
    }
}

/// Appends `<tool_use_id> <CLOCK_MONOTONIC ns>` to `FAKE_CLAUDE_ASK_LOG`, if set, just before
/// the permission request of `tool_use_id` is sent: the moment the agent asked, on the clock
/// every process of the machine shares, for `hld-bench` to time the request's way to a screen.
pub fn permission_asked(tool_use_id: &str) -> io::Result<()> {
    let Some(path) = std::env::var_os("FAKE_CLAUDE_ASK_LOG") else {
        return Ok(());
    };
    let ns = monotonic_ns()?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(format!("{tool_use_id} {ns}\n").as_bytes())
}

/// The time on CLOCK_MONOTONIC, in ns.
fn monotonic_ns() -> io::Result<i128> {
    let now = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)?;
    Ok(i128::from(now.tv_sec()) * 1_000_000_000 + i128::from(now.tv_nsec()))
}

/// Writes pretty JSON to a temporary file beside `path` and renames it into place, so a
/// reader never sees a partial file.
pub fn write_json_atomically(path: &Path, value: &Value) -> io::Result<()> {
    let temporary = path.with_extension(format!("json.{}.tmp", std::process::id()));
    std::fs::write(&temporary, serde_json::to_vec_pretty(value)?)?;
    std::fs::rename(&temporary, path)
}
