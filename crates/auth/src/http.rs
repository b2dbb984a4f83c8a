//! The HTTP client of the auth code: our reqwest 0.13 client (rustls + ring,
//! see [`gd_http::http_client_builder`]) behind oauth2's
//! [`oauth2::AsyncHttpClient`] trait, so the oauth2 crate needs none of its
//! own HTTP features.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use oauth2::http;
use oauth2::{HttpClientError, HttpRequest, HttpResponse};

use crate::error::AuthError;

/// A reqwest client that never follows redirects (a token endpoint that
/// redirects is misconfigured or hostile) and gives up on silent servers.
#[derive(Debug, Clone)]
pub struct Http {
    client: reqwest::Client,
}

impl Http {
    pub fn new() -> Result<Self, AuthError> {
        let client = gd_http::http_client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(20))
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| AuthError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self { client })
    }

    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }
}

impl<'c> oauth2::AsyncHttpClient<'c> for Http {
    type Error = HttpClientError<reqwest::Error>;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Self::Error>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let response = self
                .client
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body)
                .send()
                .await
                .map_err(Box::new)?;
            let mut builder = http::Response::builder()
                .status(response.status())
                .version(response.version());
            for (name, value) in response.headers() {
                builder = builder.header(name, value);
            }
            let bytes = response.bytes().await.map_err(Box::new)?;
            builder.body(bytes.to_vec()).map_err(HttpClientError::Http)
        })
    }
}
