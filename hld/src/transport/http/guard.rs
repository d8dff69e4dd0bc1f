//! Who may call the REST API, checked in this order: a loopback or `localhost` `Host` (DNS
//! rebinding), the secret as the path's first segments (`/t/<secret>`), an allowed `Origin`
//! if any (CORS, preflight too), a JSON body or else `X-Client` on a state-changing request,
//! and a body of at most [`MAX_BODY`] that the daemon's byte budget can hold (`share.rs`). A
//! refusal is a JSON error; nothing here is logged. An answer is gzipped if asked (`gzip.rs`).

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use tokio_rustls::rustls::pki_types::CertificateDer;

use super::{api, gzip, share, Reply};
use crate::config::WsToken;
use crate::daemon::Daemon;
use crate::transport::tls;

/// The largest request body.
pub const MAX_BODY: usize = 1 << 20;

/// What a request must show.
pub struct Policy {
    pub secret: WsToken,
    /// Lower case, no trailing `/`.
    pub allowed_origins: Vec<String>,
    /// With TLS, the server's certificate: a `Host` it is valid for is admitted too.
    pub certificate: Option<CertificateDer<'static>>,
}

/// A request refused or failed: its status and the JSON error's code and message.
#[derive(Debug, PartialEq)]
pub struct Refusal {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl Refusal {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Refusal {
        Refusal {
            status,
            code,
            message: message.into(),
        }
    }
}

/// A JSON response.
pub fn json(status: StatusCode, body: &impl serde::Serialize) -> Reply {
    // Plain data (strings, numbers, maps with string keys) always serialises.
    let text = serde_json::to_vec(body).unwrap_or_default();
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

pub fn error(refusal: &Refusal) -> Reply {
    let body = serde_json::json!({"error": {"code": refusal.code, "message": refusal.message}});
    json(refusal.status, &body)
}

/// The raw answer to a connection over the limit, written before closing it.
pub fn too_many_connections() -> Vec<u8> {
    let body = r#"{"error":{"code":"HLD-503","message":"too many connections"}}"#;
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The name of `host` (a `Host` header), without its port or an IPv6 address's brackets.
fn host_name(host: &str) -> &str {
    match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    }
}

/// Whether `host` names the loopback address or `localhost`, any port.
fn loopback_host(host: &str) -> bool {
    let name = host_name(host);
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether `host` may be named: the loopback address, `localhost`, or with TLS a name the
/// certificate is valid for. A page of another name rebound to this address is refused; so is
/// a page of any name over TLS, by the browser, unless the certificate is for that name.
fn admitted_host(host: &str, policy: &Policy) -> bool {
    loopback_host(host)
        || policy
            .certificate
            .as_ref()
            .is_some_and(|certificate| tls::names(certificate, host_name(host)))
}

/// The path after `/t/<secret>`, if it starts so.
fn after_secret<'a>(path: &'a str, secret: &WsToken) -> Option<&'a str> {
    let rest = path.strip_prefix("/t/")?;
    let (presented, rest) = rest.split_once('/').unwrap_or((rest, ""));
    secret.matches(presented).then_some(rest)
}

/// The allowed `Origin` of `headers`: `Ok(None)` without one; an error for one not allowed.
fn origin(headers: &HeaderMap, policy: &Policy) -> Result<Option<HeaderValue>, Refusal> {
    let Some(value) = headers.get(header::ORIGIN) else {
        return Ok(None);
    };
    let allowed = value.to_str().is_ok_and(|o| {
        let o = o.trim_end_matches('/').to_ascii_lowercase();
        policy.allowed_origins.contains(&o)
    });
    match allowed {
        true => Ok(Some(value.clone())),
        false => Err(Refusal::new(
            StatusCode::FORBIDDEN,
            "HLD-403",
            "this Origin is not allowed (add it with --http-allowed-origin)",
        )),
    }
}

/// Checks a request's head; returns the path after the secret.
pub fn admit<'a>(
    method: &Method,
    path: &'a str,
    headers: &HeaderMap,
    policy: &Policy,
) -> Result<&'a str, Refusal> {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if !host.is_some_and(|host| admitted_host(host, policy)) {
        return Err(Refusal::new(
            StatusCode::FORBIDDEN,
            "HLD-403",
            "the Host header must name the loopback address, localhost, or (with TLS) a name \
             the certificate is for",
        ));
    }
    let Some(rest) = after_secret(path, &policy.secret) else {
        return Err(Refusal::new(
            StatusCode::UNAUTHORIZED,
            "HLD-401",
            "the path must start with /t/<secret> (the secret is in daemon.http-token next to \
             the daemon's socket; `hlyr daemon url` prints the whole URL)",
        ));
    };
    let origin = origin(headers, policy)?;
    let changes = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    if changes {
        let has_body = headers.contains_key(header::TRANSFER_ENCODING)
            || headers
                .get(header::CONTENT_LENGTH)
                .is_some_and(|l| l.as_bytes() != b"0");
        let json = headers
            .get(header::CONTENT_TYPE)
            .and_then(|t| t.to_str().ok())
            .and_then(|t| t.split(';').next())
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
        if has_body && !json {
            return Err(Refusal::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "HLD-415",
                "a request body must be JSON (Content-Type: application/json)",
            ));
        }
        if !has_body && origin.is_none() && !headers.contains_key("x-client") {
            return Err(Refusal::new(
                StatusCode::FORBIDDEN,
                "HLD-403",
                "a request without a body must carry X-Client or an allowed Origin",
            ));
        }
    }
    Ok(rest)
}

/// CORS headers for an allowed origin.
fn allow(headers: &mut HeaderMap, origin: HeaderValue, preflight: bool) {
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("X-Request-ID"),
    );
    if preflight {
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, PUT, PATCH, DELETE, OPTIONS"),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(
                "Origin, Content-Type, Accept, Authorization, X-Client, X-Client-Version",
            ),
        );
        headers.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("43200"),
        );
    }
}

/// Serves one request: the checks, the body (bounded), then [`api::route`]; every answer
/// carries an `X-Request-ID`.
pub async fn serve(
    request: Request<Incoming>,
    policy: &Policy,
    daemon: &std::sync::Arc<Daemon>,
) -> Reply {
    let (parts, body) = request.into_parts();
    let mut response = answer(&parts, body, policy, daemon).await;
    // The client's X-Request-ID echoed (a header value already), else a new one.
    let id = parts
        .headers
        .get("x-request-id")
        .cloned()
        .unwrap_or_else(|| {
            HeaderValue::from_str(&uuid::Uuid::new_v4().to_string())
                .unwrap_or(HeaderValue::from_static("-"))
        });
    response.headers_mut().insert("x-request-id", id);
    response
}

/// The answer to a request: a refusal, a preflight's, or the API's.
async fn answer(
    parts: &hyper::http::request::Parts,
    body: Incoming,
    policy: &Policy,
    daemon: &std::sync::Arc<Daemon>,
) -> Reply {
    let rest = match admit(&parts.method, parts.uri.path(), &parts.headers, policy) {
        Ok(rest) => rest,
        Err(refusal) => return error(&refusal),
    };
    // Admitted, so an Origin present is allowed.
    let origin = parts.headers.get(header::ORIGIN).cloned();
    let mut response = if parts.method == Method::OPTIONS {
        let mut response = Response::new(Full::new(Bytes::new()).boxed());
        *response.status_mut() = StatusCode::NO_CONTENT;
        response
    } else {
        let reply = read_and_route(parts, body, rest, daemon)
            .await
            .unwrap_or_else(|refusal| error(&refusal));
        let reply = gzip::encode(reply, &parts.headers, parts.uri.path()).await;
        share::reply(reply, &daemon.budget).await
    };
    if let Some(origin) = origin {
        allow(
            response.headers_mut(),
            origin,
            parts.method == Method::OPTIONS,
        );
    }
    response
}

/// The body read within its share of the budget, then [`api::route`]. The share is held until
/// the reply is built, as the other transports hold a message being read; the reply, as sent
/// (compressed or not), then holds its own until written.
async fn read_and_route(
    parts: &hyper::http::request::Parts,
    body: Incoming,
    rest: &str,
    daemon: &std::sync::Arc<Daemon>,
) -> Result<Reply, Refusal> {
    let _share = share::body(&parts.headers, &daemon.budget)?;
    let body = Limited::new(body, MAX_BODY)
        .collect()
        .await
        .map_err(|_| share::too_large())?;
    api::route(
        &parts.method,
        rest,
        parts.uri.query(),
        &body.to_bytes(),
        daemon,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Policy {
        Policy {
            secret: WsToken::new("0123456789abcdef-secret").unwrap(),
            allowed_origins: vec!["tauri://localhost".into()],
            certificate: None,
        }
    }

    fn head(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        headers
    }

    const PATH: &str = "/t/0123456789abcdef-secret/api/v1/sessions";

    #[test]
    fn hosts_must_be_loopback_or_localhost() {
        for host in [
            "127.0.0.1:7777",
            "localhost",
            "LOCALHOST:1",
            "[::1]:7777",
            "127.9.9.9",
        ] {
            assert!(loopback_host(host), "{host}");
        }
        for host in [
            "evil.example:7777",
            "localhost.evil.example",
            "10.0.0.1",
            "[::2]:1",
            "",
        ] {
            assert!(!loopback_host(host), "{host}");
        }
    }

    #[test]
    fn with_tls_a_host_the_certificate_is_for_is_admitted_too() {
        let names = vec!["hld.example".to_owned(), "192.0.2.7".to_owned()];
        let made = rcgen::generate_simple_self_signed(names).unwrap();
        let mut p = policy();
        assert!(!admitted_host("hld.example:7777", &p));
        p.certificate = Some(made.cert.der().clone());
        for host in [
            "hld.example:7777",
            "HLD.EXAMPLE",
            "192.0.2.7:1",
            "localhost",
        ] {
            assert!(admitted_host(host, &p), "{host}");
        }
        for host in [
            "evil.example",
            "a.hld.example",
            "192.0.2.8:7777",
            "[::2]:1",
            "",
        ] {
            assert!(!admitted_host(host, &p), "{host}");
        }
    }

    #[test]
    fn the_checks_come_in_order_host_secret_origin_body() {
        let p = policy();
        let get = |path, pairs: &[(&'static str, &'static str)]| {
            admit(&Method::GET, path, &head(pairs), &p).map_err(|r| r.status.as_u16())
        };
        assert_eq!(get(PATH, &[("host", "evil.example")]), Err(403));
        assert_eq!(get("/api/v1/sessions", &[("host", "localhost")]), Err(401));
        assert_eq!(
            get("/t/0123456789abcdef-secreT/x", &[("host", "localhost")]),
            Err(401)
        );
        assert_eq!(
            get(
                PATH,
                &[("host", "localhost"), ("origin", "https://evil.example")]
            ),
            Err(403)
        );
        assert_eq!(
            get(
                PATH,
                &[("host", "localhost"), ("origin", "tauri://localhost/")]
            ),
            Ok("api/v1/sessions")
        );
        let post = |pairs: &[(&'static str, &'static str)]| {
            admit(&Method::POST, PATH, &head(pairs), &p).map_err(|r| r.status.as_u16())
        };
        let text = [
            ("host", "localhost"),
            ("content-length", "2"),
            ("content-type", "text/plain"),
        ];
        assert_eq!(post(&text), Err(415));
        let json = [
            ("host", "localhost"),
            ("content-length", "2"),
            ("content-type", "application/json; charset=utf-8"),
        ];
        assert!(post(&json).is_ok());
        assert_eq!(post(&[("host", "localhost")]), Err(403));
        assert!(post(&[("host", "localhost"), ("x-client", "codelayer")]).is_ok());
        assert!(post(&[("host", "localhost"), ("origin", "tauri://localhost")]).is_ok());
    }
}
