//! The TLS side of `wss://`: rustls with ring, checking the daemon's certificate against the
//! system roots, a CA file, or a pinned fingerprint. Every refusal says why and the
//! fingerprint of the certificate the server showed, so a user can compare it with
//! `hlyr daemon url` on that machine.

use std::sync::Arc;

use tokio_rustls::rustls::client::danger::{
    HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier,
};
use tokio_rustls::rustls::client::WebPkiServerVerifier;
use tokio_rustls::rustls::crypto::{self, CryptoProvider};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use tokio_rustls::rustls::{self, ClientConfig, DigitallySignedStruct, RootCertStore};
use tokio_rustls::TlsConnector;

use crate::address::{Fingerprint, Trust};
use crate::error::Error;

/// A connector that checks certificates as `trust` says.
pub(crate) fn connector(trust: &Trust) -> Result<TlsConnector, Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let check = match trust {
        Trust::Fingerprint(pinned) => Check::Pinned(*pinned),
        Trust::SystemRoots => {
            let found = rustls_native_certs::load_native_certs();
            let mut roots = RootCertStore::empty();
            roots.add_parsable_certificates(found.certs);
            Check::Roots(webpki(roots, &provider, "the system's trusted roots")?)
        }
        Trust::CaFile(path) => {
            let shown = path.display();
            let certs = CertificateDer::pem_file_iter(path)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| Error::Address(format!("cannot read the CA file {shown}: {e}")))?;
            let mut roots = RootCertStore::empty();
            roots.add_parsable_certificates(certs);
            Check::Roots(webpki(roots, &provider, &format!("the CA file {shown}"))?)
        }
    };
    let verifier = Arc::new(Verifier {
        check,
        provider: Arc::clone(&provider),
    });
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Address(format!("TLS set-up failed: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(TlsConnector::from(Arc::new(config)))
}

fn webpki(
    roots: RootCertStore,
    provider: &Arc<CryptoProvider>,
    source: &str,
) -> Result<Arc<WebPkiServerVerifier>, Error> {
    if roots.is_empty() {
        return Err(Error::Address(format!("no certificate in {source}")));
    }
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), Arc::clone(provider))
        .build()
        .map_err(|e| Error::Address(format!("TLS set-up failed: {e}")))
}

/// The reason a TLS handshake failed, from the error tokio-rustls returns: ours as we worded
/// it, rustls's own otherwise.
pub(crate) fn reason(e: &std::io::Error) -> String {
    match e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) {
        Some(rustls::Error::General(reason)) => reason.clone(),
        Some(other) => other.to_string(),
        None => e.to_string(),
    }
}

#[derive(Debug)]
enum Check {
    Pinned(Fingerprint),
    Roots(Arc<WebPkiServerVerifier>),
}

#[derive(Debug)]
struct Verifier {
    check: Check,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let seen = Fingerprint::of(end_entity);
        match &self.check {
            Check::Pinned(pinned) if *pinned == seen => Ok(ServerCertVerified::assertion()),
            Check::Pinned(pinned) => Err(rustls::Error::General(format!(
                "the server's certificate has fingerprint {seen}, not the pinned {pinned}"
            ))),
            Check::Roots(webpki) => webpki
                .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
                .map_err(|e| {
                    rustls::Error::General(format!(
                        "the server's certificate is not trusted ({e}); its fingerprint is {seen}"
                    ))
                }),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        crypto::verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        crypto::verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
