//! Handler errors and their one mapping to JSON-RPC error objects.

use hld_client::protocol::{
    ErrorCode, ErrorObject, InvalidParamsData, InvalidRequestData, InvalidRequestReason,
};

/// What a handler (or the dispatcher) can fail with.
#[derive(Debug)]
pub enum RpcError {
    /// The client sent bad params: -32602 with `data`.
    InvalidParams {
        /// The message, e.g. `query is required`.
        message: String,
        /// `{param, expected, received, accepted?}`.
        data: InvalidParamsData,
    },
    /// A fault inside the daemon: -32603. Only `public` is sent; `source` is logged.
    Internal {
        /// A sanitised message without paths or secrets.
        public: String,
        /// The full error, for the log.
        source: anyhow::Error,
    },
}

impl RpcError {
    /// -32602 for one parameter.
    pub fn invalid_param(
        param: &str,
        expected: &str,
        received: &str,
        message: impl Into<String>,
    ) -> Self {
        RpcError::InvalidParams {
            message: message.into(),
            data: InvalidParamsData {
                param: param.to_owned(),
                expected: expected.to_owned(),
                received: received.to_owned(),
                accepted: None,
            },
        }
    }

    /// -32602 for a required parameter that is missing or empty.
    pub fn required(param: &str, expected: &str, received: &str) -> Self {
        Self::invalid_param(param, expected, received, format!("{param} is required"))
    }

    /// -32602 for an unknown id.
    pub fn not_found(param: &str, what: &str, id: &str) -> Self {
        Self::invalid_param(
            param,
            &format!("existing {what} id"),
            "unknown id",
            format!("{what} not found: {id}"),
        )
    }

    /// -32602 for a value outside an enumeration.
    pub fn not_accepted(param: &str, received: &str, accepted: &[&str]) -> Self {
        RpcError::InvalidParams {
            message: format!("invalid {param}: {received}"),
            data: InvalidParamsData {
                param: param.to_owned(),
                expected: format!("one of {}", accepted.join("|")),
                received: received.to_owned(),
                accepted: Some(accepted.iter().map(|s| (*s).to_owned()).collect()),
            },
        }
    }

    /// -32603 with a sanitised public message.
    pub fn internal(public: impl Into<String>, source: impl Into<anyhow::Error>) -> Self {
        RpcError::Internal {
            public: public.into(),
            source: source.into(),
        }
    }

    /// Whether the client caused it (logged at warn) rather than a fault (logged at error).
    pub fn is_client_error(&self) -> bool {
        matches!(self, RpcError::InvalidParams { .. })
    }

    /// The error object sent on the wire.
    pub fn to_object(&self) -> ErrorObject {
        match self {
            RpcError::InvalidParams { message, data } => ErrorObject {
                code: ErrorCode::InvalidParams.code(),
                message: message.clone(),
                data: serde_json::to_value(data).ok(),
            },
            RpcError::Internal { public, .. } => ErrorObject {
                code: ErrorCode::InternalError.code(),
                message: public.clone(),
                data: None,
            },
        }
    }
}

/// A -32600 error object with `data.reason`.
pub fn invalid_request(message: &str, reason: InvalidRequestReason) -> ErrorObject {
    ErrorObject {
        code: ErrorCode::InvalidRequest.code(),
        message: message.to_owned(),
        data: serde_json::to_value(InvalidRequestData { reason }).ok(),
    }
}

/// The -32700 error object.
pub fn parse_error(detail: &str) -> ErrorObject {
    ErrorObject {
        code: ErrorCode::ParseError.code(),
        message: format!("Parse error: {detail}"),
        data: None,
    }
}

/// Turns a params decoding failure into -32602 with `{param, expected, received}`.
/// `signatures` are the method's `describeMethods` strings, used to name the expected type of
/// a missing field.
pub fn from_decode_error(
    err: serde_path_to_error::Error<serde_json::Error>,
    signatures: &[&str],
) -> RpcError {
    let path = err.path().to_string();
    let inner = err.into_inner().to_string();
    let inner = inner.split(" at line ").next().unwrap_or(&inner).to_owned();
    let prefix = if path == "." {
        String::new()
    } else {
        format!("{path}.")
    };

    if let Some(rest) = inner.strip_prefix("missing field `") {
        let field = rest.split('`').next().unwrap_or_default();
        let param = format!("{prefix}{field}");
        let expected = signature_type(signatures, field).unwrap_or("value");
        return RpcError::required(&param, expected, "missing");
    }
    if let Some(rest) = inner.strip_prefix("invalid type: ") {
        let (received, expected) = rest.split_once(", expected ").unwrap_or((rest, "value"));
        let received = received.split(" `").next().unwrap_or(received);
        let expected = strip_article(expected);
        return RpcError::invalid_param(
            &path,
            expected,
            received,
            format!("invalid type for {path}: expected {expected}, got {received}"),
        );
    }
    if let Some(rest) = inner.strip_prefix("unknown variant `") {
        let (value, accepted) = rest.split_once("`, expected ").unwrap_or((rest, ""));
        let accepted: Vec<&str> = accepted
            .trim_start_matches("one of ")
            .split(", ")
            .map(|s| s.trim_matches('`'))
            .filter(|s| !s.is_empty())
            .collect();
        return RpcError::not_accepted(&path, value, &accepted);
    }
    let expected = signature_type(signatures, &path).unwrap_or("valid value");
    RpcError::invalid_param(&path, expected, &inner, format!("invalid {path}: {inner}"))
}

fn strip_article(s: &str) -> &str {
    s.strip_prefix("a ")
        .or_else(|| s.strip_prefix("an "))
        .unwrap_or(s)
}

/// The type in `name: type` (or `name?: type`) for `field`.
fn signature_type<'a>(signatures: &[&'a str], field: &str) -> Option<&'a str> {
    signatures.iter().find_map(|sig| {
        let (name, ty) = sig.split_once(':')?;
        (name.trim_end_matches('?') == field).then(|| ty.trim())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct P {
        query: String,
        tools: Option<Vec<String>>,
    }

    fn decode(json: &str) -> RpcError {
        let mut de = serde_json::Deserializer::from_str(json);
        let err = serde_path_to_error::deserialize::<_, P>(&mut de).unwrap_err();
        from_decode_error(err, &["query: string", "tools?: [string]"])
    }

    fn data(e: RpcError) -> (String, InvalidParamsData) {
        match e {
            RpcError::InvalidParams { message, data } => (message, data),
            other => panic!("expected invalid params, got {other:?}"),
        }
    }

    #[test]
    fn missing_field_names_param_and_type() {
        let (message, d) = data(decode("{}"));
        assert_eq!(message, "query is required");
        assert_eq!((d.param.as_str(), d.expected.as_str()), ("query", "string"));
        assert_eq!(d.received, "missing");
    }

    #[test]
    fn wrong_type_names_path_expected_and_received() {
        let (_, d) = data(decode(r#"{"query": 5}"#));
        assert_eq!(
            (d.param.as_str(), d.expected.as_str(), d.received.as_str()),
            ("query", "string", "integer")
        );
        let (_, d) = data(decode(r#"{"query": "x", "tools": ["a", true]}"#));
        assert_eq!(d.param, "tools[1]");
        assert_eq!(d.received, "boolean");
    }
}
