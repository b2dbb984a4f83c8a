//! Gemini CLI compatible policy engine.
//!
//! Policy files are TOML files of `[[rule]]` tables in three directories
//! (workspace, user, admin) on top of built-in defaults. Each rule has
//! conditions (tool name, MCP server, argument regex, shell command prefix
//! or regex, approval modes), a decision (`allow`, `deny`, `ask_user`) and a
//! priority. The matching rule with the highest `tier + priority/1000` wins.
//! See the crate README for the file format and the built-in rules.
//!
//! ```
//! use gd_policy::{Decision, Mode, PolicyEngine, ToolCall, default_rules};
//! use serde_json::json;
//!
//! let engine = PolicyEngine::new(default_rules());
//! let args = json!({"file_path": "a.txt"});
//! let call = ToolCall { name: "read_file", args: &args, mcp_server: None, subagent: None };
//! assert_eq!(engine.decide(&call, Mode::Default, true), Decision::Allow);
//! let args = json!({"command": "rm -rf build"});
//! let call = ToolCall { name: "run_shell_command", args: &args, mcp_server: None, subagent: None };
//! assert_eq!(engine.decide(&call, Mode::Default, true), Decision::AskUser);
//! assert!(engine.decide(&call, Mode::Default, false).is_deny());
//! assert_eq!(engine.decide(&call, Mode::Yolo, false), Decision::Allow);
//! ```

mod edit;
mod engine;
mod lazy_regex;
mod listing;
mod loader;
mod matched;
mod rule;
pub mod shell;
mod stable_json;

pub use edit::{
    EditError, EditedRule, RuleSpec, add_rule, delete_rule, render_spec, rule_text, update_rule,
};
pub use engine::{
    AUTO_SAVED_POLICY_FILE, ExtensionPolicies, PolicyEngine, PolicySources, ToolCall, Verdict,
    default_admin_dir, default_rules, render_rule,
};
pub use lazy_regex::LazyRegex;
pub use listing::{ListedRule, effective_rules, is_pseudo_path};
pub use loader::{PolicyError, load_paths, parse_policy_file};
pub use matched::{Downgrade, MatchedRule};
pub use rule::{Decision, Mode, Rule, RuleDecision, RuleSource, SHELL_TOOL_NAME, Tier};
pub use stable_json::stable_stringify;
