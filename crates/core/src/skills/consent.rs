//! Who is asked before a skill is activated. The default policy asks for
//! `activate_skill` (0.61's `write.toml`), and where nobody can be asked it
//! denies, so a headless session in the default mode does not declare the
//! tool (0.61's fixtures). A skill from a folder then shows its own
//! consent card ([`super::activate`]).
//!
//! 0.61 asks nothing for its built-in skills: their text ships with the
//! program. Here that exception is a policy rule, generated at launch for
//! the built-in skills the session has, so it shows in the policy listing
//! and a user's own rule (a higher tier) still overrides it.

use std::path::PathBuf;

use gd_policy::{LazyRegex, Rule, RuleDecision, RuleSource, Tier};

use super::{ActivateSkill, SkillCatalog};

/// The pseudo-file the rule is listed under.
pub const BUILTIN_RULE_SOURCE: &str = "<built-in skills>";

/// Above `write.toml`'s ask (1.010), below every file a user writes (those
/// are in higher tiers).
const PRIORITY: u16 = 60;

/// The rule allowing `activate_skill` for exactly the built-in skills that
/// won their name (a user skill called `skill-creator` replaces the
/// built-in one and is asked about like any other), in interactive
/// sessions only. `None` when there is no such skill.
///
/// The pattern is anchored on the whole argument object (`stable_stringify`
/// of `{"name": …}`, the tool's only parameter), so no other argument can
/// smuggle a built-in name into a call for another skill.
pub fn builtin_rule(catalog: &SkillCatalog) -> Option<Rule> {
    let names: Vec<String> = catalog
        .all()
        .iter()
        .filter(|s| s.is_builtin())
        .map(|s| regex::escape(&s.name))
        .collect();
    if names.is_empty() {
        return None;
    }
    let pattern = format!(r#"^\{{"name":"({})"\}}$"#, names.join("|"));
    let mut rule = Rule::for_tool(ActivateSkill::NAME, RuleDecision::Allow);
    rule.args_pattern = Some(LazyRegex::new(&pattern).ok()?);
    rule.interactive = Some(true);
    rule.tier = Tier::Default;
    rule.priority = PRIORITY;
    rule.source = Some(RuleSource {
        path: PathBuf::from(BUILTIN_RULE_SOURCE),
        line: 0,
    });
    Some(rule)
}

#[cfg(test)]
mod tests {
    use gd_policy::{Mode, PolicyEngine, ToolCall, default_rules};
    use serde_json::json;

    use super::*;
    use crate::skills::discovery;

    fn engine() -> PolicyEngine {
        let catalog = SkillCatalog::new(discovery::discover(&Default::default()), &[], false);
        let mut engine = PolicyEngine::new(default_rules());
        engine.add_rules(builtin_rule(&catalog));
        engine
    }

    fn decision(engine: &PolicyEngine, args: serde_json::Value, interactive: bool) -> String {
        let call = ToolCall {
            name: ActivateSkill::NAME,
            args: &args,
            mcp_server: None,
            subagent: None,
        };
        format!(
            "{:?}",
            engine.check(&call, Mode::Default, interactive).decision
        )
    }

    #[test]
    fn built_in_skills_are_allowed_others_asked() {
        let engine = engine();
        for name in ["skill-creator", "antigravity-support"] {
            assert_eq!(decision(&engine, json!({"name": name}), true), "Allow");
        }
        assert_eq!(decision(&engine, json!({"name": "mine"}), true), "AskUser");
        // A look-alike name or a second argument is not the built-in skill.
        assert_eq!(
            decision(&engine, json!({"name": "skill-creator-2"}), true),
            "AskUser"
        );
        assert_eq!(
            decision(
                &engine,
                json!({"name": "mine", "x": "{\"name\":\"skill-creator\"}"}),
                true
            ),
            "AskUser"
        );
    }

    #[test]
    fn headless_sessions_are_not_covered() {
        let engine = engine();
        assert!(decision(&engine, json!({"name": "skill-creator"}), false).starts_with("Deny"));
    }
}
