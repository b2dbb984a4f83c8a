//! A fake Gemini API server speaking the real wire format over real HTTP on
//! loopback, for tests of the transport, the agent core and the CLI, and for
//! running the CLI by hand (binary `fake-gemini`).
//!
//! It replays scripted *scenarios* and records every request. The scenario
//! format is a superset of the reference `fake_gemini.py` (peer-bench):
//!
//! ```json
//! {
//!   "name": "list_dir",
//!   "steps": [
//!     {"functionCalls": [{"name": "list_directory", "args": {"dir_path": "{{WORKSPACE}}"}}]},
//!     {"match_tool": "list_directory", "text": "Done."}
//!   ],
//!   "after_steps": {"text": "..."},
//!   "chunk_chars": 0, "delay_ms": 0,
//!   "fail_first": {"status": 429, "times": 1, "retry_delay": "1s"},
//!   "fail_always": {"status": 500},
//!   "utility": [{"match": "substring of request JSON", "json": {}}],
//!   "utility_defaults": {"next_speaker": "user", "model_choice": "flash", "complexity_score": 10}
//! }
//! ```
//!
//! Main turns ("main" = the request declares function tools) are stateless:
//! step index k = number of consecutive trailing user contents carrying
//! `functionResponse` parts. Everything else is a "utility" request.
//!
//! Extensions over the reference (all plain scenario JSON):
//! - steps: `finish_reason`, `block_reason`, `empty_candidates`, `usage`,
//!   `chunk_chars`, `delay_ms`, `chunk_delay_ms`;
//! - scenario: `branches: [{"system_contains": "...", "steps": [...]}]`
//!   (the script of a request whose system instruction contains the text:
//!   a subagent's conversation), `chunk_delay_ms`, `utility_text`,
//!   `api_keys`, `code_assist`
//!   (Code Assist setup: `loadCodeAssist`, `onboardUser`, operations, bearer
//!   tokens; see [`code_assist`]);
//! - `fail_first` / `fail_always`: `retry_after` (Retry-After header),
//!   `message`, `status_text`, `body`, `delay_ms`;
//! - `faults: [{"request": N | [N, ...], "kind": ...}]` on the N-th main
//!   request since the reset: `http_error`, `cut_stream`, `malformed_chunk`,
//!   `raw_sse`, `hang` (see [`faults::Fault`]).

pub mod code_assist;
pub mod faults;
pub mod fixtures;
mod handle;
pub mod oauth;
mod pyjson;
pub mod record;
mod responses;
mod routes;
pub mod scenario;
pub mod server;
mod sse;
pub mod state;
mod steps;
mod utility;

pub use handle::FakeGemini;
pub use oauth::FakeOAuth;
pub use record::{RecordedRequest, credential_fingerprint};

use serde_json::Value;
use std::path::Path;

/// Reads a scenario JSON file and checks it is a valid scenario (before
/// `{{VAR}}` substitution). The error names the file and the bad field.
pub fn scenario_from_file(path: impl AsRef<Path>) -> anyhow::Result<Value> {
    scenario::read_scenario_file(path.as_ref())
}
