//! What every HTTP client of Gemini Desktop shares, in a crate of its own
//! so that the crates that only need these (the MCP client, sign-in) do not
//! depend on the Gemini transport for them.
//!
//! * [`http_client_builder`]: a reqwest client builder with the process's
//!   TLS configuration (ring as the crypto provider, the platform's
//!   certificate verifier), built once and shared by every client; the
//!   system's root certificates load on first use, or early on a thread of
//!   their own with [`prewarm_tls`] where an HTTPS request is coming.
//! * [`SecretString`]: an API key or token that `Debug`/`Display` never
//!   print.

mod client;
mod secret;
mod tls;

pub use client::http_client_builder;
pub use secret::SecretString;
pub use tls::prewarm as prewarm_tls;
