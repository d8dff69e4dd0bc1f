//! The WebSocket transport, subprotocol `holon-rpc` (spec/002), beside the Unix socket:
//! tokio-tungstenite and rustls. Who may connect is [`handshake`]'s; message sizes
//! [`outgoing`]'s; envelope, heartbeats and events [`holon`]'s. Violations: README.md's table.

pub mod handshake;
pub mod handshakes;
pub mod holon;
pub mod outgoing;

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::{Sink, Stream};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use self::handshake::{Check, Policy};
use self::handshakes::{Handshakes, Place, HANDSHAKE_TIMEOUT};
use self::holon::{Holon, Violation};
use super::{accept_until, Service};
use crate::budget::Budget;
use crate::config::WsConfig;
use crate::rpc::{self, Ended};
use hld_client::address::Fingerprint;

/// The largest message either way: peers close the connection on a larger one.
pub const MAX_MESSAGE: usize = 1 << 20;
/// How long a closing connection waits for its peer to go.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// tungstenite's limits: 1 MiB a message and frame; 4 KiB reads, as it zero-fills its buffer.
pub fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(4 * 1024)
        .write_buffer_size(64 * 1024)
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
}

struct Shared {
    tls: Option<TlsAcceptor>,
    fingerprint: Option<hld_client::address::Fingerprint>,
    policy: Policy,
    /// One permit per open connection, taken once its handshake is admitted.
    slots: Arc<Semaphore>,
    handshakes: Handshakes,
    config: WsConfig,
}

pub struct Listener {
    tcp: TcpListener,
    shared: Arc<Shared>,
}

impl Listener {
    /// Binds `ws.address` with the token (`ws_token`, else `token_file`'s) and TLS, if any.
    pub async fn bind(ws: &WsConfig, token_file: &Path) -> Result<Listener, String> {
        let token = match &ws.token {
            Some(token) => token.clone(),
            None => handshake::load_or_create_token(token_file)?,
        };
        let (tls, fingerprint) = match &ws.tls {
            Some(files) => {
                let tls = super::tls::Tls::load(files)?;
                let fingerprint = Fingerprint::of(&tls.certificate);
                (Some(tls.acceptor), Some(fingerprint))
            }
            None => (None, None),
        };
        let tcp = TcpListener::bind(ws.address)
            .await
            .map_err(|e| format!("cannot listen on {} (--ws): {e}", ws.address))?;
        let address = tcp.local_addr().map_err(|e| e.to_string())?;
        tracing::info!(
            address = %address,
            tls = tls.is_some(),
            token = %if ws.token.is_some() { "ws_token in humanlayer.json".into() } else { token_file.display().to_string() },
            "websocket listening (subprotocol holon-rpc)"
        );
        Ok(Listener {
            tcp,
            shared: Arc::new(Shared {
                tls,
                fingerprint,
                policy: Policy {
                    token,
                    allowed_origins: ws.allowed_origins.clone(),
                },
                slots: Arc::new(Semaphore::new(ws.max_connections)),
                handshakes: Handshakes::new(ws.max_handshakes),
                config: ws.clone(),
            }),
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.tcp.local_addr()
    }

    /// The fingerprint of the certificate served, for `wss://`.
    pub fn fingerprint(&self) -> Option<hld_client::address::Fingerprint> {
        self.shared.fingerprint
    }

    /// Accepts connections until `shutdown`, each served as a task of `connections` until
    /// `closing`.
    pub async fn run<S>(
        self,
        service: Arc<Service<S>>,
        connections: TaskTracker,
        shutdown: CancellationToken,
        closing: CancellationToken,
    ) where
        S: AsRef<Budget> + Send + Sync + 'static,
    {
        let tcp = &self.tcp;
        accept_until(
            &shutdown,
            &connections,
            || tcp.accept(),
            |(tcp, peer)| {
                let shared = Arc::clone(&self.shared);
                connection(tcp, peer, shared, Arc::clone(&service), closing.clone())
            },
        )
        .await;
    }
}

/// One TCP connection: TLS if configured, then the WebSocket, within [`HANDSHAKE_TIMEOUT`].
async fn connection<S>(
    tcp: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    service: Arc<Service<S>>,
    shutdown: CancellationToken,
) where
    S: AsRef<Budget> + Send + Sync + 'static,
{
    // Events are small writes that must go at once.
    let _ = tcp.set_nodelay(true);
    let place = shared.handshakes.enter();
    let deadline = tokio::time::Instant::now() + HANDSHAKE_TIMEOUT;
    // A real client speaks first (a TLS hello or an HTTP request), at once.
    let mut byte = [0; 1];
    let first = tokio::time::timeout_at(deadline, tcp.peek(&mut byte));
    match place.run(first).await {
        Some(Ok(Ok(n))) if n > 0 => place.spoke(),
        Some(Ok(Ok(_) | Err(_))) => return,
        Some(Err(_)) => return tracing::debug!(%peer, "no handshake within the time"),
        None => return tracing::debug!(%peer, "closed in its handshake to make room"),
    }
    match &shared.tls {
        Some(tls) => {
            let accepting = tokio::time::timeout_at(deadline, tls.accept(tcp));
            match place.run(accepting).await {
                Some(Ok(Ok(stream))) => {
                    serve(stream, peer, &shared, place, deadline, &service, shutdown).await
                }
                Some(Ok(Err(e))) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                Some(Err(_)) => tracing::debug!(%peer, "TLS handshake timed out"),
                None => tracing::debug!(%peer, "closed in its TLS handshake to make room"),
            }
        }
        None => serve(tcp, peer, &shared, place, deadline, &service, shutdown).await,
    }
}

/// The WebSocket handshake, then the connection served until it ends, then closed.
async fn serve<T, S>(
    mut stream: T,
    peer: SocketAddr,
    shared: &Shared,
    place: Place<'_>,
    deadline: tokio::time::Instant,
    service: &Service<S>,
    shutdown: CancellationToken,
) where
    T: AsyncRead + AsyncWrite + Unpin,
    S: AsRef<Budget> + Send + Sync + 'static,
{
    let mut slot = None;
    let check = Check {
        policy: &shared.policy,
        slots: &shared.slots,
        slot: &mut slot,
        peer,
    };
    let accepting =
        tokio_tungstenite::accept_hdr_async_with_config(&mut stream, check, Some(ws_config()));
    let accepted = place
        .run(tokio::time::timeout_at(deadline, accepting))
        .await;
    drop(place);
    let ws = match accepted {
        None => return tracing::debug!(%peer, "closed in its WebSocket handshake to make room"),
        Some(Ok(Ok(ws))) => ws,
        Some(Ok(Err(e))) => {
            tracing::debug!(%peer, error = %e, "WebSocket handshake ended");
            if let Some(refusal) = handshake::not_a_handshake(&e) {
                let answering = async {
                    stream
                        .write_all(&handshake::response_bytes(refusal))
                        .await?;
                    stream.shutdown().await
                };
                let _ = tokio::time::timeout(CLOSE_WAIT, answering).await;
            }
            return;
        }
        Some(Err(_)) => return tracing::debug!(%peer, "WebSocket handshake timed out"),
    };
    tracing::debug!(%peer, "WebSocket connection opened");
    let mut conn = Holon::new(Connection::new(ws), &shared.config);
    let state = Arc::clone(&service.state);
    let ended = rpc::serve(&mut conn, &service.guest, state, shutdown).await;
    let (conn, violation) = conn.into_parts();
    conn.finish(ended, violation).await;
    drop(slot);
    tracing::debug!(%peer, ?ended, "WebSocket connection closed");
}

/// A WebSocket as text messages; a framing violation ends the stream, kept for `finish`.
pub struct Connection<S> {
    ws: WebSocketStream<S>,
    /// The close a violation called for.
    close: Option<CloseFrame>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Connection<S> {
    pub fn new(ws: WebSocketStream<S>) -> Self {
        Connection { ws, close: None }
    }

    /// Closes with the code of the violation that ended it, else of why it `ended` (1001 at
    /// shutdown, 1000 after `shutdown`), and lets the peer read it before the socket goes.
    pub async fn finish(mut self, ended: Ended, violation: Option<Violation>) {
        let violation = violation.map(|v| match v {
            Violation::Unanswerable(reason) => close_frame(CloseCode::Protocol, reason),
            Violation::Unresponsive => {
                close_frame(CloseCode::Policy, "no answer to rpc.heartbeat in time")
            }
        });
        let frame = self.close.take().or(violation).or_else(|| match ended {
            Ended::Shutdown => Some(close_frame(CloseCode::Away, "the daemon is shutting down")),
            Ended::Closed => Some(close_frame(
                CloseCode::Normal,
                "shutdown: this connection is closed; the daemon serves on",
            )),
            Ended::Left | Ended::Failed => None,
        });
        let closing = async {
            if let Some(frame) = &frame {
                tracing::debug!(code = u16::from(frame.code), reason = %frame.reason, "closing the WebSocket");
            }
            let _ = self.ws.close(frame).await;
            // Half-close, then read what the peer still sends until it goes: a socket closed
            // with unread input would be reset, and the peer might miss the close frame.
            let stream = self.ws.get_mut();
            let _ = stream.shutdown().await;
            let mut scratch = [0u8; 8192];
            while matches!(stream.read(&mut scratch).await, Ok(n) if n > 0) {}
        };
        let _ = tokio::time::timeout(CLOSE_WAIT, closing).await;
    }
}

fn close_frame(code: CloseCode, reason: impl Into<Utf8Bytes>) -> CloseFrame {
    CloseFrame {
        code,
        reason: reason.into(),
    }
}

/// The close a read error calls for; `None` for a failure of the socket itself.
fn violation(error: &WsError) -> Option<CloseFrame> {
    match error {
        WsError::Capacity(_) => Some(close_frame(
            CloseCode::Size,
            "message over 1 MiB (the holon-rpc limit)",
        )),
        WsError::Utf8(_) => Some(close_frame(
            CloseCode::Invalid,
            "a text frame that is not UTF-8",
        )),
        WsError::Protocol(_) => Some(close_frame(CloseCode::Protocol, "WebSocket protocol error")),
        _ => None,
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Stream for Connection<S> {
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        while this.close.is_none() {
            let message = match ready!(Pin::new(&mut this.ws).poll_next(cx)) {
                None | Some(Ok(Message::Close(_))) => return Poll::Ready(None),
                Some(Ok(message)) => message,
                Some(Err(e)) => match violation(&e) {
                    Some(close) => {
                        tracing::warn!(reason = %close.reason, "a WebSocket violation; closing");
                        this.close = Some(close);
                        break;
                    }
                    None => return Poll::Ready(Some(Err(io::Error::other(e)))),
                },
            };
            match message {
                Message::Text(text) => return Poll::Ready(Some(Ok(Bytes::from(text)))),
                Message::Binary(_) => {
                    tracing::warn!("a binary frame; closing");
                    this.close = Some(close_frame(
                        CloseCode::Unsupported,
                        "binary frames are not part of holon-rpc; send text",
                    ));
                }
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) | Message::Close(_) => {}
            }
        }
        Poll::Ready(None)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Sink<String> for Connection<S> {
    type Error = io::Error;

    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.ws)
            .poll_ready(cx)
            .map_err(io::Error::other)
    }

    fn start_send(mut self: Pin<&mut Self>, text: String) -> io::Result<()> {
        Pin::new(&mut self.ws)
            .start_send(Message::Text(text.into()))
            .map_err(io::Error::other)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.ws)
            .poll_flush(cx)
            .map_err(io::Error::other)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.ws)
            .poll_close(cx)
            .map_err(io::Error::other)
    }
}
