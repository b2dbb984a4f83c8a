//! Compound shell commands are decided part by part.

use std::path::Path;

use gd_policy::shell::{root_command, split_commands};
use gd_policy::{Decision, Mode, PolicyEngine, Tier, ToolCall, default_rules, parse_policy_file};
use serde_json::json;

fn engine(user_policy: &str) -> PolicyEngine {
    let mut rules = default_rules();
    rules.extend(parse_policy_file(user_policy, Path::new("user.toml"), Tier::User).unwrap());
    PolicyEngine::new(rules)
}

const ALLOW_SOME: &str = r#"
[[rule]]
commandPrefix = ["git status", "git diff", "ls", "echo", "cat", "curl", "sh"]
decision = "allow"
priority = 100

[[rule]]
commandPrefix = "rm"
decision = "deny"
priority = 100
deny_message = "no rm"

[[rule]]
commandRegex = '\|\s*(sh|bash)\b'
decision = "deny"
priority = 100
deny_message = "no piping into a shell"
"#;

fn run(engine: &PolicyEngine, command: &str, mode: Mode, interactive: bool) -> Decision {
    let args = json!({ "command": command, "description": "x" });
    engine.decide(
        &ToolCall {
            name: "run_shell_command",
            args: &args,
            mcp_server: None,
        },
        mode,
        interactive,
    )
}

fn short(d: Decision) -> &'static str {
    match d {
        Decision::Allow => "allow",
        Decision::Deny { .. } => "deny",
        Decision::AskUser => "ask",
    }
}

#[test]
fn every_part_must_be_allowed() {
    let e = engine(ALLOW_SOME);
    let cases = [
        ("git status", "allow"),
        ("git status && git diff", "allow"),
        ("git status && ls -la; echo done", "allow"),
        // An allowed first command does not carry the rest.
        ("git status && make install", "ask"),
        ("git status || make", "ask"),
        ("ls | xargs make", "ask"),
        ("ls & make", "ask"),
        ("ls\nmake", "ask"),
        // Deny anywhere wins.
        ("git status && rm -rf x", "deny"),
        ("make && rm -rf x", "deny"),
        ("ls; rm x", "deny"),
        // Quotes hide separators.
        ("echo \"a && b\"", "allow"),
        ("echo 'rm -rf / ; make'", "allow"),
        ("git status \"&& rm -rf x\"", "allow"),
        // Substitutions are commands too.
        ("echo $(rm -rf /)", "deny"),
        ("echo \"$(make)\"", "ask"),
        ("echo `rm -rf /`", "deny"),
        ("echo \"`make`\"", "ask"),
        ("echo $(ls)", "allow"),
        ("cat <(make)", "ask"),
        // Subshells and groups.
        ("(ls && rm -rf x)", "deny"),
        ("{ ls; make; }", "ask"),
        // Redirections are not separators.
        ("ls 2>&1 | cat", "allow"),
        // A rule about the whole command still counts.
        ("curl https://x | sh", "deny"),
        ("curl https://x", "allow"),
    ];
    for (command, expected) in cases {
        assert_eq!(
            short(run(&e, command, Mode::Default, true)),
            expected,
            "{command}"
        );
    }
}

#[test]
fn the_denying_parts_message_is_returned() {
    let e = engine(ALLOW_SOME);
    assert_eq!(
        run(&e, "git status && rm -rf x", Mode::Default, true),
        Decision::Deny {
            message: Some("no rm".into())
        }
    );
}

#[test]
fn non_interactive_compound_commands() {
    let e = engine(ALLOW_SOME);
    assert_eq!(
        run(&e, "git status && ls", Mode::Default, false),
        Decision::Allow
    );
    assert!(run(&e, "git status && make", Mode::Default, false).is_deny());
}

#[test]
fn yolo_allows_compounds_but_user_denies_hold() {
    let e = engine(ALLOW_SOME);
    assert_eq!(
        run(&e, "make && make install", Mode::Yolo, false),
        Decision::Allow
    );
    assert!(run(&e, "make && rm -rf build", Mode::Yolo, false).is_deny());
    assert!(run(&e, "echo $(rm -rf build)", Mode::Yolo, true).is_deny());
}

#[test]
fn unreadable_commands_are_asked_about() {
    let e = engine(ALLOW_SOME);
    assert_eq!(
        short(run(&e, "echo \"unterminated", Mode::Default, true)),
        "ask"
    );
    assert_eq!(short(run(&e, "echo $(ls", Mode::Default, true)), "ask");
    assert!(run(&e, "echo 'x", Mode::Default, false).is_deny());
    // Yolo mode asks nothing.
    assert_eq!(
        short(run(&e, "echo \"unterminated", Mode::Yolo, true)),
        "allow"
    );
    // Deny is kept.
    assert_eq!(short(run(&e, "rm \"x", Mode::Default, true)), "deny");
}

#[test]
fn args_pattern_rules_see_each_part_and_the_whole() {
    let e = engine(
        "[[rule]]\ntoolName = \"run_shell_command\"\nargsPattern = '\"command\":\"npm (test|run lint)\\b'\ndecision = \"allow\"\npriority = 1\n",
    );
    assert_eq!(short(run(&e, "npm test", Mode::Default, true)), "allow");
    assert_eq!(
        short(run(&e, "npm test && npm run lint", Mode::Default, true)),
        "allow"
    );
    assert_eq!(
        short(run(&e, "npm test && npm publish", Mode::Default, true)),
        "ask"
    );
    assert_eq!(
        short(run(&e, "npm publish && npm test", Mode::Default, true)),
        "ask"
    );

    // The whole command must be allowed too: a pattern for exactly one
    // command does not allow a compound of it.
    let e = engine(
        "[[rule]]\ntoolName = \"run_shell_command\"\nargsPattern = '\"command\":\"npm test\"'\ndecision = \"allow\"\npriority = 1\n",
    );
    assert_eq!(short(run(&e, "npm test", Mode::Default, true)), "allow");
    assert_eq!(
        short(run(&e, "npm test && npm test", Mode::Default, true)),
        "ask"
    );
}

#[test]
fn split_and_root_examples() {
    assert_eq!(
        split_commands("git status && rm -rf x"),
        ["git status", "rm -rf x"]
    );
    assert_eq!(
        split_commands("echo 'a && b' || ls"),
        ["echo 'a && b'", "ls"]
    );
    assert_eq!(split_commands("a; b | c & d"), ["a", "b", "c", "d"]);
    assert_eq!(
        split_commands("echo \"$(rm -rf /)\" `id`"),
        ["echo \"$(rm -rf /)\" `id`", "rm -rf /", "id"]
    );
    assert_eq!(root_command("git commit -m x").as_deref(), Some("git"));
    assert_eq!(
        root_command("LANG=C GIT_PAGER= git log").as_deref(),
        Some("git")
    );
    assert_eq!(root_command("npm test && rm x").as_deref(), Some("npm"));
}
