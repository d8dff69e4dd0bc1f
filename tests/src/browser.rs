//! A real browser for the tests: Debian's headless Chromium, driven over the DevTools protocol
//! (JSON over a WebSocket, tokio-tungstenite), and a page server on a loopback port, so that a
//! page of a known origin can call the daemon as CodeLayer's front end does.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::wait_for;

/// How long one DevTools command, a page load or a script may take.
const STEP: Duration = Duration::from_secs(60);

/// The Chromium executable on PATH; a clear failure when there is none.
fn chromium() -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
            .find(|candidate| candidate.is_file())
    });
    found.unwrap_or_else(|| {
        panic!(
            "the browser tests need Chromium and none is on PATH: install Debian's package \
             (`apt-get install chromium`; .ci/run does)"
        )
    })
}

/// A headless Chromium with its own profile, killed on drop, and a DevTools connection to it.
pub struct Browser {
    child: Child,
    devtools: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// Events read while waiting for a command's answer.
    events: VecDeque<Value>,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tab, by its DevTools session.
pub struct Tab(String);

impl Browser {
    /// Starts Chromium on an ephemeral DevTools port and connects to it.
    pub async fn start() -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let child = Command::new(chromium())
            .arg("--headless")
            .arg("--remote-debugging-port=0")
            .arg(format!("--user-data-dir={}", profile.path().display()))
            // The pages are the test's own; containers often cannot give Chromium its sandbox.
            .args(["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            .args(["--no-first-run", "--no-default-browser-check"])
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        // Chromium writes the port it took and the browser's DevTools path here.
        let file = profile.path().join("DevToolsActivePort");
        let endpoint = wait_for(STEP, || {
            let text = std::fs::read_to_string(&file).ok()?;
            let mut lines = text.lines();
            let (port, path) = (lines.next()?, lines.next()?);
            Some(format!("ws://127.0.0.1:{port}{path}"))
        })
        .unwrap_or_else(|| panic!("chromium wrote no {}", file.display()));
        let (devtools, _) = tokio_tungstenite::connect_async(endpoint.as_str())
            .await
            .expect("connect to Chromium's DevTools");
        Browser {
            child,
            devtools,
            events: VecDeque::new(),
            next_id: 1,
            _profile: profile,
        }
    }

    /// The next DevTools message.
    async fn read(&mut self) -> Value {
        loop {
            let message = tokio::time::timeout(STEP, self.devtools.next())
                .await
                .expect("Chromium answers in time")
                .expect("the DevTools connection stays open")
                .expect("a DevTools message");
            if let Message::Text(text) = message {
                return serde_json::from_str(&text).expect("DevTools sends JSON");
            }
        }
    }

    /// Sends `method` (to `tab`, else to the browser) and returns its result.
    pub async fn send(&mut self, tab: Option<&Tab>, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut command = json!({"id": id, "method": method, "params": params});
        if let Some(Tab(session)) = tab {
            command["sessionId"] = json!(session);
        }
        self.devtools
            .send(Message::text(command.to_string()))
            .await
            .expect("send a DevTools command");
        loop {
            let message = self.read().await;
            if message["id"] == id {
                assert!(message["error"].is_null(), "{method}: {message}");
                return message["result"].clone();
            }
            self.events.push_back(message);
        }
    }

    /// Waits for the event `method` of `tab`.
    async fn event(&mut self, tab: &Tab, method: &str) -> Value {
        let wanted = |m: &Value| m["method"] == method && m["sessionId"] == tab.0.as_str();
        if let Some(at) = self.events.iter().position(wanted) {
            return self.events.remove(at).unwrap();
        }
        loop {
            let message = self.read().await;
            if wanted(&message) {
                return message;
            }
            self.events.push_back(message);
        }
    }

    /// A new tab showing `url`, once its `load` event has fired.
    pub async fn open(&mut self, url: &str) -> Tab {
        let target = self
            .send(None, "Target.createTarget", json!({"url": "about:blank"}))
            .await;
        let attached = self
            .send(
                None,
                "Target.attachToTarget",
                json!({"targetId": target["targetId"], "flatten": true}),
            )
            .await;
        let tab = Tab(attached["sessionId"].as_str().unwrap().to_owned());
        self.send(Some(&tab), "Page.enable", json!({})).await;
        let navigated = self
            .send(Some(&tab), "Page.navigate", json!({"url": url}))
            .await;
        assert!(navigated["errorText"].is_null(), "{url}: {navigated}");
        self.event(&tab, "Page.loadEventFired").await;
        tab
    }

    /// The value of `expression` in `tab`, a promise awaited; a thrown error fails the test.
    pub async fn evaluate(&mut self, tab: &Tab, expression: &str) -> Value {
        let params = json!({"expression": expression, "awaitPromise": true, "returnByValue": true});
        let result = self.send(Some(tab), "Runtime.evaluate", params).await;
        assert!(
            result["exceptionDetails"].is_null(),
            "{expression}: {result}"
        );
        result["result"]["value"].clone()
    }
}

/// Serves `html` to every request on a new loopback port: a page of origin
/// `http://127.0.0.1:<port>`, returned.
pub async fn serve_page(html: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(answer(stream, html));
        }
    });
    origin
}

/// Reads a request's head and answers with the page.
async fn answer(mut stream: TcpStream, html: &str) {
    let mut head = Vec::new();
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
        }
    }
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
         cache-control: no-store\r\nconnection: close\r\n\r\n{html}",
        html.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}
