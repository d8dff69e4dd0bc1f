//! The async client: one connection, many concurrent callers, replies matched by id.
//!
//! One task reads the connection (completing pending calls through oneshots, answering the
//! daemon's own requests over holon-rpc, and handing a subscription's events on); another
//! writes what callers queue. When the connection drops, every pending call fails with
//! [`Error::Disconnected`]. The connection is a Unix socket or a WebSocket ([`Address`]);
//! everything above it is the same for both.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};

use crate::address::Address;
use crate::codec::{self, Incoming};
use crate::error::Error;
use crate::link::{Link, Reader, Writer};
use crate::protocol::*;

/// The default per-call timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The calls awaiting a reply, by id: the length of the line each sent, and where its reply
/// goes. `None` once the connection is gone.
type Pending = Arc<Mutex<Option<HashMap<u64, (usize, oneshot::Sender<Result<Value, Error>>)>>>>;

/// An event read on a subscription's connection, with the id of the daemon's request that
/// carried it (holon-rpc), answered once the event is taken: the daemon's cap on unanswered
/// events then paces a reader that falls behind, as a full socket does.
pub(crate) struct Delivered {
    pub event: Box<TimedEvent>,
    pub ack: Option<String>,
}

/// A connection to a daemon. Cheap to clone; clones share the connection. A front end that
/// watches several daemons holds one per [`Address`].
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    address: Address,
    /// Messages for the writer task, in order.
    outgoing: mpsc::UnboundedSender<String>,
    // A std Mutex: it is only held to insert or remove an entry, never across an await.
    // `None` once the connection is gone.
    pending: Pending,
    next_id: AtomicU64,
    timeout: Duration,
    holon: bool,
    /// Turns `true` when the reader ends: the connection is gone.
    closed: watch::Receiver<bool>,
    tasks: [tokio::task::JoinHandle<()>; 2],
}

impl Drop for Inner {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("address", &self.inner.address)
            .finish()
    }
}

impl Client {
    /// Connects to the daemon at `path`. A socket nobody answers on is
    /// [`Error::DaemonNotRunning`]; one that is not the user's own (another user's, or in a
    /// directory others can write) is [`Error::UntrustedSocket`], before anything is sent.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect("/tmp/hld-test/daemon.sock").await?;
    /// println!("connected to {}", client.address());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(path: impl AsRef<Path>) -> Result<Client, Error> {
        Self::connect_with_timeout(path, DEFAULT_TIMEOUT).await
    }

    /// Connects to the daemon at the default path (see [`crate::config::resolve_socket_path`]:
    /// `HUMANLAYER_DAEMON_SOCKET`, then `humanlayer.json`, then `~/.humanlayer/daemon.sock`).
    ///
    /// ```no_run
    /// use hld_client::{Client, Error};
    ///
    /// # async fn demo() -> Result<(), Error> {
    /// match Client::connect_default().await {
    ///     Ok(client) => println!("hld {}", client.version().await?.version),
    ///     Err(Error::DaemonNotRunning { socket }) => {
    ///         eprintln!("no daemon at {}; start one with `hld`", socket.display())
    ///     }
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect_default() -> Result<Client, Error> {
        Self::connect(crate::config::default_socket_path()?).await
    }

    /// Connects with a per-call timeout ([`DEFAULT_TIMEOUT`] otherwise); a call without a
    /// reply in time is [`Error::Timeout`].
    ///
    /// ```no_run
    /// use std::time::Duration;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client =
    ///     hld_client::Client::connect_with_timeout("/tmp/hld-test/daemon.sock", Duration::from_secs(2))
    ///         .await?;
    /// client.health().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect_with_timeout(
        path: impl AsRef<Path>,
        timeout: Duration,
    ) -> Result<Client, Error> {
        let address = Address::Socket(path.as_ref().to_path_buf());
        Self::open(address, timeout, None).await
    }

    /// Connects to the daemon at `address`: a socket as [`connect`](Self::connect) does, or a
    /// remote daemon's WebSocket (see [`crate::address`]). A certificate that fails its check
    /// is [`Error::Tls`] and a wrong token [`Error::Rejected`] (401), before any call is sent.
    ///
    /// ```no_run
    /// use hld_client::address::{Address, Remote, Token, Trust};
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let token = Token::from_env("HLD_WS_TOKEN")?;
    /// let remote = Remote::new("wss://devbox:7777", token, Trust::SystemRoots)?;
    /// let client = hld_client::Client::connect_to(&Address::Remote(remote)).await?;
    /// client.health().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect_to(address: &Address) -> Result<Client, Error> {
        Self::open(address.clone(), DEFAULT_TIMEOUT, None).await
    }

    /// [`connect_to`](Self::connect_to) with a per-call timeout.
    pub async fn connect_to_with_timeout(
        address: &Address,
        timeout: Duration,
    ) -> Result<Client, Error> {
        Self::open(address.clone(), timeout, None).await
    }

    /// Connects; a subscription's connection passes where its events go.
    pub(crate) async fn open(
        address: Address,
        timeout: Duration,
        events: Option<mpsc::Sender<Delivered>>,
    ) -> Result<Client, Error> {
        let Link {
            writer,
            reader,
            holon,
        } = crate::link::open(&address).await?;
        let pending: Pending = Arc::new(Mutex::new(Some(HashMap::new())));
        let (outgoing, queued) = mpsc::unbounded_channel();
        let (gone, closed) = watch::channel(false);
        let reading = read(reader, pending.clone(), outgoing.clone(), events, gone);
        let writing = write(writer, queued, pending.clone());
        Ok(Client {
            inner: Arc::new(Inner {
                address,
                outgoing,
                pending,
                next_id: AtomicU64::new(1),
                timeout,
                holon,
                closed,
                tasks: [tokio::spawn(reading), tokio::spawn(writing)],
            }),
        })
    }

    /// Where this client is connected.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// println!("{}", client.address());
    /// # Ok(())
    /// # }
    /// ```
    pub fn address(&self) -> &Address {
        &self.inner.address
    }

    /// Resolves once the connection is gone (the daemon closed it, or reading it failed):
    /// for a front end idle between calls, which would otherwise learn it at its next call.
    pub async fn closed(&self) {
        let mut closed = self.inner.closed.clone();
        let _ = closed.wait_for(|gone| *gone).await;
    }

    /// Answers the daemon's request `id` with an empty result (an event taken).
    pub(crate) fn acknowledge(&self, id: &str) {
        let _ = self
            .inner
            .outgoing
            .send(codec::answer(id, Ok(Value::Object(Default::default()))));
    }

    /// Calls a method by name with arbitrary params, returning the raw result: for a method
    /// this version does not know. [`call`](Self::call) is the typed way.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let reply = client
    ///     .call_raw("getRecentPaths", serde_json::json!({"limit": 5}))
    ///     .await?;
    /// println!("{reply}");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_raw(&self, method: &str, params: Value) -> Result<Value, Error> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let message = codec::request(method, params, id, self.inner.holon)?;
        let (tx, rx) = oneshot::channel();
        match self.inner.pending.lock().unwrap().as_mut() {
            Some(map) => map.insert(id, (message.len(), tx)),
            None => return Err(Error::Disconnected),
        };
        if self.inner.outgoing.send(message).is_err() {
            self.forget(id);
            return Err(Error::Disconnected);
        }
        match tokio::time::timeout(self.inner.timeout, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err(Error::Disconnected),
            Err(_) => {
                self.forget(id);
                Err(Error::Timeout)
            }
        }
    }

    fn forget(&self, id: u64) {
        if let Some(map) = self.inner.pending.lock().unwrap().as_mut() {
            map.remove(&id);
        }
    }

    /// Opens a subscription on its own connection (see [`crate::subscribe`]): the daemon's
    /// events as they are published, filtered by `params`. To follow one session without
    /// losing any of it, use [`follow`](Self::follow).
    ///
    /// ```no_run
    /// use futures::StreamExt;
    /// use hld_client::protocol::{EventType, SubscribeParams};
    /// use hld_client::{SubscribeOptions, SubscriptionItem};
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let params = SubscribeParams::types([EventType::NewApproval]);
    /// let mut events = client.subscribe(params, SubscribeOptions::default()).await?;
    /// while let Some(SubscriptionItem::Event(timed)) = events.next().await.transpose()? {
    ///     println!("{} {}", timed.timestamp, timed.event.type_name());
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn subscribe(
        &self,
        params: SubscribeParams,
        options: crate::SubscribeOptions,
    ) -> Result<crate::Subscription, Error> {
        crate::subscribe(self.address(), params, options).await
    }

    /// Follows session `session_id` from its first conversation event to its end: a stream of
    /// [`FollowItem`](crate::FollowItem)s, each thing once, that survives falling behind (see
    /// [`crate::follow`]). An unknown session is an [`Error::Rpc`] here.
    ///
    /// ```no_run
    /// use futures::StreamExt;
    /// use hld_client::FollowItem;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let mut follow = client.follow("4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13").await?;
    /// while let Some(item) = follow.next().await {
    ///     match item? {
    ///         FollowItem::Conversation(event) => println!("{:?}", event.content),
    ///         FollowItem::Ended(state) => println!("ended {}", state.status),
    ///         _ => {}
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn follow(&self, session_id: &str) -> Result<crate::Follow, Error> {
        crate::follow::follow(self.clone(), session_id, None).await
    }

    /// [Follows](Self::follow) session `session_id` from after its conversation event
    /// `sequence`: for the next turn of a session followed before, without its history again.
    /// [`Follow::last_sequence`](crate::Follow::last_sequence) says where a follow got to.
    ///
    /// ```no_run
    /// use futures::StreamExt;
    /// use hld_client::protocol::MessageMode;
    /// use hld_client::FollowItem;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let session = "4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13";
    /// let mut follow = client.follow(session).await?;
    /// while let Some(item) = follow.next().await {
    ///     if let FollowItem::TurnEnded { .. } = item? {
    ///         break;
    ///     }
    /// }
    /// client.send_message(session, "Now the tests", MessageMode::Queue).await?;
    /// let mut next = client.follow_after(session, follow.last_sequence()).await?;
    /// while let Some(item) = next.next().await {
    ///     println!("{:?}", item?);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn follow_after(
        &self,
        session_id: &str,
        sequence: Option<i64>,
    ) -> Result<crate::Follow, Error> {
        crate::follow::follow(self.clone(), session_id, sequence).await
    }

    /// Launches a session and [follows](Self::follow) it; [`Follow::session_id`] says which.
    /// The stream starts with the session's first conversation event, and the launch's turn
    /// is followed to its end even when it ended before following began: a process that stays
    /// for the next message yields [`FollowItem::TurnEnded`](crate::FollowItem::TurnEnded).
    ///
    /// [`Follow::session_id`]: crate::Follow::session_id
    ///
    /// ```no_run
    /// use futures::StreamExt;
    /// use hld_client::protocol::LaunchSessionParams;
    /// use hld_client::FollowItem;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let params = LaunchSessionParams {
    ///     query: "Write a haiku about sockets".into(),
    ///     ..Default::default()
    /// };
    /// let mut follow = client.launch_and_follow(params).await?;
    /// while let Some(item) = follow.next().await {
    ///     if let FollowItem::Ended(state) = item? {
    ///         println!("{}: {:?}", follow.session_id(), state.result_content);
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn launch_and_follow(
        &self,
        params: LaunchSessionParams,
    ) -> Result<crate::Follow, Error> {
        let launched = self.launch_session(params).await?;
        // From before its first event: whatever the session stored is the launch's turn.
        self.follow_after(&launched.session_id, Some(0)).await
    }
}

/// Reads until the connection ends, then fails every pending call.
async fn read(
    mut reader: Reader,
    pending: Pending,
    outgoing: mpsc::UnboundedSender<String>,
    events: Option<mpsc::Sender<Delivered>>,
    gone: watch::Sender<bool>,
) {
    let empty = || Ok(Value::Object(Default::default()));
    while let Some(Ok(text)) = reader.next().await {
        let (event, ack) = match codec::incoming(&text) {
            Incoming::Reply(id, response) => {
                let waiter = pending.lock().unwrap().as_mut().and_then(|m| m.remove(&id));
                if let Some((_, tx)) = waiter {
                    let _ = tx.send(codec::outcome(response));
                }
                continue;
            }
            // The refused line is over the limit, and so is the longest call still waiting,
            // which fails with the refusal: each refusal fails one call over the limit.
            Incoming::Oversize(response) => {
                let mut pending = pending.lock().unwrap();
                let longest = pending.as_ref().and_then(|m| {
                    let (id, _) = m.iter().max_by_key(|(_, (len, _))| *len)?;
                    Some(*id)
                });
                let waiter = longest.and_then(|id| pending.as_mut()?.remove(&id));
                if let Some((_, tx)) = waiter {
                    let _ = tx.send(codec::outcome(response));
                }
                continue;
            }
            // On the socket, a subscription's events come as replies to no call.
            Incoming::Unmatched(response) => (response.result.and_then(codec::event), None),
            Incoming::Request { id, method, params } if method == "event" => {
                (codec::event(params), Some(id))
            }
            Incoming::Request { id, method, .. } => {
                let answer = match method.as_str() {
                    "rpc.heartbeat" => codec::answer(&id, empty()),
                    _ => codec::answer(
                        &id,
                        Err((-32601, &format!("method \"{method}\" not registered"))),
                    ),
                };
                let _ = outgoing.send(answer);
                continue;
            }
            Incoming::Other => continue,
        };
        match (event, &events) {
            (Some(event), Some(events)) => {
                if events.send(Delivered { event, ack }).await.is_err() {
                    break;
                }
            }
            // An event nobody asked for (or not one) is still answered, so it does not wait.
            (_, _) => {
                if let Some(id) = ack {
                    let _ = outgoing.send(codec::answer(&id, empty()));
                }
            }
        }
    }
    // Dropping the senders fails every pending call with `Disconnected`.
    pending.lock().unwrap().take();
    let _ = gone.send(true);
}

/// Writes what callers queue until the connection fails or the client goes.
async fn write(mut writer: Writer, mut queued: mpsc::UnboundedReceiver<String>, pending: Pending) {
    while let Some(message) = queued.recv().await {
        if writer.send(message).await.is_err() {
            pending.lock().unwrap().take();
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::UnixListener;
    use std::path::PathBuf;
    use std::thread::JoinHandle;
    use std::time::Instant;

    use super::*;

    /// A one-connection server answering each request line with `answer(request)` (several
    /// lines allowed; no line at all when it returns `None`, which also closes the connection).
    fn serve(
        dir: &tempfile::TempDir,
        answer: impl Fn(&Value) -> Option<String> + Send + 'static,
    ) -> (PathBuf, JoinHandle<Vec<Value>>) {
        let path = dir.path().join("d.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (conn, _) = listener.accept().unwrap();
            let mut writer = conn.try_clone().unwrap();
            let mut seen = Vec::new();
            for line in BufReader::new(conn).lines() {
                let request: Value = serde_json::from_str(&line.unwrap()).unwrap();
                let Some(reply) = answer(&request) else {
                    break;
                };
                seen.push(request);
                writer.write_all(reply.as_bytes()).unwrap();
            }
            seen
        });
        (path, server)
    }

    #[tokio::test]
    async fn a_call_sends_one_line_and_skips_lines_that_answer_other_calls() {
        let dir = tempfile::tempdir().unwrap();
        let (path, server) = serve(&dir, |request| {
            let id = &request["id"];
            Some(format!(
                "{{\"jsonrpc\":\"2.0\",\"result\":{{\"version\":\"stale\"}},\"id\":999}}\n\
                 not json\n\
                 {{\"jsonrpc\":\"2.0\",\"result\":{{\"version\":\"1.2.3\"}},\"id\":{id}}}\n"
            ))
        });
        let client = Client::connect(&path).await.unwrap();
        assert_eq!(client.version().await.unwrap().version, "1.2.3");
        assert_eq!(client.version().await.unwrap().version, "1.2.3");
        drop(client);
        // The connection closes as the runtime ends the client's tasks: join off it.
        let seen = tokio::task::spawn_blocking(|| server.join().unwrap())
            .await
            .unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0]["method"], "version");
        assert_eq!(seen[0]["jsonrpc"], "2.0");
        assert_ne!(seen[0]["id"], seen[1]["id"], "each call has its own id");
    }

    #[tokio::test]
    async fn an_error_reply_is_an_rpc_error_with_its_data() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _server) = serve(&dir, |request| {
            Some(format!(
                "{{\"jsonrpc\":\"2.0\",\"error\":{{\"code\":-32602,\"message\":\"bad level\",\
                 \"data\":{{\"param\":\"level\",\"expected\":\"a level\"}}}},\"id\":{}}}\n",
                request["id"]
            ))
        });
        let client = Client::connect(&path).await.unwrap();
        let reply = client.set_log_level("shouting").await;
        let Err(Error::Rpc(error)) = reply else {
            panic!("expected an RPC error, got {reply:?}");
        };
        assert_eq!(error.code, -32602);
        assert_eq!(error.message, "bad level");
        assert_eq!(error.data.as_ref().unwrap()["param"], "level");
    }

    /// A missing socket file, and one left by a daemon that is gone (nothing accepts on it),
    /// are the same error, naming the path.
    #[tokio::test]
    async fn a_missing_or_refusing_socket_is_daemon_not_running() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none.sock");
        let stale = dir.path().join("stale.sock");
        drop(UnixListener::bind(&stale).unwrap());
        assert!(stale.exists());
        for path in [missing, stale] {
            let err = Client::connect(&path).await.unwrap_err();
            assert!(
                matches!(&err, Error::DaemonNotRunning { socket } if socket == &path),
                "{err:?}"
            );
            assert!(err.to_string().contains(&path.display().to_string()));
        }
    }

    #[tokio::test]
    async fn a_call_without_a_reply_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("silent.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let client = Client::connect_with_timeout(&path, Duration::from_millis(200))
            .await
            .unwrap();
        let started = Instant::now();
        assert!(matches!(client.health().await, Err(Error::Timeout)));
        assert!(started.elapsed() < Duration::from_secs(2));
        drop(listener);
    }

    #[tokio::test]
    async fn a_connection_closed_before_the_reply_is_disconnected() {
        let dir = tempfile::tempdir().unwrap();
        let (path, server) = serve(&dir, |_| None);
        let client = Client::connect(&path).await.unwrap();
        assert!(matches!(client.health().await, Err(Error::Disconnected)));
        server.join().unwrap();
    }
}
