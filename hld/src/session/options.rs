//! A session's options and settings as a request gives them: checked, made absolute, inherited.

use std::path::PathBuf;

use chrono::{SecondsFormat, Utc};
use hld_client::protocol::{
    ContinueSessionParams, LaunchSessionParams, McpConfig, McpConfigParam, PermissionMode,
    TITLE_MAX_CHARS,
};

use crate::error::{Error, Result};
use crate::model::{Modes, SessionOptions, Settings};
use crate::store::SessionRow;

impl Settings {
    /// A new session's settings: a bypass timeout must be positive, and only with the bypass;
    /// `resume_on_reset` when the request does not say (the daemon's configured default).
    pub fn launch(p: &LaunchSessionParams, resume_on_reset: bool) -> Result<Settings> {
        let bypass = p.dangerously_skip_permissions.unwrap_or(false);
        Ok(Settings {
            title: given(p.title.as_deref().map(title).transpose()?),
            modes: Modes {
                auto_accept_edits: p.auto_accept_edits.unwrap_or(false),
                dangerously_skip_permissions: bypass,
                bypass_expires_at: bypass_expiry(
                    bypass,
                    p.dangerously_skip_permissions_timeout,
                    "dangerously_skip_permissions_timeout",
                )?,
                permission_mode: permission_mode(p.permission_mode.clone())?.unwrap_or_default(),
                resume_on_reset: p.resume_on_reset.unwrap_or(resume_on_reset),
            },
        })
    }

    /// A continuation's settings: the title given, else the parent's; modes as
    /// `Modes::inherited`, with the permission mode (checked by [`permission_mode`]) and
    /// `resume_on_reset` given.
    pub fn continued(
        parent: &SessionRow,
        title: Option<String>,
        mode: Option<PermissionMode>,
        resume_on_reset: Option<bool>,
    ) -> Settings {
        let mut modes = parent.new.modes.inherited(&crate::time::now());
        if let Some(mode) = mode {
            modes.permission_mode = mode;
        }
        if let Some(resume) = resume_on_reset {
            modes.resume_on_reset = resume;
        }
        Settings {
            title: given(title).or_else(|| Some(parent.title()).filter(|t| !t.is_empty())),
            modes,
        }
    }
}

/// A title as kept, the one rule of every way a title comes in (rename, launch, continue,
/// drafts, REST): each run of whitespace, newlines and tabs included, one space, as hlyr sends
/// it (empty when blank). Other control characters, and more than [`TITLE_MAX_CHARS`]
/// characters, are refused: a title is one line of a list.
pub fn title(value: &str) -> Result<String> {
    let title = value.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(c) = title.chars().find(|c| c.is_control()) {
        return Err(Error::invalid_param(
            "title",
            "one line of text",
            "a control character",
            format!(
                "invalid title: it holds the control character {}",
                c.escape_unicode()
            ),
        ));
    }
    let length = title.chars().count();
    if length > TITLE_MAX_CHARS {
        return Err(Error::invalid_param(
            "title",
            &format!("at most {TITLE_MAX_CHARS} characters"),
            &format!("{length} characters"),
            format!("title too long: {length} characters (at most {TITLE_MAX_CHARS})"),
        ));
    }
    Ok(title)
}

/// A permission mode a request gives: `default` or `plan`. The CLI's `acceptEdits` and
/// `bypassPermissions` would hide tool calls from the daemon's approvals: their jobs are the
/// daemon's `auto_accept_edits` and `dangerously_skip_permissions`.
pub fn permission_mode(mode: Option<PermissionMode>) -> Result<Option<PermissionMode>> {
    match mode {
        Some(PermissionMode::Unknown(other)) => Err(Error::invalid_param(
            "permission_mode",
            "default or plan",
            &other,
            format!(
                "invalid permission_mode: {other} (default or plan; to approve edits or every \
                 tool call without asking, set auto_accept_edits or dangerously_skip_permissions)"
            ),
        )),
        mode => Ok(mode),
    }
}

/// When a bypass given now with `timeout_ms` ends (`None`: when off); `param` names it in errors.
pub fn bypass_expiry(bypass: bool, timeout_ms: Option<i64>, param: &str) -> Result<Option<String>> {
    match timeout_ms {
        None => Ok(None),
        Some(_) if !bypass => Err(Error::invalid_param(
            param,
            "a timeout together with dangerously_skip_permissions: true",
            "a timeout without the bypass",
            format!("{param} needs dangerously_skip_permissions"),
        )),
        Some(ms) if ms <= 0 => Err(Error::invalid_param(
            param,
            "positive integer (milliseconds)",
            "non-positive integer",
            format!("{param} must be positive"),
        )),
        Some(ms) => {
            let expiry = Utc::now() + chrono::Duration::milliseconds(ms);
            Ok(Some(expiry.to_rfc3339_opts(SecondsFormat::Millis, true)))
        }
    }
}

impl SessionOptions {
    pub fn launch(p: LaunchSessionParams) -> Result<SessionOptions> {
        Ok(SessionOptions {
            max_turns: max_turns(p.max_turns)?,
            model: given(p.model),
            working_dir: working_dir(p.working_dir.as_deref())?,
            system_prompt: given(p.system_prompt),
            append_system_prompt: given(p.append_system_prompt),
            custom_instructions: given(p.custom_instructions),
            permission_prompt_tool: given(p.permission_prompt_tool),
            allowed_tools: given_list(p.allowed_tools),
            disallowed_tools: given_list(p.disallowed_tools),
            mcp_config: mcp_config(p.mcp_config)?,
            no_approvals: p.no_approvals.unwrap_or(false),
            additional_directories: additional_directories(p.additional_directories)?,
            worktree: None,
        })
    }

    /// A continuation's options: the parent's, overridden by the request's; `max_turns` only its.
    pub fn continued(&self, p: ContinueSessionParams) -> Result<SessionOptions> {
        Ok(SessionOptions {
            model: given(p.model).or_else(|| self.model.clone()),
            working_dir: working_dir(Some(&self.working_dir.display().to_string()))?,
            max_turns: max_turns(p.max_turns)?,
            system_prompt: given(p.system_prompt).or_else(|| self.system_prompt.clone()),
            append_system_prompt: given(p.append_system_prompt)
                .or_else(|| self.append_system_prompt.clone()),
            custom_instructions: given(p.custom_instructions)
                .or_else(|| self.custom_instructions.clone()),
            permission_prompt_tool: given(p.permission_prompt_tool)
                .or_else(|| self.permission_prompt_tool.clone()),
            allowed_tools: given_list(p.allowed_tools).or_else(|| self.allowed_tools.clone()),
            disallowed_tools: given_list(p.disallowed_tools)
                .or_else(|| self.disallowed_tools.clone()),
            mcp_config: mcp_config(p.mcp_config)?.or_else(|| self.mcp_config.clone()),
            no_approvals: self.no_approvals,
            additional_directories: match p.additional_directories {
                Some(dirs) => additional_directories(Some(dirs))?,
                None => self.additional_directories.clone(),
            },
            worktree: self.worktree.clone(),
        })
    }
}

/// `max_turns` as either launch method takes it: a negative one is refused, 0 is no limit.
pub fn max_turns(requested: Option<i64>) -> Result<Option<i64>> {
    match requested {
        Some(n) if n < 0 => Err(Error::invalid_param(
            "max_turns",
            "non-negative integer",
            "negative integer",
            "max_turns must not be negative",
        )),
        n => Ok(n.filter(|n| *n > 0)),
    }
}

fn given(value: Option<String>) -> Option<String> {
    value.filter(|s| !s.is_empty())
}

fn given_list(value: Option<Vec<String>>) -> Option<Vec<String>> {
    value.filter(|v| !v.is_empty())
}

/// `mcp_config` in either shape: an object, or a string holding one.
fn mcp_config(param: Option<McpConfigParam>) -> Result<Option<McpConfig>> {
    match param {
        None => Ok(None),
        Some(McpConfigParam::Object(c)) => Ok(Some(c)),
        Some(McpConfigParam::Json(s)) if s.trim().is_empty() => Ok(None),
        Some(McpConfigParam::Json(s)) => serde_json::from_str(&s).map(Some).map_err(|e| {
            Error::invalid_param(
                "mcp_config",
                "MCP config object or JSON string",
                "invalid JSON",
                format!("invalid mcp_config JSON: {e}"),
            )
        }),
    }
}

/// `--add-dir` directories: each made absolute as a working directory is, and checked to exist.
pub fn additional_directories(dirs: Option<Vec<String>>) -> Result<Vec<PathBuf>> {
    dirs.unwrap_or_default()
        .iter()
        .filter(|d| !d.is_empty())
        .map(|d| {
            absolute_dir(d).map_err(|absolute| {
                Error::invalid_param(
                    "additional_directories",
                    "existing directories",
                    &absolute.display().to_string(),
                    format!(
                        "additional directory does not exist: {}",
                        absolute.display()
                    ),
                )
            })
        })
        .collect()
}

/// `dir` with `~` expanded, made absolute from the daemon's directory; `Err(path)` if no directory.
fn absolute_dir(dir: &str) -> std::result::Result<PathBuf, PathBuf> {
    let path = hld_client::config::expand_tilde(dir);
    let absolute = if path.is_absolute() {
        path
    } else {
        std::env::current_dir()
            .map_err(|_| path.clone())?
            .join(path)
    };
    if absolute.is_dir() {
        Ok(absolute)
    } else {
        Err(absolute)
    }
}

/// The absolute path `dir` names (as a launch reads it) when it is not a directory.
pub fn missing_dir(dir: &str) -> Option<PathBuf> {
    absolute_dir(dir).err()
}

/// A working directory made absolute as `absolute_dir` does, and checked to exist.
fn working_dir(requested: Option<&str>) -> Result<PathBuf> {
    let Some(dir) = requested.filter(|s| !s.is_empty()) else {
        return std::env::current_dir()
            .map_err(|e| Error::internal("cannot read the daemon's working directory", e));
    };
    absolute_dir(dir).map_err(|absolute| {
        Error::invalid_param(
            "working_dir",
            "an existing directory",
            &absolute.display().to_string(),
            format!("working_dir does not exist: {}", absolute.display()),
        )
    })
}
