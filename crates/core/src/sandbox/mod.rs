//! The sandbox of `run_shell_command` (issue 36): what the settings ask for, what one command
//! runs with, and what the user granted.
//!
//! The confinement itself is `gd_sandbox` (bubblewrap). This module decides, per command, the
//! folders it may write (the session's workspace folders — a conversation's worktree is its
//! workspace —, the user's `security.sandbox.writablePaths`, grants) and whether it gets the
//! network, and refuses a command when the user asked for the sandbox and none can start:
//! never run unconfined what was meant to be confined.
//!
//! When a sandboxed command fails because of the sandbox (`gd_sandbox::denial` reads its
//! output), the scheduler asks the user whether to run it again with what it lacked
//! ([`expansion`]); "always for this command" is a session grant ([`Grants`]) for that exact
//! command line, never a wider one.

pub mod expansion;
mod grants;
mod launch;
mod settings;
mod state;

pub use grants::{Grant, Grants};
pub use launch::{Confined, ShellSandbox, confine, policy_for};
pub use settings::{SandboxSettings, read as read_settings};
pub use state::{available, state};
