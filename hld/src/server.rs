//! The server: the method table and its listeners (Unix socket, `--ws`, `--http`). Shutdown:
//! stop accepting → requests finish (2 s at most) while sessions are interrupted, then
//! killed → flush → unlink.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hld_client::protocol as p;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::approval;
use crate::claude;
use crate::clients;
use crate::config::Config;
use crate::daemon::Daemon;
use crate::handlers::{self, approvals, control, drafts, files, introspection, messages, sessions};
use crate::logging::LogControl;
use crate::notify::Notifier;
use crate::rpc::Router;
use crate::store::Store;
use crate::transport::{http, unix, websocket, Service};

/// How long in-flight requests get to finish at shutdown.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);
/// How long running sessions get to stop after SIGINT at shutdown, before SIGKILL.
pub const SESSION_GRACE: Duration = Duration::from_millis(1500);

/// Says, once at start-up, whether `claude` was found (probing its version now, so that the
/// first `health` does not wait), whether approvals can run, and how to launch a session.
async fn announce(daemon: Arc<Daemon>) {
    let claude = daemon.sessions.tools().await.claude.clone();
    let scripted = match (&claude.path, claude.available) {
        (Some(path), true) => {
            let version = claude.version.as_deref().unwrap_or("unknown version");
            tracing::info!(path = %path, %version, "claude CLI found");
            Path::new(path).file_name() == Some("fake-claude".as_ref())
        }
        _ => {
            let stand_in = clients::beside("fake-claude").map_or(String::new(), |fake| {
                format!(
                    "; or try hld without it, with the scripted stand-in: restart it with \
                     `--claude-path {}` (see the README)",
                    fake.display()
                )
            });
            tracing::warn!(
                "claude CLI not found: sessions cannot start until it is installed \
                 (npm install -g @anthropic-ai/claude-code) or named with --claude-path or \
                 HUMANLAYER_CLAUDE_PATH{stand_in}"
            );
            false
        }
    };
    let approvals = &daemon.config.approvals_command;
    match approvals.problem() {
        Some(problem) => tracing::error!(
            "{problem}: launches that need approvals will fail; fix --approvals-command \
             (HUMANLAYER_APPROVALS_COMMAND), or leave it unset to use hld's own server"
        ),
        None => tracing::info!(
            command = %approvals.path.display(),
            "approvals are asked through `{} mcp claude_approvals`",
            if approvals.configured { "the configured command" } else { "hld" }
        ),
    }
    let query = if scripted {
        "scenario:tool"
    } else {
        "write a haiku"
    };
    let watch =
        clients::command("hld-tui").map_or(String::new(), |tui| format!(", watch it with `{tui}`"));
    let (hlyr, path) = match (clients::command("hlyr"), clients::path_hint("hlyr")) {
        (None, _) => (
            "hlyr".to_owned(),
            "; build the clients first: cargo build --release --bin hlyr --bin hld-tui".into(),
        ),
        (Some(hlyr), Some(dir)) => (
            hlyr,
            format!(
                "; to type just `hlyr`: export PATH=\"{}:$PATH\"",
                dir.display()
            ),
        ),
        (Some(hlyr), None) => (hlyr, String::new()),
    };
    // Front ends started as this daemon was find it where they look; elsewhere, it is named.
    let socket = &daemon.config.socket;
    let found = hld_client::config::resolve_socket_path(None).is_ok_and(|s| s == *socket);
    let reach = match found {
        true => "they find this daemon at its socket".to_owned(),
        false => format!(
            "point them at this daemon with HUMANLAYER_DAEMON_SOCKET={}",
            socket.display()
        ),
    };
    tracing::info!(
        "ready: launch a session with `{hlyr} launch \"{query}\"`{watch}; {reach}{path}"
    );
}

/// Every method served; a `guest`'s table (editor, browser) has `shutdown` end only its connection.
pub fn router(guest: bool) -> Router<Daemon> {
    let mut r = Router::default();
    r.add::<p::Health, _, _>(introspection::health)
        .add::<p::Initialize, _, _>(introspection::initialize)
        .add::<p::Version, _, _>(introspection::version)
        .list::<p::ListMethods>()
        .describe::<p::DescribeMethods>()
        .add::<p::SetLogLevel, _, _>(introspection::set_log_level);
    match guest {
        true => r.close::<p::Shutdown>(&p::ShutdownResult {
            message: "Shutting down gracefully".into(),
        }),
        false => r.add::<p::Shutdown, _, _>(introspection::shutdown),
    };
    r.add::<p::LaunchSession, _, _>(sessions::launch_session)
        .add::<p::ListSessions, _, _>(sessions::list_sessions)
        .add::<p::GetSessionState, _, _>(sessions::get_session_state)
        .add::<p::GetConversation, _, _>(sessions::get_conversation)
        .add::<p::ContinueSession, _, _>(sessions::continue_session)
        .add::<p::InterruptSession, _, _>(sessions::interrupt_session)
        .add::<p::SendMessage, _, _>(messages::send_message)
        .add::<p::ListQueuedMessages, _, _>(messages::list_queued_messages)
        .add::<p::CancelQueuedMessage, _, _>(messages::cancel_queued_message)
        .add::<p::SuggestFiles, _, _>(files::suggest_files)
        .add::<p::FetchApprovals, _, _>(approvals::fetch_approvals)
        .add::<p::SendDecision, _, _>(approvals::send_decision)
        .add::<p::CreateApproval, _, _>(approvals::create_approval)
        .add::<p::GetApproval, _, _>(approvals::get_approval)
        .add::<p::UpdateSessionTitle, _, _>(control::update_session_title)
        .add::<p::ArchiveSession, _, _>(control::archive_session)
        .add::<p::BulkArchiveSessions, _, _>(control::bulk_archive_sessions)
        .add::<p::GetSessionLeaves, _, _>(control::get_session_leaves)
        .add::<p::UpdateSessionSettings, _, _>(control::update_session_settings)
        .add::<p::GetRateLimits, _, _>(handlers::limits::get_rate_limits)
        .add::<p::ListSlashCommands, _, _>(handlers::settings::list_slash_commands)
        .add::<p::GetRecentPaths, _, _>(control::get_recent_paths)
        .add::<p::SearchSessions, _, _>(control::search_sessions)
        .add::<p::DeleteSession, _, _>(control::delete_session)
        .add::<p::CreateDraft, _, _>(drafts::create_draft)
        .add::<p::UpdateDraft, _, _>(drafts::update_draft)
        .add::<p::LaunchDraft, _, _>(drafts::launch_draft)
        .add::<p::DiscardDraft, _, _>(drafts::discard_draft)
        .add::<p::RestoreDraft, _, _>(drafts::restore_draft)
        .add::<p::GetUsage, _, _>(handlers::usage::get_usage)
        .add::<p::GetSessionDiff, _, _>(handlers::worktrees::get_session_diff)
        .add::<p::MergeSession, _, _>(handlers::worktrees::merge_session)
        .add::<p::DiscardSession, _, _>(handlers::worktrees::discard_session)
        .subscribe::<p::Subscribe, _>(handlers::subscribe);
    r
}

pub async fn run(
    mut config: Config,
    log: LogControl,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let socket = unix::bind(&config.socket)?;
    // After the socket: its directory, where the token file lives, is checked by now.
    let ws = match &config.websocket {
        Some(ws) => Some(
            websocket::Listener::bind(ws, &config.ws_token_file())
                .await
                .map_err(anyhow::Error::msg)?,
        ),
        None => None,
    };
    let rest = match &config.http {
        Some(http) => Some(
            http::Listener::bind(http, &config.http_token_file())
                .await
                .map_err(anyhow::Error::msg)?,
        ),
        None => None,
    };
    // `health` reports the address bound (a port 0 asked for one); a port 0 is also announced
    // on stdout, where CodeLayer's desktop shell reads the port of the daemon it started.
    if let (Some(http), Some(rest)) = (config.http.as_mut(), &rest) {
        let any_port = http.address.port() == 0;
        http.address = rest.local_addr()?;
        if any_port {
            http::announce_port(http.address.port());
        }
    }
    if let (Some(config), Some(ws)) = (config.websocket.as_mut(), &ws) {
        config.address = ws.local_addr()?;
        config.tls_fingerprint = ws.fingerprint();
    }
    // Bound, so no other daemon serves this socket: what is in the run directory is left over.
    let run_dir = config.run_dir();
    match claude::command::clean_mcp_configs(&run_dir)? {
        0 => {}
        n => tracing::info!(removed = n, dir = %run_dir.display(), "removed leftover MCP configs"),
    }
    let store = Store::open(&config.database)?;
    let notifier = Notifier::connect(&config.notify)
        .await
        .map_err(anyhow::Error::msg)?;
    let daemon = Daemon::new(config, store, log, shutdown.clone(), notifier.channels())?;
    // A store that cannot be written now (a full disk) still serves what it holds.
    if let Err(e) = daemon.sessions.mark_orphans().await {
        tracing::error!(error = %e, "cannot mark the sessions a previous daemon left active: they show as they were until a restart that can write");
    }
    // After the orphans are marked: a restart does not notify of the sessions it found dead.
    let notifications = Notifier::subscribe(&daemon.bus);
    daemon.sessions.resume_queued().await?;
    daemon.worktrees.check_at_start(&daemon.store).await?;
    let poller = daemon.config.cloud.as_ref().and_then(|cloud| {
        tracing::info!(api = %cloud.base_url, "cloud approvals enabled");
        approval::cloud::spawn(
            &daemon.approvals,
            &daemon.store,
            cloud.poll,
            shutdown.clone(),
        )
    });
    tracing::info!(
        socket = %daemon.config.socket.display(),
        database = %daemon.config.database.display(),
        worktrees = %daemon.worktrees.root().display(),
        log = %daemon.config.log_file.as_deref().map_or("stderr".into(), |f| f.display().to_string()),
        version = %crate::handlers::VERSION,
        pid = std::process::id(),
        "daemon started"
    );
    tokio::spawn(announce(Arc::clone(&daemon)));
    tokio::spawn(notifier.run(
        notifications,
        daemon.bus.clone(),
        daemon.store.clone(),
        shutdown.clone(),
    ));
    tokio::spawn(approval::expiry::run(
        daemon.store.clone(),
        Arc::clone(&daemon.bypass_set),
        shutdown.clone(),
    ));
    tokio::spawn(crate::session::resume_at_resets(
        Arc::clone(&daemon.sessions),
        Arc::clone(&daemon.limit_set),
        shutdown.clone(),
    ));
    tokio::spawn(crate::memory::release_periodically(
        daemon.store.clone(),
        shutdown.clone(),
    ));

    let service = Arc::new(Service {
        router: router(false),
        guest: router(true),
        state: Arc::clone(&daemon),
        max_message: daemon.config.max_message_size,
        frame_timeout: daemon.config.frame_timeout,
        heartbeat: daemon.config.heartbeat_interval,
    });
    let connections = TaskTracker::new();
    // Connections end only once nothing accepts: a client whose connection ends then finds
    // no daemon, rather than one still answering.
    let closing = CancellationToken::new();
    let ws = ws.map(|ws| {
        let serve = ws.run(
            Arc::clone(&service),
            connections.clone(),
            shutdown.clone(),
            closing.clone(),
        );
        tokio::spawn(serve)
    });
    let rest = rest.map(|rest| {
        let serve = rest.run(
            Arc::clone(&daemon),
            connections.clone(),
            shutdown.clone(),
            closing.clone(),
        );
        tokio::spawn(serve)
    });
    unix::run(
        &socket.listener,
        &service,
        &connections,
        &shutdown,
        &closing,
    )
    .await;

    // 1. Stop accepting: no new connection from here on.
    let unix::BoundSocket { listener, file } = socket;
    drop(listener);
    if let Some(ws) = ws {
        // It stops at the same token, and drops its listener.
        let _ = ws.await;
    }
    if let Some(rest) = rest {
        let _ = rest.await;
    }
    closing.cancel();
    // 2–3. In-flight requests finish while running sessions are interrupted, then killed;
    //      their outcome is stored and published, then the bus closes the subscriptions.
    connections.close();
    let drain = async {
        if tokio::time::timeout(DRAIN_TIMEOUT, connections.wait())
            .await
            .is_err()
        {
            tracing::warn!("some connections did not finish within the drain timeout");
        }
    };
    let poller_stops = async {
        if let Some(poller) = poller {
            // It watches the same token; a poll in flight is abandoned.
            let _ = poller.await;
        }
    };
    let sessions_stop = async {
        daemon.sessions.shutdown(SESSION_GRACE).await;
        // Subscribers have the sessions' last events; their subscriptions end.
        daemon.store.published().await;
        daemon.bus.close();
    };
    tokio::join!(drain, sessions_stop, poller_stops);
    // 4. Flush the store, then remove the socket.
    if let Err(e) = daemon.store.close().await {
        tracing::error!(error = %e, "cannot close the database cleanly");
    }
    drop(file);
    tracing::info!("daemon shutdown complete");
    Ok(())
}
