//! The agent core of Gemini Desktop, free of any UI framework.
//!
//! A [`session::Session`] owns the conversation with the model. Frontends
//! drive it with [`gd_protocol::Op`]s and read [`gd_protocol::Event`]s; the
//! desktop app and the headless CLI are two such frontends.
//!
//! Inside a session:
//! * [`chat`] keeps the curated history and turns one model request into
//!   events and a recorded model message;
//! * [`agent`] runs a user turn: model requests and tool rounds until the
//!   model stops calling tools;
//! * [`scheduler`] validates and runs tool calls and converts their results
//!   into `functionResponse` parts;
//! * [`checkpoint`] snapshots the workspace before approved edits;
//! * [`tools`] holds the tool trait, the registry and the built-in tools;
//! * [`context`] builds the session context (date, OS, folder structure);
//! * [`compression`] summarises old history near the context limit;
//! * [`loop_detection`] stops an agent that repeats itself;
//! * [`history`] records every message into the session history store
//!   (gd-store) before the next request, and resumes stored sessions.
//! * [`memory`] loads the context files (`GEMINI.md`) into the system
//!   instruction;
//! * [`commands`] names the slash commands (built-in, MCP prompts, custom)
//!   and expands custom ones;
//! * [`stats`] counts what a session used, for `/stats`.

pub(crate) mod agent;
pub mod approval;
pub(crate) mod at_refs;
pub mod chat;
pub mod checkpoint;
pub mod coalesce;
pub mod commands;
pub(crate) mod compression;
pub mod config;
pub mod context;
pub mod diff;
pub mod diff3;
pub mod env_redaction;
pub mod events;
pub mod extensions;
pub mod frontmatter;
pub mod history;
pub mod hooks;
pub mod launch;
pub(crate) mod launch_settings;
mod launch_tools;
pub(crate) mod loop_detection;
pub mod mcp_settings;
pub mod memory;
pub mod plan;
pub mod policy;
pub mod policy_editor;
pub(crate) mod prompts;
pub mod quota;
pub mod restore;
pub mod revert;
pub mod review;
pub mod routing;
pub mod sandbox;
pub mod scheduler;
pub(crate) mod session;
pub mod settings_screen;
pub mod skills;
pub(crate) mod stats;
pub mod subagents;
pub(crate) mod thought;
pub(crate) mod tokens;
pub mod tool_rules;
pub mod tools;
pub(crate) mod truncation;

pub use config::{ApprovalMode, FileFiltering, SessionConfig};
pub use session::{Session, SessionError, SessionHandle};
