//! The built-in tools a launch declares (split from `launch` to keep each
//! file to one concern): 0.61's set and order, the settings that add or
//! remove tools, and the policy's say on what a session may be offered.

use std::path::Path;
use std::sync::Arc;

use gd_settings::Settings;

use crate::policy::PolicyApproval;
use crate::tools::ToolRegistry;
use crate::tools::discovered::discover;
#[cfg(unix)]
use crate::tools::shell;

/// The built-in (and discovered) tools a session declares: Gemini CLI
/// 0.61's set in its order, plus `tools.legacy` and `tools.discoveryCommand`
/// tools, minus `tools.exclude` and the tools the policy would never let run
/// in this session (0.61's rule: a headless session cannot be asked, so it
/// declares only what its approval mode allows outright).
pub fn declared_tools(
    settings: &Settings,
    policy: &PolicyApproval,
    workspace: &Path,
    warnings: &mut Vec<String>,
) -> ToolRegistry {
    let mut tools = ToolRegistry::with_builtins();
    crate::subagents::invoke::declare(&mut tools, settings);
    for unknown in tools.add_legacy(&settings.tools.legacy) {
        warnings.push(format!(
            "tools.legacy: unknown tool \"{unknown}\" (known: {})",
            crate::tools::registry::LEGACY_TOOLS.join(", ")
        ));
    }
    if let (Some(discovery), Some(call)) = (
        &settings.tools.discovery_command,
        &settings.tools.call_command,
    ) {
        match discover(discovery, call, workspace) {
            Ok(found) => found
                .into_iter()
                .for_each(|tool| tools.register(Arc::new(tool))),
            Err(e) => warnings.push(format!("Tool discovery failed: {e}")),
        }
    }
    tools.exclude(&settings.tools.exclude);
    if settings.general.topic_update_narration == Some(false) {
        // 0.61 offers `update_topic` only while topic narration is on.
        tools.exclude(&[crate::tools::topic::UpdateTopic::NAME.to_owned()]);
    }
    // Tools the policy would never let run here (e.g. tools that need a
    // confirmation in a session nobody can confirm) are not offered at all.
    // Plan mode's transitions stay: they are declared by mode at each
    // request (`crate::plan::declarations`), not once here.
    // `tools.core` names the whole built-in set, transitions included.
    let core = settings.tools.core.as_deref();
    let in_core = |name: &str| core.is_none_or(|core| core.iter().any(|c| c == name));
    tools.retain(|tool| {
        let name = tool.name();
        (crate::tools::plan_mode::is_transition(name) && in_core(name))
            || policy.would_declare(tool)
    });
    #[cfg(unix)]
    if tools.get(shell::RunShellCommand::NAME).is_none() {
        // Without the shell there are no background processes to look at
        // (Gemini CLI offers these tools only together with the shell).
        tools.exclude(&[
            shell::ListBackgroundProcesses::NAME.to_owned(),
            shell::ReadBackgroundOutput::NAME.to_owned(),
        ]);
    }
    tools
}
