use super::rule::edit_distance;
use super::*;
use crate::rule::{Mode, RuleDecision, SHELL_TOOL_NAME};

fn parse(text: &str) -> Result<Vec<Rule>, Vec<PolicyError>> {
    parse_policy_file(text, Path::new("p.toml"), Tier::User)
}

fn errors(text: &str) -> Vec<String> {
    parse(text)
        .unwrap_err()
        .iter()
        .map(|e| e.to_string())
        .collect()
}

#[test]
fn line_and_column_from_offsets() {
    let lines = Lines::new("ab\ncdé\nf");
    assert_eq!(lines.line_column(0), (1, 1));
    assert_eq!(lines.line_column(3), (2, 1));
    assert_eq!(lines.line_column(7), (2, 4));
    assert_eq!(lines.line_column(8), (3, 1));
    assert_eq!(lines.line_column(99), (3, 2));
    // Inside `é`: counted in bytes, no panic.
    assert_eq!(lines.line_column(6), (2, 4));
    assert_eq!(Lines::new("").line_column(5), (1, 1));
}

#[test]
fn edit_distances() {
    assert_eq!(edit_distance("decision", "decison"), 1);
    assert_eq!(edit_distance("priority", "prio"), 4);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(edit_distance("modes", "mode"), 1);
}

#[test]
fn reads_all_fields() {
    let rules = parse(
        r#"
# comment
[[rule]]
toolName = ["write_file", "replace"]
decision = "ask_user"
priority = 10
modes = ["default", "auto_edit"]

[[rule]]
mcpName = "jira"
toolName = "search"
argsPattern = '"q":"x'
decision = "deny"
priority = 0x1F
deny_message = "no"
"#,
    )
    .unwrap();
    assert_eq!(rules.len(), 2);
    assert_eq!(rules[0].tool_names, ["write_file", "replace"]);
    assert_eq!(rules[0].decision, RuleDecision::AskUser);
    assert_eq!(rules[0].modes, [Mode::Default, Mode::AutoEdit]);
    assert_eq!(rules[0].source.as_ref().unwrap().line, 3);
    assert_eq!(rules[1].mcp_name.as_deref(), Some("jira"));
    assert_eq!(rules[1].priority, 31);
    assert_eq!(rules[1].deny_message.as_deref(), Some("no"));
    assert_eq!(
        rules[1].args_pattern.as_ref().unwrap().as_str(),
        "\"q\":\"x"
    );
    assert_eq!(rules[1].tier, Tier::User);
    assert_eq!(rules[1].source.as_ref().unwrap().line, 9);
}

#[test]
fn command_fields_imply_the_shell_tool() {
    let rules = parse(
            "[[rule]]\ncommandPrefix = [\"git status\", \"git diff\"]\ndecision = \"allow\"\npriority = 1\n\
             [[rule]]\ntoolName = \"run_shell_command\"\ncommandRegex = \"^rm \"\ndecision = \"deny\"\npriority = 1\n",
        )
        .unwrap();
    assert_eq!(rules[0].tool_names, [SHELL_TOOL_NAME]);
    assert_eq!(rules[0].command_prefixes, ["git status", "git diff"]);
    assert_eq!(rules[1].command_regex.as_ref().unwrap().as_str(), "^rm ");
}

#[test]
fn empty_file_has_no_rules() {
    assert!(parse("").unwrap().is_empty());
    assert!(parse("# only comments\n").unwrap().is_empty());
    assert!(
        parse("\u{feff}[[rule]]\ndecision = \"allow\"\npriority = 1\n")
            .unwrap()
            .len()
            == 1
    );
}

#[test]
fn syntax_error_has_line_and_column() {
    assert_eq!(
        errors("[[rule]]\ntoolName = \"x\"\ndecision = allow\npriority = 1\n"),
        ["p.toml:3:12: invalid TOML: string values must be quoted, expected literal string"]
    );
}

#[test]
fn semantic_errors_point_at_the_value() {
    let e = errors(
        "[[rule]]\ntoolName = \"x\"\ndecision = \"allowed\"\npriority = 1000\nmodes = [\"fast\"]\ncommandprefix = \"git\"\n",
    );
    assert_eq!(e.len(), 4, "{e:#?}");
    assert!(
        e[0].starts_with("p.toml:3:12: invalid decision `allowed`"),
        "{}",
        e[0]
    );
    assert!(
        e[1].starts_with("p.toml:4:12: `priority` must be from 0 to 999, found 1000"),
        "{}",
        e[1]
    );
    assert!(
        e[2].starts_with("p.toml:5:10: unknown mode `fast`"),
        "{}",
        e[2]
    );
    assert!(
        e[3].starts_with(
            "p.toml:6:1: unknown field `commandprefix` in [[rule]] (did you mean `commandPrefix`?)"
        ),
        "{}",
        e[3]
    );
}

#[test]
fn missing_fields_point_at_the_rule_header() {
    let e = errors(
        "[[rule]]\ntoolName = \"x\"\npriority = 1\n\n[[rule]]\ntoolName = \"y\"\ndecision = \"deny\"\n",
    );
    assert_eq!(
        e,
        [
            "p.toml:1:1: missing field `decision` (\"allow\", \"deny\" or \"ask_user\")",
            "p.toml:5:1: missing field `priority` (an integer from 0 to 999)",
        ]
    );
}

#[test]
fn prefix_and_regex_together_is_an_error() {
    let e = errors(
        "[[rule]]\ncommandPrefix = \"git\"\ncommandRegex = \"git .*\"\ndecision = \"allow\"\npriority = 1\n",
    );
    assert_eq!(
        e,
        ["p.toml:3:16: `commandPrefix` and `commandRegex` cannot be used in the same rule"]
    );
}

#[test]
fn other_type_and_shape_errors() {
    let cases: &[(&str, &str)] = &[
        (
            "[[rule]]\ntoolName = 3\ndecision = \"allow\"\npriority = 1\n",
            "`toolName` must be a string or a list of strings, found integer",
        ),
        (
            "[[rule]]\ntoolName = []\ndecision = \"allow\"\npriority = 1\n",
            "`toolName` must not be an empty list",
        ),
        (
            "[[rule]]\ndecision = \"allow\"\npriority = 1.5\n",
            "`priority` must be an integer from 0 to 999, found float",
        ),
        (
            "[[rule]]\ndecision = \"allow\"\npriority = -1\n",
            "`priority` must be from 0 to 999, found -1",
        ),
        (
            "[[rule]]\nargsPattern = \"(\"\ndecision = \"allow\"\npriority = 1\n",
            "`argsPattern` is not a valid regular expression: unclosed group",
        ),
        (
            "[[rule]]\nargsPattern = \"(?=x)\"\ndecision = \"allow\"\npriority = 1\n",
            "`argsPattern` is not a valid regular expression: look-around",
        ),
        (
            "[[rule]]\ntoolName = \"write_file\"\ncommandPrefix = \"git\"\ndecision = \"allow\"\npriority = 1\n",
            "only apply to toolName = \"run_shell_command\"",
        ),
        (
            "[[rule]]\nmcpName = \"s\"\ncommandPrefix = \"git\"\ndecision = \"allow\"\npriority = 1\n",
            "cannot be combined with `mcpName`",
        ),
        (
            "[[rule]]\ntoolAnnotations = { readOnlyHint = true }\ndecision = \"allow\"\npriority = 1\n",
            "`toolAnnotations` is a Gemini CLI rule field that Gemini Desktop does not support",
        ),
        ("rule = 1\n", "`rule` must be an array of tables"),
        ("[rules]\nx = 1\n", "unknown top-level key `rules`"),
        (
            "[[safety_checker]]\ntoolName = \"x\"\n",
            "`[[safety_checker]]` tables are not supported",
        ),
    ];
    for (text, expected) in cases {
        let e = errors(text);
        assert!(
            e.iter().any(|m| m.contains(expected)),
            "{text:?}: expected {expected:?} in {e:#?}"
        );
    }
}

#[test]
fn allow_redirection_is_accepted() {
    let rules = parse("[[rule]]\ndecision = \"allow\"\npriority = 998\nmodes = [\"yolo\"]\nallow_redirection = true\n").unwrap();
    assert_eq!(rules[0].modes, [Mode::Yolo]);
    assert!(rules[0].allow_redirection);
    let rules =
        parse("[[rule]]\ndecision = \"allow\"\npriority = 1\nallowRedirection = true\n").unwrap();
    assert!(rules[0].allow_redirection);
    let rules = parse("[[rule]]\ndecision = \"allow\"\npriority = 1\n").unwrap();
    assert!(!rules[0].allow_redirection);
    let e = errors("[[rule]]\ndecision = \"allow\"\npriority = 1\nallowRedirection = \"yes\"\n");
    assert!(
        e.iter()
            .any(|m| m.contains("`allowRedirection` must be a boolean")),
        "{e:?}"
    );
}

/// Issue 33: a rule's line came from counting the line breaks from the
/// file's start, once per rule, so a 10,000-rule file took seconds to load
/// (quadratic). The text is now scanned for line breaks once per file, and
/// the lines are still right.
#[test]
fn a_file_is_scanned_for_line_breaks_once_however_many_rules_it_has() {
    let text: String = (0..1000)
        .map(|i| format!("[[rule]]\ntoolName = \"t{i}\"\ndecision = \"allow\"\npriority = 1\n\n"))
        .collect();
    SCANS.with(|n| n.set(0));
    let rules = parse(&text).unwrap();
    assert_eq!(SCANS.with(|n| n.get()), 1);
    assert_eq!(rules.len(), 1000);
    for (i, rule) in rules.iter().enumerate() {
        assert_eq!(rule.source.as_ref().unwrap().line, 5 * i + 1);
    }
}
