//! Pluggable bearer-token sources for the Code Assist and Vertex AI (ADC)
//! transports. The OAuth sign-in flow implements this; tests use
//! [`StaticToken`].

use std::fmt::Debug;

use futures::future::BoxFuture;

use gd_http::SecretString;

/// Supplies OAuth access tokens, refreshing them as needed.
pub trait CredentialSource: Send + Sync + Debug {
    /// A currently valid access token.
    fn access_token(&self) -> BoxFuture<'_, Result<SecretString, String>>;

    /// Called when the server rejected the last token (HTTP 401), so that the
    /// next [`CredentialSource::access_token`] refreshes instead of reusing it.
    fn invalidate(&self) {}
}

/// A fixed token, e.g. from `gcloud auth print-access-token` or a test.
#[derive(Debug, Clone)]
pub struct StaticToken(pub SecretString);

impl CredentialSource for StaticToken {
    fn access_token(&self) -> BoxFuture<'_, Result<SecretString, String>> {
        let token = self.0.clone();
        Box::pin(async move { Ok(token) })
    }
}
