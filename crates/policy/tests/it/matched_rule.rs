//! The verdict names the rule that decided it: tier, priorities, modes, the
//! file and line, the rule's text as written, and why an allow became a
//! question. Real policy files in temporary directories, loaded the way a
//! session loads them.

use std::fs;
use std::path::Path;

use gd_policy::{
    Decision, Downgrade, Mode, PolicyEngine, PolicySources, Rule, RuleDecision, Tier, ToolCall,
    Verdict,
};
use serde_json::{Value, json};

struct Dirs {
    _root: tempfile::TempDir,
    sources: PolicySources,
}

/// A workspace, user and admin policy directory, each with its files.
fn dirs(workspace: &[(&str, &str)], user: &[(&str, &str)], admin: &[(&str, &str)]) -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let make = |name: &str, files: &[(&str, &str)]| {
        let dir = root.path().join(name);
        fs::create_dir_all(&dir).unwrap();
        for (file, text) in files {
            fs::write(dir.join(file), text).unwrap();
        }
        Some(dir)
    };
    let sources = PolicySources {
        workspace_dir: make("workspace", workspace),
        user_dir: make("user", user),
        admin_dir: make("admin", admin),
        extensions: Vec::new(),
    };
    Dirs {
        _root: root,
        sources,
    }
}

fn load(d: &Dirs) -> PolicyEngine {
    let (engine, errors) = PolicyEngine::load(&d.sources);
    assert!(errors.is_empty(), "{errors:?}");
    engine
}

fn check(engine: &PolicyEngine, name: &str, args: Value, mode: Mode) -> Verdict {
    engine.check(
        &ToolCall {
            name,
            args: &args,
            mcp_server: None,
            subagent: None,
        },
        mode,
        true,
    )
}

fn shell(engine: &PolicyEngine, command: &str) -> Verdict {
    check(
        engine,
        "run_shell_command",
        json!({ "command": command }),
        Mode::Default,
    )
}

const USER_FILE: &str = "# my rules\n\n[[rule]]\n# the build\ntoolName = \"run_shell_command\"\ncommandPrefix = \"cargo build\"\ndecision = \"allow\"\npriority = 100\n\n# reading is fine\n[[rule]]\ntoolName = \"write_file\"\ndecision = \"deny\"\npriority = 300\ndeny_message = \"no writes\"\n";

#[test]
fn a_user_file_rule_is_named_with_file_line_tier_priority_and_text() {
    let d = dirs(&[], &[("dev.toml", USER_FILE)], &[]);
    let engine = load(&d);
    let v = shell(&engine, "cargo build --release");
    assert_eq!(v.decision, Decision::Allow);
    let m = v.matched.expect("a rule matched");
    assert_eq!(m.tier, Tier::User);
    assert_eq!(m.priority, 100);
    assert_eq!(m.effective_priority, 4100);
    assert_eq!(m.decision, RuleDecision::Allow);
    assert!(m.modes.is_empty());
    let source = m.source.expect("read from a file");
    assert_eq!(
        source.path,
        d.sources.user_dir.as_ref().unwrap().join("dev.toml")
    );
    assert_eq!(source.line, 3);
    assert_eq!(v.rule.as_ref(), Some(&source), "`rule` stays the source");
    assert_eq!(
        m.text,
        "[[rule]]\n# the build\ntoolName = \"run_shell_command\"\ncommandPrefix = \"cargo build\"\ndecision = \"allow\"\npriority = 100\n",
        "the table as written, comments inside kept, the next rule's comment not"
    );
    assert_eq!(m.origin, source.path.display().to_string());
    assert!(!m.session);
    assert_eq!(m.command, None, "the whole text matched the rule");
    assert_eq!(v.downgrade, None);

    let v = check(
        &engine,
        "write_file",
        json!({"file_path": "a"}),
        Mode::Default,
    );
    assert!(v.decision.is_deny());
    let m = v.matched.unwrap();
    assert_eq!(m.source.unwrap().line, 11);
    assert!(m.text.contains("deny_message = \"no writes\""));
    assert!(m.text.starts_with("[[rule]]\ntoolName = \"write_file\""));
}

#[test]
fn every_tier_is_reported() {
    let rule = |tool: &str| {
        format!("[[rule]]\ntoolName = \"{tool}\"\ndecision = \"allow\"\npriority = 5\n")
    };
    let d = dirs(
        &[("ws.toml", &rule("ws_tool"))],
        &[("user.toml", &rule("user_tool"))],
        &[("admin.toml", &rule("admin_tool"))],
    );
    let engine = load(&d);
    for (tool, tier, base) in [
        ("ws_tool", Tier::Workspace, 3000),
        ("user_tool", Tier::User, 4000),
        ("admin_tool", Tier::Admin, 5000),
    ] {
        let m = check(&engine, tool, json!({}), Mode::Default)
            .matched
            .unwrap();
        assert_eq!(m.tier, tier, "{tool}");
        assert_eq!(m.effective_priority, base + 5, "{tool}");
        assert_eq!(m.source.unwrap().line, 1);
    }
    // The built-in defaults: text from the embedded file.
    let v = check(
        &engine,
        "read_file",
        json!({"file_path": "a"}),
        Mode::Default,
    );
    let m = v.matched.unwrap();
    assert_eq!(m.tier, Tier::Default);
    assert_eq!(m.origin, "default policy (read-only.toml)");
    assert!(m.text.starts_with("[[rule]]\ntoolName = [\n"), "{}", m.text);
    assert!(m.text.contains("\"read_file\","));
    assert!(m.text.ends_with("priority = 50\n"), "{}", m.text);
    assert!(!m.is_mode_default());
}

#[test]
fn yolo_is_a_mode_default() {
    let d = dirs(&[], &[], &[]);
    let engine = load(&d);
    let v = shell(&engine, "rm -rf x");
    assert_eq!(v.decision, Decision::AskUser);
    let v = check(
        &engine,
        "run_shell_command",
        json!({"command": "rm -rf x"}),
        Mode::Yolo,
    );
    assert_eq!(v.decision, Decision::Allow);
    let m = v.matched.unwrap();
    assert!(m.is_mode_default());
    assert_eq!(m.modes, [Mode::Yolo]);
    assert_eq!(m.origin, "default policy (yolo.toml)");
    assert!(m.text.contains("modes = [\"yolo\"]"));
}

#[test]
fn a_tie_at_equal_priority_names_the_stricter_rule() {
    let text = "[[rule]]\ntoolName = \"t\"\ndecision = \"allow\"\npriority = 7\n\n[[rule]]\ntoolName = \"t\"\ndecision = \"ask_user\"\npriority = 7\n";
    let d = dirs(&[], &[("tie.toml", text)], &[]);
    let engine = load(&d);
    let v = check(&engine, "t", json!({}), Mode::Default);
    assert_eq!(v.decision, Decision::AskUser);
    let m = v.matched.unwrap();
    assert_eq!(m.decision, RuleDecision::AskUser);
    assert_eq!(m.source.unwrap().line, 6);
}

#[test]
fn a_shell_command_names_the_rule_of_its_strictest_command() {
    let text = "[[rule]]\ncommandPrefix = \"git\"\ndecision = \"allow\"\npriority = 10\n\n[[rule]]\ncommandPrefix = \"curl\"\ndecision = \"deny\"\npriority = 10\n";
    let d = dirs(&[], &[("sh.toml", text)], &[]);
    let engine = load(&d);
    let v = shell(&engine, "git status && curl example.com");
    assert!(v.decision.is_deny());
    let m = v.matched.unwrap();
    assert_eq!(m.source.unwrap().line, 6);
    assert_eq!(m.command.as_deref(), Some("curl example.com"));

    // Allowed: the rule matches the whole text (it starts with `git`).
    let v = shell(&engine, "git status && git log");
    assert_eq!(v.decision, Decision::Allow);
    assert_eq!(v.matched.unwrap().source.unwrap().line, 1);

    // A second command only the built-in shell rule covers: it asks, and
    // the verdict names that rule and the command.
    let v = shell(&engine, "git status && make");
    assert_eq!(v.decision, Decision::AskUser);
    let m = v.matched.unwrap();
    assert_eq!(m.origin, "default policy (write.toml)");
    assert_eq!(m.command.as_deref(), Some("make"));
}

#[test]
fn a_redirection_downgrades_an_allow_and_says_so() {
    let text = "[[rule]]\ncommandPrefix = \"echo\"\ndecision = \"allow\"\npriority = 10\n";
    let d = dirs(&[], &[("echo.toml", text)], &[]);
    let engine = load(&d);
    let v = shell(&engine, "echo hi > out.txt");
    assert_eq!(v.decision, Decision::AskUser);
    let m = v.matched.expect("the overruled allow is named");
    assert_eq!(m.decision, RuleDecision::Allow);
    let Some(Downgrade::Redirection { command }) = &v.downgrade else {
        panic!("{:?}", v.downgrade)
    };
    assert_eq!(command, "echo hi > out.txt");
    assert!(
        v.downgrade
            .as_ref()
            .unwrap()
            .reason()
            .contains("allowRedirection")
    );

    // With allowRedirection the rule allows it outright.
    let text = "[[rule]]\ncommandPrefix = \"echo\"\ndecision = \"allow\"\nallowRedirection = true\npriority = 10\n";
    let d = dirs(&[], &[("echo.toml", text)], &[]);
    let v = shell(&load(&d), "echo hi > out.txt");
    assert_eq!(v.decision, Decision::Allow);
    assert_eq!(v.downgrade, None);
}

#[test]
fn no_rule_means_the_default_question_without_a_rule() {
    let d = dirs(&[], &[], &[]);
    let engine = PolicyEngine::new(Vec::new());
    let v = check(&engine, "anything", json!({}), Mode::Default);
    assert_eq!(v.decision, Decision::AskUser);
    assert_eq!(v.matched, None);
    assert_eq!(v.rule, None);
    assert_eq!(v.downgrade, None);
    // Non-interactive: the question becomes a denial, and the verdict says why.
    let args = json!({});
    let v = load(&d).check(
        &ToolCall {
            name: "anything",
            args: &args,
            mcp_server: None,
            subagent: None,
        },
        Mode::Default,
        false,
    );
    assert!(v.decision.is_deny());
    assert_eq!(v.downgrade, Some(Downgrade::NonInteractive));
}

#[test]
fn session_and_settings_rules_are_rendered_with_a_plain_origin() {
    let mut engine = PolicyEngine::new(Vec::new());
    let mut trusted = Rule::any_tool(RuleDecision::Allow);
    trusted.mcp_name = Some("srv".into());
    trusted.priority = 200;
    trusted.source = Some(gd_policy::RuleSource {
        path: Path::new("<settings>").join("mcp.allowed"),
        line: 0,
    });
    engine.add_rules([trusted]);
    let v = check(&engine, "srv__tool", json!({}), Mode::Default);
    let m = v.matched.unwrap();
    assert_eq!(m.origin, "settings.json mcp.allowed");
    assert_eq!(
        m.text,
        "[[rule]]\nmcpName = \"srv\"\ndecision = \"allow\"\npriority = 200\n"
    );

    let mut always = Rule::for_command_prefix("ls", RuleDecision::Allow);
    always.tier = Tier::Workspace;
    always.priority = 950;
    engine.add_session_rule(always);
    let v = shell(&engine, "ls -la");
    assert_eq!(v.decision, Decision::Allow);
    let m = v.matched.unwrap();
    assert!(m.session);
    assert_eq!(m.source, None);
    assert_eq!(m.origin, "this session's Always allow");
    assert!(m.text.contains("commandPrefix = \"ls\""));
    assert_eq!(m.effective_priority, 3950);
}

#[test]
fn a_rule_whose_file_changed_is_rendered_instead() {
    let d = dirs(&[], &[("dev.toml", USER_FILE)], &[]);
    let engine = load(&d);
    fs::write(
        d.sources.user_dir.as_ref().unwrap().join("dev.toml"),
        "# emptied\n",
    )
    .unwrap();
    let m = shell(&engine, "cargo build").matched.unwrap();
    assert_eq!(
        m.text,
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"cargo build\"\ndecision = \"allow\"\npriority = 100\n"
    );
}

#[test]
fn an_unprovable_command_downgrades_an_allow_and_says_why() {
    // Every shell command allowed, yet an unprovable one is still asked about.
    let text = "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"allow\"\npriority = 10\n";
    let d = dirs(&[], &[("shell.toml", text)], &[]);
    let engine = load(&d);
    // `ec\<newline>ho` is `echo` to bash, but not provably so to the analysis.
    let v = shell(&engine, "echo hi; ec\\\nho hi");
    assert_eq!(v.decision, Decision::AskUser);
    let Some(Downgrade::Unproven { .. }) = &v.downgrade else {
        panic!("{:?} {:?}", v.downgrade, v.matched)
    };
    assert!(
        v.downgrade
            .as_ref()
            .unwrap()
            .reason()
            .contains("could not be proven")
    );
    assert_eq!(
        v.matched.unwrap().decision,
        RuleDecision::Allow,
        "the overruled rule"
    );
    // In yolo mode nothing is asked, so nothing is downgraded.
    let v = check(
        &engine,
        "run_shell_command",
        json!({"command": "echo hi; ec\\\nho hi"}),
        Mode::Yolo,
    );
    assert_eq!(v.decision, Decision::Allow);
    assert_eq!(v.downgrade, None);
}
