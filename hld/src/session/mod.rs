//! Sessions: launching, continuing and interrupting `claude`, one supervisor task per live
//! process, and every status transition persisted and published.

mod process;
mod supervisor;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hld_client::protocol::{
    ApprovalsAvailability, ClaudeAvailability, Event, McpConfig, McpConfigParam, McpServer,
    SessionStatus,
};
use tokio::sync::watch;
use tokio_util::task::TaskTracker;

use crate::approval::server::{self, ApprovalsCommand};
use crate::bus::Bus;
use crate::claude::{self, LaunchSpec};
use crate::rpc::error::RpcError;
use crate::store::{NewSession, SessionUpdate, Store};

/// The name of the MCP server the daemon injects for approvals.
pub const APPROVALS_SERVER: &str = "approvals";
/// The permission-prompt tool the daemon injects.
pub const APPROVALS_TOOL: &str = "mcp__approvals__request_permission";

/// Settings of the session manager.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// An explicitly configured `claude`.
    pub claude_path: Option<PathBuf>,
    /// The daemon's socket, handed to MCP servers.
    pub socket: PathBuf,
    /// Where private MCP config files are written (created 0700).
    pub run_dir: PathBuf,
    /// How long an interrupted `claude` gets before SIGKILL.
    pub interrupt_grace: Duration,
    /// The command serving the approvals MCP server.
    pub approvals_command: ApprovalsCommand,
}

/// What a launch or continuation asks for, after inheritance and validation.
#[derive(Debug, Clone, Default)]
pub struct LaunchRequest {
    /// The prompt.
    pub query: String,
    /// Model.
    pub model: Option<String>,
    /// MCP servers requested by the client.
    pub mcp_config: Option<McpConfig>,
    /// Permission tool requested by the client.
    pub permission_prompt_tool: Option<String>,
    /// Absolute working directory.
    pub working_dir: PathBuf,
    /// `--max-turns`.
    pub max_turns: Option<i64>,
    /// `--system-prompt`.
    pub system_prompt: Option<String>,
    /// `--append-system-prompt`.
    pub append_system_prompt: Option<String>,
    /// Appended to the system prompt.
    pub custom_instructions: Option<String>,
    /// `--allowedTools`.
    pub allowed_tools: Option<Vec<String>>,
    /// `--disallowedTools`.
    pub disallowed_tools: Option<Vec<String>>,
    /// Opt out of the approvals server.
    pub no_approvals: bool,
    /// The parent, for continuations.
    pub parent_session_id: Option<String>,
    /// The Claude session to resume.
    pub resume: Option<String>,
}

/// A live process.
struct Active {
    run_id: String,
    pgid: u32,
    /// Set by `interruptSession`; decides the final status.
    interrupted: bool,
    /// Becomes true when the supervisor has stored the final status.
    done: watch::Receiver<bool>,
}

/// The session manager. Shared through `Arc`.
pub struct Sessions {
    config: SessionConfig,
    store: Store,
    bus: Bus,
    // A std Mutex: held only to read or change the map, never across an await.
    active: Mutex<HashMap<String, Active>>,
    supervisors: TaskTracker,
    claude_versions: Mutex<HashMap<PathBuf, Option<String>>>,
    /// The last answer of [`Sessions::claude`].
    claude_seen: Mutex<Option<ClaudeSeen>>,
}

/// Where `claude` was found and whether the approvals server can run, when, and the two as
/// `health`'s JSON members.
struct ClaudeSeen {
    at: Instant,
    found: ClaudeAvailability,
    json: Arc<str>,
}

/// How long [`Sessions::claude`] reuses its last answer: `health` stays a memory read, and a
/// `claude` (or approvals command) installed or removed shows within this time.
const CLAUDE_RECHECK: Duration = Duration::from_secs(1);

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions").finish_non_exhaustive()
    }
}

/// Parses `mcp_config` in either shape.
pub fn parse_mcp_config(param: Option<McpConfigParam>) -> Result<Option<McpConfig>, RpcError> {
    match param {
        None => Ok(None),
        Some(McpConfigParam::Object(c)) => Ok(Some(c)),
        Some(McpConfigParam::Json(s)) if s.trim().is_empty() => Ok(None),
        Some(McpConfigParam::Json(s)) => serde_json::from_str(&s).map(Some).map_err(|e| {
            RpcError::invalid_param(
                "mcp_config",
                "MCP config object or JSON string",
                "invalid JSON",
                format!("invalid mcp_config JSON: {e}"),
            )
        }),
    }
}

impl Sessions {
    /// A manager over `store`, publishing on `bus`.
    pub fn new(config: SessionConfig, store: Store, bus: Bus) -> Arc<Sessions> {
        Arc::new(Sessions {
            config,
            store,
            bus,
            active: Mutex::new(HashMap::new()),
            supervisors: TaskTracker::new(),
            claude_versions: Mutex::new(HashMap::new()),
            claude_seen: Mutex::new(None),
        })
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Sessions with a live process.
    pub fn active_count(&self) -> usize {
        self.active.lock().unwrap().len()
    }

    /// Where `claude` is, and its version (probed once per path). Looked up again at most once
    /// per [`CLAUDE_RECHECK`].
    pub async fn claude(&self) -> ClaudeAvailability {
        self.claude_seen(|seen| seen.found.clone()).await
    }

    /// `"claude":…,"approvals":…`: [`Sessions::claude`] and the approvals server's
    /// availability as JSON members, serialised once per lookup (for `health`).
    pub async fn tools_json(&self) -> Arc<str> {
        self.claude_seen(|seen| seen.json.clone()).await
    }

    async fn claude_seen<T>(&self, pick: impl Fn(&ClaudeSeen) -> T) -> T {
        if let Some(seen) = &*self.claude_seen.lock().unwrap() {
            if seen.at.elapsed() < CLAUDE_RECHECK {
                return pick(seen);
            }
        }
        // Boxed: the probe's future is large and rarely needed, so callers stay small.
        let found = Box::pin(self.find_claude()).await;
        let approvals = self.config.approvals_command.availability();
        let seen = ClaudeSeen {
            at: Instant::now(),
            json: tools_members(&found, &approvals).into(),
            found,
        };
        let picked = pick(&seen);
        *self.claude_seen.lock().unwrap() = Some(seen);
        picked
    }

    /// Locates `claude` on disk and probes its version once per path.
    async fn find_claude(&self) -> ClaudeAvailability {
        let Some(path) = claude::locate_claude(self.config.claude_path.as_deref()) else {
            return ClaudeAvailability {
                available: false,
                path: None,
                version: None,
            };
        };
        let cached = self.claude_versions.lock().unwrap().get(&path).cloned();
        let version = match cached {
            Some(v) => v,
            None => {
                let v = claude::claude_version(&path).await;
                self.claude_versions
                    .lock()
                    .unwrap()
                    .insert(path.clone(), v.clone());
                v
            }
        };
        ClaudeAvailability {
            available: true,
            path: Some(path.display().to_string()),
            version,
        }
    }

    /// Marks sessions a previous daemon left active as failed, and resolves every approval
    /// it left pending (their `claude` died with that daemon). Run before serving, so there is
    /// no one to tell.
    pub async fn mark_orphans(&self) -> anyhow::Result<()> {
        let orphans = self.store.mark_orphans("daemon restarted").await?;
        if !orphans.sessions.is_empty() {
            tracing::warn!(
                count = orphans.sessions.len(),
                "marked orphaned sessions as failed"
            );
        }
        if !orphans.expired.is_empty() {
            tracing::info!(
                count = orphans.expired.len(),
                "resolved the approvals of sessions that ended"
            );
        }
        Ok(())
    }

    /// Starts a session: stores it, spawns `claude`, and returns once the process runs.
    pub async fn launch(
        self: &Arc<Self>,
        req: LaunchRequest,
    ) -> Result<(String, String), RpcError> {
        let claude_path =
            claude::locate_claude(self.config.claude_path.as_deref()).ok_or_else(|| {
                RpcError::internal(
                    "claude CLI not found: install it or set HUMANLAYER_CLAUDE_PATH",
                    anyhow::anyhow!(
                        "claude not found (configured: {:?})",
                        self.config.claude_path
                    ),
                )
            })?;
        if needs_approvals_server(&req) {
            if let Some(problem) = self.config.approvals_command.problem() {
                return Err(RpcError::internal(
                    "the approvals MCP server cannot run (see `health`): fix \
                     --approvals-command, or launch with no_approvals",
                    anyhow::anyhow!(problem),
                ));
            }
        }
        let session_id = uuid::Uuid::new_v4().to_string();
        let run_id = uuid::Uuid::new_v4().to_string();

        let (mcp_for_claude, permission_tool) = self.effective_mcp(&req, &session_id, &run_id);
        let mcp_file = match &mcp_for_claude {
            Some(config) => Some(
                claude::write_mcp_config(&self.config.run_dir, config)
                    .map_err(|e| RpcError::internal("failed to write the MCP config", e))?,
            ),
            None => None,
        };
        let spec = LaunchSpec {
            query: req.query.clone(),
            model: req.model.clone(),
            mcp_config_file: mcp_file.clone(),
            permission_prompt_tool: permission_tool,
            max_turns: req.max_turns,
            system_prompt: req.system_prompt.clone(),
            append_system_prompt: req.append_system_prompt.clone(),
            custom_instructions: req.custom_instructions.clone(),
            allowed_tools: req.allowed_tools.clone().unwrap_or_default(),
            disallowed_tools: req.disallowed_tools.clone().unwrap_or_default(),
            resume: req.resume.clone(),
            fork_session: false,
        };

        let now = crate::time::now();
        let new = NewSession {
            id: session_id.clone(),
            run_id: run_id.clone(),
            parent_session_id: req.parent_session_id.clone(),
            query: req.query.clone(),
            summary: crate::store::summarize(&req.query),
            model: req.model.clone(),
            working_dir: Some(req.working_dir.display().to_string()),
            max_turns: req.max_turns,
            system_prompt: req.system_prompt.clone(),
            append_system_prompt: req.append_system_prompt.clone(),
            custom_instructions: req.custom_instructions.clone(),
            permission_prompt_tool: req.permission_prompt_tool.clone(),
            allowed_tools: req.allowed_tools.clone(),
            disallowed_tools: req.disallowed_tools.clone(),
            mcp_config: req.mcp_config.clone(),
            no_approvals: req.no_approvals,
            status: SessionStatus::Starting,
            created_at: now,
        };
        self.store
            .create_session(new)
            .await
            .map_err(|e| RpcError::internal("failed to store session in database", e))?;
        let child = match process::spawn(&claude_path, &spec, &req.working_dir) {
            Ok(child) => child,
            Err(e) => {
                let message = format!("failed to start claude: {}", e.kind());
                self.finish_failed_launch(&session_id, &run_id, &message)
                    .await;
                if let Some(f) = &mcp_file {
                    let _ = std::fs::remove_file(f);
                }
                return Err(RpcError::internal(
                    format!("failed to launch Claude session: {message}"),
                    e,
                ));
            }
        };
        let pgid = child.id().unwrap_or_default();
        let (done_tx, done_rx) = watch::channel(false);
        self.active.lock().unwrap().insert(
            session_id.clone(),
            Active {
                run_id: run_id.clone(),
                pgid,
                interrupted: false,
                done: done_rx,
            },
        );
        self.transition(
            &session_id,
            &run_id,
            SessionStatus::Running,
            SessionUpdate::default(),
            None,
        )
        .await;
        let ctx = supervisor::Context {
            sessions: Arc::clone(self),
            session_id: session_id.clone(),
            run_id: run_id.clone(),
            query: req.query.clone(),
            model_requested: req.model.is_some(),
            mcp_file,
            done: done_tx,
        };
        self.supervisors.spawn(supervisor::run(ctx, child));
        tracing::info!(session = %session_id, run = %run_id, pgid, "session launched");
        Ok((session_id, run_id))
    }

    /// The MCP config handed to Claude, and the permission tool: the request's servers, plus
    /// the approvals server unless the launch opts out or brings its own tool; every server
    /// gets the session's identity in its environment.
    fn effective_mcp(
        &self,
        req: &LaunchRequest,
        session_id: &str,
        run_id: &str,
    ) -> (Option<McpConfig>, Option<String>) {
        let mut config = req.mcp_config.clone().unwrap_or_default();
        let mut tool = req.permission_prompt_tool.clone();
        if needs_approvals_server(req) {
            config.mcp_servers.insert(
                APPROVALS_SERVER.to_owned(),
                McpServer {
                    command: Some(self.config.approvals_command.path.display().to_string()),
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
                self.config.socket.display().to_string(),
            );
        }
        (Some(config), tool)
    }

    async fn finish_failed_launch(&self, session_id: &str, run_id: &str, message: &str) {
        let update = SessionUpdate {
            error_message: Some(message.to_owned()),
            completed_at: Some(crate::time::now()),
            ..Default::default()
        };
        self.transition(
            session_id,
            run_id,
            SessionStatus::Failed,
            update,
            Some(message.to_owned()),
        )
        .await;
    }

    /// Persists a status change (with `update`) and publishes it. Returns the old status.
    pub async fn transition(
        &self,
        session_id: &str,
        run_id: &str,
        new_status: SessionStatus,
        mut update: SessionUpdate,
        error: Option<String>,
    ) -> Option<SessionStatus> {
        update.status = Some(new_status);
        // The store reads the old status and writes the new one in one transaction, so the
        // published `old_status` is exact even when transitions race.
        let change = match self.store.update_session(session_id, update).await {
            Ok(change) => change,
            Err(e) => {
                tracing::error!(session = %session_id, error = %e, "cannot persist status");
                return None;
            }
        };
        if change.old_status != new_status {
            self.publish_status(
                session_id,
                run_id,
                (change.old_status, new_status),
                change.session.new.parent_session_id,
                error,
            );
        }
        for expired in &change.expired {
            crate::approval::publish_decided(&self.bus, expired);
            tracing::info!(approval = %expired.approval.id, "approval resolved: its session ended");
        }
        Some(change.old_status)
    }

    /// Publishes a stored status change: the status before and after, as a pair.
    pub fn publish_status(
        &self,
        session_id: &str,
        run_id: &str,
        (old_status, new_status): (SessionStatus, SessionStatus),
        parent_session_id: Option<String>,
        error: Option<String>,
    ) {
        self.bus.publish(Event::SessionStatusChanged {
            session_id: session_id.to_owned(),
            run_id: run_id.to_owned(),
            old_status,
            new_status,
            parent_session_id,
            error,
        });
    }

    /// Interrupts a live session: SIGINT to `claude`, status `completing`, and SIGKILL to its
    /// process group after the grace period.
    pub async fn interrupt(self: &Arc<Self>, session_id: &str) -> Result<(), RpcError> {
        let row = self
            .store
            .get_session(session_id)
            .await
            .map_err(|e| RpcError::internal("failed to get session", e))?
            .ok_or_else(|| RpcError::not_found("session_id", "session", session_id))?;
        let (pgid, run_id) = {
            let mut active = self.active.lock().unwrap();
            match active.get_mut(session_id) {
                Some(a) if row.status.is_active() => {
                    a.interrupted = true;
                    (a.pgid, a.run_id.clone())
                }
                _ => {
                    return Err(RpcError::invalid_param(
                        "session_id",
                        "a running session",
                        row.status.as_str(),
                        format!(
                            "cannot interrupt session with status {} (must be running)",
                            row.status
                        ),
                    ))
                }
            }
        };
        process::interrupt(pgid);
        let update = SessionUpdate {
            interrupted: Some(true),
            ..Default::default()
        };
        self.transition(session_id, &run_id, SessionStatus::Completing, update, None)
            .await;
        let grace = self.config.interrupt_grace;
        let done = self.done_receiver(session_id);
        tokio::spawn(async move {
            if let Some(mut done) = done {
                if tokio::time::timeout(grace, done.wait_for(|d| *d))
                    .await
                    .is_err()
                {
                    tracing::warn!(pgid, "claude ignored SIGINT; killing its process group");
                    process::kill_group(pgid);
                }
            }
        });
        Ok(())
    }

    fn done_receiver(&self, session_id: &str) -> Option<watch::Receiver<bool>> {
        self.active
            .lock()
            .unwrap()
            .get(session_id)
            .map(|a| a.done.clone())
    }

    /// Waits until a session has no live process (at most `timeout`).
    pub async fn wait_finished(&self, session_id: &str, timeout: Duration) -> bool {
        match self.done_receiver(session_id) {
            None => true,
            Some(mut done) => tokio::time::timeout(timeout, done.wait_for(|d| *d))
                .await
                .is_ok(),
        }
    }

    /// Whether `interruptSession` was called for this live session.
    fn was_interrupted(&self, session_id: &str) -> bool {
        self.active
            .lock()
            .unwrap()
            .get(session_id)
            .is_some_and(|a| a.interrupted)
    }

    fn forget(&self, session_id: &str) {
        self.active.lock().unwrap().remove(session_id);
    }

    /// Daemon shutdown: interrupt every live session, wait up to `grace`, kill the rest, and
    /// wait for their supervisors to store the outcome.
    pub async fn shutdown(&self, grace: Duration) {
        let live: Vec<(String, u32)> = {
            let mut active = self.active.lock().unwrap();
            active
                .iter_mut()
                .map(|(id, a)| {
                    a.interrupted = true;
                    (id.clone(), a.pgid)
                })
                .collect()
        };
        if live.is_empty() {
            return;
        }
        tracing::info!(count = live.len(), "interrupting running sessions");
        for (_, pgid) in &live {
            process::interrupt(*pgid);
        }
        self.supervisors.close();
        if tokio::time::timeout(grace, self.supervisors.wait())
            .await
            .is_err()
        {
            for (id, pgid) in &live {
                tracing::warn!(session = %id, "killing session that outlived the grace period");
                process::kill_group(*pgid);
            }
            let _ = tokio::time::timeout(Duration::from_secs(2), self.supervisors.wait()).await;
        }
    }
}

/// Publishes a stored conversation event.
pub fn publish_conversation(
    bus: &Bus,
    session_id: &str,
    run_id: &str,
    event: hld_client::protocol::ConversationEvent,
) {
    bus.publish(Event::ConversationUpdated {
        session_id: session_id.to_owned(),
        run_id: run_id.to_owned(),
        claude_session_id: event.claude_session_id.clone(),
        event: Box::new(event),
    });
}

/// `"claude":…,"approvals":…`, the members of `health` that say what the daemon found.
pub fn tools_members(claude: &ClaudeAvailability, approvals: &ApprovalsAvailability) -> String {
    format!(
        "\"claude\":{},\"approvals\":{}",
        serde_json::to_string(claude).expect("an availability serialises"),
        serde_json::to_string(approvals).expect("an availability serialises"),
    )
}

/// Whether a launch gets the daemon's approvals server: unless it opts out or brings its own
/// permission-prompt tool.
fn needs_approvals_server(req: &LaunchRequest) -> bool {
    req.permission_prompt_tool.is_none() && !req.no_approvals
}

/// Resolves and checks a working directory: absolute, existing.
pub fn resolve_working_dir(requested: Option<&str>) -> Result<PathBuf, RpcError> {
    let path = match requested.filter(|s| !s.is_empty()) {
        Some(dir) => hld_client::config::expand_tilde(dir),
        None => std::env::current_dir()
            .map_err(|e| RpcError::internal("cannot read the daemon's working directory", e))?,
    };
    let absolute = if path.is_absolute() {
        path
    } else {
        std::env::current_dir()
            .map_err(|e| RpcError::internal("cannot read the daemon's working directory", e))?
            .join(path)
    };
    if !absolute.is_dir() {
        return Err(RpcError::invalid_param(
            "working_dir",
            "an existing directory",
            &absolute.display().to_string(),
            format!("working_dir does not exist: {}", absolute.display()),
        ));
    }
    Ok(absolute)
}
