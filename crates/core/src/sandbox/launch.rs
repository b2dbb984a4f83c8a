//! One command's sandbox: the policy it runs under, or why it is refused.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use gd_protocol::SandboxUse;
use gd_sandbox::{Denial, Network, Policy, Prepared};

use super::grants::Grant;
use super::settings::SandboxSettings;
use super::state::available;
use crate::tools::ToolContext;

/// How a command will run.
#[derive(Debug)]
pub struct Confined {
    /// What to spawn instead of the shell (None: the sandbox is off).
    pub prepared: Option<Prepared>,
    /// What the card shows.
    pub used: SandboxUse,
    /// The policy it runs under (to read its failure against).
    pub policy: Option<Policy>,
}

/// A command's sandbox as its result reports it: what it ran with and, when it failed because
/// of the sandbox, what it was refused (the scheduler then asks the user).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellSandbox {
    pub used: SandboxUse,
    pub denial: Option<Denial>,
}

impl Confined {
    /// The report of a run that exited with `exit_code` after printing `output` in `cwd`.
    pub fn report(&self, output: &str, exit_code: Option<i32>, cwd: &Path) -> ShellSandbox {
        let denial = self
            .policy
            .as_ref()
            .and_then(|policy| gd_sandbox::denial(output, exit_code, cwd, policy));
        ShellSandbox {
            used: self.used.clone(),
            denial,
        }
    }
}

/// How `shell -c command` runs in `cwd` for a call of `ctx`: unconfined when the sandbox is
/// off, else confined to the session's folders plus the settings' and the grants' (the
/// session's for this exact command, and the call's own "allow once"). `Err`: the sandbox is
/// on and cannot start, or a folder cannot be used; the message says why and the command must
/// not run.
pub fn confine(
    ctx: &ToolContext,
    shell: &Path,
    command: &str,
    cwd: &Path,
) -> Result<Confined, String> {
    let settings = &ctx.services.shell.sandbox;
    if !settings.enabled {
        return Ok(Confined {
            prepared: None,
            used: SandboxUse::default(),
            policy: None,
        });
    }
    let sandbox = available().map_err(|unavailable| {
        format!(
            "The command was not run: the sandbox is on (security.toolSandboxing) and cannot \
             start here. {unavailable}"
        )
    })?;
    let mut grant = ctx.services.sandbox_grants.for_command(command);
    if let Some(once) = &ctx.sandbox_grant {
        grant.join(once);
    }
    let policy = policy(ctx, &grant);
    let args = [OsString::from("-c"), OsString::from(command)];
    let prepared = sandbox
        .prepare(&policy, shell, &args, cwd)
        .map_err(|error| format!("The command was not run: {error}"))?;
    let used = SandboxUse {
        sandboxed: true,
        network: policy.network == Network::All,
        granted_paths: grant
            .paths
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
    };
    Ok(Confined {
        prepared: Some(prepared),
        used,
        policy: Some(policy),
    })
}

/// The policy of a call: [`policy_for`] its session, widened by the grant.
fn policy(ctx: &ToolContext, grant: &Grant) -> Policy {
    let mut policy = policy_for(
        &ctx.workspace_dirs,
        &ctx.services.shell.sandbox,
        ctx.services.home.as_deref(),
    );
    for path in &grant.paths {
        if !policy.writable.contains(path) && !policy.extra_writable.contains(path) {
            policy.extra_writable.push(path.clone());
        }
    }
    if grant.network {
        policy.network = Network::All;
    }
    policy
}

/// The sandbox policy of a session: its workspace folders (a conversation's worktree is its
/// workspace) and the settings' `writablePaths` writable, the settings' network, `home`'s
/// secrets hidden. MCP servers with `sandbox: true` run under it too.
pub fn policy_for(
    workspace_dirs: &[PathBuf],
    settings: &SandboxSettings,
    home: Option<&Path>,
) -> Policy {
    let writable: Vec<PathBuf> = workspace_dirs.to_vec();
    let extra_writable = settings
        .writable
        .iter()
        .filter(|p| !writable.contains(p))
        .cloned()
        .collect();
    Policy {
        writable,
        extra_writable,
        network: settings.network,
        home: home.map(Path::to_path_buf),
    }
}
