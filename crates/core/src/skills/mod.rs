//! Agent skills (Gemini CLI 0.61's `activate_skill`): `SKILL.md` folders
//! whose name and description are declared to the model, and whose
//! instructions and resources it loads on demand.
//!
//! - [`discovery`]: reading the tiers' folders (built-in, extension, user,
//!   workspace, with the `.agents/skills` aliases).
//! - [`catalog`]: the skills of a session, which are disabled and active.
//! - [`activate`]: the `activate_skill` tool.
//! - [`consent`]: the policy side (built-in skills activate unasked).
//! - [`enablement`]: `skills.disabled` written by `/skills enable|disable`.

pub mod activate;
pub mod catalog;
pub mod consent;
pub mod discovery;
pub mod enablement;

pub use activate::ActivateSkill;
pub use catalog::{Skill, SkillCatalog};

use std::path::Path;
use std::sync::Arc;

use gd_settings::Settings;

use crate::policy::PolicyApproval;
use crate::tools::{Tool, ToolRegistry};

/// The skills of a session launched in `workspace` (workspace skills only
/// when `trusted`), with `skills.disabled` and `skills.enabled` applied.
pub fn load(
    settings: &Settings,
    home: Option<&Path>,
    workspace: &Path,
    trusted: bool,
) -> SkillCatalog {
    let roots = discovery::Roots {
        home: home.map(Path::to_path_buf),
        workspace: Some(workspace.to_path_buf()),
        trusted,
    };
    let disabled = settings.skills.disabled.clone().unwrap_or_default();
    let off = settings.skills.enabled == Some(false);
    SkillCatalog::new(discovery::discover(&roots), &disabled, off).with_roots(roots)
}

/// Declares `activate_skill` (last, as 0.61) when there are skills, the
/// settings do not exclude it and the policy would ever let it run here
/// (headless in the default mode it would only ask, so it is not offered,
/// as in 0.61's fixtures).
pub fn register(
    tools: &mut ToolRegistry,
    catalog: &Arc<SkillCatalog>,
    settings: &Settings,
    policy: &PolicyApproval,
) {
    if catalog.is_off() || catalog.all().is_empty() {
        return;
    }
    let name = ActivateSkill::NAME.to_owned();
    let excluded = settings.tools.exclude.contains(&name)
        || settings
            .tools
            .core
            .as_ref()
            .is_some_and(|core| !core.contains(&name));
    let tool = ActivateSkill::new(catalog.clone());
    if !excluded && policy.would_declare(&tool as &dyn Tool) {
        tools.register(Arc::new(tool));
    }
}

/// The session's launch warnings for skill files that could not be read.
pub fn launch_warnings(catalog: &SkillCatalog) -> Vec<String> {
    catalog
        .errors()
        .iter()
        .map(|e| format!("Skill loading error: {e}"))
        .collect()
}

/// Keeps `activate_skill` among the declarations only while a skill is
/// enabled, and returns the skills' section of the system instruction when
/// it is declared (the model is told about skills only when it can
/// activate them).
pub fn declared_section(
    catalog: &SkillCatalog,
    declarations: &mut Vec<gd_gemini::FunctionDeclaration>,
) -> Option<String> {
    let declared = declarations.iter().any(|d| d.name == ActivateSkill::NAME);
    if !declared {
        return None;
    }
    match catalog.prompt_section() {
        Some(section) => Some(section),
        None => {
            declarations.retain(|d| d.name != ActivateSkill::NAME);
            None
        }
    }
}

/// Lets the read tools into the active skills' folders, and only them:
/// 0.61 adds the folders to the workspace, which would also let the edit
/// tools (unasked in auto-edit mode) and the shell's `dir_path` in. Here a
/// skill's files can be read, never changed by a tool.
pub fn open_for_reading(
    config: &crate::config::SessionConfig,
    ctx: &mut crate::tools::ToolContext,
) {
    let roots: Vec<_> = config
        .skills
        .roots()
        .into_iter()
        .filter(|r| !crate::tools::files::is_within(r, &config.workspace_dirs))
        .collect();
    if roots.as_slice() != ctx.read_only_dirs.as_slice() {
        ctx.read_only_dirs = Arc::new(roots);
    }
}
