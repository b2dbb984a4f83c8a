//! A sandbox for the commands the agent runs (issue 36), on Linux with bubblewrap.
//!
//! What a sandboxed command gets: the whole filesystem read-only; the folders of its
//! [`Policy`] writable (the workspace, the conversation's worktree, the user's extra paths),
//! except the parts of them that run code outside the sandbox later (`.git/hooks`,
//! `.git/config`, `.gemini`), which stay read-only; a private `/tmp`; the user's secrets
//! (`~/.ssh`, `~/.gemini`, keyrings, browser profiles, agent and D-Bus sockets) not visible; a new
//! PID namespace; death with its parent; no network namespace of the host unless granted; and
//! `no_new_privs` plus a seccomp filter that refuses ptrace and the other escapes.
//!
//! Why bubblewrap: it is what Gemini CLI 0.61 (`security.toolSandboxing`) and Codex use on
//! Linux, it is packaged everywhere, and it needs no privilege where unprivileged user
//! namespaces are allowed. Where they are not, [`Sandbox::detect`] says why and how to fix it,
//! and the caller refuses to run the command instead of running it unconfined.
//!
//! See the crate's README for what it does not guarantee and the escapes it is tested against.

mod bwrap;
mod denial;
mod detect;
mod error;
mod git;
mod hidden;
mod mounts;
mod policy;
#[cfg(all(
    target_os = "linux",
    target_endian = "little",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod seccomp;
#[cfg(test)]
mod test_base;
/// Elsewhere there is no filter, and [`Sandbox::detect`] says the sandbox is unavailable.
#[cfg(not(all(
    target_os = "linux",
    target_endian = "little",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod seccomp {
    pub const SUPPORTED: bool = false;
    pub fn bytes() -> Vec<u8> {
        Vec::new()
    }
}

pub use bwrap::Prepared;
pub use denial::{Denial, denial};
pub use detect::{BWRAP_ENV, HostFacts, Sandbox, Unavailable, classify};
pub use error::SandboxError;
pub use policy::{Network, Policy};

/// The seccomp program every sandboxed command runs under, as bubblewrap reads it (`struct
/// sock_filter` after `struct sock_filter`, 8 bytes each): for running bubblewrap by hand with
/// the same filter (`--seccomp 3 3<file`), or inspecting it.
pub fn seccomp_program() -> Vec<u8> {
    seccomp::bytes()
}
