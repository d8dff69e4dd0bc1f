//! The one method table: every served method, its description and its typed handler.
//! `listMethods` and `describeMethods` are generated from it.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use hld_client::protocol::{Method, MethodDescription, MethodSummary};
use serde_json::value::RawValue;

use super::envelope::json_kind;
use super::error::from_decode_error;
use crate::daemon::Daemon;
use crate::error::{Error, Result};

/// A handler with its types erased: params as raw JSON in, the result as JSON out.
pub type Handler =
    Box<dyn Fn(Arc<Daemon>, Option<&RawValue>) -> BoxFuture<'static, Result<Bytes>> + Send + Sync>;

/// One served method.
struct Entry {
    name: &'static str,
    description: &'static str,
    params: &'static [&'static str],
    returns: &'static str,
    /// `None` for a method the connection serves itself (`Subscribe`).
    handler: Option<Handler>,
}

/// How a method is served.
pub enum Route<'a> {
    /// By its handler.
    Handler(&'a Handler),
    /// By the connection loop (`Subscribe`).
    Connection,
}

/// Every method the daemon serves, in registration order.
#[derive(Default)]
pub struct Router {
    entries: Vec<Entry>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| e.name))
            .finish()
    }
}

impl Router {
    /// Registers method `M`, served by `handler`: typed params in, typed result (or a domain
    /// error) out.
    pub fn route<M, F, Fut>(&mut self, handler: F) -> &mut Self
    where
        M: Method,
        F: Fn(Arc<Daemon>, M::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<M::Result>> + Send + 'static,
    {
        let handler: Handler = Box::new(move |daemon, raw| match decode_params::<M>(raw) {
            Ok(params) => handler(daemon, params)
                .map(|result| result.and_then(|r| Ok(Encoded::new(&r)?.json)))
                .boxed(),
            Err(e) => futures::future::ready(Err(e)).boxed(),
        });
        self.push::<M>(Some(handler))
    }

    /// Registers method `M`, served by `handler`, which returns its result already
    /// serialised ([`Encoded`]): for a method called so often, with a result that changes so
    /// seldom, that it keeps the JSON (`health`).
    pub fn route_encoded<M, F, Fut>(&mut self, handler: F) -> &mut Self
    where
        M: Method,
        F: Fn(Arc<Daemon>, M::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Encoded<M::Result>>> + Send + 'static,
    {
        let handler: Handler = Box::new(move |daemon, raw| match decode_params::<M>(raw) {
            Ok(params) => handler(daemon, params)
                .map(|result| result.map(|r| r.json))
                .boxed(),
            Err(e) => futures::future::ready(Err(e)).boxed(),
        });
        self.push::<M>(Some(handler))
    }

    /// Registers a method the connection loop serves itself.
    pub fn connection<M: Method>(&mut self) -> &mut Self {
        self.push::<M>(None)
    }

    fn push<M: Method>(&mut self, handler: Option<Handler>) -> &mut Self {
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
            handler,
        });
        self
    }

    /// How `name` is served, if it is.
    pub fn get(&self, name: &str) -> Option<Route<'_>> {
        let entry = self.entries.iter().find(|e| e.name == name)?;
        Some(match &entry.handler {
            Some(handler) => Route::Handler(handler),
            None => Route::Connection,
        })
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

/// The JSON of a `T`: a method's result, serialised.
#[derive(Debug)]
pub struct Encoded<T> {
    json: Bytes,
    of: PhantomData<fn() -> T>,
}

impl<T> Clone for Encoded<T> {
    fn clone(&self) -> Self {
        Encoded {
            json: self.json.clone(),
            of: PhantomData,
        }
    }
}

impl<T: serde::Serialize> Encoded<T> {
    /// Serialises `value`.
    pub fn new(value: &T) -> Result<Encoded<T>> {
        let mut json = Vec::with_capacity(256);
        serde_json::to_writer(&mut json, value)
            .map_err(|e| Error::internal("failed to encode the result", e))?;
        Ok(Encoded {
            json: Bytes::from(json),
            of: PhantomData,
        })
    }
}

/// Decodes `M`'s params: absent, `null` and `[]` mean `{}`; anything else but an object is
/// -32602, and so is an object that does not decode, naming the offending field.
///
/// `[]` is what Neovim sends for an empty Lua table (`rpc.request("health", {}, …)`): JSON-RPC
/// 2.0 allows params by position, and an empty list of them is no params at all, which a
/// method whose params are all optional takes and any other refuses for the field it lacks.
pub fn decode_params<M: Method>(raw: Option<&RawValue>) -> Result<M::Params> {
    let raw = raw.filter(|r| !is_empty_array(r));
    let text = raw.map_or("{}", RawValue::get);
    if let Some(raw) = raw.filter(|r| !r.get().starts_with('{')) {
        return Err(Error::invalid_param(
            "params",
            "object",
            json_kind(raw),
            "params must be an object",
        ));
    }
    // Valid params decode without tracking the path; a failure is decoded again, to name the
    // field that failed.
    serde_json::from_str(text).or_else(|_| {
        let mut de = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut de).map_err(|e| from_decode_error(e, M::PARAMS))
    })
}

/// Whether `raw` is an empty JSON array (`[]`, whitespace allowed inside).
fn is_empty_array(raw: &RawValue) -> bool {
    raw.get()
        .strip_prefix('[')
        .is_some_and(|rest| rest.trim_start() == "]")
}

#[cfg(test)]
mod tests {
    use hld_client::protocol::{GetSessionState, Health, Subscribe};

    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    /// The param an error names, or "" for success.
    fn refused<M: Method>(text: &str) -> String {
        match decode_params::<M>(Some(&raw(text))) {
            Ok(_) => String::new(),
            Err(Error::InvalidParams { data, .. }) => data.param,
            Err(e) => panic!("{e:?}"),
        }
    }

    #[test]
    fn an_empty_array_is_no_params_and_any_other_array_is_refused() {
        for empty in ["[]", "[ ]", "[\n\t]"] {
            assert_eq!(refused::<Health>(empty), "", "{empty}");
            assert_eq!(refused::<Subscribe>(empty), "", "{empty}");
        }
        assert_eq!(refused::<Health>("[1]"), "params");
        assert_eq!(refused::<Subscribe>("[{}]"), "params");
        assert_eq!(refused::<Health>("\"bar\""), "params");
        // A method with a required param still needs it.
        assert_eq!(refused::<GetSessionState>("[]"), "session_id");
    }
}
