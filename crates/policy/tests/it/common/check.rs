//! The two promises, checked against what bash really ran:
//!
//! 1. The analysis lists every command bash ran, or says it cannot prove
//!    what runs (then the policy asks).
//! 2. With a user rule allowing only `echo` and `cat`, an `allow` decision
//!    means bash ran nothing but `echo` and `cat` and wrote no file.

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;

use gd_policy::{Decision, Mode, PolicyEngine, Tier, ToolCall, default_rules, parse_policy_file};
use serde_json::json;

use super::analysis;
use super::sandbox::Run;

/// The user policy of promise 2.
pub const ECHO_CAT_POLICY: &str = r#"
[[rule]]
commandPrefix = ["echo", "cat"]
decision = "allow"
priority = 100
"#;

/// The built-in rules plus [`ECHO_CAT_POLICY`] in the User tier.
pub fn echo_cat_engine() -> PolicyEngine {
    let mut rules = default_rules();
    rules.extend(
        parse_policy_file(ECHO_CAT_POLICY, Path::new("user.toml"), Tier::User)
            .expect("valid policy"),
    );
    PolicyEngine::new(rules)
}

pub fn decide(engine: &PolicyEngine, command: &str) -> Decision {
    let args = json!({ "command": command });
    engine.decide(
        &ToolCall {
            name: "run_shell_command",
            args: &args,
            mcp_server: None,
            subagent: None,
        },
        Mode::Default,
        true,
    )
}

/// A broken promise, with everything needed to reproduce it.
#[derive(Debug, Clone)]
pub struct Finding {
    pub case: String,
    /// Commands bash ran that the (proven) analysis does not list.
    pub missed: Vec<String>,
    /// Set when the policy allowed a command that ran more than echo/cat
    /// or wrote a file.
    pub policy: Option<String>,
    pub listed: Vec<String>,
    pub ran: Vec<String>,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "case: {:?}", self.case)?;
        writeln!(f, "  bash ran:      {:?}", self.ran)?;
        writeln!(f, "  analysis lists: {:?} (proven)", self.listed)?;
        if !self.missed.is_empty() {
            writeln!(f, "  missed:        {:?}", self.missed)?;
        }
        if let Some(p) = &self.policy {
            writeln!(f, "  policy:        {p}")?;
        }
        Ok(())
    }
}

/// Checks both promises for one case; `None` when both hold.
pub fn check(case: &str, run: &Run, engine: &PolicyEngine) -> Option<Finding> {
    let facts = analysis::facts(case);
    let ran: Vec<String> = run.commands.iter().map(|c| c.name.clone()).collect();
    let mut missed = Vec::new();
    if facts.proven {
        let listed: BTreeSet<&str> = facts.names.iter().flatten().map(String::as_str).collect();
        for c in &run.commands {
            if !listed.contains(c.name.as_str()) && !missed.contains(&c.name) {
                missed.push(c.name.clone());
            }
        }
    }
    let mut policy = None;
    if decide(engine, case).is_allow() {
        let others: BTreeSet<&str> = ran
            .iter()
            .map(String::as_str)
            .filter(|n| *n != "echo" && *n != "cat")
            .collect();
        if !others.is_empty() || !run.written.is_empty() {
            policy = Some(format!(
                "allowed, but bash also ran {others:?} and wrote {:?}",
                run.written
            ));
        }
    }
    if missed.is_empty() && policy.is_none() {
        return None;
    }
    Some(Finding {
        case: case.to_string(),
        missed,
        policy,
        listed: facts.texts,
        ran,
    })
}
