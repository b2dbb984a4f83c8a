//! Loading policy directories, reporting bad files, saving rules, session
//! rules.

use std::fs;
use std::path::{Path, PathBuf};

use gd_policy::{
    AUTO_SAVED_POLICY_FILE, Decision, Mode, PolicyEngine, PolicyError, PolicySources, Rule,
    RuleDecision, Tier, ToolCall, default_admin_dir, default_rules,
};
use serde_json::json;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn decide(engine: &PolicyEngine, name: &str, command: &str, mode: Mode) -> Decision {
    let args = json!({ "command": command });
    engine.decide(
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

fn shell(engine: &PolicyEngine, command: &str) -> Decision {
    decide(engine, "run_shell_command", command, Mode::Default)
}

struct Dirs {
    _tmp: tempfile::TempDir,
    user: PathBuf,
    workspace: PathBuf,
    admin: PathBuf,
}

impl Dirs {
    fn new() -> Dirs {
        let tmp = tempfile::tempdir().unwrap();
        Dirs {
            user: tmp.path().join("home/.gemini/policies"),
            workspace: tmp.path().join("ws/.gemini/policies"),
            admin: tmp.path().join("etc/gemini-cli/policies"),
            _tmp: tmp,
        }
    }

    fn sources(&self) -> PolicySources {
        PolicySources {
            user_dir: Some(self.user.clone()),
            workspace_dir: Some(self.workspace.clone()),
            admin_dir: Some(self.admin.clone()),
            extensions: Vec::new(),
        }
    }
}

const GOOD: &str =
    "[[rule]]\ncommandPrefix = \"git status\"\ndecision = \"allow\"\npriority = 100\n";

#[test]
fn missing_directories_load_only_the_defaults() {
    let dirs = Dirs::new();
    let (engine, errors) = PolicyEngine::load(&dirs.sources());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(engine.rules().len(), default_rules().len());
    let (engine, errors) = PolicyEngine::load(&PolicySources::default());
    assert!(errors.is_empty());
    assert_eq!(engine.rules().len(), default_rules().len());
}

#[test]
fn files_load_in_their_tiers() {
    let dirs = Dirs::new();
    write(&dirs.user.join("a.toml"), GOOD);
    write(
        &dirs.user.join("b.toml"),
        "[[rule]]\ncommandPrefix = \"npm publish\"\ndecision = \"deny\"\npriority = 0\n",
    );
    write(
        &dirs.workspace.join("project.toml"),
        "[[rule]]\ncommandPrefix = [\"npm\", \"make\"]\ndecision = \"allow\"\npriority = 999\n",
    );
    write(
        &dirs.admin.join("corp.toml"),
        "[[rule]]\ntoolName = \"web_fetch\"\ndecision = \"deny\"\npriority = 0\n",
    );
    // Not a policy file.
    write(&dirs.user.join("notes.txt"), "[[rule]] this is not toml");
    let (engine, errors) = PolicyEngine::load(&dirs.sources());
    assert!(errors.is_empty(), "{errors:?}");
    let tiers: Vec<(Tier, String)> = engine
        .rules()
        .iter()
        .filter(|r| r.tier != Tier::Default)
        .map(|r| {
            let source = r.source.as_ref().unwrap();
            (
                r.tier,
                source
                    .path
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            )
        })
        .collect();
    assert_eq!(
        tiers,
        [
            (Tier::Workspace, "project.toml".into()),
            (Tier::User, "a.toml".into()),
            (Tier::User, "b.toml".into()),
            (Tier::Admin, "corp.toml".into()),
        ]
    );
    assert_eq!(shell(&engine, "git status"), Decision::Allow);
    assert_eq!(shell(&engine, "make"), Decision::Allow);
    // The user's deny beats the workspace's allow of priority 999.
    assert!(shell(&engine, "npm publish").is_deny());
    assert!(decide(&engine, "web_fetch", "", Mode::Yolo).is_deny());
}

#[test]
fn bad_files_are_reported_and_skipped_while_others_load() {
    let dirs = Dirs::new();
    write(&dirs.user.join("0-good.toml"), GOOD);
    write(
        &dirs.user.join("1-syntax.toml"),
        "[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\npriority = 1\n",
    );
    write(
        &dirs.user.join("2-unknown.toml"),
        "[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 1\n\n[[rule]]\ntoolName = \"glob\"\ndecison = \"deny\"\npriority = 1\n",
    );
    write(
        &dirs.user.join("3-decision.toml"),
        "[[rule]]\ntoolName = \"glob\"\ndecision = \"block\"\npriority = 1\n",
    );
    write(
        &dirs.user.join("4-priority.toml"),
        "[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 1000\n",
    );
    write(
        &dirs.user.join("5-prefix-regex.toml"),
        "[[rule]]\ncommandPrefix = \"rm\"\ncommandRegex = \"rm .*\"\ndecision = \"deny\"\npriority = 1\n",
    );
    write(
        &dirs.admin.join("ok.toml"),
        "[[rule]]\ntoolName = \"glob\"\ndecision = \"ask_user\"\npriority = 1\n",
    );
    let (engine, errors) = PolicyEngine::load(&dirs.sources());

    let shown: Vec<String> = errors.iter().map(PolicyError::to_string).collect();
    let expect = |file: &str, line: usize, needle: &str| {
        let found = errors.iter().any(|e| {
            e.path == dirs.user.join(file)
                && e.line == line
                && e.message.contains(needle)
                && e.column > 0
        });
        assert!(found, "{file}:{line} `{needle}` not in {shown:#?}");
    };
    expect("1-syntax.toml", 3, "invalid TOML");
    expect(
        "2-unknown.toml",
        8,
        "unknown field `decison` in [[rule]] (did you mean `decision`?)",
    );
    expect("2-unknown.toml", 6, "missing field `decision`");
    expect("3-decision.toml", 3, "invalid decision `block`");
    expect("4-priority.toml", 4, "from 0 to 999, found 1000");
    expect(
        "5-prefix-regex.toml",
        3,
        "`commandPrefix` and `commandRegex` cannot be used in the same rule",
    );
    assert_eq!(errors.len(), 6, "{shown:#?}");
    // Display is path:line:column: message.
    let unknown = errors
        .iter()
        .find(|e| e.message.contains("decison"))
        .unwrap();
    assert_eq!(
        unknown.to_string(),
        format!(
            "{}:8:1: {}",
            dirs.user.join("2-unknown.toml").display(),
            unknown.message
        )
    );

    // Nothing of the bad files is in effect, not even 2-unknown's valid first
    // rule; the good files are.
    assert_eq!(shell(&engine, "git status"), Decision::Allow);
    assert_eq!(shell(&engine, "rm x"), Decision::AskUser);
    let args = json!({});
    let glob = ToolCall {
        name: "glob",
        args: &args,
        mcp_server: None,
        subagent: None,
    };
    assert_eq!(engine.decide(&glob, Mode::Default, true), Decision::AskUser);
}

#[test]
fn unreadable_entries_are_reported_without_a_line() {
    let dirs = Dirs::new();
    // A directory where a file is expected is skipped quietly; a file that
    // is not UTF-8 is reported.
    fs::create_dir_all(dirs.user.join("dir.toml")).unwrap();
    write(&dirs.user.join("ok.toml"), GOOD);
    fs::write(dirs.user.join("binary.toml"), [0xff, 0xfe, 0x00]).unwrap();
    let (engine, errors) = PolicyEngine::load(&dirs.sources());
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].line, 0);
    assert!(errors[0].to_string().starts_with(&format!(
        "{}: cannot read",
        dirs.user.join("binary.toml").display()
    )));
    assert_eq!(shell(&engine, "git status"), Decision::Allow);
}

#[test]
fn a_single_file_can_be_a_source() {
    let dirs = Dirs::new();
    let file = dirs.user.join("only.toml");
    write(&file, GOOD);
    let (engine, errors) = PolicyEngine::load(&PolicySources {
        user_dir: Some(file),
        ..PolicySources::default()
    });
    assert!(errors.is_empty());
    assert_eq!(shell(&engine, "git status"), Decision::Allow);
}

#[test]
fn workspace_at_home_is_read_once_as_user() {
    let dirs = Dirs::new();
    write(&dirs.user.join("a.toml"), GOOD);
    let (engine, errors) = PolicyEngine::load(&PolicySources {
        user_dir: Some(dirs.user.clone()),
        workspace_dir: Some(dirs.user.clone()),
        admin_dir: None,
        extensions: Vec::new(),
    });
    assert!(errors.is_empty());
    let extra: Vec<&Rule> = engine
        .rules()
        .iter()
        .filter(|r| r.tier != Tier::Default)
        .collect();
    assert_eq!(extra.len(), 1);
    assert_eq!(extra[0].tier, Tier::User);
}

#[cfg(unix)]
#[test]
fn workspace_symlinks_out_of_the_directory_are_refused() {
    let dirs = Dirs::new();
    let outside = dirs.user.parent().unwrap().join("elsewhere.toml");
    write(&outside, GOOD);
    fs::create_dir_all(&dirs.workspace).unwrap();
    std::os::unix::fs::symlink(&outside, dirs.workspace.join("link.toml")).unwrap();
    let (engine, errors) = PolicyEngine::load(&dirs.sources());
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0]
            .message
            .contains("outside the workspace policy directory")
    );
    assert_eq!(shell(&engine, "git status"), Decision::AskUser);
}

#[test]
fn save_rule_appends_and_a_fresh_load_reads_it_back() {
    let dirs = Dirs::new();
    let file = dirs.user.join(AUTO_SAVED_POLICY_FILE);
    // Existing content without a final newline, with comments: kept as is.
    let existing =
        "# my rules\n[[rule]]\ntoolName = \"glob\"\ndecision = \"allow\"\npriority = 3 # keep";
    write(&file, existing);
    let (engine, errors) = PolicyEngine::load(&dirs.sources());
    assert!(errors.is_empty());
    assert_eq!(shell(&engine, "cargo test --all"), Decision::AskUser);

    let mut rule = Rule::for_command_prefix("cargo test", RuleDecision::Allow);
    rule.priority = 950;
    engine.save_rule(&rule, &file).unwrap();
    // In effect at once, as a session rule.
    assert_eq!(shell(&engine, "cargo test --all"), Decision::Allow);
    assert_eq!(engine.session_rules().len(), 1);
    assert_eq!(engine.session_rules()[0].source.as_ref().unwrap().line, 7);

    let text = fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with(&format!("{existing}\n\n[[rule]]\n")),
        "{text}"
    );
    assert_eq!(text.lines().nth(6), Some("[[rule]]"));
    assert!(text.contains("toolName = \"run_shell_command\"\ncommandPrefix = \"cargo test\"\ndecision = \"allow\"\npriority = 950\n"), "{text}");

    // A second save appends after the first.
    let mut deny = Rule::for_tool("web_fetch", RuleDecision::Deny);
    deny.deny_message = Some("no \"web\"\nplease".into());
    deny.modes = vec![Mode::Yolo, Mode::AutoEdit];
    engine.save_rule(&deny, &file).unwrap();

    let (fresh, errors) = PolicyEngine::load(&dirs.sources());
    assert!(
        errors.is_empty(),
        "{errors:?}\n{}",
        fs::read_to_string(&file).unwrap()
    );
    assert!(fresh.session_rules().is_empty());
    assert_eq!(shell(&fresh, "cargo test --all"), Decision::Allow);
    assert_eq!(shell(&fresh, "cargo testx"), Decision::AskUser);
    assert_eq!(
        decide(&fresh, "web_fetch", "", Mode::Yolo),
        Decision::Deny {
            message: Some("no \"web\"\nplease".into())
        }
    );
    let saved: Vec<&Rule> = fresh
        .rules()
        .iter()
        .filter(|r| r.tier == Tier::User)
        .collect();
    assert_eq!(saved.len(), 3);
    assert_eq!(saved[1].source.as_ref().unwrap().line, 7);
}

#[test]
fn save_rule_creates_directories_and_refuses_rules_that_would_not_load() {
    let dirs = Dirs::new();
    let engine = PolicyEngine::new(default_rules());
    let file = dirs.user.join("deep/er/auto-saved.toml");
    let mut rule = Rule::for_tool("my-server__*", RuleDecision::Allow);
    rule.args_pattern = Some(gd_policy::LazyRegex::new(r#""path":"[^"]*\.md""#).unwrap());
    engine.save_rule(&rule, &file).unwrap();
    let text = fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with("[[rule]]\ntoolName = \"my-server__*\"\n"),
        "{text}"
    );

    let mut bad = Rule::for_tool("write_file", RuleDecision::Allow);
    bad.command_prefixes = vec!["git".into()];
    let other = dirs.user.join("other.toml");
    let err = engine.save_rule(&bad, &other).unwrap_err();
    assert!(err.to_string().contains("only apply to toolName"), "{err}");
    assert!(!other.exists());
    assert_eq!(engine.session_rules().len(), 1);
}

#[test]
fn session_rules_weigh_by_their_tier_and_priority() {
    let dirs = Dirs::new();
    write(
        &dirs.user.join("u.toml"),
        "[[rule]]\ncommandPrefix = \"npm publish\"\ndecision = \"deny\"\npriority = 0\n",
    );
    let (engine, _) = PolicyEngine::load(&dirs.sources());
    assert_eq!(shell(&engine, "npm test"), Decision::AskUser);

    // "Proceed always" for npm: a Workspace-tier rule, like Gemini CLI's
    // always-allow, beats the built-in ask but not the user's deny.
    let mut always = Rule::for_command_prefix("npm", RuleDecision::Allow);
    always.tier = Tier::Workspace;
    always.priority = 950;
    engine.add_session_rule(always);
    assert_eq!(shell(&engine, "npm test"), Decision::Allow);
    assert!(shell(&engine, "npm publish").is_deny());
    assert_eq!(shell(&engine, "npm test && curl x"), Decision::AskUser);

    // Session rules are shared across threads.
    std::thread::scope(|s| {
        s.spawn(|| engine.add_session_rule(Rule::for_command_prefix("curl", RuleDecision::Allow)));
    });
    assert_eq!(shell(&engine, "npm test && curl x"), Decision::Allow);
}

#[test]
fn standard_sources() {
    let home = Path::new("/home/u");
    let ws = Path::new("/src/p");
    let sources = PolicySources::standard(Some(home), Some(ws), &|_| None);
    assert_eq!(sources.user_dir.unwrap(), home.join(".gemini/policies"));
    assert_eq!(sources.workspace_dir.unwrap(), ws.join(".gemini/policies"));
    #[cfg(target_os = "linux")]
    assert_eq!(
        sources.admin_dir.unwrap(),
        Path::new("/etc/gemini-cli/policies")
    );
    let env = |k: &str| {
        (k == "GEMINI_CLI_SYSTEM_SETTINGS_PATH").then(|| "/opt/gc/settings.json".to_string())
    };
    assert_eq!(default_admin_dir(&env), Path::new("/opt/gc/policies"));
}

#[test]
fn engine_is_shareable() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<PolicyEngine>();
}
