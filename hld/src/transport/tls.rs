//! TLS for the TCP listeners (`--ws`, `--http`): their certificate files, the rule that an
//! address other machines reach needs TLS, rustls's acceptor, and the names a certificate is for.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hld_client::config::{config_file_value, expand_tilde};
use tokio_rustls::rustls::client::verify_server_name;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio_rustls::rustls::server::ParsedCertificate;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

/// A PEM certificate chain and its private key.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// A listener's TLS, if any, and the check of its address, for the flags `--NAME`,
/// `--NAME-allow-remote`, `--NAME-tls-cert`, `--NAME-tls-key` (the files also from
/// `NAME_tls_cert` / `NAME_tls_key` in humanlayer.json): an address that is not loopback needs
/// `allow_remote` and TLS, so that no secret crosses the network in clear.
pub fn resolve(
    name: &str,
    address: SocketAddr,
    allow_remote: bool,
    cert: Option<&Path>,
    key: Option<&Path>,
) -> Result<Option<TlsFiles>, String> {
    let file = |flag: Option<&Path>, key: &str| -> Result<Option<PathBuf>, String> {
        Ok(match flag {
            Some(path) => Some(path.to_path_buf()),
            None => config_file_value(&format!("{name}_{key}"))?.map(|p| expand_tilde(&p)),
        })
    };
    let tls = match (file(cert, "tls_cert")?, file(key, "tls_key")?) {
        (Some(cert), Some(key)) => Some(TlsFiles { cert, key }),
        (None, None) => None,
        _ => {
            return Err(format!(
                "--{name}-tls-cert and --{name}-tls-key go together"
            ))
        }
    };
    if !address.ip().is_loopback() {
        if !allow_remote {
            return Err(format!(
                "--{name} {address} is not a loopback address: pass --{name}-allow-remote (with \
                 TLS: --{name}-tls-cert and --{name}-tls-key) to serve other machines"
            ));
        }
        if tls.is_none() {
            return Err(format!(
                "--{name} {address} with --{name}-allow-remote needs TLS (--{name}-tls-cert and \
                 --{name}-tls-key): its secret must not cross the network in clear"
            ));
        }
    }
    Ok(tls)
}

/// What a listener serves TLS with.
pub struct Tls {
    pub acceptor: TlsAcceptor,
    /// The first certificate of the chain: the server's own.
    pub certificate: CertificateDer<'static>,
}

impl Tls {
    /// The PEM certificate chain and key of `files`.
    pub fn load(files: &TlsFiles) -> Result<Tls, String> {
        let (cert, key) = (&files.cert, &files.key);
        let certs = CertificateDer::pem_file_iter(cert)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| {
                format!(
                    "cannot read a certificate chain from {}: {e}",
                    cert.display()
                )
            })?;
        let Some(certificate) = certs.first().cloned() else {
            return Err(format!("no certificate in {}", cert.display()));
        };
        let key = PrivateKeyDer::from_pem_file(key)
            .map_err(|e| format!("cannot read a private key from {}: {e}", key.display()))?;
        let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .and_then(|builder| builder.with_no_client_auth().with_single_cert(certs, key))
            .map_err(|e| format!("TLS set-up failed: {e}"))?;
        Ok(Tls {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            certificate,
        })
    }
}

/// Whether `certificate` is valid for `name` (a DNS name or an IP address), as a TLS client
/// checks it: a browser reaching the daemon by that name accepts this certificate.
pub fn names(certificate: &CertificateDer<'_>, name: &str) -> bool {
    let Ok(name) = ServerName::try_from(name) else {
        return false;
    };
    ParsedCertificate::try_from(certificate)
        .is_ok_and(|parsed| verify_server_name(&parsed, &name).is_ok())
}
