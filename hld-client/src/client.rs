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

use crate::codec;
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
        Self::connect(crate::config::default_socket_path()?).await
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

    /// Calls a method by name with arbitrary params, returning the raw result.
    pub async fn call_raw(&self, method: &str, params: Value) -> Result<Value, Error> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let line = codec::request_line(method, params, id)?;
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

    typed_calls!([async] [.await]);

    /// Opens a subscription on its own connection (see [`crate::subscribe`]).
    pub async fn subscribe(
        &self,
        params: SubscribeParams,
        options: crate::SubscribeOptions,
    ) -> Result<crate::Subscription, Error> {
        crate::subscribe(self.path(), params, options).await
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
        let Some((id, reply)) = codec::reply(&line) else {
            continue;
        };
        let waiter = pending.lock().unwrap().as_mut().and_then(|m| m.remove(&id));
        if let Some(tx) = waiter {
            let _ = tx.send(reply);
        }
    }
    // Dropping the senders fails every pending call with `Disconnected`.
    pending.lock().unwrap().take();
}
