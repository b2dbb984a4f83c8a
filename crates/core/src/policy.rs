//! The policy engine (`gd-policy`) as the scheduler's [`ApprovalPolicy`],
//! with the session's approval mode, which a frontend may change at runtime.

use std::path::PathBuf;
use std::sync::RwLock;

use gd_policy::{
    Decision, MatchedRule, Mode, PolicyEngine, Rule, RuleDecision, RuleSource, Tier, ToolCall,
};
use gd_protocol::{
    ConfirmationDetails, ConfirmationOutcome, DecidedBy, PolicyOutcome, PolicyRuleInfo,
};
use serde_json::Value;
use tracing::info;

use crate::approval::{ApprovalPolicy, ModeRefused, Verdict};
use crate::config::ApprovalMode;
use crate::policy_editor::{LiveEngine, ReloadSources};
use crate::tools::{EDIT_TOOLS, Tool};

/// Priority of "always allow" rules within their tier: above every
/// workspace rule a project would usually ship, below the user's and
/// admin's own rules (higher tiers), so a user's `deny` still holds.
const SESSION_RULE_PRIORITY: u16 = 950;
/// Priority of rules saved with "always allow and save".
const SAVED_RULE_PRIORITY: u16 = 100;

/// Gemini CLI 0.61's message when `security.disableYoloMode` refuses YOLO.
pub const YOLO_DISABLED_MESSAGE: &str = "YOLO mode is disabled by your administrator. To enable it, please request an update to the settings at: https://goo.gle/manage-gemini-cli";

pub struct PolicyApproval {
    /// Swapped by `Op::ReloadPolicies` (see [`crate::policy_editor`]).
    pub(crate) engine: LiveEngine,
    mode: RwLock<ApprovalMode>,
    pub(crate) interactive: bool,
    /// Where "always allow and save" writes (`~/.gemini/policies/auto-saved.toml`).
    pub(crate) saved_rules: Option<PathBuf>,
    /// An untrusted folder: only the default mode.
    restricted: bool,
    /// Where the engine was loaded from, to load it again.
    pub(crate) reload: Option<ReloadSources>,
    /// `security.disableYoloMode`: YOLO cannot be switched on.
    yolo_disabled: bool,
}

impl PolicyApproval {
    pub fn new(
        engine: PolicyEngine,
        mode: ApprovalMode,
        interactive: bool,
        saved_rules: Option<PathBuf>,
    ) -> Self {
        Self {
            engine: LiveEngine::new(engine),
            mode: RwLock::new(mode),
            interactive,
            saved_rules,
            restricted: false,
            reload: None,
            yolo_disabled: false,
        }
    }

    /// In an untrusted folder only the default mode is allowed (Gemini
    /// CLI: "Cannot enable privileged approval modes in an untrusted
    /// folder").
    pub fn restricted(mut self, restricted: bool) -> Self {
        self.restricted = restricted;
        self
    }

    /// `security.disableYoloMode`: switching to YOLO is refused.
    pub fn yolo_disabled(mut self, disabled: bool) -> Self {
        self.yolo_disabled = disabled;
        self
    }

    /// The engine now (a reload replaces it for the following calls).
    pub fn engine(&self) -> std::sync::Arc<PolicyEngine> {
        self.engine.current()
    }

    pub fn mode(&self) -> ApprovalMode {
        *self.mode.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Switches the approval mode for the following calls; refused for
    /// anything but the default in an untrusted folder.
    pub fn set_mode(&self, mode: ApprovalMode) -> Result<(), String> {
        // Plan mode is stricter than the default: allowed everywhere.
        if self.restricted && !matches!(mode, ApprovalMode::Default | ApprovalMode::Plan) {
            return Err(
                "Cannot enable privileged approval modes in an untrusted folder. Trust the folder first."
                    .to_owned(),
            );
        }
        if self.yolo_disabled && mode == ApprovalMode::Yolo {
            return Err(YOLO_DISABLED_MESSAGE.to_owned());
        }
        *self.mode.write().unwrap_or_else(|e| e.into_inner()) = mode;
        Ok(())
    }

    /// Whether a tool should be offered to the model at all in this mode.
    pub fn would_declare(&self, tool: &dyn Tool) -> bool {
        self.engine.would_declare(
            tool.name(),
            tool.mcp_server(),
            policy_mode(self.mode()),
            self.interactive,
        )
    }

    /// The rules an "always allow" adds for a call like this one: the root
    /// commands of a shell command; for an MCP tool the tool on its server,
    /// or the whole server with `ProceedAlwaysServer`; else the tool.
    pub(crate) fn rules_for(
        tool: &dyn Tool,
        details: Option<&ConfirmationDetails>,
        outcome: ConfirmationOutcome,
    ) -> Vec<Rule> {
        if let Some(server) = tool.mcp_server() {
            let mut rule = Rule::any_tool(RuleDecision::Allow);
            rule.mcp_name = Some(server.to_owned());
            if outcome != ConfirmationOutcome::ProceedAlwaysServer {
                // The tool's own name on the server, the way the engine
                // reads `mcp_<server>_<tool>` names.
                let bare = tool
                    .name()
                    .strip_prefix("mcp_")
                    .and_then(|r| r.strip_prefix(server))
                    .and_then(|r| r.strip_prefix('_'))
                    .unwrap_or(tool.name());
                rule.tool_names = vec![bare.to_owned()];
            }
            return vec![rule];
        }
        match details {
            Some(ConfirmationDetails::Execute { root_commands, .. })
                if !root_commands.is_empty() =>
            {
                root_commands
                    .iter()
                    .map(|root| Rule::for_command_prefix(root.clone(), RuleDecision::Allow))
                    .collect()
            }
            // "Always allow edits": every edit tool, as the button says (a
            // `replace` allowed always, the next `write_file` was asked).
            Some(ConfirmationDetails::Edit { .. }) if EDIT_TOOLS.contains(&tool.name()) => {
                EDIT_TOOLS
                    .iter()
                    .map(|name| Rule::for_tool(*name, RuleDecision::Allow))
                    .collect()
            }
            _ => vec![Rule::for_tool(tool.name(), RuleDecision::Allow)],
        }
    }
}

/// Priority (User tier) of the allow rule for a server with `trust: true`
/// (Gemini CLI: 4.2).
pub const TRUSTED_MCP_SERVER_PRIORITY: u16 = 200;
/// Priority (User tier) of the allow rule for a server in `mcp.allowed` (4.1).
pub const ALLOWED_MCP_SERVER_PRIORITY: u16 = 100;
/// Priority (User tier) of the deny rule for a server in `mcp.excluded` (4.9).
pub const EXCLUDED_MCP_SERVER_PRIORITY: u16 = 900;

/// The rules Gemini CLI derives from MCP settings: servers with `trust:
/// true` and servers in `mcp.allowed` run without asking (except in plan
/// mode); servers in `mcp.excluded` are denied. A user's or admin's own
/// policy files still decide above them where their priorities are higher.
pub fn mcp_settings_rules(settings: &gd_settings::Settings) -> Vec<Rule> {
    let modes = vec![Mode::Default, Mode::AutoEdit, Mode::Yolo];
    let source = |key: String| RuleSource {
        path: PathBuf::from(format!("<settings>/{key}")),
        line: 0,
    };
    let server_rule = |server: &str, decision, priority, key: String, modes: Vec<Mode>| {
        let mut rule = Rule::any_tool(decision);
        rule.mcp_name = Some(server.to_owned());
        rule.tier = Tier::User;
        rule.priority = priority;
        rule.modes = modes;
        rule.source = Some(source(key));
        rule
    };
    let mut rules = Vec::new();
    for (name, entry) in &settings.mcp_servers {
        if entry.get("trust").and_then(serde_json::Value::as_bool) == Some(true) {
            rules.push(server_rule(
                name,
                RuleDecision::Allow,
                TRUSTED_MCP_SERVER_PRIORITY,
                format!("mcpServers.{name}.trust"),
                modes.clone(),
            ));
        }
    }
    for name in settings.mcp.allowed.iter().flatten() {
        rules.push(server_rule(
            name,
            RuleDecision::Allow,
            ALLOWED_MCP_SERVER_PRIORITY,
            "mcp.allowed".into(),
            modes.clone(),
        ));
    }
    for name in &settings.mcp.excluded {
        rules.push(server_rule(
            name,
            RuleDecision::Deny,
            EXCLUDED_MCP_SERVER_PRIORITY,
            "mcp.excluded".into(),
            Vec::new(),
        ));
    }
    rules
}

/// A rule as "always allow and save" writes it (User tier, its priority).
pub(crate) fn saved_form(rule: &Rule) -> Rule {
    let mut saved = rule.clone();
    saved.tier = Tier::User;
    saved.priority = SAVED_RULE_PRIORITY;
    saved
}

/// Our approval modes as the policy engine names them.
pub fn policy_mode(mode: ApprovalMode) -> Mode {
    match mode {
        ApprovalMode::Default => Mode::Default,
        ApprovalMode::AutoEdit => Mode::AutoEdit,
        ApprovalMode::Yolo => Mode::Yolo,
        ApprovalMode::Plan => Mode::Plan,
    }
}

impl ApprovalPolicy for PolicyApproval {
    fn can_ask(&self) -> bool {
        self.interactive
    }

    fn as_policy(&self) -> Option<&PolicyApproval> {
        Some(self)
    }

    fn set_approval_mode(&self, mode: ApprovalMode) -> Result<(), ModeRefused> {
        self.set_mode(mode).map_err(ModeRefused)
    }

    fn decide(&self, tool: &dyn Tool, args: &Value) -> Verdict {
        self.decide_why(tool, args).0
    }

    fn decide_why(&self, tool: &dyn Tool, args: &Value) -> (Verdict, Option<DecidedBy>) {
        self.decide_why_as(tool, args, None)
    }

    fn decide_why_as(
        &self,
        tool: &dyn Tool,
        args: &Value,
        subagent: Option<&str>,
    ) -> (Verdict, Option<DecidedBy>) {
        let call = ToolCall {
            name: tool.name(),
            args,
            mcp_server: tool.mcp_server(),
            subagent,
        };
        let verdict = self
            .engine
            .check(&call, policy_mode(self.mode()), self.interactive);
        let why = decided_by(&verdict);
        // 0.61's plan.toml allows the plan-mode transitions where nobody
        // can be asked (`interactive = false` rules, which our rule format
        // does not have): the question becomes an allow, not a denial.
        if !self.interactive
            && crate::tools::plan_mode::is_transition(tool.name())
            && matches!(
                verdict.downgrade,
                Some(gd_policy::Downgrade::NonInteractive)
            )
        {
            return (Verdict::Allow, Some(why));
        }
        let verdict = match verdict.decision {
            Decision::Allow => Verdict::Allow,
            Decision::AskUser => Verdict::Ask,
            Decision::Deny { message } => Verdict::Deny(message),
        };
        (verdict, Some(why))
    }

    fn remember(
        &self,
        tool: &dyn Tool,
        _args: &Value,
        details: Option<&ConfirmationDetails>,
        outcome: ConfirmationOutcome,
    ) -> Result<(), String> {
        let save = outcome == ConfirmationOutcome::ProceedAlwaysAndSave;
        for mut rule in Self::rules_for(tool, details, outcome) {
            if save {
                let Some(file) = &self.saved_rules else {
                    return Err("no home directory to save policies in".into());
                };
                let saved = saved_form(&rule);
                self.engine
                    .save_rule(&saved, file)
                    .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
                info!(file = %file.display(), tool = tool.name(), "saved an allow rule");
            }
            rule.tier = Tier::Workspace;
            rule.priority = SESSION_RULE_PRIORITY;
            // A source, so that the policy editor's dry run can name the
            // rule that decided.
            rule.source = Some(RuleSource {
                path: PathBuf::from(crate::policy_editor::SESSION_SOURCE),
                line: self.engine.current().session_rules().len() + 1,
            });
            self.engine.add_session_rule(rule);
        }
        Ok(())
    }
}

/// The engine's verdict as what decided a call: a mode's built-in rule is
/// the approval mode, a session rule without a file is "always allow", any
/// other rule is the policy, and no rule is the default.
pub fn decided_by(verdict: &gd_policy::Verdict) -> DecidedBy {
    let outcome = match verdict.decision {
        Decision::Allow => PolicyOutcome::Allow,
        Decision::AskUser => PolicyOutcome::Ask,
        Decision::Deny { .. } => PolicyOutcome::Deny,
    };
    let downgrade = verdict.downgrade.as_ref().map(gd_policy::Downgrade::reason);
    let Some(matched) = &verdict.matched else {
        return DecidedBy::Default {
            outcome,
            reason: downgrade,
        };
    };
    let rule = rule_info(matched);
    if downgrade.is_none() && matched.is_mode_default() {
        let mode = matched.modes.first().map_or("default", |m| m.as_str());
        return DecidedBy::ApprovalMode {
            outcome,
            mode: mode.to_owned(),
            rule,
        };
    }
    if downgrade.is_none() && matched.session && outcome == PolicyOutcome::Allow {
        return DecidedBy::SessionAllow { rule };
    }
    DecidedBy::Policy {
        outcome,
        rule,
        downgrade,
    }
}

fn rule_info(m: &MatchedRule) -> PolicyRuleInfo {
    PolicyRuleInfo {
        tier: m.tier.as_str().to_owned(),
        priority: m.priority,
        effective_priority: m.effective_priority,
        decision: m.decision.as_str().to_owned(),
        modes: m.modes.iter().map(|m| m.as_str().to_owned()).collect(),
        path: m.source.as_ref().map(|s| s.path.display().to_string()),
        line: m
            .source
            .as_ref()
            .filter(|s| s.line > 0)
            .and_then(|s| u32::try_from(s.line).ok()),
        text: m.text.clone(),
        origin: m.origin.clone(),
        command: m.command.clone(),
    }
}
