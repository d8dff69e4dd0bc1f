//! Contexts: named daemons, as kubectl names its clusters. They live in
//! `$XDG_CONFIG_HOME/humanlayer/contexts.json`, which must be a private file of the user
//! (it names token files and which certificates to trust): one that others can read or write
//! is refused, whatever it holds. `local`, the daemon on this machine's socket, is always
//! there and is the default. `hlyr context` writes the file; `hlyr` and `hld-tui` read it
//! here.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::address::{Address, Remote, Token, Trust};
use crate::error::Error;

/// The context that is the local daemon.
pub const LOCAL: &str = "local";

/// The contexts file.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contexts {
    /// The one `hlyr context use` chose; `local` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    #[serde(default)]
    pub contexts: BTreeMap<String, Entry>,
}

/// One named daemon.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// `wss://HOST:PORT`, `ws://` to loopback, or a socket path.
    pub url: String,
    /// The file holding the daemon's WebSocket token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<PathBuf>,
    /// A PEM file of the root that signed the daemon's certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca: Option<PathBuf>,
    /// The SHA-256 fingerprint of the daemon's certificate, pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

impl Entry {
    /// Whether the daemon is reached over the network (a URL), not on a socket of this
    /// machine.
    pub fn is_remote(&self) -> bool {
        self.url.contains("://")
    }

    /// Where this context's daemon is; its token is read now.
    pub fn address(&self) -> Result<Address, Error> {
        if !self.is_remote() {
            return Ok(Address::Socket(PathBuf::from(&self.url)));
        }
        let trust = match (&self.ca, &self.fingerprint) {
            (Some(ca), _) => Trust::CaFile(ca.clone()),
            (None, Some(pin)) => Trust::Fingerprint(pin.parse()?),
            (None, None) => Trust::SystemRoots,
        };
        let token = match &self.token_file {
            Some(file) => Token::from_file(file)?,
            None => {
                return Err(Error::Address(format!(
                    "{}: no token file (add the context again with --token-file FILE)",
                    self.url
                )))
            }
        };
        Ok(Address::Remote(Remote::new(&self.url, token, trust)?))
    }
}

/// `$XDG_CONFIG_HOME/humanlayer/contexts.json`.
pub fn path() -> PathBuf {
    crate::config::config_file_path().with_file_name("contexts.json")
}

impl Contexts {
    /// The contexts file; empty when there is none.
    pub fn load() -> Result<Contexts, Error> {
        let path = path();
        let shown = path.display();
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Contexts::default()),
            Err(e) => return Err(Error::Address(format!("cannot read {shown}: {e}"))),
        };
        let me = nix::unistd::geteuid().as_raw();
        if !meta.file_type().is_file() || meta.uid() != me || meta.mode() & 0o077 != 0 {
            return Err(Error::Address(format!(
                "refusing {shown}: it must be a regular file of yours that nobody else can \
                 read or write (it names tokens and trusted certificates); chmod 600 it, \
                 after checking what it holds"
            )));
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::Address(format!("cannot read {shown}: {e}")))?;
        serde_json::from_str(&text).map_err(|e| Error::Address(format!("malformed {shown}: {e}")))
    }

    /// The name of the context in force: `flag` (`--context`, `HLD_CONTEXT`), else the one
    /// `hlyr context use` chose, else `local`.
    pub fn name_in_force(&self, flag: Option<&str>) -> String {
        flag.map(str::to_owned)
            .or_else(|| self.current.clone())
            .unwrap_or_else(|| LOCAL.to_owned())
    }

    /// The entry named `name`; `None` for `local`.
    pub fn get(&self, name: &str) -> Result<Option<&Entry>, Error> {
        if name == LOCAL {
            return Ok(None);
        }
        match self.contexts.get(name) {
            Some(entry) => Ok(Some(entry)),
            None => Err(Error::Address(format!(
                "no context named {name:?} (see `hlyr context list`)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_without_a_scheme_is_a_socket_and_a_remote_one_needs_its_token() {
        let socket = Entry {
            url: "/run/other/daemon.sock".into(),
            token_file: None,
            ca: None,
            fingerprint: None,
        };
        assert_eq!(
            socket.address().unwrap(),
            Address::Socket("/run/other/daemon.sock".into())
        );
        let remote = Entry {
            url: "wss://devbox:7777".into(),
            ..socket
        };
        assert!(remote.address().is_err());
    }

    #[test]
    fn the_flag_wins_over_the_chosen_context_which_wins_over_local() {
        let mut contexts = Contexts::default();
        assert_eq!(contexts.name_in_force(None), LOCAL);
        contexts.current = Some("devbox".into());
        assert_eq!(contexts.name_in_force(None), "devbox");
        assert_eq!(contexts.name_in_force(Some(LOCAL)), LOCAL);
        assert!(contexts.get(LOCAL).unwrap().is_none());
        let e = contexts.get("devbox").unwrap_err();
        assert!(e.to_string().contains("no context named"), "{e}");
    }
}
