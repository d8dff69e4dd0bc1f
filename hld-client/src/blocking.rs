//! A blocking client over a std `UnixStream`, for one-shot callers that need no runtime (the
//! `hlyr` commands that make a call or two and exit). Calls go one at a time on one
//! connection; request lines, reply decoding, errors and typed calls are the async
//! [`crate::Client`]'s own (see `codec` and `calls`).

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::codec;
use crate::error::Error;
use crate::protocol::*;
use crate::DEFAULT_TIMEOUT;

/// A blocking connection to the daemon.
pub struct Client {
    path: PathBuf,
    conn: Mutex<Conn>,
    timeout: Duration,
}

struct Conn {
    reader: BufReader<UnixStream>,
    last_id: u64,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("path", &self.path).finish()
    }
}

impl Client {
    /// Connects to the daemon at `path`. A socket nobody answers on is
    /// [`Error::DaemonNotRunning`]; one that is not the user's own (another user's, or in a
    /// directory others can write) is [`Error::UntrustedSocket`], before anything is sent.
    ///
    /// ```no_run
    /// # fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::blocking::Client::connect("/tmp/hld-test/daemon.sock")?;
    /// println!("hld {}", client.version()?.version);
    /// # Ok(())
    /// # }
    /// ```
    pub fn connect(path: impl AsRef<Path>) -> Result<Client, Error> {
        Self::connect_with_timeout(path, DEFAULT_TIMEOUT)
    }

    /// Connects to the daemon at the default path (see [`crate::config::resolve_socket_path`]).
    ///
    /// ```no_run
    /// use hld_client::{blocking::Client, Error};
    ///
    /// # fn demo() -> Result<(), Error> {
    /// match Client::connect_default() {
    ///     Ok(client) => println!("{} sessions", client.list_sessions()?.len()),
    ///     Err(Error::DaemonNotRunning { socket }) => {
    ///         eprintln!("no daemon at {}", socket.display())
    ///     }
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn connect_default() -> Result<Client, Error> {
        Self::connect(crate::config::default_socket_path()?)
    }

    /// Connects with a per-call timeout (it bounds both sending a request and its reply).
    ///
    /// ```no_run
    /// use std::time::Duration;
    ///
    /// # fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::blocking::Client::connect_with_timeout(
    ///     "/tmp/hld-test/daemon.sock",
    ///     Duration::from_secs(2),
    /// )?;
    /// client.health()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn connect_with_timeout(
        path: impl AsRef<Path>,
        timeout: Duration,
    ) -> Result<Client, Error> {
        let path = path.as_ref().to_path_buf();
        crate::trust::check_socket(&path)?;
        let stream = UnixStream::connect(&path).map_err(|e| Error::connecting(&path, e))?;
        stream.set_write_timeout(Some(timeout))?;
        Ok(Client {
            path,
            conn: Mutex::new(Conn {
                reader: BufReader::new(stream),
                last_id: 0,
            }),
            timeout,
        })
    }

    /// The socket path this client is connected to.
    ///
    /// ```no_run
    /// # fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::blocking::Client::connect_default()?;
    /// println!("{}", client.path().display());
    /// # Ok(())
    /// # }
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Calls a method by name with arbitrary params, returning the raw result. Lines that
    /// answer no call of ours (or an earlier call that timed out) are skipped.
    ///
    /// ```no_run
    /// # fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::blocking::Client::connect_default()?;
    /// let reply = client.call_raw("getRecentPaths", serde_json::json!({"limit": 5}))?;
    /// println!("{reply}");
    /// # Ok(())
    /// # }
    /// ```
    pub fn call_raw(&self, method: &str, params: Value) -> Result<Value, Error> {
        let deadline = Instant::now() + self.timeout;
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        conn.last_id += 1;
        let id = conn.last_id;
        let line = codec::request_line(method, params, id)?;
        conn.reader.get_mut().write_all(&line).map_err(|e| {
            if timed_out(&e) {
                Error::Timeout
            } else {
                Error::Io(e)
            }
        })?;
        let mut line = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout);
            }
            conn.reader.get_ref().set_read_timeout(Some(left))?;
            line.clear();
            match conn.reader.read_until(b'\n', &mut line) {
                Ok(0) => return Err(Error::Disconnected),
                Ok(_) => {}
                Err(e) if timed_out(&e) => return Err(Error::Timeout),
                // As with the async client, a connection that fails while reading is gone.
                Err(_) => return Err(Error::Disconnected),
            }
            match codec::reply(&line) {
                Some((answered, reply)) if answered == id => return reply,
                _ => continue,
            }
        }
    }

    typed_calls!(blocking);
}

/// Whether an I/O error is a socket timeout running out.
fn timed_out(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::UnixListener;
    use std::thread::JoinHandle;

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

    #[test]
    fn a_call_sends_one_line_and_skips_lines_that_answer_other_calls() {
        let dir = tempfile::tempdir().unwrap();
        let (path, server) = serve(&dir, |request| {
            let id = &request["id"];
            Some(format!(
                "{{\"jsonrpc\":\"2.0\",\"result\":{{\"version\":\"stale\"}},\"id\":999}}\n\
                 not json\n\
                 {{\"jsonrpc\":\"2.0\",\"result\":{{\"version\":\"1.2.3\"}},\"id\":{id}}}\n"
            ))
        });
        let client = Client::connect(&path).unwrap();
        assert_eq!(client.version().unwrap().version, "1.2.3");
        assert_eq!(client.version().unwrap().version, "1.2.3");
        drop(client);
        let seen = server.join().unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0]["method"], "version");
        assert_eq!(seen[0]["jsonrpc"], "2.0");
        assert_ne!(seen[0]["id"], seen[1]["id"], "each call has its own id");
    }

    /// The blocking and the async client turn the same error reply into the same error.
    #[test]
    fn an_error_reply_is_the_same_rpc_error_as_the_async_clients() {
        let reply = |request: &Value| {
            Some(format!(
                "{{\"jsonrpc\":\"2.0\",\"error\":{{\"code\":-32602,\"message\":\"bad level\",\
                 \"data\":{{\"param\":\"level\",\"expected\":\"a level\"}}}},\"id\":{}}}\n",
                request["id"]
            ))
        };
        let dir = tempfile::tempdir().unwrap();
        let (path, _server) = serve(&dir, reply);
        let blocking = Client::connect(&path).unwrap().set_log_level("shouting");
        let Err(Error::Rpc(blocking)) = blocking else {
            panic!("expected an RPC error, got {blocking:?}");
        };
        assert_eq!(blocking.code, -32602);
        assert_eq!(blocking.message, "bad level");
        assert_eq!(blocking.data.as_ref().unwrap()["param"], "level");

        let dir = tempfile::tempdir().unwrap();
        let (path, _server) = serve(&dir, reply);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let from_async = runtime.block_on(async {
            let client = crate::Client::connect(&path).await.unwrap();
            client.set_log_level("shouting").await
        });
        let Err(Error::Rpc(from_async)) = from_async else {
            panic!("expected an RPC error, got {from_async:?}");
        };
        assert_eq!(blocking, from_async);
    }

    /// A missing socket file, and one left by a daemon that is gone (nothing accepts on it),
    /// are the same error, naming the path, from both clients.
    #[test]
    fn a_missing_or_refusing_socket_is_daemon_not_running_like_the_async_clients() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none.sock");
        let stale = dir.path().join("stale.sock");
        drop(UnixListener::bind(&stale).unwrap());
        assert!(stale.exists());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        for path in [missing, stale] {
            let blocking = Client::connect(&path).unwrap_err();
            let from_async = runtime.block_on(crate::Client::connect(&path)).unwrap_err();
            for err in [blocking, from_async] {
                assert!(
                    matches!(&err, Error::DaemonNotRunning { socket } if socket == &path),
                    "{err:?}"
                );
                assert!(err.to_string().contains(&path.display().to_string()));
            }
        }
    }

    #[test]
    fn a_call_without_a_reply_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("silent.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let client = Client::connect_with_timeout(&path, Duration::from_millis(200)).unwrap();
        let started = Instant::now();
        assert!(matches!(client.health(), Err(Error::Timeout)));
        assert!(started.elapsed() < Duration::from_secs(2));
        drop(listener);
    }

    #[test]
    fn a_connection_closed_before_the_reply_is_disconnected() {
        let dir = tempfile::tempdir().unwrap();
        let (path, server) = serve(&dir, |_| None);
        let client = Client::connect(&path).unwrap();
        assert!(matches!(client.health(), Err(Error::Disconnected)));
        server.join().unwrap();
    }
}
