//! The async client: one connection, many concurrent callers, replies matched by id.
//!
//! One task reads the socket and completes pending calls through oneshots; writers take a
//! short async lock on the write half. When the connection drops, every pending call fails
//! with [`Error::Disconnected`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::OwnedWriteHalf;
use tokio::net::UnixStream;
use tokio::sync::oneshot;

use crate::error::Error;
use crate::protocol::*;

/// The default per-call timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

type Pending = Arc<Mutex<Option<HashMap<u64, oneshot::Sender<Result<Value, Error>>>>>>;

/// A connection to the daemon. Cheap to clone; clones share the connection.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    writer: tokio::sync::Mutex<OwnedWriteHalf>,
    // A std Mutex: it is only held to insert or remove an entry, never across an await.
    // `None` once the connection is gone.
    pending: Pending,
    next_id: AtomicU64,
    timeout: Duration,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("path", &self.inner.path)
            .finish()
    }
}

impl Client {
    /// Connects to the daemon at `path`.
    pub async fn connect(path: impl AsRef<Path>) -> Result<Client, Error> {
        Self::connect_with_timeout(path, DEFAULT_TIMEOUT).await
    }

    /// Connects to the daemon at the default path (see [`crate::config::resolve_socket_path`]).
    pub async fn connect_default() -> Result<Client, Error> {
        let path = crate::config::resolve_socket_path(None)
            .map_err(|e| Error::Io(std::io::Error::new(std::io::ErrorKind::InvalidInput, e)))?;
        Self::connect(path).await
    }

    /// Connects with a per-call timeout.
    pub async fn connect_with_timeout(
        path: impl AsRef<Path>,
        timeout: Duration,
    ) -> Result<Client, Error> {
        let path = path.as_ref().to_path_buf();
        let stream = UnixStream::connect(&path).await?;
        let (read, write) = stream.into_split();
        let pending: Pending = Arc::new(Mutex::new(Some(HashMap::new())));
        let reader = tokio::spawn(read_replies(BufReader::new(read), pending.clone()));
        Ok(Client {
            inner: Arc::new(Inner {
                path,
                writer: tokio::sync::Mutex::new(write),
                pending,
                next_id: AtomicU64::new(1),
                timeout,
                reader,
            }),
        })
    }

    /// The socket path this client is connected to.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Calls method `M` and decodes its result.
    pub async fn call<M: Method>(&self, params: M::Params) -> Result<M::Result, Error> {
        let value = self
            .call_raw(M::NAME, serde_json::to_value(params)?)
            .await?;
        Ok(serde_json::from_value(value)?)
    }

    /// Calls a method by name with arbitrary params, returning the raw result.
    pub async fn call_raw(&self, method: &str, params: Value) -> Result<Value, Error> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let mut line = serde_json::to_vec(&Request::new(method, params, RequestId::from(id)))?;
        line.push(b'\n');
        let (tx, rx) = oneshot::channel();
        match self.inner.pending.lock().unwrap().as_mut() {
            Some(map) => map.insert(id, tx),
            None => return Err(Error::Disconnected),
        };
        let write = async {
            let mut writer = self.inner.writer.lock().await;
            writer.write_all(&line).await
        };
        if let Err(e) = write.await {
            self.forget(id);
            return Err(Error::Io(e));
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

    /// `health`.
    pub async fn health(&self) -> Result<HealthResult, Error> {
        self.call::<Health>(NoParams {}).await
    }

    /// `launchSession`.
    pub async fn launch_session(
        &self,
        params: LaunchSessionParams,
    ) -> Result<LaunchSessionResult, Error> {
        self.call::<LaunchSession>(params).await
    }

    /// `listSessions`.
    pub async fn list_sessions(&self) -> Result<Vec<SessionInfo>, Error> {
        Ok(self.call::<ListSessions>(NoParams {}).await?.sessions)
    }

    /// `getSessionState`.
    pub async fn get_session_state(&self, session_id: &str) -> Result<SessionState, Error> {
        let params = SessionIdParams {
            session_id: session_id.to_owned(),
        };
        Ok(self.call::<GetSessionState>(params).await?.session)
    }

    /// `getConversation`.
    pub async fn get_conversation(
        &self,
        params: GetConversationParams,
    ) -> Result<Vec<ConversationEvent>, Error> {
        Ok(self.call::<GetConversation>(params).await?.events)
    }

    /// `continueSession`.
    pub async fn continue_session(
        &self,
        params: ContinueSessionParams,
    ) -> Result<ContinueSessionResult, Error> {
        self.call::<ContinueSession>(params).await
    }

    /// `interruptSession`.
    pub async fn interrupt_session(
        &self,
        session_id: &str,
    ) -> Result<InterruptSessionResult, Error> {
        let params = SessionIdParams {
            session_id: session_id.to_owned(),
        };
        self.call::<InterruptSession>(params).await
    }

    /// `fetchApprovals`.
    pub async fn fetch_approvals(&self, session_id: Option<&str>) -> Result<Vec<Approval>, Error> {
        let params = FetchApprovalsParams {
            session_id: session_id.map(str::to_owned),
        };
        Ok(self.call::<FetchApprovals>(params).await?.approvals)
    }

    /// `sendDecision`.
    pub async fn send_decision(
        &self,
        params: SendDecisionParams,
    ) -> Result<SendDecisionResult, Error> {
        self.call::<SendDecision>(params).await
    }

    /// `createApproval`.
    pub async fn create_approval(
        &self,
        params: CreateApprovalParams,
    ) -> Result<CreateApprovalResult, Error> {
        self.call::<CreateApproval>(params).await
    }

    /// `getApproval`.
    pub async fn get_approval(&self, approval_id: &str) -> Result<Approval, Error> {
        let params = GetApprovalParams {
            approval_id: approval_id.to_owned(),
        };
        Ok(self.call::<GetApproval>(params).await?.approval)
    }

    /// `initialize`.
    pub async fn initialize(&self) -> Result<InitializeResult, Error> {
        self.call::<Initialize>(NoParams {}).await
    }

    /// `version`.
    pub async fn version(&self) -> Result<VersionResult, Error> {
        self.call::<Version>(NoParams {}).await
    }

    /// `listMethods`.
    pub async fn list_methods(&self) -> Result<Vec<MethodSummary>, Error> {
        self.call::<ListMethods>(NoParams {}).await
    }

    /// `describeMethods`.
    pub async fn describe_methods(&self) -> Result<Vec<MethodDescription>, Error> {
        self.call::<DescribeMethods>(NoParams {}).await
    }

    /// `setLogLevel`.
    pub async fn set_log_level(&self, level: &str) -> Result<SetLogLevelResult, Error> {
        let params = SetLogLevelParams {
            level: level.to_owned(),
        };
        self.call::<SetLogLevel>(params).await
    }

    /// Opens a subscription on its own connection (see [`crate::subscribe`]).
    pub async fn subscribe(
        &self,
        params: SubscribeParams,
        options: crate::SubscribeOptions,
    ) -> Result<crate::Subscription, Error> {
        crate::subscribe(self.path(), params, options).await
    }

    /// `shutdown`.
    pub async fn shutdown(&self) -> Result<ShutdownResult, Error> {
        self.call::<Shutdown>(NoParams {}).await
    }
}

async fn read_replies(mut reader: BufReader<tokio::net::unix::OwnedReadHalf>, pending: Pending) {
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let Ok(response) = serde_json::from_slice::<Response>(&line) else {
            continue;
        };
        let Some(RequestId::Number(n)) = &response.id else {
            continue;
        };
        let Some(id) = n.as_u64() else { continue };
        let waiter = pending.lock().unwrap().as_mut().and_then(|m| m.remove(&id));
        if let Some(tx) = waiter {
            let reply = match (response.error, response.result) {
                (Some(err), _) => Err(Error::Rpc(err)),
                (None, result) => Ok(result.unwrap_or(Value::Null)),
            };
            let _ = tx.send(reply);
        }
    }
    // Dropping the senders fails every pending call with `Disconnected`.
    pending.lock().unwrap().take();
}
