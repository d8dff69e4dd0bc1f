//! Who may open a WebSocket: an allowed `Origin` if any (403), the token (401), `holon-rpc`
//! (400), a place under the cap (503); 426 or 400 for no handshake. Also the token file and
//! TLS. The token is never logged (nor a URI carrying it), returned, or passed to a child.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;
use tokio_tungstenite::tungstenite::error::ProtocolError;
use tokio_tungstenite::tungstenite::handshake::server::{
    write_response, Callback, ErrorResponse, Request, Response,
};
use tokio_tungstenite::tungstenite::http::{header, HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::Error as WsError;

use hld_client::address::Fingerprint;

use crate::config::WsToken;
use crate::throttle::Throttle;

/// The one subprotocol served (spec/002).
pub const SUBPROTOCOL: &str = "holon-rpc";

/// A new random token: 32 bytes from the kernel, in hex.
fn generate() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The token of `path`, made (0600, 32 random bytes) if missing; else a private file of this user.
pub fn load_or_create_token(path: &Path) -> Result<WsToken, String> {
    let shown = path.display();
    match std::fs::symlink_metadata(path) {
        Ok(meta) => {
            let me = nix::unistd::geteuid().as_raw();
            if !meta.file_type().is_file() || meta.uid() != me || meta.mode() & 0o077 != 0 {
                return Err(format!(
                    "{shown} must be a regular file of uid {me} with mode 0600; remove it \
                     and a new token is made at start-up"
                ));
            }
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
            WsToken::new(&text).map_err(|e| format!("{shown}: {e}"))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let token = generate().map_err(|e| format!("no random bytes: {e}"))?;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)
                .map_err(|e| format!("cannot create {shown}: {e}"))?;
            file.write_all(format!("{token}\n").as_bytes())
                .map_err(|e| format!("cannot write {shown}: {e}"))?;
            tracing::info!(file = %shown, "made a token");
            WsToken::new(&token)
        }
        Err(e) => Err(format!("cannot read {shown}: {e}")),
    }
}

/// What a handshake must show.
#[derive(Debug)]
pub struct Policy {
    pub token: WsToken,
    pub allowed_origins: Vec<String>,
}

/// A refused handshake: its HTTP status and the reason sent as its body, one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub status: StatusCode,
    pub reason: &'static str,
}

/// The refusal of a handshake over the connection cap.
pub const BUSY: Refusal = Refusal {
    status: StatusCode::SERVICE_UNAVAILABLE,
    reason: "too many WebSocket connections; try again later",
};

/// The refusal of a request that is no WebSocket handshake, by tungstenite's `error`: 426
/// for plain HTTP, 400 for anything else; `None` if [`Check`] answered or the socket failed.
pub fn not_a_handshake(error: &WsError) -> Option<Refusal> {
    match error {
        WsError::Protocol(
            ProtocolError::MissingUpgradeWebSocketHeader
            | ProtocolError::MissingConnectionUpgradeHeader,
        ) => Some(Refusal {
            status: StatusCode::UPGRADE_REQUIRED,
            reason: "this is hld's WebSocket endpoint: upgrade to WebSocket with the \
                     subprotocol holon-rpc",
        }),
        WsError::Protocol(_) | WsError::HttpFormat(_) => Some(Refusal {
            status: StatusCode::BAD_REQUEST,
            reason: "not a WebSocket handshake: GET over HTTP/1.1 with Upgrade: websocket, \
                     Connection: upgrade, Sec-WebSocket-Key and Sec-WebSocket-Version: 13",
        }),
        _ => None,
    }
}

/// The HTTP response of `refusal`, with `Connection: close` (and `Upgrade` for a 426).
fn refusal_response(refusal: Refusal) -> ErrorResponse {
    let body = format!("{}\n", refusal.reason);
    let length = HeaderValue::from(body.len());
    let mut response = ErrorResponse::new(Some(body));
    *response.status_mut() = refusal.status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(header::CONTENT_LENGTH, length);
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    if refusal.status == StatusCode::UPGRADE_REQUIRED {
        headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    }
    response
}

/// The bytes of `refusal`'s response, for a request tungstenite did not answer.
pub fn response_bytes(refusal: Refusal) -> Vec<u8> {
    let response = refusal_response(refusal);
    let mut bytes = Vec::new();
    write_response(&mut bytes, &response).expect("a refusal's head is valid HTTP");
    bytes.extend_from_slice(response.body().as_deref().unwrap_or_default().as_bytes());
    bytes
}

/// Checks an upgrade request: `Origin`, the token (`Authorization` or `?token=`), subprotocol.
pub fn admit(request: &Request, policy: &Policy) -> Result<(), Refusal> {
    let headers = request.headers();
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("").trim_end_matches('/');
        if !policy
            .allowed_origins
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(origin))
        {
            return Err(Refusal {
                status: StatusCode::FORBIDDEN,
                reason: "this Origin is not allowed (the daemon's --ws-allowed-origin)",
            });
        }
    }
    let presented = match headers.get(header::AUTHORIZATION) {
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim()),
        None => request.uri().query().and_then(|query| {
            query
                .split('&')
                .find_map(|pair| pair.strip_prefix("token="))
        }),
    };
    if !presented.is_some_and(|token| policy.token.matches(token)) {
        return Err(Refusal {
            status: StatusCode::UNAUTHORIZED,
            reason: "a valid token is required (Authorization: Bearer <token> or ?token=<token>; \
                     it is in daemon.ws-token next to the daemon's socket)",
        });
    }
    let offered = headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim() == SUBPROTOCOL);
    if !offered {
        return Err(Refusal {
            status: StatusCode::BAD_REQUEST,
            reason: "the WebSocket subprotocol holon-rpc is required (Sec-WebSocket-Protocol)",
        });
    }
    Ok(())
}

/// Each handshake's check: [`admit`], then a place under the cap into `slot` (else [`BUSY`]).
#[derive(Debug)]
pub struct Check<'a> {
    pub policy: &'a Policy,
    pub slots: &'a Arc<Semaphore>,
    pub slot: &'a mut Option<OwnedSemaphorePermit>,
    pub peer: SocketAddr,
}

static REFUSED: Throttle = Throttle::new();

impl Callback for Check<'_> {
    fn on_request(
        self,
        request: &Request,
        mut response: Response,
    ) -> Result<Response, ErrorResponse> {
        let admitted = admit(request, self.policy).and_then(|()| {
            let place = Arc::clone(self.slots).try_acquire_owned();
            *self.slot = Some(place.map_err(|_| BUSY)?);
            Ok(())
        });
        match admitted {
            Ok(()) => {
                response.headers_mut().insert(
                    header::SEC_WEBSOCKET_PROTOCOL,
                    HeaderValue::from_static(SUBPROTOCOL),
                );
                Ok(response)
            }
            Err(refusal) => {
                if let Some(count) = REFUSED.hit() {
                    tracing::warn!(
                        peer = %self.peer,
                        status = refusal.status.as_u16(),
                        reason = %refusal.reason,
                        count,
                        "WebSocket handshake refused"
                    );
                }
                Err(refusal_response(refusal))
            }
        }
    }
}

/// The SHA-256 fingerprint of the first certificate in the PEM file `cert`: what `health`
/// reports for clients that pin it (`hlyr context add --fingerprint`).
pub fn fingerprint(cert: &Path) -> Result<Fingerprint, String> {
    CertificateDer::pem_file_iter(cert)
        .ok()
        .and_then(|mut certs| certs.next())
        .and_then(Result::ok)
        .map(|first| Fingerprint::of(&first))
        .ok_or_else(|| format!("no certificate in {}", cert.display()))
}

/// A TLS acceptor for the PEM certificate chain and key in these files.
pub fn tls_acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, String> {
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            format!(
                "cannot read a certificate chain from {}: {e}",
                cert.display()
            )
        })?;
    if certs.is_empty() {
        return Err(format!("no certificate in {}", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("cannot read a private key from {}: {e}", key.display()))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|builder| builder.with_no_client_auth().with_single_cert(certs, key))
        .map_err(|e| format!("TLS set-up failed: {e}"))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(origins: &[&str]) -> Policy {
        Policy {
            token: WsToken::new("0123456789abcdef-token").unwrap(),
            allowed_origins: origins.iter().map(|o| o.to_string()).collect(),
        }
    }

    fn request(uri: &str, headers: &[(&str, &str)]) -> Request {
        let mut request = Request::builder().uri(uri);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap()
    }

    fn status(result: Result<(), Refusal>) -> u16 {
        result.err().map_or(101, |r| r.status.as_u16())
    }

    #[test]
    fn the_checks_come_in_order_origin_token_subprotocol() {
        let p = policy(&["http://localhost:5173"]);
        let bearer = ("authorization", "Bearer 0123456789abcdef-token");
        let proto = ("sec-websocket-protocol", "x, holon-rpc");
        assert_eq!(status(admit(&request("/", &[bearer, proto]), &p)), 101);
        assert_eq!(
            status(admit(
                &request("/?a=1&token=0123456789abcdef-token", &[proto]),
                &p
            )),
            101
        );
        let evil = ("origin", "https://evil.example");
        assert_eq!(
            status(admit(&request("/", &[evil, bearer, proto]), &p)),
            403
        );
        let good = ("origin", "HTTP://localhost:5173/");
        assert_eq!(
            status(admit(&request("/", &[good, bearer, proto]), &p)),
            101
        );
        assert_eq!(status(admit(&request("/", &[proto]), &p)), 401);
        let wrong = ("authorization", "Bearer 0123456789abcdef-tokeN");
        assert_eq!(status(admit(&request("/", &[wrong, proto]), &p)), 401);
        let basic = ("authorization", "Basic 0123456789abcdef-token");
        assert_eq!(status(admit(&request("/", &[basic, proto]), &p)), 401);
        assert_eq!(status(admit(&request("/", &[bearer]), &p)), 400);
        let other = ("sec-websocket-protocol", "holon-rpc-2");
        assert_eq!(status(admit(&request("/", &[bearer, other]), &p)), 400);
    }

    #[test]
    fn the_token_file_is_made_private_once_and_refused_when_others_can_read_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("daemon.ws-token");
        let made = load_or_create_token(&path).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(load_or_create_token(&path).unwrap(), made);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let refused = load_or_create_token(&path).unwrap_err();
        assert!(refused.contains("0600"), "{refused}");
    }
}
