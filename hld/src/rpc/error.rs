//! The one mapping from failures (domain, envelope, undecodable params) to JSON-RPC errors.

use hld_client::protocol::{ErrorCode, ErrorObject, InvalidRequestData, InvalidRequestReason};

use crate::error::Error;

/// A domain error's object: -32602 with `data` for invalid params, -32603 for a fault.
pub fn error_object(error: &Error) -> ErrorObject {
    match error {
        Error::InvalidParams { message, data } => ErrorObject {
            code: ErrorCode::InvalidParams.code(),
            message: message.clone(),
            data: serde_json::to_value(data).ok(),
        },
        Error::Internal { public, .. } => ErrorObject {
            code: ErrorCode::InternalError.code(),
            message: public.clone(),
            data: None,
        },
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

pub fn parse_error(detail: &str) -> ErrorObject {
    ErrorObject {
        code: ErrorCode::ParseError.code(),
        message: format!("Parse error: {detail}"),
        data: None,
    }
}

/// Turns a params decoding failure into -32602 with `{param, expected, received}`; the
/// method's `describeMethods` `signatures` name the expected type of a missing field.
pub fn from_decode_error(
    err: serde_path_to_error::Error<serde_json::Error>,
    signatures: &[&str],
) -> Error {
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
        return Error::required(&param, expected, "missing");
    }
    if let Some(rest) = inner.strip_prefix("invalid type: ") {
        let (received, expected) = rest.split_once(", expected ").unwrap_or((rest, "value"));
        let received = received.split(" `").next().unwrap_or(received);
        let expected = strip_article(expected);
        return Error::invalid_param(
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
        return Error::not_accepted(&path, value, &accepted);
    }
    let expected = signature_type(signatures, &path).unwrap_or("valid value");
    Error::invalid_param(&path, expected, &inner, format!("invalid {path}: {inner}"))
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
