//! Talking to Gemini models over HTTP.
//!
//! * [`types`]: the wire types (`Content`, `Part`, requests, responses).
//! * [`sse`]: a chunk-boundary-proof decoder for `alt=sse` streams.
//! * [`endpoint`]: the Gemini API, Vertex AI and Code Assist backends.
//! * [`client`]: requests with retries (exponential backoff with jitter,
//!   `Retry-After` and `RetryInfo` honoured) and streaming.

pub mod client;
pub mod credentials;
pub mod endpoint;
pub mod error;
pub mod models;
pub mod retry;
pub mod secret;
pub mod sse;
pub mod types;

pub use client::{
    ClientOptions, GeminiClient, ModelInfo, RetryNotice, StreamEvent, http_client_builder,
};
pub use credentials::{CredentialSource, StaticToken};
pub use endpoint::{Auth, Backend, Method, RequestMeta, VertexTarget};
pub use error::{ApiError, GeminiError};
pub use retry::RetryPolicy;
pub use secret::SecretString;
pub use types::*;
