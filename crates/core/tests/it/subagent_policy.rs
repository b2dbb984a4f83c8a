//! Policy rules written for one subagent (`subagent = "<name>"`, Gemini CLI
//! 0.61's field) through a real session: the agent's calls follow them, the
//! main agent's calls in the same turn do not.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::*;
use gd_core::ApprovalMode;
use gd_core::policy::PolicyApproval;
use gd_core::subagents::{AgentCatalog, InvokeAgent, builtin};
use gd_core::tools::ToolRegistry;
use gd_policy::{PolicyEngine, Tier, default_rules, parse_policy_file};
use gd_protocol::TurnStatus;
use serde_json::json;

/// The user's policy file of this test: the generalist may write files.
const USER_POLICY: &str = r#"
[[rule]]
subagent = "generalist"
toolName = "write_file"
decision = "allow"
priority = 100
"#;

#[tokio::test]
async fn a_rule_for_the_generalist_lets_it_write_while_the_main_agent_is_refused() {
    let mut rules = default_rules();
    rules.extend(parse_policy_file(USER_POLICY, Path::new("user.toml"), Tier::User).unwrap());
    let policy = Arc::new(PolicyApproval::new(
        PolicyEngine::new(rules),
        ApprovalMode::Default,
        false,
        None,
    ));
    let scenario = json!({
        "steps": [
            {"functionCalls": [{"name": "invoke_agent", "args": {"agent_name": "generalist", "prompt": "Write agent.txt"}}]},
            {"functionCalls": [{"name": "write_file", "args": {"file_path": "{{WORKSPACE}}/main.txt", "content": "main"}}]},
            {"text": "Done."}
        ],
        "branches": [{
            "system_contains": "general-purpose software engineering agent",
            "steps": [
                {"functionCalls": [{"name": "write_file", "args": {"file_path": "{{WORKSPACE}}/agent.txt", "content": "agent"}}]},
                {"functionCalls": [{"name": "complete_task", "args": {"result": "Wrote agent.txt."}}]}
            ]
        }]
    });
    let mut h = Harness::start_with_tools(
        scenario,
        |c| c.agents = Arc::new(AgentCatalog::new(builtin::agents(), Vec::new())),
        policy,
        |_| {
            let mut tools = ToolRegistry::with_builtins();
            tools.register(Arc::new(InvokeAgent::new()));
            tools.into()
        },
    );
    let events = h.turn("write both").await;
    assert_eq!(status(&events), TurnStatus::Completed, "{events:#?}");
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("agent.txt")).unwrap(),
        "agent",
        "the generalist's write is allowed by its rule"
    );
    assert!(
        !h.workspace.join("main.txt").exists(),
        "the main agent's write is still refused headless"
    );
}
