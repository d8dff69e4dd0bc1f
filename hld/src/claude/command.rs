//! Building the `claude` command line, asking its version and writing the `--mcp-config` file.

use std::ffi::{OsStr, OsString};
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use hld_client::protocol::{McpConfig, PermissionMode};

use crate::model::SessionOptions;
use crate::private_dir;

/// How long `claude --version` may take before it is given up on.
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(5);

/// Everything on one `claude` command line; empty strings and lists emit no flag. The prompt
/// is not on it: it is the first message on stdin ([`super::control::user_message`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaunchSpec {
    /// The session's options (its working directory is the process's, not a flag).
    pub options: SessionOptions,
    /// `--mcp-config`: a file written by [`write_mcp_config`].
    pub mcp_config_file: Option<PathBuf>,
    /// `--permission-prompt-tool`: `mcp__<server>__<tool>` (the session's own or the daemon's
    /// server), or `stdio` for the control channel.
    pub permission_prompt_tool: Option<String>,
    pub resume: Option<String>,
    /// `--fork-session` (with `resume` only): forking makes Claude report a new session id.
    pub fork_session: bool,
    /// `--permission-mode plan` when planning; the CLI's default otherwise.
    pub permission_mode: PermissionMode,
}

fn given(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

impl LaunchSpec {
    /// `--append-system-prompt`: the append prompt and custom instructions, blank-line separated.
    pub fn append_prompt_text(&self) -> Option<String> {
        match (
            given(&self.options.append_system_prompt),
            given(&self.options.custom_instructions),
        ) {
            (Some(a), Some(c)) => Some(format!("{a}\n\n{c}")),
            (Some(only), None) | (None, Some(only)) => Some(only.to_owned()),
            (None, None) => None,
        }
    }

    /// The arguments: every flag, then `--input-format stream-json --output-format stream-json
    /// --verbose --print`: the process reads messages and control requests on stdin.
    pub fn args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        let options = &self.options;
        if let Some(model) = given(&options.model) {
            push_flag(&mut args, "--model", model.as_ref());
        }
        if let Some(file) = &self.mcp_config_file {
            push_flag(&mut args, "--mcp-config", file.as_os_str());
        }
        if let Some(tool) = given(&self.permission_prompt_tool) {
            push_flag(&mut args, "--permission-prompt-tool", tool.as_ref());
        }
        if self.permission_mode == PermissionMode::Plan {
            push_flag(&mut args, "--permission-mode", "plan".as_ref());
        }
        if let Some(turns) = options.max_turns.filter(|n| *n > 0) {
            push_flag(&mut args, "--max-turns", turns.to_string().as_ref());
        }
        if let Some(prompt) = given(&options.system_prompt) {
            push_flag(&mut args, "--system-prompt", prompt.as_ref());
        }
        if let Some(text) = self.append_prompt_text() {
            push_flag(&mut args, "--append-system-prompt", text.as_ref());
        }
        for (flag, tools) in [
            ("--allowedTools", &options.allowed_tools),
            ("--disallowedTools", &options.disallowed_tools),
        ] {
            if let Some(tools) = tools.as_ref().filter(|t| !t.is_empty()) {
                push_flag(&mut args, flag, tools.join(",").as_ref());
            }
        }
        for dir in &options.additional_directories {
            push_flag(&mut args, "--add-dir", dir.as_os_str());
        }
        if let Some(id) = given(&self.resume) {
            push_flag(&mut args, "--resume", id.as_ref());
            if self.fork_session {
                args.push("--fork-session".into());
            }
        }
        for fixed in [
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--print",
        ] {
            args.push(fixed.into());
        }
        args
    }
}

fn push_flag(args: &mut Vec<OsString>, name: &str, value: &OsStr) {
    args.push(name.into());
    args.push(value.to_owned());
}

/// The daemon's own secrets, which no child inherits (an agent can send its environment
/// anywhere); a server that needs one gets it in its private MCP config entry.
pub const SECRET_ENV: [&str; 2] = ["HUMANLAYER_API_KEY", "HUMANLAYER_NOTIFY_WEBHOOK"];

/// A command for `claude` (or anything it starts), without the daemon's secrets.
pub fn command(program: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    for name in SECRET_ENV {
        cmd.env_remove(name);
    }
    cmd
}

/// The first line of `<path> --version` (killed after `timeout`), e.g. `2.1.197 (Claude Code)`.
pub async fn claude_version(path: &Path, timeout: Duration) -> Option<String> {
    let child = command(path)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(timeout, child).await.ok()?.ok()?;
    if !output.status.success() {
        return None;
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let first = stdout.lines().next()?.trim();
    (!first.is_empty()).then(|| first.to_owned())
}

/// Writes `config` to a new 0600 file `mcp-config-<uuid>.json` (`O_EXCL | O_NOFOLLOW`) in
/// `dir`, checked first ([`private_dir::ensure`]); the caller removes it once `claude` exited.
pub fn write_mcp_config(dir: &Path, config: &McpConfig) -> io::Result<PathBuf> {
    private_dir::ensure(dir, "the directory of per-session files")?;
    let path = dir.join(format!("{MCP_CONFIG_PREFIX}{}.json", uuid::Uuid::new_v4()));
    let json = serde_json::to_vec(config)?;
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o600)
        .open(&path)?;
    file.write_all(&json)?;
    Ok(path)
}

const MCP_CONFIG_PREFIX: &str = "mcp-config-";

/// Checks `dir` and removes MCP configs left by an unclean exit (before any session); how many.
pub fn clean_mcp_configs(dir: &Path) -> io::Result<usize> {
    private_dir::ensure(dir, "the directory of per-session files")?;
    let mut removed = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let ours = name
            .to_str()
            .is_some_and(|n| n.starts_with(MCP_CONFIG_PREFIX) && n.ends_with(".json"));
        if ours && entry.file_type()?.is_file() {
            std::fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn strings(args: Vec<OsString>) -> Vec<String> {
        args.into_iter().map(|a| a.into_string().unwrap()).collect()
    }

    /// A spec with the options `set` makes from the defaults.
    fn spec(set: impl FnOnce(&mut LaunchSpec)) -> LaunchSpec {
        let mut spec = LaunchSpec::default();
        set(&mut spec);
        spec
    }

    #[test]
    fn claude_args_omit_what_is_not_given_and_read_stdin() {
        const TAIL: [&str; 6] = [
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--print",
        ];
        let cases: [(LaunchSpec, &[&str]); 6] = [
            // Empty strings and lists, and no positive max turns, are not given.
            (
                spec(|s| {
                    s.options.model = Some(String::new());
                    s.options.max_turns = Some(-3);
                    s.options.allowed_tools = Some(vec![]);
                }),
                &[],
            ),
            // The control channel's permission prompt.
            (
                spec(|s| {
                    s.options.allowed_tools = Some(vec!["Read".into()]);
                    s.permission_prompt_tool = Some("stdio".into());
                }),
                &[
                    "--permission-prompt-tool",
                    "stdio",
                    "--allowedTools",
                    "Read",
                ],
            ),
            // Custom instructions alone are the append prompt; an empty one is none.
            (
                spec(|s| s.options.custom_instructions = Some("Use tabs.".into())),
                &["--append-system-prompt", "Use tabs."],
            ),
            (
                spec(|s| {
                    s.options.append_system_prompt = Some("Be brief.".into());
                    s.options.custom_instructions = Some(String::new());
                }),
                &["--append-system-prompt", "Be brief."],
            ),
            // `--fork-session` follows a resume, and only a resume.
            (
                spec(|s| {
                    s.resume = Some("abc".into());
                    s.fork_session = true;
                }),
                &["--resume", "abc", "--fork-session"],
            ),
            (spec(|s| s.fork_session = true), &[]),
        ];
        for (spec, flags) in cases {
            let expected: Vec<&str> = flags.iter().chain(&TAIL).copied().collect();
            assert_eq!(strings(spec.args()), expected, "{spec:?}");
        }
    }

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[tokio::test]
    async fn claude_version_reads_first_line_and_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let good = script(
            dir.path(),
            "claude-good",
            "echo '  2.1.197 (Claude Code)  '; echo second",
        );
        assert_eq!(
            claude_version(&good, VERSION_TIMEOUT).await.as_deref(),
            Some("2.1.197 (Claude Code)")
        );

        let failing = script(dir.path(), "claude-bad", "echo 1.0; exit 1");
        assert_eq!(claude_version(&failing, VERSION_TIMEOUT).await, None);

        let slow = script(dir.path(), "claude-slow", "exec sleep 30");
        let started = std::time::Instant::now();
        assert_eq!(
            claude_version(&slow, Duration::from_millis(200)).await,
            None
        );
        assert!(started.elapsed() < Duration::from_secs(10));

        assert_eq!(
            claude_version(&dir.path().join("missing"), VERSION_TIMEOUT).await,
            None
        );
    }

    #[test]
    fn claude_mcp_config_written_private() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("state").join("mcp");
        let config = McpConfig::default();

        let first = write_mcp_config(&dir, &config).unwrap();
        let second = write_mcp_config(&dir, &config).unwrap();
        assert_ne!(first, second);
        assert_eq!(first.parent(), Some(dir.as_path()));

        let dir_mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(dir_mode, 0o700);
        let file_mode = std::fs::metadata(&first).unwrap().permissions().mode() & 0o777;
        assert_eq!(file_mode, 0o600);
    }
}
