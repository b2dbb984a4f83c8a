//! The policy editor's file commands: add, change or delete a rule of the
//! user's or a trusted workspace's policy files. The logic (which folder,
//! trust, validation with the real loader, writing in place) lives in
//! `gd_core::policy_editor`; these run it off the async runtime. A session
//! uses the change once the UI sends it `Op::ReloadPolicies`.

use std::path::PathBuf;

use gd_core::launch::home_dir;
use gd_core::policy_editor::{self, PolicyEditError};
use gd_protocol::{CommandError, CommandErrorKind, PolicyRuleFields, PolicyTier, SavedPolicyRule};

fn edit_error(e: PolicyEditError) -> CommandError {
    match e {
        // Shown next to the form: the loader's message names the line.
        PolicyEditError::Invalid(m) => CommandError::new(CommandErrorKind::Input, m),
        PolicyEditError::File(m) => CommandError::new(CommandErrorKind::Config, m),
    }
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, PolicyEditError> + Send + 'static,
) -> Result<T, CommandError> {
    tauri::async_runtime::spawn_blocking(work)
        .await
        .map_err(|e| {
            CommandError::new(
                CommandErrorKind::Config,
                format!("The policy task failed: {e}"),
            )
        })?
        .map_err(edit_error)
}

/// Adds a rule (no `line`) to `path` (default: the tier's
/// `auto-saved.toml`) or replaces the rule whose `[[rule]]` header is on
/// `line` of `path`. `workspace` is the conversation's folder (for the
/// workspace tier, which must be trusted).
#[tauri::command]
pub async fn policy_save_rule(
    workspace: String,
    tier: PolicyTier,
    path: Option<String>,
    line: Option<u32>,
    rule: PolicyRuleFields,
) -> Result<SavedPolicyRule, CommandError> {
    let home = home_dir();
    blocking(move || {
        policy_editor::save_policy_rule(
            &PathBuf::from(workspace),
            home.as_deref(),
            tier,
            path.as_deref(),
            line,
            &rule,
        )
    })
    .await
}

/// Deletes the rule whose `[[rule]]` header is on `line` of `path`.
#[tauri::command]
pub async fn policy_delete_rule(
    workspace: String,
    tier: PolicyTier,
    path: String,
    line: u32,
) -> Result<(), CommandError> {
    let home = home_dir();
    blocking(move || {
        policy_editor::delete_policy_rule(
            &PathBuf::from(workspace),
            home.as_deref(),
            tier,
            &path,
            line,
        )
    })
    .await
}
