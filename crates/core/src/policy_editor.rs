//! What the policy editor needs from a session and from the policy files:
//! the effective rules (`Op::ListPolicies`), the files read again
//! (`Op::ReloadPolicies`), a dry run of the session's real engine on a call
//! (`Op::PolicyDryRun`), the rule "always allow and save" would write
//! (`Event::SavedRulePreview`), and adding, changing or deleting a rule of
//! the user's or a trusted workspace's policy files.
//!
//! The engine of a running session is swapped on reload rather than
//! changed in place, so a decision in progress sees one whole policy; the
//! session's "always allow" rules move to the new engine.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use gd_policy::{
    AUTO_SAVED_POLICY_FILE, Decision, ListedRule, PolicyEngine, PolicyError, PolicySources, Rule,
    RuleSource, RuleSpec, Tier, ToolCall, Verdict, effective_rules, is_pseudo_path, render_rule,
};
use gd_protocol::{
    ApprovalMode, ConfirmationDetails, ConfirmationOutcome, DryRunDecision, EffectiveRule, Event,
    PolicyRuleFields, PolicyTier, SavedPolicyRule, SavedRulePreview,
};
use serde_json::Value;
use tracing::{debug, info};

use crate::approval::ApprovalPolicy;
use crate::events::EventSink;
use crate::launch::{TrustOverride, load_workspace};
use crate::policy::{PolicyApproval, policy_mode, saved_form};
use crate::tools::Tool;

/// The path of session rules' sources ("always allow" for this session).
pub const SESSION_SOURCE: &str = "<session>";

/// The session's engine, replaced as a whole by a reload. Its methods are
/// the engine's, each on the engine of the moment.
#[derive(Debug)]
pub struct LiveEngine {
    current: RwLock<Arc<PolicyEngine>>,
}

impl LiveEngine {
    pub fn new(engine: PolicyEngine) -> LiveEngine {
        LiveEngine {
            current: RwLock::new(Arc::new(engine)),
        }
    }

    pub fn current(&self) -> Arc<PolicyEngine> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Puts `engine` in place with the current engine's session rules.
    /// Under the write lock, so no "always allow" given meanwhile is lost.
    fn replace(&self, engine: PolicyEngine) {
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        for rule in current.session_rules() {
            engine.add_session_rule(rule);
        }
        *current = Arc::new(engine);
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Arc<PolicyEngine>> {
        self.current.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn decide(
        &self,
        call: &ToolCall<'_>,
        mode: gd_policy::Mode,
        interactive: bool,
    ) -> Decision {
        self.read().decide(call, mode, interactive)
    }

    pub fn check(&self, call: &ToolCall<'_>, mode: gd_policy::Mode, interactive: bool) -> Verdict {
        self.read().check(call, mode, interactive)
    }

    pub fn would_declare(
        &self,
        tool_name: &str,
        mcp_server: Option<&str>,
        mode: gd_policy::Mode,
        interactive: bool,
    ) -> bool {
        self.read()
            .would_declare(tool_name, mcp_server, mode, interactive)
    }

    pub fn add_session_rule(&self, rule: Rule) {
        self.read().add_session_rule(rule);
    }

    pub fn save_rule(&self, rule: &Rule, file: &Path) -> std::io::Result<()> {
        self.read().save_rule(rule, file)
    }
}

/// Where a session's engine was loaded from: the policy directories (the
/// workspace's only when it is trusted), the rules derived from settings,
/// and the files that did not load last time.
#[derive(Debug, Clone, Default)]
pub struct ReloadSources {
    pub sources: PolicySources,
    pub extra_rules: Vec<Rule>,
    pub errors: Vec<String>,
}

impl PolicyApproval {
    /// Lets `Op::ReloadPolicies` read the policy files again.
    pub fn reloadable(mut self, sources: PolicySources, extra_rules: Vec<Rule>) -> Self {
        self.reload = Some(ReloadSources {
            sources,
            extra_rules,
            errors: Vec::new(),
        });
        self
    }

    /// The problems of the first load, listed with the rules.
    pub fn with_load_errors(mut self, errors: &[PolicyError]) -> Self {
        if let Some(reload) = &mut self.reload {
            reload.errors = errors.iter().map(ToString::to_string).collect();
        }
        self
    }

    /// Reads the policy files again; the session's rules are kept. Returns
    /// the files that did not load (skipped, as at launch).
    pub fn reload(&self) -> Result<Vec<String>, String> {
        let Some(reload) = &self.reload else {
            return Err("this session's policy was not loaded from files".into());
        };
        let (mut engine, errors) = PolicyEngine::load(&reload.sources);
        engine.add_rules(reload.extra_rules.clone());
        self.engine.replace(engine);
        info!(errors = errors.len(), "policy reloaded");
        Ok(errors.iter().map(ToString::to_string).collect())
    }

    fn sources(&self) -> Option<&PolicySources> {
        self.reload.as_ref().map(|r| &r.sources)
    }

    /// `Event::Policies` with the engine's rules as they are now.
    pub fn policies_event(&self, errors: Vec<String>) -> Event {
        let engine = self.engine.current();
        let rules = effective_rules(&engine)
            .into_iter()
            .map(|listed| self.info(listed))
            .collect();
        let sources = self.sources();
        Event::Policies {
            rules,
            user_file: self.saved_rules.as_ref().map(|p| p.display().to_string()),
            workspace_file: sources
                .and_then(|s| s.workspace_dir.as_ref())
                .map(|d| d.join(AUTO_SAVED_POLICY_FILE).display().to_string()),
            errors,
        }
    }

    /// The load errors known now (for `Op::ListPolicies`).
    pub fn load_errors(&self) -> Vec<String> {
        self.reload
            .as_ref()
            .map(|r| r.errors.clone())
            .unwrap_or_default()
    }

    fn info(&self, listed: ListedRule) -> EffectiveRule {
        let ListedRule {
            rule,
            session,
            effective_priority,
            text,
        } = listed;
        let (path, line) = match &rule.source {
            Some(s) => (s.path.clone(), s.line),
            None => (PathBuf::from(SESSION_SOURCE), 0),
        };
        let editable = !session
            && !is_pseudo_path(&path)
            && match rule.tier {
                Tier::User => self.sources().and_then(|s| s.user_dir.as_deref()),
                Tier::Workspace => self.sources().and_then(|s| s.workspace_dir.as_deref()),
                Tier::Default | Tier::Extension | Tier::Admin => None,
            }
            .is_some_and(|dir| path.parent() == Some(dir));
        EffectiveRule {
            tier: tier_out(rule.tier),
            session,
            path: path.display().to_string(),
            line: u32::try_from(line).unwrap_or(u32::MAX),
            effective_priority,
            editable,
            fields: fields_out(&RuleSpec::from_rule(&rule)),
            text,
        }
    }

    /// `Event::PolicyDryRun`: what the session's engine (with its session
    /// rules) decides for this call in `mode` (default: the session's).
    pub fn dry_run_event(
        &self,
        tool: &str,
        args: &Value,
        mcp_server: Option<&str>,
        mode: Option<ApprovalMode>,
    ) -> Event {
        let mode = mode.unwrap_or_else(|| self.mode());
        let engine = self.engine.current();
        let call = ToolCall {
            name: tool,
            args,
            mcp_server,
            subagent: None,
        };
        let verdict = engine.check(&call, policy_mode(mode), self.interactive);
        let rule = verdict.rule.as_ref().and_then(|source| {
            effective_rules(&engine)
                .into_iter()
                .find(|l| l.rule.source.as_ref() == Some(source))
        });
        let reason = reason(&verdict, rule.as_ref(), tool, mode);
        debug!(tool, ?verdict, "policy dry run");
        let (decision, message) = match verdict.decision {
            Decision::Allow => (DryRunDecision::Allow, None),
            Decision::AskUser => (DryRunDecision::AskUser, None),
            Decision::Deny { message } => (DryRunDecision::Deny, message),
        };
        Event::PolicyDryRun {
            decision,
            message,
            rule: rule.map(|l| self.info(l)),
            reason,
            approval_mode: mode,
        }
    }

    /// The rule(s) "always allow and save" would append for this call, and
    /// where: the same rules `remember` writes, rendered the same way.
    pub fn saved_rule_preview(
        &self,
        tool: &dyn Tool,
        details: Option<&ConfirmationDetails>,
    ) -> Option<SavedRulePreview> {
        let file = self.saved_rules.as_ref()?;
        let rules = Self::rules_for(tool, details, ConfirmationOutcome::ProceedAlwaysAndSave);
        let text: Vec<String> = rules.iter().map(|r| render_rule(&saved_form(r))).collect();
        Some(SavedRulePreview {
            path: file.display().to_string(),
            text: text.join("\n"),
        })
    }
}

/// Sends the "always allow and save" preview for a confirmation about to be
/// asked (nothing for policies without files).
pub fn emit_saved_rule_preview(
    policy: &dyn ApprovalPolicy,
    tool: &dyn Tool,
    call_id: &str,
    details: &ConfirmationDetails,
    sink: &EventSink,
) {
    if let Some(preview) = policy
        .as_policy()
        .and_then(|p| p.saved_rule_preview(tool, Some(details)))
    {
        sink.emit(Event::SavedRulePreview {
            call_id: call_id.to_owned(),
            preview,
        });
    }
}

fn reason(verdict: &Verdict, rule: Option<&ListedRule>, tool: &str, mode: ApprovalMode) -> String {
    let mode = policy_mode(mode);
    match (rule, &verdict.decision) {
        (Some(listed), decision) => {
            let r = &listed.rule;
            let source = r
                .source
                .as_ref()
                .map_or_else(|| SESSION_SOURCE.to_owned(), RuleSource::to_string);
            let origin = if listed.session {
                "This session's \"always allow\" rule".to_owned()
            } else {
                format!("The {} rule at {source}", r.tier)
            };
            let effective = format!(
                "{}.{:03}",
                listed.effective_priority / 1000,
                listed.effective_priority % 1000
            );
            let said = match decision {
                Decision::Allow => "allow",
                Decision::AskUser => "ask the user",
                Decision::Deny { .. } => "deny",
            };
            let mut out = format!(
                "{origin} (priority {}, effective {effective}) is the highest-priority rule that matches \
                 {tool} in {mode} mode; it says {said}.",
                r.priority
            );
            if r.decision.as_str() != "deny" && decision_is_deny(decision) {
                out.push_str(" The session cannot ask, so asking becomes deny.");
            }
            out
        }
        (None, Decision::AskUser) => format!(
            "No rule decides {tool} in {mode} mode (or a shell command redirects to a file, or \
             runs something the analysis cannot prove, which an allow does not cover), so the \
             user is asked: the default."
        ),
        (None, Decision::Deny { .. }) => format!(
            "No rule allows {tool} in {mode} mode and this session cannot ask the user, so it is denied."
        ),
        (None, Decision::Allow) => format!("{tool} is allowed in {mode} mode."),
    }
}

fn decision_is_deny(decision: &Decision) -> bool {
    matches!(decision, Decision::Deny { .. })
}

fn tier_out(tier: Tier) -> PolicyTier {
    match tier {
        Tier::Default => PolicyTier::Default,
        Tier::Extension => PolicyTier::Extension,
        Tier::Workspace => PolicyTier::Workspace,
        Tier::User => PolicyTier::User,
        Tier::Admin => PolicyTier::Admin,
    }
}

fn fields_out(spec: &RuleSpec) -> PolicyRuleFields {
    PolicyRuleFields {
        tool_names: spec.tool_names.clone(),
        mcp_name: spec.mcp_name.clone(),
        args_pattern: spec.args_pattern.clone(),
        command_prefixes: spec.command_prefixes.clone(),
        command_regex: spec.command_regex.clone(),
        decision: spec.decision.clone(),
        priority: spec.priority,
        modes: spec.modes.clone(),
        allow_redirection: spec.allow_redirection,
        deny_message: spec.deny_message.clone(),
    }
}

fn spec_in(fields: &PolicyRuleFields) -> RuleSpec {
    RuleSpec {
        tool_names: fields.tool_names.clone(),
        mcp_name: fields.mcp_name.clone(),
        args_pattern: fields.args_pattern.clone(),
        command_prefixes: fields.command_prefixes.clone(),
        command_regex: fields.command_regex.clone(),
        decision: fields.decision.clone(),
        priority: fields.priority,
        modes: fields.modes.clone(),
        allow_redirection: fields.allow_redirection,
        deny_message: fields.deny_message.clone(),
    }
}

/// Why a rule file edit was not made (the message is for the editor).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyEditError {
    /// The rule would not load, or the edit does not apply (a read-only
    /// tier, an untrusted workspace, a file outside the policy folders).
    #[error("{0}")]
    Invalid(String),
    /// Reading or writing the file failed.
    #[error("{0}")]
    File(String),
}

/// The policy directory of an editable tier for `workspace`: the user's,
/// or the workspace's when it is trusted (an untrusted workspace's rules
/// do not count, so editing them would mislead).
fn tier_dir(
    workspace: &Path,
    home: Option<&Path>,
    tier: PolicyTier,
) -> Result<(Tier, PathBuf), PolicyEditError> {
    let env = |name: &str| std::env::var(name).ok();
    match tier {
        PolicyTier::User => {
            let sources = PolicySources::standard(home, None, &env);
            let dir = sources.user_dir.ok_or_else(|| {
                PolicyEditError::Invalid("no home directory for user policies".into())
            })?;
            Ok((Tier::User, dir))
        }
        PolicyTier::Workspace => {
            let settings = load_workspace(workspace, home, TrustOverride::Decide)
                .map_err(|e| PolicyEditError::File(e.to_string()))?;
            if !settings.trust.is_trusted() {
                return Err(PolicyEditError::Invalid(
                    "this folder is not trusted: its policy files do not count. Trust the folder first."
                        .into(),
                ));
            }
            Ok((Tier::Workspace, workspace.join(".gemini").join("policies")))
        }
        PolicyTier::Default | PolicyTier::Extension | PolicyTier::Admin => {
            Err(PolicyEditError::Invalid(format!(
                "rules of the {} tier are read-only",
                match tier {
                    PolicyTier::Admin => "admin",
                    PolicyTier::Extension => "extension",
                    _ => "default",
                }
            )))
        }
    }
}

/// `path` when it is a `.toml` file of `dir` (the loader reads no other),
/// else the file new rules go to.
fn file_in(dir: &Path, path: Option<&str>) -> Result<PathBuf, PolicyEditError> {
    let Some(path) = path.filter(|p| !p.is_empty()) else {
        return Ok(dir.join(AUTO_SAVED_POLICY_FILE));
    };
    let path = PathBuf::from(path);
    let in_dir = path.parent() == Some(dir) && path.extension().is_some_and(|e| e == "toml");
    if !in_dir {
        return Err(PolicyEditError::Invalid(format!(
            "{} is not a policy file of {}",
            path.display(),
            dir.display()
        )));
    }
    Ok(path)
}

fn edit_error(e: gd_policy::EditError) -> PolicyEditError {
    match e {
        gd_policy::EditError::Io { .. } => PolicyEditError::File(e.to_string()),
        _ => PolicyEditError::Invalid(e.to_string()),
    }
}

/// Adds a rule (`line` absent) or replaces the rule whose header is on
/// `line` of `path`, in the user's or `workspace`'s policy files. New
/// rules go to `path`, or to the tier's `auto-saved.toml`.
pub fn save_policy_rule(
    workspace: &Path,
    home: Option<&Path>,
    tier: PolicyTier,
    path: Option<&str>,
    line: Option<u32>,
    fields: &PolicyRuleFields,
) -> Result<SavedPolicyRule, PolicyEditError> {
    let (tier, dir) = tier_dir(workspace, home, tier)?;
    let file = file_in(&dir, path)?;
    let spec = spec_in(fields);
    let edited = match line {
        None | Some(0) => gd_policy::add_rule(&file, tier, &spec),
        Some(line) => gd_policy::update_rule(&file, tier, line as usize, &spec),
    }
    .map_err(edit_error)?;
    info!(path = %edited.path.display(), line = edited.line, "policy rule saved from the editor");
    Ok(SavedPolicyRule {
        path: edited.path.display().to_string(),
        line: u32::try_from(edited.line).unwrap_or(u32::MAX),
        text: edited.text,
    })
}

/// Deletes the rule whose header is on `line` of `path` (a user or
/// trusted workspace policy file).
pub fn delete_policy_rule(
    workspace: &Path,
    home: Option<&Path>,
    tier: PolicyTier,
    path: &str,
    line: u32,
) -> Result<(), PolicyEditError> {
    let (tier, dir) = tier_dir(workspace, home, tier)?;
    let file = file_in(&dir, Some(path))?;
    gd_policy::delete_rule(&file, tier, line as usize).map_err(edit_error)?;
    info!(path = %file.display(), line, "policy rule deleted from the editor");
    Ok(())
}
