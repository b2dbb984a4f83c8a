//! The policy editor's writer and listing: rules added, changed and
//! deleted in real files, everything else in the file kept byte for byte,
//! rules that would not load refused with the line, and the effective
//! order of every tier.

use std::fs;
use std::path::Path;

use gd_policy::{
    EditError, PolicyEngine, PolicySources, Rule, RuleDecision, RuleSpec, Tier, add_rule,
    delete_rule, effective_rules, update_rule,
};

const FILE: &str = "\
# My rules. Keep this header.

[[rule]]
toolName = \"read_file\"   # reads are fine
decision = \"allow\"
priority = 10

# Never push.
[[rule]]
commandPrefix = \"git push\"
decision = \"deny\"
priority = 500
deny_message = \"no pushing\"
";

fn spec(tool: &str, decision: &str, priority: i64) -> RuleSpec {
    RuleSpec {
        tool_names: vec![tool.to_owned()],
        decision: decision.to_owned(),
        priority,
        ..RuleSpec::default()
    }
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("policies").join("mine.toml");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, FILE).unwrap();
    (dir, file)
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

#[test]
fn adding_appends_and_keeps_the_rest_byte_for_byte() {
    let (_dir, file) = setup();
    let mut new = spec("run_shell_command", "allow", 200);
    new.tool_names.clear();
    new.command_prefixes = vec!["cargo test".into()];
    new.modes = vec!["default".into(), "autoEdit".into()];
    new.allow_redirection = true;
    let added = add_rule(&file, Tier::User, &new).unwrap();
    let text = read(&file);
    assert!(text.starts_with(FILE), "the old text changed:\n{text}");
    let tail = &text[FILE.len()..];
    assert_eq!(
        tail,
        "\n[[rule]]\ncommandPrefix = \"cargo test\"\nallowRedirection = true\ndecision = \"allow\"\npriority = 200\nmodes = [\"default\", \"autoEdit\"]\n"
    );
    assert_eq!(added.line, FILE.lines().count() + 2);
    assert!(added.text.starts_with("[[rule]]\ncommandPrefix"));
    let rules = gd_policy::parse_policy_file(&text, &file, Tier::User).unwrap();
    assert_eq!(rules.len(), 3);
    assert_eq!(rules[2].command_prefixes, ["cargo test"]);
    assert_eq!(rules[2].source.as_ref().unwrap().line, added.line);
}

#[test]
fn adding_to_a_missing_file_creates_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a").join("b").join("gemini-desktop.toml");
    let added = add_rule(&file, Tier::Workspace, &spec("glob", "allow", 1)).unwrap();
    assert_eq!(added.line, 1);
    assert_eq!(
        read(&file),
        "[[rule]]\ntoolName = \"glob\"\ndecision = \"allow\"\npriority = 1\n"
    );
}

#[test]
fn editing_changes_only_the_changed_keys() {
    let (_dir, file) = setup();
    // The second rule, its header on line 9: the decision becomes
    // ask_user, the message goes, a mode is added.
    let mut changed = spec("", "ask_user", 500);
    changed.tool_names.clear();
    changed.command_prefixes = vec!["git push".into()];
    changed.modes = vec!["yolo".into()];
    let edited = update_rule(&file, Tier::User, 9, &changed).unwrap();
    assert_eq!(edited.line, 9);
    let expected = FILE.replace(
        "decision = \"deny\"\npriority = 500\ndeny_message = \"no pushing\"\n",
        "decision = \"ask_user\"\npriority = 500\nmodes = [\"yolo\"]\n",
    );
    assert_eq!(read(&file), expected);

    // The first: a new priority keeps the trailing comment of its line
    // and of the toolName line.
    let mut first = spec("read_file", "allow", 42);
    first.deny_message = Some(String::new());
    update_rule(&file, Tier::User, 3, &first).unwrap();
    assert_eq!(
        read(&file),
        expected.replace("priority = 10\n", "priority = 42\n")
    );
}

#[test]
fn deleting_removes_the_rule_and_its_comment() {
    let (_dir, file) = setup();
    delete_rule(&file, Tier::User, 9).unwrap();
    assert_eq!(
        read(&file),
        "# My rules. Keep this header.\n\n[[rule]]\ntoolName = \"read_file\"   # reads are fine\ndecision = \"allow\"\npriority = 10\n"
    );
    delete_rule(&file, Tier::User, 3).unwrap();
    let rest = read(&file);
    assert!(rest.contains("# My rules. Keep this header."), "{rest}");
    assert!(
        gd_policy::parse_policy_file(&rest, &file, Tier::User)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_rule_that_would_not_load_is_refused_naming_the_line_and_nothing_is_written() {
    let (_dir, file) = setup();
    let mut bad = spec("run_shell_command", "allow", 10);
    bad.command_regex = Some("git (push".into());
    let err = add_rule(&file, Tier::User, &bad).unwrap_err();
    let EditError::Invalid(errors) = &err else {
        panic!("{err}")
    };
    // The appended table starts on line 15; commandRegex is its 3rd line.
    assert_eq!(errors[0].line, 17, "{errors:?}");
    assert!(err.to_string().contains("mine.toml:17:"), "{err}");
    assert_eq!(read(&file), FILE);

    let err = update_rule(&file, Tier::User, 3, &spec("read_file", "maybe", 10)).unwrap_err();
    assert!(err.to_string().contains(":5:"), "{err}");
    assert!(err.to_string().contains("invalid decision"), "{err}");
    let err = update_rule(&file, Tier::User, 3, &spec("read_file", "allow", 5000)).unwrap_err();
    assert!(err.to_string().contains(":6:"), "{err}");
    assert_eq!(read(&file), FILE);
}

#[test]
fn read_only_tiers_and_wrong_lines_are_refused() {
    let (_dir, file) = setup();
    for tier in [Tier::Admin, Tier::Default] {
        let err = add_rule(&file, tier, &spec("glob", "allow", 1)).unwrap_err();
        assert!(matches!(err, EditError::Refused(_)), "{err}");
    }
    let err = delete_rule(&file, Tier::User, 4).unwrap_err();
    assert!(
        err.to_string().contains("no [[rule]] starts on this line"),
        "{err}"
    );
    assert_eq!(read(&file), FILE);
}

#[cfg(unix)]
#[test]
fn the_file_mode_is_kept() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, file) = setup();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).unwrap();
    add_rule(&file, Tier::User, &spec("glob", "allow", 1)).unwrap();
    let mode = fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let leftovers: Vec<_> = fs::read_dir(file.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

#[test]
fn the_listing_is_in_effective_order_with_sources_and_text() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    let ws = dir.path().join("ws");
    let admin = dir.path().join("admin");
    fs::create_dir_all(&user).unwrap();
    fs::create_dir_all(&ws).unwrap();
    fs::create_dir_all(&admin).unwrap();
    fs::write(user.join("u.toml"), FILE).unwrap();
    fs::write(
        ws.join("w.toml"),
        "[[rule]]\ntoolName = \"glob\"\ndecision = \"allow\"\npriority = 999\n",
    )
    .unwrap();
    fs::write(
        admin.join("a.toml"),
        "[[rule]]\ntoolName = \"web_fetch\"\ndecision = \"deny\"\npriority = 0\n",
    )
    .unwrap();
    let (engine, errors) = PolicyEngine::load(&PolicySources {
        user_dir: Some(user.clone()),
        workspace_dir: Some(ws),
        admin_dir: Some(admin),
        extensions: Vec::new(),
    });
    assert!(errors.is_empty(), "{errors:?}");
    let mut session = Rule::for_tool("write_file", RuleDecision::Allow);
    session.tier = Tier::Workspace;
    session.priority = 950;
    engine.add_session_rule(session);

    let listed = effective_rules(&engine);
    let keys: Vec<u32> = listed.iter().map(|l| l.effective_priority).collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(keys, sorted);
    assert_eq!(listed[0].rule.tier, Tier::Admin);
    assert_eq!(listed[1].rule.tier, Tier::User);
    assert_eq!(listed[1].effective_priority, 4500);
    assert_eq!(
        listed[1].rule.source.as_ref().unwrap().path,
        user.join("u.toml")
    );
    assert_eq!(listed[1].rule.source.as_ref().unwrap().line, 9);
    assert_eq!(
        listed[1].text,
        "[[rule]]\ncommandPrefix = \"git push\"\ndecision = \"deny\"\npriority = 500\ndeny_message = \"no pushing\"\n"
    );
    assert_eq!(listed[2].effective_priority, 4010);
    // The workspace rule at 999 outranks the session rule at 950.
    assert_eq!(listed[3].effective_priority, 3999);
    assert!(!listed[3].session);
    assert_eq!(listed[4].effective_priority, 3950);
    assert!(listed[4].session);
    assert_eq!(
        listed[4].text,
        "[[rule]]\ntoolName = \"write_file\"\ndecision = \"allow\"\npriority = 950\n"
    );
    assert!(listed[5..].iter().all(|l| l.rule.tier == Tier::Default));
    // Built-in rules show their table too.
    assert!(listed[5].text.starts_with("[[rule]]\n"));
}

#[test]
fn equal_priorities_list_deny_first_as_the_engine_decides() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    fs::create_dir_all(&user).unwrap();
    fs::write(
        user.join("u.toml"),
        "[[rule]]\ntoolName = \"glob\"\ndecision = \"allow\"\npriority = 7\n\n[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 7\n",
    )
    .unwrap();
    let (engine, _) = PolicyEngine::load(&PolicySources {
        user_dir: Some(user),
        ..PolicySources::default()
    });
    let listed = effective_rules(&engine);
    assert_eq!(listed[0].rule.decision, RuleDecision::Deny);
    assert_eq!(listed[1].rule.decision, RuleDecision::Allow);
}

#[test]
fn adding_to_a_file_of_comments_keeps_them_first() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("auto-saved.toml");
    fs::write(&file, "# Saved by hand; keep this comment.\n").unwrap();
    let added = add_rule(&file, Tier::User, &spec("glob", "allow", 1)).unwrap();
    assert_eq!(
        read(&file),
        "# Saved by hand; keep this comment.\n\n[[rule]]\ntoolName = \"glob\"\ndecision = \"allow\"\npriority = 1\n"
    );
    assert_eq!(added.line, 3);
}

#[test]
fn adding_after_trailing_comments_and_a_missing_final_newline() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.toml");
    let text = "[[rule]]\ntoolName = \"a\"\ndecision = \"allow\"\npriority = 1\n# the end\n";
    fs::write(&file, text).unwrap();
    add_rule(&file, Tier::User, &spec("b", "deny", 2)).unwrap();
    assert_eq!(
        read(&file),
        format!("{text}\n[[rule]]\ntoolName = \"b\"\ndecision = \"deny\"\npriority = 2\n")
    );
    let text = "[[rule]]\ntoolName = \"a\"\ndecision = \"allow\"\npriority = 1";
    fs::write(&file, text).unwrap();
    let added = add_rule(&file, Tier::User, &spec("b", "deny", 2)).unwrap();
    let back = read(&file);
    assert!(back.starts_with(text), "{back:?}");
    assert_eq!(added.line, 6, "{back:?}");
    assert_eq!(
        gd_policy::parse_policy_file(&back, &file, Tier::User)
            .unwrap()
            .len(),
        2
    );
}

/// Each rule of a many-rule file is listed with its own table (read from
/// a per-file line index since issue 33), also after a BOM and with CRLF
/// line ends.
#[test]
fn every_rule_of_a_long_file_lists_its_own_table() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    fs::create_dir_all(&user).unwrap();
    let table = |i: usize| {
        format!("[[rule]]\r\ntoolName = \"t{i}\"\r\ndecision = \"allow\"\r\npriority = 7\r\n")
    };
    let text: String = (0..300)
        .map(|i| format!("{}\r\n# {i}\r\n", table(i)))
        .collect();
    fs::write(user.join("u.toml"), format!("\u{feff}{text}")).unwrap();
    let (engine, errors) = PolicyEngine::load(&PolicySources {
        user_dir: Some(user),
        ..PolicySources::default()
    });
    assert!(errors.is_empty(), "{errors:?}");
    let listed: Vec<_> = effective_rules(&engine)
        .into_iter()
        .filter(|l| l.rule.tier == Tier::User)
        .collect();
    assert_eq!(listed.len(), 300);
    for (i, l) in listed.iter().enumerate() {
        assert_eq!(l.rule.source.as_ref().unwrap().line, 6 * i + 1);
        assert_eq!(l.text, table(i).replace('\r', ""), "rule {i}");
    }
}
