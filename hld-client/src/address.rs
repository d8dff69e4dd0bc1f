//! Where a daemon is: its Unix socket, or a `wss://` (or loopback `ws://`) URL with the token
//! and the certificate check that reaching it needs.
//!
//! ```no_run
//! use hld_client::address::{Address, Remote, Token, Trust};
//!
//! # async fn demo() -> Result<(), hld_client::Error> {
//! let trust = Trust::Fingerprint("AB:CD:…".parse()?);
//! let token = Token::from_file("/home/me/.config/humanlayer/devbox.token")?;
//! let devbox = Address::Remote(Remote::new("wss://devbox:7777", token, trust)?);
//! let client = hld_client::Client::connect_to(&devbox).await?;
//! println!("{} sessions on {devbox}", client.list_sessions().await?.len());
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::net::IpAddr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use tokio_tungstenite::tungstenite::http::Uri;

use crate::error::Error;

/// Where a daemon listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// Its Unix socket, on this machine.
    Socket(PathBuf),
    /// Its WebSocket (`hld --ws`), on this machine or another.
    Remote(Remote),
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Socket(path) => write!(f, "{}", path.display()),
            Address::Remote(remote) => f.write_str(&remote.url),
        }
    }
}

impl Address {
    /// Whether `self` and `other` reach the same daemon: the same socket file (through
    /// symbolic links, even before it exists), or the same host and port.
    pub fn same_daemon(&self, other: &Address) -> bool {
        match (self, other) {
            (Address::Socket(a), Address::Socket(b)) => resolved(a) == resolved(b),
            (Address::Remote(a), Address::Remote(b)) => {
                a.host.eq_ignore_ascii_case(&b.host) && a.port == b.port
            }
            _ => false,
        }
    }
}

/// `path` with its directory's symbolic links resolved, when that directory exists.
fn resolved(path: &Path) -> PathBuf {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = parent.map_or_else(|| std::fs::canonicalize("."), std::fs::canonicalize);
    match (dir, path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => path.to_path_buf(),
    }
}

/// A daemon's WebSocket: its URL, the token it wants, and how its certificate is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    url: String,
    host: String,
    port: u16,
    tls: bool,
    token: Token,
    trust: Trust,
}

impl Remote {
    /// Checks `url`: `wss://host[:port][/path]`, or `ws://` to a loopback address only (the
    /// token would cross a network in clear). The port defaults to 443 (`wss`) or 80 (`ws`).
    pub fn new(url: &str, token: Token, trust: Trust) -> Result<Remote, Error> {
        let bad = |why: &str| Error::Address(format!("{url}: {why}"));
        let uri: Uri = url
            .parse()
            .map_err(|_| bad("not a URL; write wss://HOST:PORT"))?;
        let tls = match uri.scheme_str() {
            Some("wss") => true,
            Some("ws") => false,
            _ => return Err(bad("the scheme must be wss:// (or ws:// to loopback)")),
        };
        let host = uri
            .host()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| bad("no host"))?;
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        if !tls && !is_loopback(&host) {
            return Err(bad(
                "ws:// would send the token in clear: use wss:// (the daemon's --ws-tls-cert)",
            ));
        }
        let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
        Ok(Remote {
            url: url.to_owned(),
            host,
            port,
            tls,
            token,
            trust,
        })
    }

    /// The URL as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The host name or IP address (without IPv6 brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The TCP port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether the connection is TLS (`wss://`).
    pub fn tls(&self) -> bool {
        self.tls
    }

    /// How the certificate is checked.
    pub fn trust(&self) -> &Trust {
        &self.trust
    }

    pub(crate) fn token(&self) -> &Token {
        &self.token
    }
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The WebSocket token (`daemon.ws-token` on the daemon's machine). Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl Token {
    /// The token `text`, trimmed; refused when empty or not a plain header value.
    pub fn new(text: &str) -> Result<Token, Error> {
        let token = text.trim();
        if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(Error::Address(
                "a token is one line of printable characters".into(),
            ));
        }
        Ok(Token(token.to_owned()))
    }

    /// The token in `path`, which must be a file of this user that nobody else can read or
    /// write (as the daemon makes `daemon.ws-token`).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Token, Error> {
        let path = path.as_ref();
        let shown = path.display();
        let meta = std::fs::metadata(path)
            .map_err(|e| Error::Address(format!("cannot read the token file {shown}: {e}")))?;
        if meta.uid() != nix::unistd::geteuid().as_raw() || meta.mode() & 0o077 != 0 {
            return Err(Error::Address(format!(
                "the token file {shown} must be yours and private: chmod 600 {shown}"
            )));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Address(format!("cannot read the token file {shown}: {e}")))?;
        Token::new(&text).map_err(|e| Error::Address(format!("{shown}: {e}")))
    }

    /// The token in the environment variable `name`.
    pub fn from_env(name: &str) -> Result<Token, Error> {
        let text = std::env::var(name)
            .map_err(|_| Error::Address(format!("the environment variable {name} is not set")))?;
        Token::new(&text).map_err(|e| Error::Address(format!("{name}: {e}")))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// How a daemon's TLS certificate is checked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Trust {
    /// Signed for the host by a root the operating system trusts.
    #[default]
    SystemRoots,
    /// Signed for the host by a root in this PEM file.
    CaFile(PathBuf),
    /// Exactly this certificate (a self-signed one), whatever names it holds.
    Fingerprint(Fingerprint),
}

/// A certificate's SHA-256 fingerprint (of its DER bytes), as
/// `openssl x509 -noout -fingerprint -sha256` prints it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// The fingerprint of a certificate's DER bytes.
    pub fn of(der: &[u8]) -> Fingerprint {
        let digest = ring::digest::digest(&ring::digest::SHA256, der);
        let mut bytes = [0u8; 32];
        bytes.copy_from_slice(digest.as_ref());
        Fingerprint(bytes)
    }
}

impl fmt::Display for Fingerprint {
    /// Upper-case hex pairs joined by colons, as openssl prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pairs: Vec<String> = self.0.iter().map(|b| format!("{b:02X}")).collect();
        f.write_str(&pairs.join(":"))
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

impl FromStr for Fingerprint {
    type Err = Error;

    /// 64 hex digits, any case, colons optional; openssl's `sha256 Fingerprint=` (or
    /// `SHA256 Fingerprint=`) before them is allowed.
    fn from_str(text: &str) -> Result<Fingerprint, Error> {
        let text = text.trim();
        let text = match text.split_once('=') {
            Some((label, rest)) if label.to_ascii_lowercase().contains("fingerprint") => rest,
            _ => text,
        };
        let digits: Vec<u8> = text.bytes().filter(|&b| b != b':').collect();
        let bad = || {
            Error::Address(format!(
                "not a SHA-256 fingerprint: {text:?} (64 hex digits, colons optional)"
            ))
        };
        if digits.len() != 64 {
            return Err(bad());
        }
        let mut bytes = [0u8; 32];
        for (byte, pair) in bytes.iter_mut().zip(digits.chunks(2)) {
            let pair = std::str::from_utf8(pair).map_err(|_| bad())?;
            *byte = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
        }
        Ok(Fingerprint(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token() -> Token {
        Token::new("0123456789abcdef").unwrap()
    }

    #[test]
    fn the_same_daemon_is_told_through_links_and_host_names_case() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        let socket = |p: &str| Address::Socket(dir.path().join(p));
        assert!(socket("real/d.sock").same_daemon(&socket("link/d.sock")));
        assert!(socket("real/./d.sock").same_daemon(&socket("real/d.sock")));
        assert!(!socket("real/d.sock").same_daemon(&socket("real/e.sock")));
        let remote = |url: &str| {
            let trust = Trust::SystemRoots;
            Address::Remote(Remote::new(url, token(), trust).unwrap())
        };
        assert!(remote("wss://DevBox:7777").same_daemon(&remote("wss://devbox:7777/")));
        assert!(remote("wss://devbox").same_daemon(&remote("wss://devbox:443")));
        assert!(!remote("wss://devbox:7777").same_daemon(&remote("wss://devbox:7778")));
        assert!(!socket("real/d.sock").same_daemon(&remote("wss://devbox:7777")));
    }

    #[test]
    fn fingerprints_read_as_openssl_prints_them_with_or_without_colons() {
        let hex = "5F:1A:00:FF:".repeat(8);
        let colons = hex.trim_end_matches(':').to_owned();
        let expected: Fingerprint = colons.parse().unwrap();
        let plain = colons.replace(':', "").to_ascii_lowercase();
        assert_eq!(plain.parse::<Fingerprint>().unwrap(), expected);
        let openssl = format!("sha256 Fingerprint={colons}");
        assert_eq!(openssl.parse::<Fingerprint>().unwrap(), expected);
        assert_eq!(expected.to_string(), colons);
        for bad in ["", "AB:CD", &format!("{plain}00"), &plain.replace('5', "g")] {
            assert!(bad.parse::<Fingerprint>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_fingerprint_is_sha256_of_the_der_bytes() {
        // SHA-256 of the empty input.
        let empty = "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855";
        assert_eq!(Fingerprint::of(b""), empty.parse().unwrap());
    }

    #[test]
    fn wss_anywhere_and_ws_only_to_loopback() {
        let wss = Remote::new("wss://devbox.example:7777", token(), Trust::SystemRoots).unwrap();
        assert_eq!(
            (wss.host(), wss.port(), wss.tls()),
            ("devbox.example", 7777, true)
        );
        let v6 = Remote::new("ws://[::1]:9/", token(), Trust::SystemRoots).unwrap();
        assert_eq!((v6.host(), v6.port(), v6.tls()), ("::1", 9, false));
        Remote::new("ws://localhost:9", token(), Trust::SystemRoots).unwrap();
        Remote::new("ws://127.0.0.2:9", token(), Trust::SystemRoots).unwrap();
        let e = Remote::new("ws://10.0.0.5:7777", token(), Trust::SystemRoots).unwrap_err();
        assert!(e.to_string().contains("in clear"), "{e}");
        for bad in ["http://x:1", "devbox:7777", "wss://:7777"] {
            assert!(
                Remote::new(bad, token(), Trust::SystemRoots).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_token_never_shows_in_debug_output() {
        let remote = Remote::new("wss://h:1", token(), Trust::SystemRoots).unwrap();
        assert!(!format!("{remote:?}").contains("0123456789abcdef"));
        assert!(Token::new(" \n").is_err());
        assert!(Token::new("two words").is_err());
    }

    #[test]
    fn a_token_file_others_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t");
        std::fs::write(&file, "0123456789abcdef\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(Token::from_file(&file).unwrap(), token());
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        let e = Token::from_file(&file).unwrap_err();
        assert!(e.to_string().contains("chmod 600"), "{e}");
    }
}
