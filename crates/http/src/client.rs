//! The reqwest client builder every HTTP client of the app starts from.

use std::sync::Arc;

use tracing::warn;

use crate::tls::LazyVerifier;

/// A reqwest client builder with the process's TLS configuration: ring as
/// the crypto provider (reqwest is built without a bundled one; ring is small
/// and quick to start) and the platform's certificate verifier.
/// Use this for every HTTP client of the app (tools fetching pages too).
pub fn http_client_builder() -> reqwest::ClientBuilder {
    // Installing twice is harmless (the first one wins).
    let _ = rustls::crypto::ring::default_provider().install_default();
    match shared_tls_config() {
        Some(config) => reqwest::Client::builder().tls_backend_preconfigured(config),
        // reqwest builds its own and reports why that fails, at `build()`.
        None => reqwest::Client::builder(),
    }
}

/// The TLS configuration every client shares, built on first use.
///
/// Its verifier is [`LazyVerifier`]: the system's root certificates (on
/// Linux a few hundred files under /etc/ssl/certs) are read once per
/// process, when the first certificate is checked or early on a thread of
/// their own ([`crate::prewarm_tls`]), not when a client is built: a session
/// builds several (Gemini, auth, MCP over HTTP) on the path to its first
/// request.
fn shared_tls_config() -> Option<rustls::ClientConfig> {
    static CONFIG: std::sync::OnceLock<Option<rustls::ClientConfig>> = std::sync::OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let mut config = rustls::ClientConfig::builder_with_provider(LazyVerifier::provider())
                .with_safe_default_protocol_versions()
                .map_err(|e| warn!("no TLS configuration: {e}"))
                .ok()?
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(LazyVerifier))
                .with_no_client_auth();
            // As reqwest offers them itself: HTTP/2 first, HTTP/1.1 as well.
            config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
            Some(config)
        })
        .clone()
}
