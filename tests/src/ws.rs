//! The WebSocket transport (subprotocol `holon-rpc`, spec/002) from a client's side, for the
//! e2e tests and the bench: where a daemon listens and its token, the upgrade request, and
//! [`WsClient`], a peer as strict as HolonClient: every message it reads must be a
//! spec/002 envelope, or it panics.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::client::Request;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::{wait_for, DaemonOptions, TestDaemon, WAIT};

/// The subprotocol.
pub const SUBPROTOCOL: &str = "holon-rpc";

/// The address a daemon's log (`log`) says its WebSocket listens on; `None` if the line does
/// not come within 10 s.
pub fn address_in_log(log: &Path) -> Option<SocketAddr> {
    wait_for(Duration::from_secs(10), || {
        let text = std::fs::read_to_string(log).ok()?;
        let line = text.lines().find(|l| l.contains("websocket listening"))?;
        let at = line.find("address=")? + "address=".len();
        line[at..].split_whitespace().next()?.parse().ok()
    })
}

/// A daemon on `fake-claude` serving WebSocket on a loopback port, with `extra` flags; its
/// address and token.
pub fn daemon(extra: &[&str]) -> (TestDaemon, SocketAddr, String) {
    let mut options = DaemonOptions::fake_claude().arg("--ws").arg("127.0.0.1:0");
    for arg in extra {
        options = options.arg(arg);
    }
    let daemon = TestDaemon::start_with(options);
    let address = address_in_log(&daemon.log)
        .unwrap_or_else(|| panic!("no WebSocket address; log:\n{}", daemon.log_text()));
    let token = token_in(&daemon.dir);
    (daemon, address, token)
}

/// The token in `daemon.ws-token` of a socket directory.
pub fn token_in(socket_dir: &Path) -> String {
    let path = socket_dir.join("daemon.ws-token");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .trim()
        .to_owned()
}

/// An upgrade request for `url`: offering `holon-rpc` if `subprotocol`, with the token as
/// `Authorization: Bearer` if given, and an `Origin` if given (as a browser sends it).
pub fn upgrade(url: &str, token: Option<&str>, origin: Option<&str>, subprotocol: bool) -> Request {
    let mut request = url.into_client_request().expect("a WebSocket URL");
    let headers = request.headers_mut();
    if subprotocol {
        headers.insert(
            "sec-websocket-protocol",
            HeaderValue::from_static(SUBPROTOCOL),
        );
    }
    if let Some(token) = token {
        let bearer = HeaderValue::from_str(&format!("Bearer {token}")).expect("a header value");
        headers.insert("authorization", bearer);
    }
    if let Some(origin) = origin {
        headers.insert(
            "origin",
            HeaderValue::from_str(origin).expect("a header value"),
        );
    }
    request
}

/// Checks that `message` is a spec/002 envelope from the server, as HolonClient does (it
/// closes the socket otherwise): only the six members, `jsonrpc` "2.0", a non-empty string
/// id; a server request's id starts with `s`; a response has `result` or `error`.
pub fn assert_envelope(message: &Value) {
    let object = message
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {message}"));
    for key in object.keys() {
        assert!(
            ["jsonrpc", "id", "method", "params", "result", "error"].contains(&key.as_str()),
            "member {key:?} in {message}"
        );
    }
    assert_eq!(message["jsonrpc"], "2.0", "{message}");
    let id = message["id"].as_str().unwrap_or_default();
    assert!(
        !id.is_empty(),
        "the id must be a non-empty string: {message}"
    );
    if message.get("method").is_some() {
        assert!(id.starts_with('s'), "a server request's id: {message}");
        assert!(message["params"].is_object(), "{message}");
        assert!(message.get("result").is_none() && message.get("error").is_none());
    } else {
        assert!(
            message.get("result").is_some() != message.get("error").is_some(),
            "{message}"
        );
        if let Some(error) = message.get("error") {
            assert!(
                error["code"].is_i64() && error["message"].is_string(),
                "{message}"
            );
        }
    }
}

/// A holon-rpc client over any stream (plain TCP or TLS).
pub struct WsClient<S = MaybeTlsStream<TcpStream>> {
    /// The WebSocket.
    pub ws: WebSocketStream<S>,
    last_id: u64,
    /// Server requests read while waiting for a reply.
    requests: VecDeque<Value>,
}

impl WsClient {
    /// Connects to `ws://address/` with the token.
    pub async fn connect(address: SocketAddr, token: &str) -> WsClient {
        let request = upgrade(&format!("ws://{address}/"), Some(token), None, true);
        let (ws, response) = tokio_tungstenite::connect_async(request)
            .await
            .expect("the WebSocket handshake");
        assert_eq!(
            response.headers()["sec-websocket-protocol"],
            SUBPROTOCOL,
            "the subprotocol is echoed"
        );
        WsClient::new(ws)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> WsClient<S> {
    /// Wraps an open WebSocket.
    pub fn new(ws: WebSocketStream<S>) -> Self {
        WsClient {
            ws,
            last_id: 0,
            requests: VecDeque::new(),
        }
    }

    /// Sends one text frame.
    pub async fn send_text(&mut self, text: impl Into<String>) {
        self.ws
            .send(Message::text(text.into()))
            .await
            .expect("send a text frame");
    }

    /// The next message (pings and pongs skipped), [`WAIT`] at most; `None` once closed.
    pub async fn next_message(&mut self) -> Option<Message> {
        loop {
            let next = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("a message within the wait");
            match next {
                None | Some(Err(_)) => return None,
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(message)) => return Some(message),
            }
        }
    }

    /// The next text message as JSON, checked by [`assert_envelope`].
    pub async fn next_json(&mut self) -> Value {
        match self.next_message().await {
            Some(Message::Text(text)) => {
                let value: Value = serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
                assert_envelope(&value);
                value
            }
            other => panic!("expected a text message, got {other:?}"),
        }
    }

    /// Sends request `method` with the next id (`"1"`, `"2"`, …) and returns the whole reply;
    /// server requests read meanwhile are kept for [`WsClient::server_request`].
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.last_id += 1;
        let id = self.last_id.to_string();
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_text(request.to_string()).await;
        self.reply_to(&id).await
    }

    /// The reply to request `id`, keeping server requests read before it.
    pub async fn reply_to(&mut self, id: &str) -> Value {
        loop {
            let message = self.next_json().await;
            if message.get("method").is_some() {
                self.requests.push_back(message);
            } else {
                assert_eq!(message["id"], id, "replies come in request order");
                return message;
            }
        }
    }

    /// `method`'s result; panics on an error reply.
    pub async fn result(&mut self, method: &str, params: Value) -> Value {
        let reply = self.call(method, params).await;
        match reply.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} failed: {reply}"),
        }
    }

    /// The next server request (one read earlier first).
    pub async fn server_request(&mut self) -> Value {
        if let Some(request) = self.requests.pop_front() {
            return request;
        }
        let message = self.next_json().await;
        assert!(
            message.get("method").is_some(),
            "a server request: {message}"
        );
        message
    }

    /// The next server request of `method`, answering (`{}`) the others before it.
    pub async fn next_of(&mut self, method: &str) -> Value {
        loop {
            let request = self.server_request().await;
            if request["method"] == method {
                return request;
            }
            let id = request["id"].as_str().unwrap_or_default().to_owned();
            self.reply(&id, json!({})).await;
        }
    }

    /// Answers server request `id` with `result`.
    pub async fn reply(&mut self, id: &str, result: Value) {
        let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
        self.send_text(reply.to_string()).await;
    }

    /// Reads until the server's close frame and returns it (`None` if the connection ended
    /// without one). Text read before it is checked and dropped.
    pub async fn closed(&mut self) -> Option<CloseFrame> {
        loop {
            match self.next_message().await? {
                Message::Close(frame) => return frame,
                Message::Text(text) => {
                    let value: Value = serde_json::from_str(&text).expect("JSON");
                    assert_envelope(&value);
                }
                other => panic!("unexpected {other:?} before the close"),
            }
        }
    }
}
