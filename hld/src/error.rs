//! The daemon's domain error, whatever the transport; `rpc::error` maps it to JSON-RPC.

use hld_client::protocol::{InvalidParamsData, UNKNOWN_ID};

use crate::store::StoreError;

#[derive(Debug)]
pub enum Error {
    /// The client asked for something invalid: a bad parameter, an unknown id, a wrong state.
    InvalidParams {
        /// The message, e.g. `query is required`.
        message: String,
        /// Which parameter, what was expected and what came.
        data: InvalidParamsData,
    },
    /// A fault inside the daemon. Only `public` leaves it; `source` is logged.
    Internal {
        /// A message free of paths and secrets.
        public: String,
        source: anyhow::Error,
    },
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn invalid_param(
        param: &str,
        expected: &str,
        received: &str,
        message: impl Into<String>,
    ) -> Self {
        Error::InvalidParams {
            message: message.into(),
            data: InvalidParamsData {
                param: param.to_owned(),
                expected: expected.to_owned(),
                received: received.to_owned(),
                accepted: None,
            },
        }
    }

    /// A required parameter that is missing or empty.
    pub fn required(param: &str, expected: &str, received: &str) -> Self {
        Self::invalid_param(param, expected, received, format!("{param} is required"))
    }

    /// An id that names nothing.
    pub fn not_found(param: &str, what: &str, id: &str) -> Self {
        Self::invalid_param(
            param,
            &format!("existing {what} id"),
            UNKNOWN_ID,
            format!("{what} not found: {id}"),
        )
    }

    /// A value outside an enumeration.
    pub fn not_accepted(param: &str, received: &str, accepted: &[&str]) -> Self {
        Error::InvalidParams {
            message: format!("invalid {param}: {received}"),
            data: InvalidParamsData {
                param: param.to_owned(),
                expected: format!("one of {}", accepted.join("|")),
                received: received.to_owned(),
                accepted: Some(accepted.iter().map(|s| (*s).to_owned()).collect()),
            },
        }
    }

    /// A fault inside the daemon; `public` says which action failed. When the database refused
    /// for a reason its user can act on (another process holds it, the disk is full), the
    /// message says that reason too.
    pub fn internal(public: impl Into<String>, source: impl Into<anyhow::Error>) -> Self {
        let source = source.into();
        let mut public = public.into();
        let cause = source
            .chain()
            .find_map(|e| e.downcast_ref::<StoreError>()?.cause());
        if let Some(cause) = cause {
            public = format!("{public}: {cause}");
        }
        Error::Internal { public, source }
    }

    /// The message a client may read.
    pub fn public_message(&self) -> &str {
        match self {
            Error::InvalidParams { message, .. } => message,
            Error::Internal { public, .. } => public,
        }
    }
}
