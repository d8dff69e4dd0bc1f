//! The one method table: every served method, its description and its handler.
//! `listMethods` and `describeMethods` are generated from it.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use hld_client::protocol::{Method, MethodDescription, MethodSummary, SubscribeParams};

use super::error::{from_decode_error, RpcError};
use crate::daemon::Daemon;

/// A handler's output: the start of its success line, `{"jsonrpc":"2.0","result":<result>`
/// (see [`super::finish_success`]).
pub type HandlerFuture = BoxFuture<'static, Result<Vec<u8>, RpcError>>;

/// A handler: the daemon, the raw JSON of `params` (`None` if absent or null), and an empty
/// buffer to write the success line into (the connection's, so that its capacity is reused).
type CallHandler = Box<dyn Fn(Arc<Daemon>, Option<&str>, Vec<u8>) -> HandlerFuture + Send + Sync>;

/// Room for a usual reply line, reserved in the buffer a handler is given: one allocation on
/// a connection's first request, none after.
const LINE_CAPACITY: usize = 256;

/// The buffer a handler writes into, holding the start of a success line.
fn success_head(mut line: Vec<u8>) -> Vec<u8> {
    line.reserve(LINE_CAPACITY);
    line.extend_from_slice(super::SUCCESS_HEAD);
    line
}

/// How a method is served.
pub enum Kind {
    /// One request, one reply.
    Call(CallHandler),
    /// `Subscribe`: the connection is handed to the subscription loop.
    Subscribe,
}

/// One served method.
pub struct Entry {
    /// Its name.
    pub name: &'static str,
    /// One line for `listMethods`.
    pub description: &'static str,
    /// Signatures for `describeMethods` and for -32602 data.
    pub params: &'static [&'static str],
    /// The result type for `describeMethods`.
    pub returns: &'static str,
    /// How it is served.
    pub kind: Kind,
}

/// Every method the daemon serves, in registration order.
#[derive(Default)]
pub struct MethodTable {
    entries: Vec<Entry>,
}

impl MethodTable {
    /// Registers a request/reply method.
    pub fn route<M, F, Fut>(&mut self, handler: F) -> &mut Self
    where
        M: Method,
        F: Fn(Arc<Daemon>, M::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<M::Result, RpcError>> + Send + 'static,
    {
        let call: CallHandler = Box::new(move |daemon, raw, line| match decode_params::<M>(raw) {
            Ok(params) => {
                let fut = handler(daemon, params);
                async move {
                    let result = fut.await?;
                    let mut line = success_head(line);
                    serde_json::to_writer(&mut line, &result)
                        .map_err(|e| RpcError::internal("failed to encode the result", e))?;
                    Ok(line)
                }
                .boxed()
            }
            Err(e) => futures::future::ready(Err(e)).boxed(),
        });
        self.push::<M>(Kind::Call(call))
    }

    /// Registers a request/reply method whose handler serialises its result itself, for a
    /// hot path assembled from cached JSON: it is given the start of the success line and
    /// returns it with the result's JSON appended. What it appends must read back as
    /// `M::Result`, which a test of that handler checks.
    pub fn route_json<M, F, Fut>(&mut self, handler: F) -> &mut Self
    where
        M: Method,
        F: Fn(Arc<Daemon>, M::Params, Vec<u8>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<u8>, RpcError>> + Send + 'static,
    {
        let call: CallHandler = Box::new(move |daemon, raw, line| match decode_params::<M>(raw) {
            Ok(params) => handler(daemon, params, success_head(line)).boxed(),
            Err(e) => futures::future::ready(Err(e)).boxed(),
        });
        self.push::<M>(Kind::Call(call))
    }

    /// Registers `Subscribe`.
    pub fn subscribe<M: Method<Params = SubscribeParams>>(&mut self) -> &mut Self {
        self.push::<M>(Kind::Subscribe)
    }

    fn push<M: Method>(&mut self, kind: Kind) -> &mut Self {
        assert!(
            self.get(M::NAME).is_none(),
            "method {} registered twice",
            M::NAME
        );
        self.entries.push(Entry {
            name: M::NAME,
            description: M::DESCRIPTION,
            params: M::PARAMS,
            returns: M::RETURNS,
            kind,
        });
        self
    }

    /// The entry for a method name. A scan: with a score of short names it beats hashing.
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// `listMethods`.
    pub fn summaries(&self) -> Vec<MethodSummary> {
        self.entries
            .iter()
            .map(|e| MethodSummary {
                name: e.name.to_owned(),
                description: e.description.to_owned(),
            })
            .collect()
    }

    /// `describeMethods`.
    pub fn descriptions(&self) -> Vec<MethodDescription> {
        self.entries
            .iter()
            .map(|e| MethodDescription {
                name: e.name.to_owned(),
                params: e.params.iter().map(|s| (*s).to_owned()).collect(),
                returns: e.returns.to_owned(),
            })
            .collect()
    }
}

/// Decodes params: absent and `null` mean `{}`; anything but an object is -32602.
pub fn decode_params<M: Method>(raw: Option<&str>) -> Result<M::Params, RpcError> {
    let text = match raw {
        None | Some("null") => "{}",
        Some(text) => text,
    };
    if !text.starts_with('{') {
        return Err(RpcError::invalid_param(
            "params",
            "object",
            json_kind(text),
            "params must be an object",
        ));
    }
    // Valid params decode without tracking the path; only a failure is decoded again to name
    // the offending field.
    serde_json::from_str(text).or_else(|_| {
        let mut de = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut de).map_err(|e| from_decode_error(e, M::PARAMS))
    })
}

/// The JSON type of a raw value, for error data.
pub fn json_kind(raw: &str) -> &'static str {
    match raw.as_bytes().first() {
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "boolean",
        Some(b'n') => "null",
        _ => "number",
    }
}
