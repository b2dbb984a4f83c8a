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

pub use grants::{Grant, Grants};
pub use launch::{Confined, ShellSandbox, confine, policy_for};
pub use settings::{SandboxSettings, read as read_settings};

use gd_protocol::SandboxState;

/// Whether a sandbox can start on this machine: `Err` says why and how to fix it. Detected
/// once per process (`gd_sandbox::Sandbox::detect`; `GEMINI_DESKTOP_BWRAP` names another
/// bubblewrap).
pub fn available() -> Result<gd_sandbox::Sandbox, gd_sandbox::Unavailable> {
    gd_sandbox::Sandbox::detect()
}

/// The session's sandbox as the frontends show it (`Event::TurnContext`).
pub fn state(settings: &SandboxSettings) -> SandboxState {
    if !settings.enabled {
        return SandboxState {
            enabled: false,
            unavailable: None,
            network: true,
            summary: "Commands run without a sandbox: they can change or delete any file you can, \
                      read your keys and credentials and use the network. In YOLO mode nobody \
                      is asked first. Turn on Tool sandboxing in Settings \
                      (security.toolSandboxing) to confine them."
                .to_owned(),
        };
    }
    let network = settings.network == gd_sandbox::Network::All;
    match available() {
        Err(unavailable) => SandboxState {
            enabled: true,
            unavailable: Some(unavailable.to_string()),
            network,
            summary: format!(
                "The sandbox cannot start here, so commands are refused: {unavailable}"
            ),
        },
        Ok(_) => SandboxState {
            enabled: true,
            unavailable: None,
            network,
            summary: if network {
                "Commands run in the sandbox: they write only in the workspace and a private \
                 /tmp and cannot read your keys and credentials; the network is allowed \
                 (security.sandbox.network)."
                    .to_owned()
            } else {
                "Commands run in the sandbox: they write only in the workspace and a private \
                 /tmp, cannot read your keys and credentials, and have no network unless you \
                 allow it."
                    .to_owned()
            },
        },
    }
}
