//! The small calls a launcher and the settings page make: user settings, recent paths, the
//! `claude` in use, which providers have a key, a directory's state (and making one), the slash
//! commands known for a directory, and the debugging panel's database figures.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hld_client::config::expand_tilde;
use hld_client::protocol::{GetRecentPathsParams, NoParams, SessionIdParams, SlashCommandKind};
use hyper::StatusCode;
use serde::Deserialize;
use serde_json::{json, Value};

use super::api::{blocking, data, domain, invalid, Call};
use super::guard::{json, Refusal};
use super::Reply;
use crate::daemon::Daemon;
use crate::handlers::{control, introspection, sessions, settings};
use crate::store::settings::UserSettings;

/// The most recent paths one call may ask for.
const MAX_RECENT_PATHS: i64 = 100;

/// The reply to `call` if it is one of these routes.
pub async fn route(call: &Call<'_>, daemon: &Arc<Daemon>) -> Option<Result<Reply, Refusal>> {
    let reply = match (call.method.as_str(), call.segments.as_slice()) {
        ("GET", ["user-settings"]) => user_settings(daemon).await,
        ("PATCH", ["user-settings"]) => set_user_settings(daemon, call).await,
        ("GET", ["recent-paths"]) => recent_paths(daemon, call.query.get("limit")).await,
        ("GET", ["config"]) => Ok(config(daemon).await),
        ("GET", ["config", "status"]) => Ok(config_status()),
        ("GET", ["debug-info"]) => debug_info(daemon).await,
        ("POST", ["validate-directory"]) => validate_directory(call).await,
        ("POST", ["directories"]) => create_directory(call).await,
        ("GET", ["slash-commands"]) => slash_commands(daemon, call).await,
        _ => return None,
    };
    Some(reply)
}

/// `GET /user-settings`: those set, else the defaults (no advanced providers, telemetry not
/// chosen: omitted, so CodeLayer asks once), as of the daemon's start.
async fn user_settings(daemon: &Daemon) -> Result<Reply, Refusal> {
    let set = settings::user_settings(daemon).await.map_err(domain)?;
    Ok(data(StatusCode::OK, user_settings_shape(daemon, set)))
}

/// The body of `PATCH /user-settings`.
#[derive(Deserialize)]
struct UserSettingsPatch {
    advanced_providers: Option<bool>,
    opt_in_telemetry: Option<bool>,
}

/// `PATCH /user-settings`: sets those given (kept across restarts) → the settings now.
async fn set_user_settings(daemon: &Daemon, call: &Call<'_>) -> Result<Reply, Refusal> {
    let patch: UserSettingsPatch = call.json()?;
    let set = settings::set_user_settings(daemon, patch.advanced_providers, patch.opt_in_telemetry)
        .await
        .map_err(domain)?;
    Ok(data(StatusCode::OK, user_settings_shape(daemon, Some(set))))
}

/// The reference's shape of the user's settings (`opt_in_telemetry` omitted until chosen);
/// none set yet, the defaults as of the daemon's start.
fn user_settings_shape(daemon: &Daemon, set: Option<UserSettings>) -> Value {
    let set = set.unwrap_or_else(|| UserSettings {
        advanced_providers: false,
        opt_in_telemetry: None,
        created_at: daemon.started_at.clone(),
        updated_at: daemon.started_at.clone(),
    });
    let mut shape = json!({
        "advanced_providers": set.advanced_providers,
        "created_at": set.created_at,
        "updated_at": set.updated_at,
    });
    if let Some(chosen) = set.opt_in_telemetry {
        shape["opt_in_telemetry"] = Value::from(chosen);
    }
    shape
}

/// `GET /recent-paths?limit=`: `getRecentPaths`, `limit` 1–100 (default 20).
async fn recent_paths(daemon: &Arc<Daemon>, limit: Option<&str>) -> Result<Reply, Refusal> {
    let limit = match limit {
        None => None,
        Some(text) => match text.parse::<i64>() {
            Ok(n) if (1..=MAX_RECENT_PATHS).contains(&n) => Some(n),
            _ => {
                return Err(invalid(format!(
                    "limit must be a whole number from 1 to {MAX_RECENT_PATHS}, not {text:?}"
                )))
            }
        },
    };
    let found = control::get_recent_paths(Arc::clone(daemon), GetRecentPathsParams { limit })
        .await
        .map_err(domain)?;
    Ok(data(StatusCode::OK, found.paths))
}

/// `GET /config`: the `claude` configured (empty: found on `PATH`), the one found, and
/// whether there is one. Read-only: the binary is chosen where hld starts.
async fn config(daemon: &Daemon) -> Reply {
    let configured = daemon.config.claude_path.as_ref();
    let found = daemon.sessions.tools().await.claude;
    json(
        StatusCode::OK,
        &json!({
            "claude_path": configured.map(|p| p.display().to_string()).unwrap_or_default(),
            "claude_detected_path": found.path.unwrap_or_default(),
            "claude_available": found.available,
        }),
    )
}

/// `GET /config/status`: whether the proxy providers' keys are in the daemon's environment
/// (`OPENROUTER_API_KEY`, `BASETEN_API_KEY`, set and not empty); the keys never leave it.
fn config_status() -> Reply {
    let configured = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    json(
        StatusCode::OK,
        &json!({
            "openrouter": {"api_key_configured": configured("OPENROUTER_API_KEY")},
            "baseten": {"api_key_configured": configured("BASETEN_API_KEY")},
        }),
    )
}

/// `GET /debug-info`: the database file, its size, tables and main rows, and the `claude`
/// the daemon runs (as `cli_command`).
async fn debug_info(daemon: &Daemon) -> Result<Reply, Refusal> {
    let db = introspection::database_info(daemon).await.map_err(domain)?;
    let stats: serde_json::Map<String, Value> = db
        .rows
        .into_iter()
        .map(|(name, n)| (name.to_owned(), n.into()))
        .collect();
    let claude = daemon.sessions.tools().await.claude.path;
    Ok(json(
        StatusCode::OK,
        &json!({
            "path": db.path.display().to_string(),
            "size": db.size,
            "table_count": db.tables,
            "stats": stats,
            "cli_command": claude.unwrap_or_default(),
            "last_modified": db.last_modified,
        }),
    ))
}

#[derive(Deserialize)]
struct DirectoryBody {
    path: Option<String>,
}

impl DirectoryBody {
    /// The path asked for, `~` expanded and a relative one taken from the daemon's directory;
    /// a missing or blank one is refused.
    fn expanded(self) -> Result<PathBuf, Refusal> {
        let Some(path) = self.path.filter(|p| !p.trim().is_empty()) else {
            return Err(invalid("path is required"));
        };
        Ok(expand(&path))
    }
}

/// `path` with `~` expanded, absolute (from the daemon's directory); as given if that fails.
fn expand(path: &str) -> PathBuf {
    std::path::absolute(expand_tilde(path)).unwrap_or_else(|_| path.into())
}

/// `POST /validate-directory {path}`: whether it exists and is a directory, or else whether
/// it could be made.
async fn validate_directory(call: &Call<'_>) -> Result<Reply, Refusal> {
    let path = call.json::<DirectoryBody>()?.expanded()?;
    let state = blocking(move || directory_state(&path)).await?;
    Ok(json(StatusCode::OK, &state))
}

/// `POST /directories {path}`: `mkdir -p` (mode 0777 less the umask, as `mkdir` makes it) →
/// `{path, created}`, the path made absolute and whether it was missing. A failure (a file in
/// the way, no permission) is 500 `CREATE_DIRECTORY_FAILED` with an empty message, as upstream
/// answers it; the reason is logged.
async fn create_directory(call: &Call<'_>) -> Result<Reply, Refusal> {
    let path = call.json::<DirectoryBody>()?.expanded()?;
    let made = blocking(move || {
        let created = !path.is_dir();
        std::fs::create_dir_all(&path).map(|()| (path, created))
    })
    .await?;
    match made {
        Ok((path, created)) => Ok(json(
            StatusCode::OK,
            &json!({"path": path.display().to_string(), "created": created}),
        )),
        Err(e) => {
            tracing::warn!(error = %e, "POST /directories: cannot make the directory");
            Err(Refusal::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "CREATE_DIRECTORY_FAILED",
                "",
            ))
        }
    }
}

/// The reply of `validate-directory` for `expanded`.
fn directory_state(expanded: &Path) -> Value {
    let mut state = json!({"expandedPath": expanded.display().to_string()});
    match std::fs::metadata(expanded) {
        Ok(meta) => {
            state["exists"] = true.into();
            state["isDirectory"] = meta.is_dir().into();
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            state["exists"] = false.into();
            state["canCreate"] = can_create(expanded).into();
        }
        Err(e) => {
            state["exists"] = false.into();
            state["error"] = e.to_string().into();
        }
    }
    state
}

/// Whether `path` could be made: its nearest existing ancestor is a directory this user may
/// write to.
fn can_create(path: &Path) -> bool {
    let existing = path.ancestors().skip(1).find(|a| a.exists());
    existing
        .is_some_and(|a| a.is_dir() && rustix::fs::access(a, rustix::fs::Access::WRITE_OK).is_ok())
}

/// `GET /slash-commands?working_dir=&query=`: `listSlashCommands` of the newest session
/// started in that directory (what its `claude` reported), commands and skills whose name
/// holds `query`; `source` is `local` for those of the directory's `.claude/commands`.
async fn slash_commands(daemon: &Arc<Daemon>, call: &Call<'_>) -> Result<Reply, Refusal> {
    let Some(dir) = call.query.get("working_dir").filter(|d| !d.is_empty()) else {
        return Err(invalid("working_dir is required"));
    };
    let dir: PathBuf = expand_tilde(dir);
    let wanted = call.query.get("query").unwrap_or("").to_lowercase();
    let listed = sessions::list_sessions(Arc::clone(daemon), NoParams {})
        .await
        .map_err(domain)?;
    let newest = listed
        .sessions
        .into_iter()
        .filter(|s| s.claude_session_id.is_some())
        .filter(|s| s.working_dir.as_deref().map(Path::new) == Some(dir.as_path()))
        .max_by(|a, b| a.start_time.cmp(&b.start_time));
    let Some(session) = newest else {
        return Ok(data(StatusCode::OK, json!([])));
    };
    let params = SessionIdParams {
        session_id: session.id,
    };
    let commands = settings::list_slash_commands(Arc::clone(daemon), params)
        .await
        .map_err(domain)?
        .commands;
    let local = dir.join(".claude").join("commands");
    let shown: Vec<Value> = commands
        .iter()
        .filter(|c| c.kind != SlashCommandKind::Agent)
        .filter(|c| c.name.to_lowercase().contains(&wanted))
        .map(|c| {
            let source = if local.join(format!("{}.md", c.name)).is_file() {
                "local"
            } else {
                "global"
            };
            json!({"name": format!("/{}", c.name), "source": source})
        })
        .collect();
    Ok(data(StatusCode::OK, shown))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_found_or_could_be_made() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().display().to_string();
        let there = directory_state(&expand(&root));
        assert_eq!(there["exists"], true);
        assert_eq!(there["isDirectory"], true);
        assert_eq!(there["expandedPath"], root.as_str());
        let deep = directory_state(&expand(&format!("{root}/a/b")));
        assert_eq!(deep["exists"], false);
        assert_eq!(deep["canCreate"], true);
        std::fs::write(dir.path().join("file"), "x").unwrap();
        let file = directory_state(&expand(&format!("{root}/file")));
        assert_eq!(file["isDirectory"], false);
        let under_file = directory_state(&expand(&format!("{root}/file/sub")));
        assert_eq!(under_file["exists"], false);
        assert!(under_file["error"].is_string(), "{under_file}");
    }
}
