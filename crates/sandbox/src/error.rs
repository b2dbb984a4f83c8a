//! What can go wrong preparing a command for the sandbox.

/// Why a command could not be prepared for the sandbox.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A path of the policy cannot be used (missing, not a folder, not absolute), or a part
    /// that must stay read-only cannot be kept so (a symbolic link inside a writable folder).
    #[error("the sandbox cannot use {path}: {reason}")]
    Path { path: String, reason: String },
    /// The seccomp program could not be handed to bubblewrap.
    #[error("could not prepare the sandbox's seccomp filter: {0}")]
    Seccomp(#[source] std::io::Error),
}
