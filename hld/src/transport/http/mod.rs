//! The REST transport (`--http`) for CodeLayer: hyper's HTTP/1 server on loopback. Who may ask
//! is [`guard`]'s; what is served, [`api`]'s. No request path is logged: it holds the secret.

pub mod api;
mod approvals;
mod conversation;
mod edits;
mod events;
pub mod guard;
mod gzip;
mod launches;
mod mentions;
mod sessions;
mod settings;
mod shapes;
mod share;

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use self::guard::Policy;
use super::accept_until;
use super::tls::{self, Tls, TlsFiles};
use crate::config::millis;
use crate::daemon::Daemon;
use crate::transport::websocket::handshake::load_or_create_token;

/// A response body: whole JSON, or a stream of events.
pub type Body = BoxBody<Bytes, std::convert::Infallible>;
/// A response.
pub type Reply = Response<Body>;

/// CodeLayer's own origins: the desktop app (both Tauri schemes) and its dev server.
pub const DEFAULT_ORIGINS: [&str; 3] = [
    "tauri://localhost",
    "http://tauri.localhost",
    "http://localhost:1420",
];
/// How long a client may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The most bytes of request line and headers buffered.
const MAX_HEADERS: usize = 64 * 1024;

/// The REST transport's command-line flags (heading "HTTP" of `hld --help`).
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "HTTP")]
pub struct HttpArgs {
    /// Serve CodeLayer's REST API on this loopback address, e.g. 127.0.0.1:7777 (port 0: a
    /// free port, printed as the line HTTP_PORT=<port>, stdout's first), under
    /// /t/<secret>/api/v1 (the secret is in daemon.http-token next to the socket, made 0600
    /// at first use; `hlyr daemon url` prints the URL) [default: http_address in humanlayer.json].
    /// Loopback only, unless --http-allow-remote.
    #[arg(long = "http", value_name = "ADDR")]
    pub http: Option<String>,
    /// Allow an --http address other machines can reach. Needs TLS (--http-tls-cert and
    /// --http-tls-key), so that the secret never crosses the network in clear.
    #[arg(long)]
    pub http_allow_remote: bool,
    /// PEM certificate chain: serve https:// instead of http:// [default: http_tls_cert in
    /// humanlayer.json]. The Host header may then also name what the certificate is for.
    #[arg(long, value_name = "PATH")]
    pub http_tls_cert: Option<PathBuf>,
    /// The certificate's PEM private key [default: http_tls_key in humanlayer.json].
    #[arg(long, value_name = "PATH")]
    pub http_tls_key: Option<PathBuf>,
    /// A browser origin allowed to call the API (repeat for more), besides CodeLayer's own:
    /// tauri://localhost, http://tauri.localhost, http://localhost:1420.
    #[arg(long = "http-allowed-origin", value_name = "ORIGIN")]
    pub http_allowed_origins: Vec<String>,
    /// The most HTTP connections open at once; more are answered 503 and closed.
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub http_max_connections: usize,
    /// Milliseconds between the event stream's keepalive comments.
    #[arg(long, default_value_t = millis(events::KEEPALIVE), value_name = "MS", hide = true)]
    pub http_keepalive_ms: u64,
}

/// The REST transport, resolved.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    pub address: SocketAddr,
    /// The certificate and key files, for https://.
    pub tls: Option<TlsFiles>,
    /// Browser origins allowed (lower case, no trailing `/`).
    pub allowed_origins: Vec<String>,
    pub max_connections: usize,
    /// How often the event stream writes a keepalive comment.
    pub keepalive: Duration,
}

impl HttpConfig {
    /// The settings, if `--http` or `http_address` asks; a non-loopback address needs
    /// `--http-allow-remote` and TLS.
    pub fn resolve(args: &HttpArgs) -> Result<Option<HttpConfig>, String> {
        let configured = hld_client::config::config_file_value("http_address")?;
        let Some(address) = args.http.clone().or(configured) else {
            return Ok(None);
        };
        let address: SocketAddr = address.trim().parse().map_err(|_| {
            format!("--http {address:?} is not an address and port, e.g. 127.0.0.1:7777")
        })?;
        let tls = tls::resolve(
            "http",
            address,
            args.http_allow_remote,
            args.http_tls_cert.as_deref(),
            args.http_tls_key.as_deref(),
        )?;
        let allowed_origins = DEFAULT_ORIGINS
            .iter()
            .map(|o| (*o).to_owned())
            .chain(args.http_allowed_origins.iter().cloned())
            .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
            .filter(|o| !o.is_empty())
            .collect();
        Ok(Some(HttpConfig {
            address,
            tls,
            allowed_origins,
            max_connections: args.http_max_connections.max(1),
            keepalive: Duration::from_millis(args.http_keepalive_ms.max(1)),
        }))
    }
}

/// Writes `HTTP_PORT=<port>` as a line of stdout, the first the daemon writes there: how
/// CodeLayer's desktop shell learns the port of a daemon it started with port 0. A stdout that
/// cannot be written (closed) is no reason to stop serving, so the failure is only logged.
pub fn announce_port(port: u16) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "HTTP_PORT={port}").and_then(|()| out.flush()) {
        tracing::warn!(error = %e, port, "cannot write HTTP_PORT to stdout");
    }
}

pub struct Listener {
    tcp: TcpListener,
    tls: Option<TlsAcceptor>,
    policy: Arc<Policy>,
    slots: Arc<Semaphore>,
}

impl Listener {
    /// Binds `http.address` with the secret of `token_file` (made if missing).
    pub async fn bind(http: &HttpConfig, token_file: &Path) -> Result<Listener, String> {
        let secret = load_or_create_token(token_file)?;
        let tls = http.tls.as_ref().map(Tls::load).transpose()?;
        let tcp = TcpListener::bind(http.address)
            .await
            .map_err(|e| format!("cannot listen on {} (--http): {e}", http.address))?;
        let address = tcp.local_addr().map_err(|e| e.to_string())?;
        tracing::info!(
            address = %address,
            secret = %token_file.display(),
            tls = tls.is_some(),
            "http listening (REST under /t/<secret>/api/v1)"
        );
        Ok(Listener {
            tcp,
            policy: Arc::new(Policy {
                secret,
                allowed_origins: http.allowed_origins.clone(),
                certificate: tls.as_ref().map(|tls| tls.certificate.clone()),
            }),
            tls: tls.map(|tls| tls.acceptor),
            slots: Arc::new(Semaphore::new(http.max_connections)),
        })
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.tcp.local_addr()
    }

    /// Accepts connections until `shutdown`, each a task of `connections` until `closing`.
    pub async fn run(
        self,
        daemon: Arc<Daemon>,
        connections: TaskTracker,
        shutdown: CancellationToken,
        closing: CancellationToken,
    ) {
        let tcp = &self.tcp;
        accept_until(
            &shutdown,
            &connections,
            || tcp.accept(),
            |(tcp, _peer)| {
                // Taken here, in accept order, so the limit counts connections as they came.
                let slot = Arc::clone(&self.slots).try_acquire_owned().ok();
                let policy = Arc::clone(&self.policy);
                let tls = self.tls.clone();
                connection(tcp, tls, slot, policy, Arc::clone(&daemon), closing.clone())
            },
        )
        .await;
    }
}

/// One connection: refused with 503 without a slot (over TLS if configured), else served
/// until it or `closing` ends. The TLS handshake has the time the request's headers have.
async fn connection(
    tcp: TcpStream,
    tls: Option<TlsAcceptor>,
    slot: Option<OwnedSemaphorePermit>,
    policy: Arc<Policy>,
    daemon: Arc<Daemon>,
    closing: CancellationToken,
) {
    let Some(tls) = tls else {
        return serve(tcp, slot, policy, daemon, closing).await;
    };
    match tokio::time::timeout(HEADER_TIMEOUT, tls.accept(tcp)).await {
        Ok(Ok(stream)) => serve(stream, slot, policy, daemon, closing).await,
        Ok(Err(e)) => tracing::debug!(error = %e, "http TLS handshake failed"),
        Err(_) => tracing::debug!("http TLS handshake timed out"),
    }
}

/// Serves HTTP/1 over `stream`.
async fn serve<S>(
    mut stream: S,
    slot: Option<OwnedSemaphorePermit>,
    policy: Arc<Policy>,
    daemon: Arc<Daemon>,
    closing: CancellationToken,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Some(_slot) = slot else {
        let _ = stream.write_all(&guard::too_many_connections()).await;
        let _ = stream.shutdown().await;
        return;
    };
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let policy = Arc::clone(&policy);
        let daemon = Arc::clone(&daemon);
        async move {
            Ok::<Reply, std::convert::Infallible>(guard::serve(request, &policy, &daemon).await)
        }
    });
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .max_buf_size(MAX_HEADERS)
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(served);
    tokio::select! {
        result = served.as_mut() => {
            if let Err(e) = result {
                tracing::debug!(error = %e, "http connection ended");
            }
        }
        () = closing.cancelled() => {
            served.as_mut().graceful_shutdown();
            let _ = served.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(address: &str, origins: &[&str]) -> Result<Option<HttpConfig>, String> {
        HttpConfig::resolve(&HttpArgs {
            http: Some(address.into()),
            http_allowed_origins: origins.iter().map(|o| (*o).to_owned()).collect(),
            http_max_connections: 64,
            http_keepalive_ms: 30_000,
            ..HttpArgs::default()
        })
    }

    #[test]
    fn only_loopback_is_served_without_tls_and_codelayers_origins_are_always_allowed() {
        let refused = resolve("0.0.0.0:7777", &[]).unwrap_err();
        assert!(refused.contains("--http-allow-remote"), "{refused}");
        let remote = HttpConfig::resolve(&HttpArgs {
            http: Some("0.0.0.0:7777".into()),
            http_allow_remote: true,
            ..HttpArgs::default()
        });
        assert!(remote.unwrap_err().contains("needs TLS"));
        assert!(resolve("localhost", &[])
            .unwrap_err()
            .contains("not an address"));
        let config = resolve("[::1]:0", &["HTTP://Ok.Example/"])
            .unwrap()
            .unwrap();
        assert_eq!(
            config.allowed_origins,
            [
                "tauri://localhost",
                "http://tauri.localhost",
                "http://localhost:1420",
                "http://ok.example"
            ]
        );
    }
}
