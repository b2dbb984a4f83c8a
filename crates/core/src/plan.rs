//! Plan mode (Gemini CLI 0.61's `plan` approval mode): what a running turn
//! needs to know about it. The tools `enter_plan_mode` / `exit_plan_mode`
//! ([`crate::tools::plan_mode`]) switch the session's mode through
//! [`PlanMode`]; `write_file` / `replace` resolve their paths against the
//! plans directory while the session plans (as 0.61's edit tools do), so the
//! model's plan lands there and nowhere else; the policy (`plan.toml`)
//! refuses every other change.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gd_protocol::ApprovalMode;
use tracing::{info, warn};

use crate::tools::{ToolError, ToolErrorKind, files};

/// Switches the session's approval mode (the turn context and the policy),
/// echoing `Event::TurnContext`; `Err` says why the switch was refused.
pub type ModeSwitch = Arc<dyn Fn(ApprovalMode) -> Result<(), String> + Send + Sync>;
/// Reads the session's approval mode now.
pub type ModeReader = Arc<dyn Fn() -> ApprovalMode + Send + Sync>;

/// The session's plan-mode state, handed to tools in
/// [`crate::tools::ToolContext::plan`].
#[derive(Clone)]
pub struct PlanMode {
    plans_dir: PathBuf,
    project_root: PathBuf,
    interactive: bool,
    switch: ModeSwitch,
    current: ModeReader,
    prior: ModeReader,
}

impl std::fmt::Debug for PlanMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlanMode")
            .field("plans_dir", &self.plans_dir)
            .field("interactive", &self.interactive)
            .finish_non_exhaustive()
    }
}

/// Where 0.61 keeps a session's plans: `<project temp dir>/<session id>/plans`.
pub fn plans_dir(temp_dir: &Path, session_id: &str) -> PathBuf {
    temp_dir.join(session_id).join("plans")
}

/// `general.plan.directory`, resolved against the project root; refused
/// (with 0.61's message) when it lies outside the project.
pub fn custom_plans_dir(project_root: &Path, dir: &str) -> Result<PathBuf, String> {
    let resolved = files::resolve(project_root, dir.trim());
    if files::is_within(&resolved, &[project_root.to_path_buf()]) {
        Ok(resolved)
    } else {
        Err(format!(
            "Custom plans directory '{dir}' resolves to '{}', which is outside the project root '{}'.",
            resolved.display(),
            project_root.display()
        ))
    }
}

/// 0.61's messages (`planUtils.ts`), word for word: the model was trained on them.
pub fn path_access_denied(plan_path: &str, plans_dir: &Path) -> String {
    format!(
        "Access denied: plan path ({plan_path}) must be within the designated plans directory ({}).",
        plans_dir.display()
    )
}

pub fn file_not_found(plan_path: &str) -> String {
    format!(
        "Plan file does not exist: {plan_path}. You must create the plan file before requesting approval."
    )
}

/// How much `mode` lets run without asking: plan < default < auto_edit <
/// yolo. Leaving plan mode for a mode ranked above the one the session had
/// before it planned needs the user's answer (issue 33).
pub fn permissiveness(mode: ApprovalMode) -> u8 {
    match mode {
        ApprovalMode::Plan => 0,
        ApprovalMode::Default => 1,
        ApprovalMode::AutoEdit => 2,
        ApprovalMode::Yolo => 3,
    }
}

pub const FILE_EMPTY: &str =
    "Plan file is empty. You must write content to the plan file before requesting approval.";

impl PlanMode {
    pub fn new(
        plans_dir: PathBuf,
        project_root: PathBuf,
        interactive: bool,
        switch: ModeSwitch,
        current: ModeReader,
        prior: ModeReader,
    ) -> Self {
        Self {
            plans_dir,
            project_root,
            interactive,
            switch,
            current,
            prior,
        }
    }

    pub fn plans_dir(&self) -> &Path {
        &self.plans_dir
    }

    /// Whether someone can answer a plan approval (the app) or not (headless).
    pub fn interactive(&self) -> bool {
        self.interactive
    }

    pub fn is_planning(&self) -> bool {
        (self.current)() == ApprovalMode::Plan
    }

    /// The mode the session had before it entered plan mode, `Plan` when it
    /// started planning: the most `exit_plan_mode` may return to without
    /// the user's answer. Otherwise a repository's own plan file, presented
    /// where nobody can be asked, would lift a `default` session to YOLO
    /// (0.61 does; issue 33).
    pub fn prior(&self) -> ApprovalMode {
        (self.prior)()
    }

    /// Switches the session's mode (see [`ModeSwitch`]).
    pub fn switch_to(&self, mode: ApprovalMode) -> Result<(), String> {
        info!(mode = mode.as_str(), "plan mode switch");
        (self.switch)(mode)
    }

    /// Creates the plans directory (0.61 does when plan mode starts); a
    /// failure is logged, the write that needs it reports it.
    pub fn ensure_dir(&self) {
        if let Err(error) = std::fs::create_dir_all(&self.plans_dir) {
            warn!(%error, dir = %self.plans_dir.display(), "cannot create the plans directory");
        }
    }

    /// Resolves a plan path the way 0.61's `resolveAndValidatePlanPath`
    /// does: an absolute path inside the plans directory, a path relative
    /// to the project that lands inside it, or a path relative to the plans
    /// directory itself; anything else is refused.
    pub fn resolve(&self, plan_path: &str) -> Result<PathBuf, String> {
        let trimmed = plan_path.trim();
        if trimmed.is_empty() {
            return Err("Plan file path must be non-empty.".to_owned());
        }
        let roots = [self.plans_dir.clone()];
        if Path::new(trimmed).is_absolute() {
            let path = files::resolve(&self.project_root, trimmed);
            if files::is_within(&path, &roots) {
                return Ok(path);
            }
        }
        let from_root = files::resolve(&self.project_root, trimmed);
        if files::is_within(&from_root, &roots) {
            return Ok(from_root);
        }
        let from_plans = files::resolve(&self.plans_dir, trimmed);
        if files::is_within(&from_plans, &roots) {
            return Ok(from_plans);
        }
        Err(path_access_denied(trimmed, &self.plans_dir))
    }
}

/// Where `write_file` / `replace` write, and the roots that bound it: in
/// plan mode the plan path inside the plans directory (0.61's edit tools
/// resolve against it), otherwise the workspace as always.
pub fn resolve_for_edit(
    ctx: &crate::tools::ToolContext,
    path: &str,
) -> Result<(PathBuf, Arc<Vec<PathBuf>>), ToolError> {
    match ctx.plan.as_ref().filter(|plan| plan.is_planning()) {
        Some(plan) => {
            let resolved = plan
                .resolve(path)
                .map_err(|message| ToolError::new(ToolErrorKind::PathNotInWorkspace, message))?;
            plan.ensure_dir();
            Ok((resolved, Arc::new(vec![plan.plans_dir.clone()])))
        }
        None => Ok((
            files::resolve_in_workspace(ctx, path)?,
            ctx.workspace_dirs.clone(),
        )),
    }
}

/// Where `read_file` reads, and the roots that bound it: the workspace (or
/// an activated skill's folder, [`files::resolve_readable`]), or a plan in
/// the session's plans directory (in any mode: the approved plan is read
/// while it is carried out). 0.61 adds the plans directory to the
/// workspace for the same reason.
pub fn resolve_for_read(
    ctx: &crate::tools::ToolContext,
    path: &str,
) -> Result<(PathBuf, Arc<Vec<PathBuf>>), ToolError> {
    let readable = files::resolve_readable(ctx, path);
    if readable.is_ok() {
        return readable;
    }
    if let Some(plan) = &ctx.plan
        && Path::new(path.trim()).is_absolute()
    {
        let resolved = files::resolve(&plan.project_root, path.trim());
        let roots = vec![plan.plans_dir.clone()];
        if files::is_within(&resolved, &roots) {
            return Ok((resolved, Arc::new(roots)));
        }
    }
    readable
}

/// Whether the session plans right now (edits go to the plans directory).
pub fn planning(ctx: &crate::tools::ToolContext) -> bool {
    ctx.plan.as_ref().is_some_and(|plan| plan.is_planning())
}

/// The roots an edit may write under: the plans directory while planning,
/// the workspace otherwise (see [`resolve_for_edit`]).
pub fn edit_roots(ctx: &crate::tools::ToolContext) -> Arc<Vec<PathBuf>> {
    match ctx.plan.as_ref().filter(|plan| plan.is_planning()) {
        Some(plan) => Arc::new(vec![plan.plans_dir.clone()]),
        None => ctx.workspace_dirs.clone(),
    }
}

/// The session's plan mode for one turn: switches go through the turn
/// context (so `Event::TurnContext` echoes them and the next request
/// declares the tools of the new mode) and the policy.
pub(crate) fn for_turn(
    config: &crate::config::SessionConfig,
    context: crate::session::context::SharedContext,
    policy: Arc<dyn crate::approval::ApprovalPolicy>,
    sink: crate::events::EventSink,
) -> PlanMode {
    let reader = context.clone();
    let prior = context.clone();
    let switch: ModeSwitch = Arc::new(move |mode| {
        let events = context.apply(policy.as_ref(), Some(mode), None, None);
        // A warning is the refusal only when the mode did not change (switching to YOLO
        // without the sandbox warns, and switches).
        let switched = context.get().approval_mode == mode;
        let mut refused = None;
        for event in events {
            if let gd_protocol::Event::Warning { message } = &event
                && !switched
            {
                refused = Some(message.clone());
            }
            sink.emit(event);
        }
        match refused {
            Some(message) => Err(message),
            None => Ok(()),
        }
    });
    PlanMode::new(
        config
            .plans_dir
            .clone()
            .unwrap_or_else(|| plans_dir(&config.temp_dir, &config.session_id)),
        config.workspace_dirs[0].clone(),
        config.interactive,
        switch,
        Arc::new(move || reader.get().approval_mode),
        Arc::new(move || prior.get().before_plan.unwrap_or(ApprovalMode::Plan)),
    )
}

/// What the system instruction says while the session plans (0.61 adds its
/// "Active Approval Mode: Plan" section the same way): the rules of the
/// mode, where plans go, and how to present one. `None` outside plan mode.
pub fn instructions(
    config: &crate::config::SessionConfig,
    mode: ApprovalMode,
    registry: &crate::tools::ToolRegistry,
) -> Option<String> {
    if mode != ApprovalMode::Plan {
        return None;
    }
    let dir = config
        .plans_dir
        .clone()
        .unwrap_or_else(|| plans_dir(&config.temp_dir, &config.session_id));
    let dir = dir.display();
    let tools: Vec<String> = registry
        .names()
        .into_iter()
        .filter(|name| {
            registry.get(name).is_some_and(|t| t.kind().is_read_only())
                || matches!(name.as_str(), "write_file" | "replace" | "exit_plan_mode")
        })
        .map(|name| format!("- {name}"))
        .collect();
    let approval = if config.interactive {
        "The user approves the plan (or asks for changes) before any source code is edited."
    } else {
        "Nobody can approve a plan in this session: once the plan is written, exit_plan_mode returns the session to the approval mode it had before planning, never a more permissive one (a session that started in Plan mode stays in it). Present the plan in your answer."
    };
    Some(format!(
        "# Active Approval Mode: Plan

You are in **Plan Mode**: research the task and write an implementation plan as a Markdown file in `{dir}/`. {approval}

## Tools you can use now
{tools}

## Rules
1. **Read-only:** do not modify source code. Explore with the read-only tools; the only files you may write are `.md` plans in `{dir}/` (write_file and replace resolve a bare file name such as `feature-x.md` there).
2. **Questions are not tasks:** if the user only asks how something works, answer directly; plan only for changes.
3. **Plans:** give each plan a descriptive file name. Scale the plan to the task: for a simple change, the list of changes and how to verify them; for a larger one, the objective, the files involved, the implementation steps and the verification.
4. **Presenting:** when the plan is ready, show it in the chat, then call exit_plan_mode with its file name to ask for formal approval. Never try to leave plan mode through the shell.
5. **Feedback:** if the user asks for changes, revise the plan file accordingly and present it again.",
        tools = tools.join("\n"),
    ))
}

/// The declarations for a request in `mode`: every tool of the registry,
/// but `enter_plan_mode` only outside plan mode and `exit_plan_mode` only in
/// it (as 0.61 declares them).
pub fn declarations(
    registry: &crate::tools::ToolRegistry,
    mode: ApprovalMode,
) -> Vec<gd_gemini::FunctionDeclaration> {
    registry
        .declarations()
        .into_iter()
        .filter(|d| crate::tools::plan_mode::declared_in(&d.name, mode))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(root: &Path, plans: &Path) -> PlanMode {
        PlanMode::new(
            plans.to_path_buf(),
            root.to_path_buf(),
            true,
            Arc::new(|_| Ok(())),
            Arc::new(|| ApprovalMode::Plan),
            Arc::new(|| ApprovalMode::Default),
        )
    }

    #[test]
    fn resolves_like_gemini_cli() {
        let root = tempfile::tempdir().unwrap();
        let plans = tempfile::tempdir().unwrap();
        let p = plan(root.path(), plans.path());
        assert_eq!(p.resolve("x.md").unwrap(), plans.path().join("x.md"));
        let abs = plans.path().join("y.md");
        assert_eq!(p.resolve(abs.to_str().unwrap()).unwrap(), abs);
        let err = p.resolve("../escape.md").unwrap_err();
        assert!(
            err.starts_with("Access denied: plan path (../escape.md)"),
            "{err}"
        );
        assert!(p.resolve("/etc/passwd").is_err());
        assert!(p.resolve("  ").is_err());
    }
}
