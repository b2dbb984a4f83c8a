//! The platform's certificate verifier, built when a TLS handshake first
//! needs it rather than when a client is built.
//!
//! Building it reads and parses the system's root certificates (on Linux
//! the bundle and every file under /etc/ssl/certs: 18 million instructions,
//! two thirds of a whole one-answer headless run, see bench/RESULTS.md). A
//! session builds its clients on the path to its first request (the model
//! client, sign-in), and a plain-HTTP endpoint (a local proxy, the fake
//! server) never needs roots at all. [`prewarm`] starts the build on a
//! thread of its own where an HTTPS request is coming, so that it overlaps
//! the rest of the start-up and the connection instead of delaying them.

use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use tracing::warn;

/// The process's verifier, or why there is none (built once).
type Built = Result<rustls_platform_verifier::Verifier, String>;

fn provider() -> &'static Arc<CryptoProvider> {
    static PROVIDER: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    PROVIDER.get_or_init(|| Arc::new(rustls::crypto::ring::default_provider()))
}

/// The platform verifier, built by the first caller; a concurrent caller
/// waits for that build instead of starting another.
fn built() -> &'static Built {
    static VERIFIER: OnceLock<Built> = OnceLock::new();
    VERIFIER.get_or_init(|| {
        let _span = tracing::debug_span!("load_root_certificates").entered();
        rustls_platform_verifier::Verifier::new(provider().clone()).map_err(|e| {
            warn!("no system certificate verifier: {e}");
            format!("no system certificate verifier: {e}")
        })
    })
}

/// Starts building the verifier on a background thread (once per process;
/// later calls do nothing). Call it where an HTTPS request will follow.
pub fn prewarm() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        let spawned = std::thread::Builder::new()
            .name("tls-roots".into())
            .spawn(|| {
                built();
            });
        if let Err(e) = spawned {
            // The first handshake builds it instead.
            warn!("cannot start loading the root certificates early: {e}");
        }
    });
}

/// The verifier every client's TLS configuration holds: the platform's,
/// built on the first certificate to check.
#[derive(Debug)]
pub(crate) struct LazyVerifier;

impl LazyVerifier {
    pub(crate) fn provider() -> Arc<CryptoProvider> {
        provider().clone()
    }

    fn get() -> Result<&'static rustls_platform_verifier::Verifier, rustls::Error> {
        built()
            .as_ref()
            .map_err(|e| rustls::Error::General(e.clone()))
    }
}

impl ServerCertVerifier for LazyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Self::get()?.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Self::get()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Self::get()?.verify_tls13_signature(message, cert, dss)
    }

    /// Asked for the ClientHello, before any certificate: the platform
    /// verifier answers the provider's schemes, which need no roots.
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        provider()
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lazy_verifier_offers_the_platform_verifiers_schemes() {
        let platform = rustls_platform_verifier::Verifier::new(provider().clone()).unwrap();
        assert_eq!(
            LazyVerifier.supported_verify_schemes(),
            platform.supported_verify_schemes()
        );
    }
}
