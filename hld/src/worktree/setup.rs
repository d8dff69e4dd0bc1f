//! `worktree_setup`: the user's own per-repository command (copying `.env`, installing
//! dependencies), from `humanlayer.json` keyed by repository path, never from the repository;
//! run with `sh -c` in a new worktree before the agent starts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use hld_client::config::{config_file, config_file_path, expand_tilde};

use crate::error::{Error, Result};

/// How long a setup command may run.
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(600);

/// The most of its output kept (its end, where failures are told).
const MAX_OUTPUT: usize = 64 * 1024;

/// The most of a failed command's output told in the error (its end).
const MAX_TOLD: usize = 2000;

/// The setup command of each repository, by its path (made canonical).
#[derive(Debug, Clone, Default)]
pub struct SetupCommands(BTreeMap<PathBuf, String>);

/// `worktree_setup` in `humanlayer.json`: an object of repository path → shell command.
pub fn setup_commands() -> std::result::Result<SetupCommands, String> {
    let Some(value) = config_file()?.and_then(|v| v.get("worktree_setup").cloned()) else {
        return Ok(SetupCommands::default());
    };
    let table: BTreeMap<String, String> = serde_json::from_value(value).map_err(|_| {
        format!(
            "worktree_setup in {} must be an object of repository path to command",
            config_file_path().display()
        )
    })?;
    Ok(SetupCommands(
        table
            .into_iter()
            .map(|(repo, command)| {
                let path = expand_tilde(&repo);
                (std::fs::canonicalize(&path).unwrap_or(path), command)
            })
            .collect(),
    ))
}

impl SetupCommands {
    /// A table of the given commands (for tests and embedders).
    pub fn new(commands: impl IntoIterator<Item = (PathBuf, String)>) -> SetupCommands {
        SetupCommands(commands.into_iter().collect())
    }

    /// Runs `repository`'s command in `worktree`: its output (stdout then stderr) when there
    /// is one, an error saying how it failed otherwise.
    pub async fn run(&self, repository: &Path, worktree: &Path) -> Result<Option<String>> {
        let key = std::fs::canonicalize(repository).unwrap_or_else(|_| repository.to_owned());
        let Some(command) = self.0.get(&key) else {
            return Ok(None);
        };
        let child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(worktree)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .output();
        let failed = |why: String| {
            Error::invalid_param(
                "worktree",
                "a worktree_setup command that succeeds",
                "failed",
                why,
            )
        };
        let output = match tokio::time::timeout(SETUP_TIMEOUT, child).await {
            Err(_) => {
                return Err(failed(format!(
                    "worktree_setup took longer than {} s",
                    SETUP_TIMEOUT.as_secs()
                )))
            }
            Ok(Err(e)) => return Err(failed(format!("worktree_setup could not run: {e}"))),
            Ok(Ok(output)) => output,
        };
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        if text.len() > MAX_OUTPUT {
            let mut cut = text.len() - MAX_OUTPUT;
            while !text.is_char_boundary(cut) {
                cut += 1;
            }
            text.drain(..cut);
        }
        if !output.status.success() {
            let code = output
                .status
                .code()
                .map_or("a signal".to_owned(), |c| format!("exit {c}"));
            let trimmed = text.trim();
            let mut start = trimmed.len().saturating_sub(MAX_TOLD);
            while !trimmed.is_char_boundary(start) {
                start += 1;
            }
            return Err(failed(format!(
                "worktree_setup failed ({code}); the worktree was removed: {}",
                &trimmed[start..]
            )));
        }
        Ok(Some(text))
    }
}
