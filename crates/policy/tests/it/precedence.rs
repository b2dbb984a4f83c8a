//! Which rule wins: tiers, priorities, ties, modes, tool names, arguments.
//! Most cases are the examples of Gemini CLI's policy documentation.

use std::path::Path;

use gd_policy::{Decision, Mode, PolicyEngine, Tier, ToolCall, default_rules, parse_policy_file};
use serde_json::{Value, json};

/// The built-in rules plus one policy file per entry.
fn engine(files: &[(Tier, &str)]) -> PolicyEngine {
    let mut rules = default_rules();
    for (i, (tier, text)) in files.iter().enumerate() {
        let path = format!("{}-{i}.toml", tier.as_str());
        rules.extend(parse_policy_file(text, Path::new(&path), *tier).unwrap());
    }
    PolicyEngine::new(rules)
}

/// Only these files, no built-in rules.
fn bare_engine(files: &[(Tier, &str)]) -> PolicyEngine {
    let mut rules = Vec::new();
    for (i, (tier, text)) in files.iter().enumerate() {
        rules.extend(parse_policy_file(text, Path::new(&format!("f{i}.toml")), *tier).unwrap());
    }
    PolicyEngine::new(rules)
}

fn short(d: &Decision) -> &'static str {
    match d {
        Decision::Allow => "allow",
        Decision::Deny { .. } => "deny",
        Decision::AskUser => "ask",
    }
}

fn decide(engine: &PolicyEngine, name: &str, args: Value, mode: Mode) -> &'static str {
    let call = ToolCall {
        name,
        args: &args,
        mcp_server: None,
        subagent: None,
    };
    short(&engine.decide(&call, mode, true))
}

fn shell(engine: &PolicyEngine, command: &str) -> &'static str {
    decide(
        engine,
        "run_shell_command",
        json!({ "command": command }),
        Mode::Default,
    )
}

fn rule(tool: &str, decision: &str, priority: u16) -> String {
    format!("[[rule]]\ntoolName = \"{tool}\"\ndecision = \"{decision}\"\npriority = {priority}\n")
}

#[test]
fn tiers_outrank_priorities() {
    use Tier::*;
    // (files, expected decision for write_file)
    let cases: Vec<(Vec<(Tier, String)>, &str)> = vec![
        // No file: the built-in ask_user.
        (vec![], "ask"),
        // A user rule of priority 0 beats the built-in rule of priority 10.
        (vec![(User, rule("write_file", "allow", 0))], "allow"),
        // Admin 0 beats User 999.
        (
            vec![
                (User, rule("write_file", "allow", 999)),
                (Admin, rule("write_file", "deny", 0)),
            ],
            "deny",
        ),
        (
            vec![
                (User, rule("write_file", "deny", 999)),
                (Admin, rule("write_file", "allow", 0)),
            ],
            "allow",
        ),
        // The workspace cannot override the user...
        (
            vec![
                (User, rule("write_file", "deny", 0)),
                (Workspace, rule("write_file", "allow", 999)),
            ],
            "deny",
        ),
        (
            vec![
                (User, rule("write_file", "ask_user", 0)),
                (Workspace, rule("write_file", "allow", 999)),
            ],
            "ask",
        ),
        // ...but overrides the built-in rules.
        (vec![(Workspace, rule("write_file", "allow", 0))], "allow"),
        // Admin over workspace.
        (
            vec![
                (Workspace, rule("write_file", "allow", 999)),
                (Admin, rule("write_file", "ask_user", 0)),
            ],
            "ask",
        ),
    ];
    for (files, expected) in cases {
        let files: Vec<(Tier, &str)> = files.iter().map(|(t, s)| (*t, s.as_str())).collect();
        let got = decide(&engine(&files), "write_file", json!({}), Mode::Default);
        assert_eq!(got, expected, "files: {files:#?}");
    }
}

#[test]
fn priority_within_a_tier_and_ties() {
    // (rules in one user file, or in two user files, expected)
    let cases: &[(&[(&str, u16)], &str)] = &[
        (&[("allow", 100), ("deny", 200)], "deny"),
        (&[("allow", 300), ("deny", 200)], "allow"),
        (&[("ask_user", 5), ("allow", 6)], "allow"),
        // Equal priority: deny > ask_user > allow, whatever the order.
        (&[("allow", 100), ("deny", 100)], "deny"),
        (&[("deny", 100), ("allow", 100)], "deny"),
        (&[("allow", 100), ("ask_user", 100)], "ask"),
        (&[("ask_user", 100), ("allow", 100)], "ask"),
        (&[("ask_user", 100), ("deny", 100)], "deny"),
        (&[("allow", 7), ("ask_user", 7), ("deny", 7)], "deny"),
    ];
    for (rules, expected) in cases {
        let one_file: String = rules.iter().map(|(d, p)| rule("glob", d, *p)).collect();
        let got = decide(
            &bare_engine(&[(Tier::User, &one_file)]),
            "glob",
            json!({}),
            Mode::Default,
        );
        assert_eq!(got, *expected, "one file: {rules:?}");

        let separate: Vec<String> = rules.iter().map(|(d, p)| rule("glob", d, *p)).collect();
        let files: Vec<(Tier, &str)> = separate
            .iter()
            .rev()
            .map(|s| (Tier::User, s.as_str()))
            .collect();
        let got = decide(&bare_engine(&files), "glob", json!({}), Mode::Default);
        assert_eq!(got, *expected, "separate files: {rules:?}");
    }
}

#[test]
fn the_winning_rule_is_reported() {
    let e = engine(&[(
        Tier::User,
        "\n[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 1\ndeny_message = \"no globbing\"\n",
    )]);
    let args = json!({});
    let verdict = e.check(
        &ToolCall {
            name: "glob",
            args: &args,
            mcp_server: None,
            subagent: None,
        },
        Mode::Default,
        true,
    );
    assert_eq!(
        verdict.decision,
        Decision::Deny {
            message: Some("no globbing".into())
        }
    );
    let source = verdict.rule.unwrap();
    assert_eq!(source.to_string(), "user-0.toml:2");
}

#[test]
fn no_matching_rule_asks() {
    let e = bare_engine(&[]);
    assert_eq!(decide(&e, "anything", json!({}), Mode::Default), "ask");
    assert_eq!(decide(&e, "anything", json!({}), Mode::Yolo), "ask");
}

#[test]
fn modes_restrict_rules() {
    let e = engine(&[(
        Tier::User,
        "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"allow\"\npriority = 5\nmodes = [\"autoEdit\", \"plan\"]\n",
    )]);
    let cases = [
        (Mode::Default, "ask"),
        (Mode::AutoEdit, "allow"),
        (Mode::Plan, "allow"),
        (Mode::Yolo, "allow"), // the built-in yolo rule
    ];
    for (mode, expected) in cases {
        assert_eq!(
            decide(&e, "run_shell_command", json!({"command": "make"}), mode),
            expected,
            "{mode}"
        );
    }
}

#[test]
fn user_deny_holds_in_yolo_mode() {
    let e = engine(&[(Tier::User, &rule("web_fetch", "deny", 0))]);
    assert_eq!(
        decide(&e, "web_fetch", json!({"prompt": "x"}), Mode::Yolo),
        "deny"
    );
    assert_eq!(decide(&e, "write_file", json!({}), Mode::Yolo), "allow");
}

#[test]
fn mcp_wildcards_and_mcp_name() {
    let e = engine(&[(
        Tier::User,
        r#"
# Allows the `search` tool on the `my-jira-server` MCP
[[rule]]
mcpName = "my-jira-server"
toolName = "search"
decision = "allow"
priority = 200

# Denies all tools from the `untrusted-server` MCP
[[rule]]
mcpName = "untrusted-server"
decision = "deny"
priority = 500

[[rule]]
toolName = "my-server__*"
decision = "allow"
priority = 100

[[rule]]
toolName = "my-server__drop_table"
decision = "deny"
priority = 100
"#,
    )]);
    // (name, server, expected)
    let cases: &[(&str, Option<&str>, &str)] = &[
        ("my-jira-server__search", None, "allow"),
        ("search", Some("my-jira-server"), "allow"),
        ("mcp_my-jira-server_search", Some("my-jira-server"), "allow"),
        ("my-jira-server__delete", None, "ask"),
        ("search", Some("other"), "ask"),
        ("untrusted-server__read", None, "deny"),
        ("anything", Some("untrusted-server"), "deny"),
        ("my-server__query", None, "allow"),
        ("query", Some("my-server"), "allow"),
        // Same priority, deny wins.
        ("my-server__drop_table", None, "deny"),
        ("other-server__query", None, "ask"),
        // A built-in rule does not cover an MCP tool of the same name.
        ("read_file", Some("some-server"), "ask"),
        ("some-server__read_file", None, "ask"),
        ("read_file", None, "allow"),
    ];
    for (name, server, expected) in cases {
        let args = json!({});
        let call = ToolCall {
            name,
            args: &args,
            mcp_server: *server,
            subagent: None,
        };
        assert_eq!(
            short(&e.decide(&call, Mode::Default, true)),
            *expected,
            "{name} {server:?}"
        );
    }
}

#[test]
fn tool_name_aliases_apply_both_ways() {
    let old_name = engine(&[(Tier::User, &rule("search_file_content", "deny", 0))]);
    assert_eq!(
        decide(&old_name, "grep_search", json!({}), Mode::Default),
        "deny"
    );
    assert_eq!(
        decide(&old_name, "search_file_content", json!({}), Mode::Default),
        "deny"
    );
    let new_name = engine(&[(Tier::User, &rule("grep_search", "deny", 0))]);
    assert_eq!(
        decide(&new_name, "search_file_content", json!({}), Mode::Default),
        "deny"
    );
    // The built-in read-only rule names grep_search; the old name is allowed too.
    assert_eq!(
        decide(
            &engine(&[]),
            "search_file_content",
            json!({}),
            Mode::Default
        ),
        "allow"
    );
}

#[test]
fn tool_name_lists() {
    let e = bare_engine(&[(
        Tier::User,
        "[[rule]]\ntoolName = [\"write_file\", \"replace\"]\ndecision = \"ask_user\"\npriority = 10\n\
         [[rule]]\ndecision = \"deny\"\npriority = 0\n",
    )]);
    assert_eq!(decide(&e, "write_file", json!({}), Mode::Default), "ask");
    assert_eq!(decide(&e, "replace", json!({}), Mode::Default), "ask");
    assert_eq!(decide(&e, "glob", json!({}), Mode::Default), "deny");
}

#[test]
fn args_pattern_sees_sorted_compact_json() {
    let e = engine(&[(
        Tier::User,
        r#"
[[rule]]
toolName = "read_file"
argsPattern = '"file_path":"[^"]*\.env"'
decision = "deny"
priority = 100

[[rule]]
toolName = "write_file"
argsPattern = '^\{"content":"[^"]*","file_path":"notes/'
decision = "allow"
priority = 100
"#,
    )]);
    assert_eq!(
        decide(
            &e,
            "read_file",
            json!({"file_path": "app/.env"}),
            Mode::Default
        ),
        "deny"
    );
    assert_eq!(
        decide(
            &e,
            "read_file",
            json!({"file_path": "app/main.rs"}),
            Mode::Default
        ),
        "allow"
    );
    // Keys come sorted whatever the model's order; no spaces after `:` or `,`.
    let args: Value =
        serde_json::from_str(r#"{ "file_path" : "notes/a.md", "content" : "hi" }"#).unwrap();
    assert_eq!(decide(&e, "write_file", args, Mode::Default), "allow");
    assert_eq!(
        decide(
            &e,
            "write_file",
            json!({"file_path": "src/a.rs", "content": "x"}),
            Mode::Default
        ),
        "ask"
    );
}

#[test]
fn seed_args_pattern_example_on_shell() {
    let e = engine(&[(
        Tier::User,
        "[[rule]]\ntoolName = \"run_shell_command\"\nargsPattern = '\"command\":\"(git|npm)'\ndecision = \"allow\"\npriority = 10\n",
    )]);
    assert_eq!(shell(&e, "git log"), "allow");
    assert_eq!(shell(&e, "npm test"), "allow");
    assert_eq!(shell(&e, "cargo test"), "ask");
}

#[test]
fn command_prefix_string_and_list() {
    let e = engine(&[(
        Tier::User,
        r#"
[[rule]]
toolName = "run_shell_command"
commandPrefix = "git status"
decision = "allow"
priority = 100

[[rule]]
commandPrefix = ["cargo test", "cargo check"]
decision = "allow"
priority = 100

[[rule]]
commandPrefix = "git "
decision = "ask_user"
priority = 50
"#,
    )]);
    let cases = [
        ("git status", "allow"),
        ("git status --short", "allow"),
        ("  git status", "allow"),
        ("git statusx", "ask"),
        ("git push", "ask"),
        ("cargo test -p x", "allow"),
        ("cargo check", "allow"),
        ("cargo build", "ask"),
    ];
    for (command, expected) in cases {
        assert_eq!(shell(&e, command), expected, "{command}");
    }
    // Not a shell call: a command prefix never matches.
    assert_eq!(
        decide(
            &e,
            "write_file",
            json!({"command": "git status"}),
            Mode::Default
        ),
        "ask"
    );
}

#[test]
fn command_regex_is_tested_against_the_command_text() {
    // With Gemini CLI this `^` pattern would be tested against
    // `{"command":"git commit ..."}` and never match; here it does.
    let e = engine(&[(
        Tier::User,
        r#"
[[rule]]
commandPrefix = "git"
decision = "allow"
priority = 100

[[rule]]
commandRegex = "^git (commit|push)"
decision = "deny"
priority = 200
deny_message = "commit and push yourself"
"#,
    )]);
    assert_eq!(shell(&e, "git status"), "allow");
    assert_eq!(shell(&e, "git commit -m x"), "deny");
    assert_eq!(shell(&e, "git push origin main"), "deny");
    assert_eq!(shell(&e, "echo git push"), "ask");
    let args = json!({"command": "git push"});
    let call = ToolCall {
        name: "run_shell_command",
        args: &args,
        mcp_server: None,
        subagent: None,
    };
    assert_eq!(
        e.decide(&call, Mode::Default, true),
        Decision::Deny {
            message: Some("commit and push yourself".into())
        }
    );
}

#[test]
fn non_interactive_turns_ask_into_deny() {
    let e = engine(&[]);
    let args = json!({"file_path": "a", "content": "b"});
    let call = ToolCall {
        name: "write_file",
        args: &args,
        mcp_server: None,
        subagent: None,
    };
    assert_eq!(e.decide(&call, Mode::Default, true), Decision::AskUser);
    match e.decide(&call, Mode::Default, false) {
        Decision::Deny { message: Some(m) } => {
            assert!(m.contains("\"write_file\""), "{m}");
            assert!(m.contains("non-interactive"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    // Allow and deny are unchanged.
    assert_eq!(e.decide(&call, Mode::AutoEdit, false), Decision::Allow);
    let unknown = ToolCall {
        name: "some_new_tool",
        args: &args,
        mcp_server: None,
        subagent: None,
    };
    assert!(e.decide(&unknown, Mode::Default, false).is_deny());
}

#[test]
fn built_in_defaults_per_mode() {
    let e = engine(&[]);
    let read_only = [
        "list_directory",
        "read_file",
        "read_many_files",
        "glob",
        "grep_search",
        "google_web_search",
        "update_topic",
        // Interactive-only allows (decide() here is interactive).
        "list_background_processes",
        "read_background_output",
        "write_todos",
    ];
    let writes = [
        "write_file",
        "replace",
        "run_shell_command",
        "save_memory",
        "web_fetch",
    ];
    for tool in read_only {
        for mode in Mode::ALL {
            assert_eq!(
                decide(&e, tool, json!({}), mode),
                "allow",
                "{tool} in {mode}"
            );
        }
    }
    for tool in writes {
        // Gemini CLI 0.61's autoEdit mode also fetches without asking.
        let auto_edit = if ["write_file", "replace", "web_fetch"].contains(&tool) {
            "allow"
        } else {
            "ask"
        };
        let args = json!({"command": "make"});
        assert_eq!(
            decide(&e, tool, args.clone(), Mode::Default),
            "ask",
            "{tool}"
        );
        assert_eq!(
            decide(&e, tool, args.clone(), Mode::AutoEdit),
            auto_edit,
            "{tool}"
        );
        assert_eq!(
            decide(&e, tool, args.clone(), Mode::Yolo),
            "allow",
            "{tool}"
        );
        // Plan mode (0.61's plan.toml): web_fetch is asked, the rest denied.
        let plan = if tool == "web_fetch" { "ask" } else { "deny" };
        assert_eq!(decide(&e, tool, args, Mode::Plan), plan, "{tool}");
    }
    // Plans: a bare `.md` name may be written in plan mode (the tools put it
    // in the plans directory), a source file may not.
    assert_eq!(
        decide(
            &e,
            "write_file",
            json!({"file_path": "plan.md", "content": "x"}),
            Mode::Plan
        ),
        "allow"
    );
    assert_eq!(
        decide(
            &e,
            "write_file",
            json!({"file_path": "src/main.rs", "content": "x"}),
            Mode::Plan
        ),
        "deny"
    );
    // Unknown tools: ask, except yolo (allow) and plan (deny).
    assert_eq!(decide(&e, "x__y", json!({}), Mode::Default), "ask");
    assert_eq!(decide(&e, "x__y", json!({}), Mode::Yolo), "allow");
    assert_eq!(decide(&e, "x__y", json!({}), Mode::Plan), "deny");
    let args = json!({});
    let call = ToolCall {
        name: "write_file",
        args: &args,
        mcp_server: None,
        subagent: None,
    };
    match e.decide(&call, Mode::Plan, true) {
        Decision::Deny { message: Some(m) } => assert!(m.contains("Plan Mode"), "{m}"),
        other => panic!("{other:?}"),
    }
}

/// `subagent` (0.61): the rule is about the calls of that agent only; the
/// main agent and other agents keep the rules without `subagent`. A nested
/// agent is `parent/child`. Tools are still declared to the main agent
/// whatever a subagent's rule says.
#[test]
fn subagent_rules_apply_to_their_agent_only() {
    let engine = engine(&[(
        Tier::User,
        r#"
[[rule]]
subagent = "pr-creator"
toolName = "run_shell_command"
commandPrefix = "git push"
decision = "allow"
priority = 100

[[rule]]
subagent = "codebase_investigator"
toolName = "write_file"
decision = "deny"
priority = 100
"#,
    )]);
    let args = json!({"command": "git push origin HEAD"});
    let by = |agent: Option<&str>, name: &str, args: &Value| {
        let call = ToolCall {
            name,
            args,
            mcp_server: None,
            subagent: agent,
        };
        short(&engine.check(&call, Mode::Default, true).decision)
    };
    assert_eq!(by(Some("pr-creator"), "run_shell_command", &args), "allow");
    assert_eq!(by(None, "run_shell_command", &args), "ask");
    assert_eq!(by(Some("generalist"), "run_shell_command", &args), "ask");
    assert_eq!(
        by(Some("generalist/pr-creator"), "run_shell_command", &args),
        "ask"
    );
    // The allow covers `git push` only, as any commandPrefix rule.
    let chained = json!({"command": "git push && rm -rf /"});
    assert_eq!(by(Some("pr-creator"), "run_shell_command", &chained), "ask");

    let write = json!({"file_path": "a", "content": "b"});
    assert_eq!(
        by(Some("codebase_investigator"), "write_file", &write),
        "deny"
    );
    assert_eq!(by(None, "write_file", &write), "ask");
    assert!(engine.would_declare("write_file", None, Mode::Default, true));
}

#[test]
fn an_empty_subagent_is_an_error() {
    let errors = parse_policy_file(
        "[[rule]]\nsubagent = \"\"\ntoolName = \"x\"\ndecision = \"allow\"\npriority = 1\n",
        Path::new("p.toml"),
        Tier::User,
    )
    .unwrap_err();
    assert!(
        errors[0]
            .to_string()
            .contains("`subagent` must not be empty"),
        "{errors:?}"
    );
}
