//! Whether a sandbox can start here, and the session's sandbox as the frontends show it.

use gd_protocol::SandboxState;

use super::settings::SandboxSettings;

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
