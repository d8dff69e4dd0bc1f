//! Where the daemon's socket lives: the resolution order shared by the daemon and its clients.

use std::path::{Path, PathBuf};

/// The environment variable naming the socket.
pub const SOCKET_ENV: &str = "HUMANLAYER_DAEMON_SOCKET";

/// Expands a leading `~` or `~/` to `$HOME`.
pub fn expand_tilde(path: &str) -> PathBuf {
    match (path.strip_prefix('~'), std::env::var_os("HOME")) {
        (Some(""), Some(home)) => PathBuf::from(home),
        (Some(rest), Some(home)) if rest.starts_with('/') => {
            PathBuf::from(home).join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(path),
    }
}

/// `~/.humanlayer`, the daemon's home for its socket and database.
pub fn humanlayer_dir() -> PathBuf {
    expand_tilde("~/.humanlayer")
}

/// The one `humanlayer.json` read: `$XDG_CONFIG_HOME/humanlayer/humanlayer.json` (or
/// `~/.config/humanlayer/humanlayer.json`). A file in the current directory is not read: the
/// directory a command happens to run in (a cloned repository, a shared directory) is not the
/// user's choice of settings, and the file names programs to run as the user.
pub fn config_file_path() -> PathBuf {
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| expand_tilde("~/.config"));
    xdg.join("humanlayer").join("humanlayer.json")
}

/// The contents of `humanlayer.json`, `None` when there is none. A file that someone else
/// could have written ([`crate::trust::check_config_file`]) or that is not JSON is an error
/// saying why.
pub fn config_file() -> Result<Option<serde_json::Value>, String> {
    let path = config_file_path();
    if !path.exists() {
        return Ok(None);
    }
    read_config(&path).map(Some)
}

/// Reads a string key from `humanlayer.json`; see [`config_file`].
pub fn config_file_value(key: &str) -> Result<Option<String>, String> {
    Ok(config_file()?.and_then(|value| string_key(&value, key)))
}

fn read_config(path: &Path) -> Result<serde_json::Value, String> {
    crate::trust::check_config_file(path)?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read config file {}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("malformed config file {}: {e}", path.display()))
}

fn string_key(value: &serde_json::Value, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// Resolves the socket path: the explicit value (a flag), then `HUMANLAYER_DAEMON_SOCKET`,
/// then `daemon_socket` in `humanlayer.json`, then `~/.humanlayer/daemon.sock`.
pub fn resolve_socket_path(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(path) = explicit {
        return Ok(expand_tilde(&path.to_string_lossy()));
    }
    if let Some(env) = std::env::var_os(SOCKET_ENV).filter(|v| !v.is_empty()) {
        return Ok(expand_tilde(&env.to_string_lossy()));
    }
    if let Some(file) = config_file_value("daemon_socket")? {
        return Ok(expand_tilde(&file));
    }
    Ok(humanlayer_dir().join("daemon.sock"))
}

/// [`resolve_socket_path`] without a flag, for the clients' `connect_default`: a malformed
/// `humanlayer.json` is an [`std::io::ErrorKind::InvalidInput`] error.
pub(crate) fn default_socket_path() -> Result<PathBuf, crate::Error> {
    resolve_socket_path(None)
        .map_err(|e| crate::Error::Io(std::io::Error::new(std::io::ErrorKind::InvalidInput, e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tilde_expands_only_at_the_start() {
        let home = std::env::var("HOME").unwrap();
        assert_eq!(expand_tilde("~/x/y"), PathBuf::from(&home).join("x/y"));
        assert_eq!(expand_tilde("~"), PathBuf::from(&home));
        assert_eq!(expand_tilde("/a/~/b"), PathBuf::from("/a/~/b"));
        assert_eq!(expand_tilde("~user/x"), PathBuf::from("~user/x"));
    }

    #[test]
    fn explicit_path_wins() {
        let p = resolve_socket_path(Some(Path::new("/tmp/explicit.sock"))).unwrap();
        assert_eq!(p, PathBuf::from("/tmp/explicit.sock"));
    }

    #[test]
    fn config_key_is_read_and_malformed_file_is_an_error() {
        let dir = std::env::temp_dir().join(format!("hld-client-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.json");
        std::fs::write(&good, r#"{"daemon_socket":"/tmp/from-file.sock"}"#).unwrap();
        let value = read_config(&good).unwrap();
        assert_eq!(
            string_key(&value, "daemon_socket").as_deref(),
            Some("/tmp/from-file.sock")
        );
        let bad = dir.join("bad.json");
        std::fs::write(&bad, "{not json").unwrap();
        assert!(read_config(&bad).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
