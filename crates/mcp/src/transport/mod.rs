//! Transports rmcp does not provide the way we need them: stdio with our
//! own process handling, and the legacy SSE client.

pub mod sse;
pub mod stdio;
