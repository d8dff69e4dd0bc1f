//! Sessions: launching, continuing and interrupting `claude`. Each session process is an actor
//! (`supervisor`, `turn`) that stays warm between turns; this manager holds their handles and
//! sends messages into sessions, resuming them when no process is left (`live`). Status rules
//! live in `model::transition`.

mod lines;
mod live;
pub mod options;
mod requests;
mod resume;
mod supervisor;
pub mod transcript;
mod turn;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hld_client::claude_path;
use hld_client::protocol::{
    ApprovalsAvailability, ClaudeAvailability, McpConfig, McpServer, PermissionMode, SessionStatus,
};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::task::TaskTracker;

use self::supervisor::{cannot_interrupt, Command, Handle, Supervisor, Turns};
use self::transcript::Transcript;
use crate::approval::api::ApiKey;
use crate::approval::server::{self, ApprovalsCommand};
use crate::claude::command::SECRET_ENV;
use crate::claude::control::STDIO_PROMPT_TOOL;
use crate::claude::prompt::Prompt;
use crate::claude::{self, process, LaunchSpec};
use crate::error::{Error, Result};
use crate::model::{Happening, SessionOptions, Settings};
use crate::store::{read, NewSession, SessionUpdate, Store, StoreError, Writer};
pub use requests::ControlError;
pub use resume::run as resume_at_resets;

/// The name of the MCP server the daemon injects for approvals.
pub const APPROVALS_SERVER: &str = "approvals";
/// The permission-prompt tool the daemon injects.
pub const APPROVALS_TOOL: &str = "mcp__approvals__request_permission";

#[derive(Debug, Clone)]
pub struct SessionConfig {
    pub claude_path: Option<PathBuf>,
    /// The daemon's socket, handed to MCP servers.
    pub socket: PathBuf,
    /// Where private MCP config files are written (created 0700).
    pub run_dir: PathBuf,
    pub interrupt_grace: Duration,
    /// Longest line of output stored whole; longer ones are cut.
    pub max_agent_line: usize,
    pub approvals_command: ApprovalsCommand,
    /// The HumanLayer API key, handed only to the anchor's own approvals server. Without one,
    /// approvals come over the control channel (`--permission-prompt-tool stdio`).
    pub api_key: Option<ApiKey>,
    /// How long a process stays warm after a turn.
    pub live_idle: Duration,
    /// At most this many warm processes; the least recently used closes first.
    pub max_live: usize,
}

/// What [`Sessions::start`] starts: a stored session's process.
struct Start<'a> {
    session_id: &'a str,
    run_id: &'a str,
    options: SessionOptions,
    fork_session: bool,
    /// The Claude session resumed, if any.
    resume: Option<String>,
    /// A launch's prompt as stored (its images named), once Claude names its session.
    query: Option<String>,
    permission_mode: PermissionMode,
}

/// The conversation a continuation resumes.
#[derive(Debug, Clone)]
pub struct Parent {
    pub session_id: String,
    /// Its Claude session, given to `--resume`.
    pub claude_session_id: String,
}

/// The session manager. Shared through `Arc`.
pub struct Sessions {
    config: SessionConfig,
    store: Store,
    /// The live sessions' actors (a std Mutex: never held across an await).
    live: Mutex<HashMap<String, Handle>>,
    /// Held while a session without a process is resumed, so that it gets one process.
    resuming: tokio::sync::Mutex<()>,
    supervisors: TaskTracker,
    claude_versions: Mutex<HashMap<PathBuf, Option<String>>>,
    /// Where `claude` is, and why the approvals command cannot run, as found at start-up and
    /// then at each launch: `health` reports these rather than looking again.
    found: Mutex<(Option<PathBuf>, Option<String>)>,
}

/// The programs sessions need: `claude`, and the approvals server's command.
#[derive(Debug, Clone)]
pub struct Tools {
    /// Where `claude` was found, and its version.
    pub claude: ClaudeAvailability,
    pub approvals: ApprovalsAvailability,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions").finish_non_exhaustive()
    }
}

impl Sessions {
    pub fn new(config: SessionConfig, store: Store) -> Arc<Sessions> {
        let sessions = Sessions {
            config,
            store,
            live: Mutex::new(HashMap::new()),
            resuming: tokio::sync::Mutex::new(()),
            supervisors: TaskTracker::new(),
            claude_versions: Mutex::new(HashMap::new()),
            found: Mutex::default(),
        };
        sessions.locate_claude();
        sessions.approvals_problem();
        Arc::new(sessions)
    }

    pub fn active_count(&self) -> usize {
        self.live.lock().unwrap().len()
    }

    /// Where `claude` was found (version probed once per path), and whether the approvals
    /// server runs, as the last look found them.
    pub async fn tools(&self) -> Tools {
        let (claude, problem) = self.found.lock().unwrap().clone();
        let version = match &claude {
            Some(path) => self.version_of(path).await,
            None => None,
        };
        Tools {
            claude: ClaudeAvailability {
                available: claude.is_some(),
                path: claude.map(|path| path.to_string_lossy().into_owned()),
                version,
            },
            approvals: self.config.approvals_command.availability(problem),
        }
    }

    async fn version_of(&self, path: &Path) -> Option<String> {
        if let Some(known) = self.claude_versions.lock().unwrap().get(path) {
            return known.clone();
        }
        let version = claude::claude_version(path, claude::command::VERSION_TIMEOUT).await;
        let mut versions = self.claude_versions.lock().unwrap();
        versions.insert(path.to_owned(), version.clone());
        version
    }

    /// Looks for `claude` again, and keeps what it found.
    fn locate_claude(&self) -> Option<PathBuf> {
        let path = claude_path::locate(self.config.claude_path.as_deref());
        self.found.lock().unwrap().0.clone_from(&path);
        path
    }

    /// Checks the approvals command again, and keeps what it found.
    fn approvals_problem(&self) -> Option<String> {
        let problem = self.config.approvals_command.problem();
        self.found.lock().unwrap().1.clone_from(&problem);
        problem
    }

    /// Before serving: fails the sessions a previous daemon left active, resolves its approvals.
    pub async fn mark_orphans(&self) -> anyhow::Result<()> {
        let orphans = |w: &mut Writer, out: &mut Vec<_>| w.mark_orphans("daemon restarted", out);
        let count = self.store.write(orphans).await?;
        if count > 0 {
            tracing::warn!(count, "marked orphaned sessions as failed");
        }
        Ok(())
    }

    /// Starts a session with `prompt` (continuing `parent`, if given; in place of the draft
    /// `draft`, if given, keeping its id); returns its ids once `claude` runs.
    pub async fn launch(
        self: &Arc<Self>,
        prompt: Prompt,
        options: SessionOptions,
        settings: Settings,
        parent: Option<Parent>,
        draft: Option<String>,
    ) -> Result<(String, String)> {
        let session_id = draft
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let run_id = uuid::Uuid::new_v4().to_string();
        let permission_mode = settings.modes.permission_mode.clone();
        let new = NewSession {
            id: session_id.clone(),
            run_id: run_id.clone(),
            parent_session_id: parent.as_ref().map(|p| p.session_id.clone()),
            query: prompt.text.clone(),
            summary: crate::store::summarize(&prompt.text),
            options: options.clone(),
            created_at: crate::time::now(),
            title: settings.title,
            modes: settings.modes,
        };
        let claude_path = self.claude_path(&options)?;
        self.store
            .write(move |w, _| match draft {
                Some(id) => w.launch_draft(&id, &new),
                None => w.create_session(&new),
            })
            .await
            .map_err(|e| match e {
                StoreError::SessionNotFound(id) => Error::invalid_param(
                    "session_id",
                    "a draft being composed",
                    "another session",
                    format!("session {id} is not a draft being composed"),
                ),
                e => Error::internal("failed to store session in database", e),
            })?;
        let start = Start {
            session_id: &session_id,
            run_id: &run_id,
            options,
            // Every continuation forks, so two continuations of one parent never share turns.
            fork_session: parent.is_some(),
            resume: parent.map(|p| p.claude_session_id),
            query: Some(prompt.described()),
            permission_mode,
        };
        self.start(&claude_path, start, prompt).await?;
        Ok((session_id, run_id))
    }

    /// Where `claude` is, and that the approvals server can run if `options` need it.
    fn claude_path(&self, options: &SessionOptions) -> Result<PathBuf> {
        let claude_path = self.locate_claude().ok_or_else(|| {
            Error::internal(
                claude_path::NOT_FOUND,
                anyhow::anyhow!(
                    "claude not found (configured: {:?})",
                    self.config.claude_path
                ),
            )
        })?;
        if self.uses_approvals_server(options) {
            if let Some(problem) = self.approvals_problem() {
                return Err(Error::internal(
                    "the approvals MCP server cannot run (see `health`): fix \
                     --approvals-command, or launch with no_approvals",
                    anyhow::anyhow!(problem),
                ));
            }
        }
        Ok(claude_path)
    }

    /// Whether a session gets the approvals MCP server: with a HumanLayer API key only (the
    /// cloud path); without one its approvals come over the control channel.
    fn uses_approvals_server(&self, options: &SessionOptions) -> bool {
        options.needs_approvals_server() && self.config.api_key.is_some()
    }

    /// Starts a stored session's process, with `first` as its first message; once it runs,
    /// the session is `running` and live. A process that cannot start fails the session.
    async fn start(
        self: &Arc<Self>,
        claude_path: &Path,
        start: Start<'_>,
        first: Prompt,
    ) -> Result<()> {
        let Start {
            session_id,
            run_id,
            options,
            fork_session,
            resume,
            query,
            permission_mode,
        } = start;
        let (mcp_for_claude, permission_tool) = self.effective_mcp(&options, session_id, run_id);
        let mcp_file = match &mcp_for_claude {
            Some(config) => Some(
                claude::write_mcp_config(&self.config.run_dir, config)
                    .map_err(|e| Error::internal("failed to write the MCP config", e))?,
            ),
            None => None,
        };
        let working_dir = options.working_dir.clone();
        let model_requested = options.model.is_some();
        let spec = LaunchSpec {
            options,
            mcp_config_file: mcp_file.clone(),
            permission_prompt_tool: permission_tool,
            fork_session,
            resume: resume.clone(),
            permission_mode,
        };
        let child = match process::spawn(claude_path, &spec, &working_dir) {
            Ok(child) => child,
            Err(e) => {
                let message = format!("failed to start claude: {}", e.kind());
                let update = SessionUpdate {
                    error_message: Some(message.clone()),
                    completed_at: Some(crate::time::now()),
                    ..Default::default()
                };
                self.advance(session_id, Happening::StartFailed, update.clone())
                    .await;
                let id = session_id.to_owned();
                let failed = Happening::Exited { failed: true };
                let _ = (self.store)
                    .write(move |w, out| w.process_ended(&id, failed, &update, out))
                    .await;
                if let Some(f) = &mcp_file {
                    let _ = std::fs::remove_file(f);
                }
                return Err(Error::internal(
                    format!("failed to launch Claude session: {message}"),
                    e,
                ));
            }
        };
        let pid = child.id().unwrap_or_default();
        let (commands_tx, commands) = mpsc::unbounded_channel();
        let (done_tx, done_rx) = watch::channel(false);
        self.live.lock().unwrap().insert(
            session_id.to_owned(),
            Handle {
                commands: commands_tx,
                done: done_rx,
                warm_since: None,
                warm: watch::channel(false).0,
            },
        );
        let id = session_id.to_owned();
        let started = move |w: &mut Writer, out: &mut Vec<_>| {
            w.set_live(&id, true, None)?;
            w.advance(&id, Happening::Started, &SessionUpdate::default(), out)
        };
        if let Err(e) = self.store.write(started).await {
            tracing::error!(session = %session_id, error = %e, "cannot store that the session started");
        }
        let what = match (&resume, fork_session) {
            (Some(_), false) => "session resumed",
            _ => "session launched",
        };
        let supervisor = Supervisor {
            sessions: Arc::clone(self),
            session_id: session_id.to_owned(),
            query,
            model_requested,
            mcp_file,
            working_dir: live::Workdir::new(working_dir),
            commands,
            done: done_tx,
            turns: Turns::new(),
            // A resume without a fork keeps Claude's session id, known before any line.
            transcript: Transcript::resuming(resume.filter(|_| !fork_session)),
        };
        self.supervisors.spawn(supervisor.run(child, first));
        tokio::spawn(Arc::clone(self).initialize(session_id.to_owned()));
        tracing::info!(session = %session_id, run = %run_id, pid, "{what}");
        Ok(())
    }

    /// The MCP config and permission tool handed to Claude: the session's servers, plus ours
    /// unless it opts out or brings its own tool; each gets the session's identity in its env.
    fn effective_mcp(
        &self,
        options: &SessionOptions,
        session_id: &str,
        run_id: &str,
    ) -> (Option<McpConfig>, Option<String>) {
        let mut config = options.mcp_config.clone().unwrap_or_default();
        let mut tool = options.permission_prompt_tool.clone();
        // The anchor's approvals server reads the API key from its environment; it alone gets it.
        if let Some(key) = &self.config.api_key {
            for server in config.mcp_servers.values_mut() {
                if is_humanlayer_approvals_server(server) {
                    let env = server.env.get_or_insert_with(Default::default);
                    env.insert(SECRET_ENV[0].to_owned(), key.expose().to_owned());
                }
            }
        }
        if options.needs_approvals_server() && self.config.api_key.is_none() {
            tool = Some(STDIO_PROMPT_TOOL.to_owned());
        } else if options.needs_approvals_server() {
            config.mcp_servers.insert(
                APPROVALS_SERVER.to_owned(),
                McpServer {
                    command: Some(
                        self.config
                            .approvals_command
                            .path
                            .to_string_lossy()
                            .into_owned(),
                    ),
                    args: Some(server::ARGS.map(str::to_owned).to_vec()),
                    ..Default::default()
                },
            );
            tool = Some(APPROVALS_TOOL.to_owned());
        }
        if config.mcp_servers.is_empty() {
            return (None, tool);
        }
        for server in config.mcp_servers.values_mut() {
            let env = server.env.get_or_insert_with(Default::default);
            env.insert("HUMANLAYER_RUN_ID".into(), run_id.to_owned());
            env.insert("HUMANLAYER_SESSION_ID".into(), session_id.to_owned());
            env.insert(
                "HUMANLAYER_DAEMON_SOCKET".into(),
                self.config.socket.to_string_lossy().into_owned(),
            );
        }
        (Some(config), tool)
    }

    /// Moves a session by the rule for `happening`, storing `update`; the new status if it moved.
    pub(crate) async fn advance(
        &self,
        session_id: &str,
        happening: Happening,
        update: SessionUpdate,
    ) -> Option<SessionStatus> {
        let id = session_id.to_owned();
        let advance =
            move |w: &mut Writer, out: &mut Vec<_>| w.advance(&id, happening, &update, out);
        match self.store.write(advance).await {
            Ok(moved) => moved,
            Err(e) => {
                tracing::error!(session = %session_id, error = %e, %happening, "cannot store a status change");
                None
            }
        }
    }

    /// Interrupts a live session: SIGINT, status `completing`, its group killed after the grace.
    pub async fn interrupt(&self, session_id: &str) -> Result<()> {
        let id = session_id.to_owned();
        let row = self
            .store
            .read(move |c| read::session(c, &id))
            .await
            .map_err(|e| Error::internal("failed to get session", e))?
            .ok_or_else(|| Error::not_found("session_id", "session", session_id))?;
        let (reply, answer) = oneshot::channel();
        let sent = match self.live.lock().unwrap().get(session_id) {
            Some(handle) if row.status.is_active() => {
                handle.commands.send(Command::Interrupt(reply)).is_ok()
            }
            _ => false,
        };
        if !sent {
            return Err(cannot_interrupt(row.status));
        }
        // No answer: the session ended meanwhile.
        answer
            .await
            .unwrap_or(Err(cannot_interrupt(SessionStatus::Completed)))
    }

    /// Waits until a session has no live process (at most `timeout`).
    pub async fn wait_finished(&self, session_id: &str, timeout: Duration) -> bool {
        self.wait_until(session_id, timeout, false).await
    }

    /// Waits until a session's process is between turns, or gone (at most `timeout`).
    pub async fn wait_turn_ended(&self, session_id: &str, timeout: Duration) -> bool {
        self.wait_until(session_id, timeout, true).await
    }

    async fn wait_until(&self, session_id: &str, timeout: Duration, or_warm: bool) -> bool {
        let watched = self
            .live
            .lock()
            .unwrap()
            .get(session_id)
            .map(|h| (h.done.clone(), h.warm.subscribe()));
        let Some((mut done, mut warm)) = watched else {
            return true;
        };
        let ended = async {
            tokio::select! {
                _ = done.wait_for(|d| *d) => {}
                _ = warm.wait_for(|w| *w), if or_warm => {}
            }
        };
        tokio::time::timeout(timeout, ended).await.is_ok()
    }

    /// Drops a session's handle once its actor is done.
    fn forget(&self, session_id: &str) {
        self.live.lock().unwrap().remove(session_id);
    }

    /// Shutdown: interrupt every turn and close every process, kill the rest after `grace`,
    /// await their outcomes. Queued messages stay queued for the next start.
    pub async fn shutdown(&self, grace: Duration) {
        let commands: Vec<_> = self
            .live
            .lock()
            .unwrap()
            .values()
            .map(|h| h.commands.clone())
            .collect();
        if commands.is_empty() {
            return;
        }
        tracing::info!(
            count = commands.len(),
            "interrupting running sessions, closing warm ones"
        );
        for command in &commands {
            let _ = command.send(Command::Shutdown);
        }
        self.supervisors.close();
        if tokio::time::timeout(grace, self.supervisors.wait())
            .await
            .is_err()
        {
            for command in &commands {
                let _ = command.send(Command::Kill);
            }
            let _ = tokio::time::timeout(Duration::from_secs(2), self.supervisors.wait()).await;
        }
    }
}

/// Whether `server` is `humanlayer mcp claude_approvals`, directly or through `npx`.
fn is_humanlayer_approvals_server(server: &McpServer) -> bool {
    let program = server
        .command
        .as_deref()
        .and_then(|c| Path::new(c).file_name())
        .and_then(|n| n.to_str());
    let args = server.args.as_deref().unwrap_or_default();
    let rest = match program {
        Some("humanlayer") => args,
        // npx's first argument that is not an option is the package: `humanlayer[@version]`.
        Some("npx") => match args.iter().position(|a| !a.starts_with('-')) {
            Some(i) if args[i] == "humanlayer" || args[i].starts_with("humanlayer@") => {
                &args[i + 1..]
            }
            _ => return false,
        },
        _ => return false,
    };
    rest.windows(2).any(|w| w == ["mcp", "claude_approvals"])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(command: &str, args: &[&str]) -> McpServer {
        McpServer {
            command: Some(command.into()),
            args: Some(args.iter().map(|a| (*a).to_owned()).collect()),
            ..Default::default()
        }
    }

    #[test]
    fn only_humanlayers_own_approvals_server_is_recognised() {
        for yes in [
            server("npx", &["humanlayer", "mcp", "claude_approvals"]),
            server(
                "npx",
                &["-y", "humanlayer@latest", "mcp", "claude_approvals"],
            ),
            server("/usr/local/bin/humanlayer", &["mcp", "claude_approvals"]),
        ] {
            assert!(is_humanlayer_approvals_server(&yes), "{yes:?}");
        }
        for no in [
            server("npx", &["evil", "mcp", "claude_approvals"]),
            server("npx", &["evil", "humanlayer", "mcp", "claude_approvals"]),
            server("npx", &["humanlayer-fork", "mcp", "claude_approvals"]),
            server("npx", &["humanlayer", "mcp", "other"]),
            server("hld", &["mcp", "claude_approvals"]),
            server("sh", &["-c", "humanlayer mcp claude_approvals"]),
            McpServer::default(),
        ] {
            assert!(!is_humanlayer_approvals_server(&no), "{no:?}");
        }
    }
}
