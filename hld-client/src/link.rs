//! One connection as messages both ways, whatever carries them: NDJSON lines on the Unix
//! socket, or text messages of the `holon-rpc` WebSocket subprotocol (spec/002), over TLS for
//! `wss://`, with the token as `Authorization: Bearer`.

use std::io;
use std::pin::Pin;

use futures::{Sink, SinkExt, Stream, StreamExt};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpStream, UnixStream};
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::address::{Address, Remote};
use crate::error::Error;

/// The WebSocket subprotocol the daemon serves.
const SUBPROTOCOL: &str = "holon-rpc";

pub(crate) type Writer = Pin<Box<dyn Sink<String, Error = io::Error> + Send>>;
pub(crate) type Reader = Pin<Box<dyn Stream<Item = io::Result<String>> + Send>>;

/// An open connection.
pub(crate) struct Link {
    pub writer: Writer,
    pub reader: Reader,
    /// Whether it speaks holon-rpc (string ids; events as requests to answer).
    pub holon: bool,
}

/// Connects to `address`. A socket is checked to be the user's own first
/// ([`crate::trust::check_socket`]); nothing is sent to a remote daemon whose certificate
/// fails its check.
pub(crate) async fn open(address: &Address) -> Result<Link, Error> {
    match address {
        Address::Socket(path) => {
            crate::trust::check_socket(path)?;
            let stream = UnixStream::connect(path)
                .await
                .map_err(|e| Error::connecting(path, e))?;
            Ok(lines(stream))
        }
        Address::Remote(remote) => websocket(remote).await,
    }
}

fn lines(stream: UnixStream) -> Link {
    let (read, write) = stream.into_split();
    let reader = futures::stream::unfold(BufReader::new(read).lines(), |mut lines| async {
        lines
            .next_line()
            .await
            .transpose()
            .map(|line| (line, lines))
    });
    let writer = futures::sink::unfold(write, |mut write, mut line: String| async move {
        line.push('\n');
        write.write_all(line.as_bytes()).await?;
        Ok::<_, io::Error>(write)
    });
    Link {
        writer: Box::pin(writer),
        reader: Box::pin(reader),
        holon: false,
    }
}

trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

async fn websocket(remote: &Remote) -> Result<Link, Error> {
    let address = || remote.url().to_owned();
    let unreachable = |reason: String| Error::Unreachable {
        address: address(),
        reason,
    };
    let tcp = TcpStream::connect((remote.host(), remote.port()))
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    // Calls and events are small messages that must go at once.
    let _ = tcp.set_nodelay(true);
    let stream: Box<dyn Io> = match remote.tls() {
        true => {
            let connector = crate::tls::connector(remote.trust())?;
            let name = ServerName::try_from(remote.host().to_owned())
                .map_err(|e| Error::Address(format!("{}: {e}", remote.url())))?;
            let tls = connector.connect(name, tcp).await.map_err(|e| Error::Tls {
                address: address(),
                reason: crate::tls::reason(&e),
            })?;
            Box::new(tls)
        }
        false => Box::new(tcp),
    };
    let mut request = remote
        .url()
        .into_client_request()
        .map_err(|e| Error::Address(format!("{}: {e}", remote.url())))?;
    let headers = request.headers_mut();
    headers.insert(
        "sec-websocket-protocol",
        HeaderValue::from_static(SUBPROTOCOL),
    );
    let bearer = HeaderValue::from_str(&format!("Bearer {}", remote.token().as_str()))
        .map_err(|_| Error::Address("the token is not a header value".into()))?;
    headers.insert("authorization", bearer);
    let (ws, _) = tokio_tungstenite::client_async(request, stream)
        .await
        .map_err(|e| match e {
            WsError::Http(response) => Error::Rejected {
                address: address(),
                status: response.status().as_u16(),
                reason: response
                    .body()
                    .as_deref()
                    .map(|body| String::from_utf8_lossy(body).trim().to_owned())
                    .unwrap_or_default(),
            },
            other => unreachable(other.to_string()),
        })?;
    let (sink, stream) = ws.split();
    let writer = sink
        .with(|text: String| async move { Ok::<_, WsError>(Message::Text(text.into())) })
        .sink_map_err(io::Error::other);
    // Pings are answered by tungstenite; binary frames are no part of holon-rpc.
    let reader = stream.filter_map(|message| async move {
        match message {
            Ok(Message::Text(text)) => Some(Ok(text.to_string())),
            Ok(_) => None,
            Err(e) => Some(Err(io::Error::other(e))),
        }
    });
    Ok(Link {
        writer: Box::pin(writer),
        reader: Box::pin(reader),
        holon: true,
    })
}
