//! [`LineConn`]: a raw line-oriented connection to the daemon's socket, for the wire-level
//! tests that send what no typed client would.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use hld_client::protocol::{ErrorObject, Method, Request, RequestId, Response};
use serde_json::Value;

/// A raw line-oriented connection to the daemon, for wire-level tests.
#[derive(Debug)]
pub struct LineConn {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl LineConn {
    /// Connects, with a 10 s read timeout.
    pub fn connect(path: &Path) -> std::io::Result<LineConn> {
        let stream = UnixStream::connect(path)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        Ok(LineConn {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
        })
    }

    /// Writes raw bytes.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write to daemon");
    }

    /// Writes one line (a `\n` is added).
    pub fn send(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.send_raw(&bytes);
    }

    /// Reads one line and parses it.
    pub fn recv(&mut self) -> Value {
        let line = self.recv_line().expect("a reply line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad reply {line:?}: {e}"))
    }

    /// Reads one raw line, or `None` on EOF.
    pub fn recv_line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(line),
            Err(e) => panic!("read from daemon: {e}"),
        }
    }

    /// Reads one line within `timeout`, or `None` if none arrived (or EOF).
    pub fn try_recv(&mut self, timeout: Duration) -> Option<Value> {
        self.set_timeout(timeout);
        let mut line = String::new();
        let got = match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(serde_json::from_str(&line).expect("a JSON line")),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                None
            }
            Err(e) => panic!("read from daemon: {e}"),
        };
        self.set_timeout(Duration::from_secs(10));
        got
    }

    /// Sets the read timeout.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.writer
            .set_read_timeout(Some(timeout))
            .expect("set timeout");
    }

    /// Sends a line and reads the reply.
    pub fn call(&mut self, line: &str) -> Value {
        self.send(line);
        self.recv()
    }

    /// Sends a raw request and reads the reply.
    pub fn request(&mut self, method: &str, params: Value, id: Value) -> Value {
        let line = serde_json::json!({"jsonrpc":"2.0","method":method,"params":params,"id":id});
        self.call(&line.to_string())
    }

    /// Sends method `M` and decodes the reply: its typed result, or the error object. A reply
    /// that is neither, or a result that does not decode as `M::Result`, fails the test.
    pub fn try_request<M: Method>(&mut self, params: M::Params) -> Result<M::Result, ErrorObject> {
        let request = Request::new(M::NAME, params, RequestId::from(1));
        let line = serde_json::to_string(&request).expect("params serialise");
        let reply = self.call(&line);
        let response: Response = serde_json::from_value(reply.clone())
            .unwrap_or_else(|e| panic!("not a JSON-RPC response ({e}): {reply}"));
        if let Some(error) = response.error {
            return Err(error);
        }
        let result = response.result.unwrap_or_else(|| {
            panic!(
                "{}: a reply with neither result nor error: {reply}",
                M::NAME
            )
        });
        Ok(serde_json::from_value(result).unwrap_or_else(|e| {
            panic!(
                "the {} result does not decode as {} ({e}): {reply}",
                M::NAME,
                std::any::type_name::<M::Result>()
            )
        }))
    }
}
