//! The method table: every served method, its description and how it is served.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use hld_client::protocol::{Method, MethodDescription, MethodSummary};
use serde_json::value::RawValue;

use super::envelope::json_kind;
use super::error::from_decode_error;
use crate::bus::Subscriber;
use crate::error::{Error, Result};

/// A handler with its types erased: params as raw JSON in, the result as JSON out.
type Handler<S> =
    Box<dyn Fn(Arc<S>, Option<&RawValue>) -> BoxFuture<'static, Result<Vec<u8>>> + Send + Sync>;

/// A subscription opener with its params' type erased.
type Subscribe<S> = Box<dyn Fn(&S, Option<&RawValue>) -> Result<Subscriber> + Send + Sync>;

/// How a method is served: by its handler, a subscription, a closing reply, or the table.
pub(super) enum Served<S> {
    Handler(Handler<S>),
    Subscribe(Subscribe<S>),
    Close(Vec<u8>),
    Table(fn(&Router<S>) -> Result<Vec<u8>>),
}

struct Entry<S> {
    name: &'static str,
    description: &'static str,
    params: &'static [&'static str],
    returns: &'static str,
    served: Served<S>,
}

/// Every method served, in registration order.
pub struct Router<S> {
    entries: Vec<Entry<S>>,
}

impl<S> Default for Router<S> {
    fn default() -> Self {
        Router {
            entries: Vec::new(),
        }
    }
}

impl<S: Send + Sync + 'static> Router<S> {
    /// Registers method `M`, served by `handler`: typed params in, typed result or error out.
    pub fn add<M, F, Fut>(&mut self, handler: F) -> &mut Self
    where
        M: Method,
        F: Fn(Arc<S>, M::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<M::Result>> + Send + 'static,
    {
        let handler: Handler<S> = Box::new(move |state, raw| match decode_params::<M>(raw) {
            Ok(params) => handler(state, params)
                .map(|result| result.and_then(|r| encode(&r)))
                .boxed(),
            Err(e) => futures::future::ready(Err(e)).boxed(),
        });
        self.push::<M>(Served::Handler(handler))
    }

    /// Registers method `M`, which opens a subscription: its events follow on the connection.
    pub fn subscribe<M, F>(&mut self, open: F) -> &mut Self
    where
        M: Method,
        F: Fn(&S, M::Params) -> Result<Subscriber> + Send + Sync + 'static,
    {
        let open: Subscribe<S> = Box::new(move |state, raw| open(state, decode_params::<M>(raw)?));
        self.push::<M>(Served::Subscribe(open))
    }

    /// Registers method `M`, answered with `reply`, after which the connection closes.
    pub fn close<M: Method>(&mut self, reply: &M::Result) -> &mut Self {
        let reply = encode(reply).expect("a fixed reply serialises");
        self.push::<M>(Served::Close(reply))
    }

    /// Registers `listMethods`, answered from the table.
    pub fn list<M: Method<Result = Vec<MethodSummary>>>(&mut self) -> &mut Self {
        self.push::<M>(Served::Table(|router| encode(&router.summaries())))
    }

    /// Registers `describeMethods`, answered from the table.
    pub fn describe<M: Method<Result = Vec<MethodDescription>>>(&mut self) -> &mut Self {
        self.push::<M>(Served::Table(|router| encode(&router.descriptions())))
    }

    fn push<M: Method>(&mut self, served: Served<S>) -> &mut Self {
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
            served,
        });
        self
    }

    pub(super) fn get(&self, name: &str) -> Option<&Served<S>> {
        let entry = self.entries.iter().find(|e| e.name == name)?;
        Some(&entry.served)
    }

    fn summaries(&self) -> Vec<MethodSummary> {
        self.entries
            .iter()
            .map(|e| MethodSummary {
                name: e.name.to_owned(),
                description: e.description.to_owned(),
            })
            .collect()
    }

    fn descriptions(&self) -> Vec<MethodDescription> {
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

fn encode<T: serde::Serialize>(value: &T) -> Result<Vec<u8>> {
    // Most results (`health`'s among them) fit without growing.
    let mut json = Vec::with_capacity(1024);
    serde_json::to_writer(&mut json, value)
        .map_err(|e| Error::internal("failed to encode the result", e))?;
    Ok(json)
}

/// Decodes `M`'s params: absent, `null` and `[]` (Neovim's empty Lua table) mean `{}`;
/// anything else but an object that decodes is -32602, naming the offending field.
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
    // Valid params decode without tracking the path; a failure is decoded again to name it.
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
