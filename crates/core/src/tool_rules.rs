//! Policy rules from the `tools.*` settings, the way Gemini CLI 0.61 derives
//! them (its `createPolicyEngineConfig`), so one `settings.json` allows and
//! denies the same calls in both programs:
//!
//! * `tools.allowed` — allow, User tier 4.3. An entry like
//!   `run_shell_command(git status)` allows commands with that prefix and,
//!   as in 0.61, denies the shell's other commands just below (4.29): naming
//!   a command narrows the shell to the named ones.
//! * `tools.confirmationRequired` — ask first, 4.35 (above `allowed`).
//! * `tools.core` — the listed tools are allowed (4.25) and every other tool
//!   is denied (4.24), so a core list both restricts the set the model sees
//!   and runs the listed ones without asking.
//!
//! `tools.exclude` stays a removal from the registry (see launch), which is
//! what the model sees; 0.61's extra deny rule for it would not change
//! anything a removed tool could do.

use std::path::PathBuf;

use gd_policy::{Mode, Rule, RuleDecision, RuleSource, SHELL_TOOL_NAME, Tier};

/// `tools.allowed` (Gemini CLI: `USER_POLICY_TIER + 0.3`).
pub const ALLOWED_TOOLS_PRIORITY: u16 = 300;
/// `tools.confirmationRequired` (4.35).
pub const CONFIRMATION_REQUIRED_PRIORITY: u16 = 350;
/// `tools.core` (4.25); the deny-everything-else rule sits at 4.24.
pub const CORE_TOOLS_PRIORITY: u16 = 250;

/// Names Gemini CLI accepts for the shell tool in these lists.
const SHELL_ALIASES: &[&str] = &[SHELL_TOOL_NAME, "ShellTool", "run_shell_command"];

/// The rules `tools.allowed`, `tools.confirmationRequired` and `tools.core`
/// stand for.
pub fn tools_settings_rules(settings: &gd_settings::Settings) -> Vec<Rule> {
    let tools = &settings.tools;
    let mut rules = Vec::new();
    if let Some(allowed) = &tools.allowed {
        rules.extend(allow_rules(
            allowed,
            ALLOWED_TOOLS_PRIORITY,
            "tools.allowed",
            Vec::new(),
            true,
        ));
    }
    for name in tools.confirmation_required.iter().flatten() {
        let mut rule = Rule::for_tool(tool_name(name.trim()), RuleDecision::AskUser);
        finish(
            &mut rule,
            CONFIRMATION_REQUIRED_PRIORITY,
            "tools.confirmationRequired",
        );
        rules.push(rule);
    }
    if let Some(core) = &tools.core {
        // Plan mode keeps its own read-only set (0.61: not in plan mode).
        let modes = vec![Mode::Default, Mode::AutoEdit, Mode::Yolo];
        rules.extend(allow_rules(
            core,
            CORE_TOOLS_PRIORITY,
            "tools.core",
            modes.clone(),
            false,
        ));
        let mut rest = Rule::for_tool("*", RuleDecision::Deny);
        finish(&mut rest, CORE_TOOLS_PRIORITY - 10, "tools.core");
        rest.modes = modes;
        rest.deny_message = Some("The tool is not in tools.core.".to_owned());
        rules.push(rest);
    }
    rules
}

fn tool_name(name: &str) -> &str {
    if SHELL_ALIASES.contains(&name) {
        SHELL_TOOL_NAME
    } else {
        name
    }
}

fn finish(rule: &mut Rule, priority: u16, key: &str) {
    rule.tier = Tier::User;
    rule.priority = priority;
    rule.source = Some(RuleSource {
        path: PathBuf::from(format!("<settings>/{key}")),
        line: 0,
    });
}

/// Allow rules for entries `tool` or `tool(args)`; for the shell, `args` is
/// a command prefix. With `narrow`, a shell named with prefixes gets a deny
/// rule just below, so only the named commands run.
fn allow_rules(
    entries: &[String],
    priority: u16,
    key: &str,
    modes: Vec<Mode>,
    narrow: bool,
) -> Vec<Rule> {
    let mut rules = Vec::new();
    let mut narrowed = false;
    for entry in entries {
        let entry = entry.trim();
        let (name, args) = match entry.split_once('(') {
            Some((name, rest)) if rest.ends_with(')') => {
                (name.trim(), Some(rest[..rest.len() - 1].trim()))
            }
            _ => (entry, None),
        };
        if name.is_empty() {
            continue;
        }
        let name = tool_name(name);
        let mut rule = match args {
            Some(prefix) if name == SHELL_TOOL_NAME && !prefix.is_empty() => {
                narrowed = true;
                Rule::for_command_prefix(prefix, RuleDecision::Allow)
            }
            _ => Rule::for_tool(name, RuleDecision::Allow),
        };
        finish(&mut rule, priority, key);
        rule.modes = modes.clone();
        rules.push(rule);
    }
    if narrow && narrowed {
        let mut deny = Rule::for_tool(SHELL_TOOL_NAME, RuleDecision::Deny);
        finish(&mut deny, priority - 10, key);
        deny.modes = modes;
        deny.deny_message = Some(format!("Only the shell commands in {key} may run."));
        rules.push(deny);
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;
    use gd_policy::{Decision, PolicyEngine, ToolCall};
    use serde_json::json;

    fn engine(settings: serde_json::Value) -> PolicyEngine {
        let settings: gd_settings::Settings = serde_json::from_value(settings).unwrap();
        PolicyEngine::new(tools_settings_rules(&settings))
    }

    fn decide(engine: &PolicyEngine, name: &str, args: serde_json::Value) -> Decision {
        let call = ToolCall {
            name,
            args: &args,
            mcp_server: None,
            subagent: None,
        };
        engine.check(&call, Mode::Default, true).decision
    }

    #[test]
    fn allowed_tools_run_without_asking_and_a_named_command_narrows_the_shell() {
        let engine = engine(json!({"tools": {
            "allowed": ["write_file", "run_shell_command(git status)"],
            "confirmationRequired": ["glob"]
        }}));
        assert_eq!(
            decide(&engine, "write_file", json!({"file_path": "a"})),
            Decision::Allow
        );
        assert_eq!(
            decide(
                &engine,
                SHELL_TOOL_NAME,
                json!({"command": "git status -s"})
            ),
            Decision::Allow
        );
        assert!(matches!(
            decide(&engine, SHELL_TOOL_NAME, json!({"command": "rm -rf x"})),
            Decision::Deny { .. }
        ));
        assert_eq!(decide(&engine, "glob", json!({})), Decision::AskUser);
    }

    #[test]
    fn core_allows_its_tools_and_denies_the_rest() {
        let engine = engine(json!({"tools": {"core": ["read_file", "ShellTool"]}}));
        assert_eq!(decide(&engine, "read_file", json!({})), Decision::Allow);
        assert_eq!(
            decide(&engine, SHELL_TOOL_NAME, json!({"command": "ls"})),
            Decision::Allow
        );
        assert!(matches!(
            decide(&engine, "write_file", json!({})),
            Decision::Deny { .. }
        ));
    }

    #[test]
    fn disable_yolo_mode_refuses_the_switch_to_yolo_only() {
        use crate::config::ApprovalMode;
        use crate::policy::{PolicyApproval, YOLO_DISABLED_MESSAGE};
        let policy = PolicyApproval::new(
            PolicyEngine::new(Vec::new()),
            ApprovalMode::Default,
            true,
            None,
        )
        .yolo_disabled(true);
        assert_eq!(
            policy.set_mode(ApprovalMode::Yolo),
            Err(YOLO_DISABLED_MESSAGE.to_owned())
        );
        assert_eq!(policy.mode(), ApprovalMode::Default);
        assert!(policy.set_mode(ApprovalMode::AutoEdit).is_ok());
        let free = PolicyApproval::new(
            PolicyEngine::new(Vec::new()),
            ApprovalMode::Default,
            true,
            None,
        );
        assert!(free.set_mode(ApprovalMode::Yolo).is_ok());
    }

    #[test]
    fn no_settings_no_rules() {
        assert!(tools_settings_rules(&gd_settings::Settings::default()).is_empty());
    }
}
