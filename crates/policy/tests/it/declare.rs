//! Which tools are declared to the model: `would_declare`, compared with the
//! tool sets Gemini CLI 0.61 declared in headless runs.

use std::path::Path;

use gd_policy::{Mode, PolicyEngine, Tier, default_rules, parse_policy_file};
use serde_json::Value;

fn fixture_names(file: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/gemini-cli-0.61")
        .join(file);
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn engine(user_policy: &str) -> PolicyEngine {
    let mut rules = default_rules();
    rules.extend(parse_policy_file(user_policy, Path::new("user.toml"), Tier::User).unwrap());
    PolicyEngine::new(rules)
}

/// Tools Gemini CLI 0.61 has and we have no built-in rule for (not tools of
/// ours, or not yet).
const NOT_OURS: &[&str] = &["enter_plan_mode", "invoke_agent", "activate_skill"];
/// Tools that run without asking in interactive sessions only (0.61 asks
/// about them there), so that a headless run declares what 0.61 does.
const INTERACTIVE_ONLY: &[&str] = &[
    "list_background_processes",
    "read_background_output",
    "write_todos",
];

#[test]
fn headless_default_and_yolo_match_gemini_cli() {
    let default_set = fixture_names("tools_default.json");
    let yolo_set = fixture_names("tools_yolo.json");
    assert_eq!(default_set.len(), 8);
    assert_eq!(yolo_set.len(), 16);
    let e = engine("");
    let mut compared = 0;
    for tool in &yolo_set {
        assert!(
            e.would_declare(tool, None, Mode::Yolo, false),
            "{tool} in yolo"
        );
        if NOT_OURS.contains(&tool.as_str()) {
            continue;
        }
        let declared = e.would_declare(tool, None, Mode::Default, false);
        assert_eq!(
            declared,
            default_set.contains(tool),
            "{tool} in default headless mode"
        );
        // Interactive sessions declare every tool.
        assert!(e.would_declare(tool, None, Mode::Default, true), "{tool}");
        compared += 1;
    }
    assert_eq!(compared, 13);
    for tool in INTERACTIVE_ONLY {
        let call = gd_policy::ToolCall {
            name: tool,
            args: &Value::Null,
            mcp_server: None,
            subagent: None,
        };
        assert_eq!(
            e.decide(&call, Mode::Default, true),
            gd_policy::Decision::Allow,
            "{tool} runs without asking interactively"
        );
    }
    // The shell and the write tools are what is left out.
    for tool in ["run_shell_command", "write_file", "replace", "web_fetch"] {
        assert!(!e.would_declare(tool, None, Mode::Default, false), "{tool}");
        // Interactive sessions can ask.
        assert!(e.would_declare(tool, None, Mode::Default, true), "{tool}");
    }
}

#[test]
fn other_modes() {
    let e = engine("");
    assert!(e.would_declare("write_file", None, Mode::AutoEdit, false));
    assert!(!e.would_declare("run_shell_command", None, Mode::AutoEdit, false));
    // Plan mode denies the shell even interactively; write_file stays
    // declared, for the plan files its argument rules allow (0.61's plan.toml).
    assert!(!e.would_declare("run_shell_command", None, Mode::Plan, true));
    assert!(e.would_declare("write_file", None, Mode::Plan, true));
    assert!(e.would_declare("read_file", None, Mode::Plan, false));
    // Unknown (e.g. MCP) tools: asked, so declared only interactively.
    assert!(e.would_declare("srv__tool", None, Mode::Default, true));
    assert!(!e.would_declare("srv__tool", None, Mode::Default, false));
    assert!(e.would_declare("tool", Some("srv"), Mode::Yolo, false));
}

#[test]
fn interactive_key_limits_a_rule_to_one_kind_of_session() {
    let e = engine(
        "[[rule]]\ntoolName = \"srv__tool\"\ndecision = \"allow\"\npriority = 5\ninteractive = false\n",
    );
    assert!(e.would_declare("srv__tool", None, Mode::Default, false));
    let rule = e
        .rules()
        .iter()
        .find(|r| r.tool_names == ["srv__tool"])
        .unwrap();
    assert_eq!(rule.interactive, Some(false));
    assert!(gd_policy::render_rule(rule).contains("interactive = false\n"));
    let bad = parse_policy_file(
        "[[rule]]\ntoolName = \"x\"\ndecision = \"allow\"\npriority = 5\ninteractive = \"yes\"\n",
        Path::new("bad.toml"),
        Tier::User,
    );
    assert!(
        bad.unwrap_err()[0]
            .to_string()
            .contains("`interactive` must be a boolean")
    );
}

#[test]
fn argument_dependent_allows_keep_the_tool_declared() {
    let e =
        engine("[[rule]]\ncommandPrefix = \"git status\"\ndecision = \"allow\"\npriority = 1\n");
    assert!(e.would_declare("run_shell_command", None, Mode::Default, false));
    assert!(!e.would_declare("write_file", None, Mode::Default, false));

    let e = engine(
        "[[rule]]\ntoolName = \"write_file\"\nargsPattern = '\"file_path\":\"docs/'\ndecision = \"allow\"\npriority = 1\n",
    );
    assert!(e.would_declare("write_file", None, Mode::Default, false));
}

#[test]
fn unconditional_denies_hide_the_tool_whatever_ranks_below() {
    // An unconditional deny above the conditional allow: never runs.
    let e = engine(
        "[[rule]]\ncommandPrefix = \"git status\"\ndecision = \"allow\"\npriority = 1\n\
         [[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"deny\"\npriority = 2\n",
    );
    assert!(!e.would_declare("run_shell_command", None, Mode::Default, true));
    assert!(!e.would_declare("run_shell_command", None, Mode::Yolo, false));
    // At equal priority the deny wins too.
    let e = engine(
        "[[rule]]\ncommandPrefix = \"git status\"\ndecision = \"allow\"\npriority = 2\n\
         [[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"deny\"\npriority = 2\n",
    );
    assert!(!e.would_declare("run_shell_command", None, Mode::Default, true));
    // A conditional deny above an allow: some calls run.
    let e = engine("[[rule]]\ncommandPrefix = \"rm\"\ndecision = \"deny\"\npriority = 2\n");
    assert!(e.would_declare("run_shell_command", None, Mode::Yolo, false));
    // A whole MCP server denied.
    let e = engine("[[rule]]\nmcpName = \"bad\"\ndecision = \"deny\"\npriority = 0\n");
    assert!(!e.would_declare("bad__x", None, Mode::Yolo, false));
    assert!(!e.would_declare("x", Some("bad"), Mode::Yolo, true));
    assert!(e.would_declare("good__x", None, Mode::Yolo, false));
}
