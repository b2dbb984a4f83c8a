//! Talking to Gemini models over HTTP.
//!
//! * [`types`]: the wire types (`Content`, `Part`, requests, responses).
//! * [`sse`]: a chunk-boundary-proof decoder for `alt=sse` streams.
//! * [`endpoint`]: the Gemini API, Vertex AI and Code Assist backends.
//! * [`client`]: requests with retries (exponential backoff with jitter,
//!   `Retry-After` and `RetryInfo` honoured) and streaming.
//! * [`sent`]: being told when a request has gone out.
//! * [`quota`]: Code Assist's remaining quota (`retrieveUserQuota`).

pub mod client;
pub mod credentials;
pub mod endpoint;
pub mod error;
pub mod models;
pub mod quota;
pub mod retry;
pub mod sent;
pub mod sse;
pub mod types;

pub use client::{ClientOptions, GeminiClient, ModelInfo, RetryNotice, StreamEvent};
pub use credentials::{CredentialSource, StaticToken};
pub use endpoint::{Auth, Backend, Method, RequestMeta, VertexTarget};
pub use error::{ApiError, GeminiError, MAX_RETRY_DELAY};
pub use quota::QuotaBucketWire;
pub use retry::RetryPolicy;
// Re-exported: callers that talk to Gemini get them from here, as before.
pub use gd_http::{SecretString, http_client_builder};
pub use types::*;
