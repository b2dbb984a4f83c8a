//! The MCP client of Gemini Desktop: the `mcpServers` of Gemini CLI's
//! settings.json, read with Gemini CLI's keys and rules, so that a user's
//! existing servers simply work.
//!
//! * [`config`]: settings entries, checked one by one (a broken entry is
//!   reported, the others start).
//! * [`manager::McpManager`]: every server of a session, started in
//!   parallel; discovery (tools, prompts, resources, paginated), status
//!   with events, `list_changed` re-discovery, calls with timeout and
//!   cancellation, restarts with backoff after crashes, restart and
//!   enable/disable on request.
//! * [`transport`]: stdio (process group, stderr tail) and the legacy SSE
//!   client; streamable HTTP is rmcp's.
//! * [`names`]: declared names (`mcp_<server>_<tool>`) and schemas, as
//!   Gemini CLI 0.61 declares them.
//! * [`content`]: results as Gemini parts, as Gemini CLI converts them.
//! * [`oauth`]: OAuth sign-in for HTTP servers (discovery, registration,
//!   PKCE, loopback redirect, tokens in the app's secret store, refresh);
//!   [`auth`]: what a server that wants credentials tells the user.
//!
//! It knows nothing of the agent core: `gd-core` adapts [`manager::McpTool`]s
//! to its tool trait.

pub mod auth;
mod client;
pub mod config;
pub mod content;
pub mod enablement;
pub mod env;
pub mod error;
pub mod log;
pub mod manager;
pub mod names;
pub mod oauth;
pub mod transport;

pub use auth::AuthChallenge;
pub use config::{OAuthConfig, ServerConfig, ServerEntry, ServerFilter, TransportConfig};
pub use error::{CallError, McpError, TokenStoreError};
pub use manager::{McpEvent, McpManager, McpOptions, McpResource, McpTool, RestartPolicy};
pub use oauth::{McpOAuth, OAuthError};
