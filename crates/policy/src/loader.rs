//! Reading policy files: TOML `[[rule]]` tables, checked field by field,
//! with every problem reported as `path:line:column: message`.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use regex::Regex;
use thiserror::Error;
use toml::Spanned;
use toml::de::{DeTable, DeValue};
use tracing::debug;

use crate::rule::{Mode, Rule, RuleDecision, RuleSource, SHELL_TOOL_NAME, Tier};

/// A policy file (or directory) that could not be used, or one problem in
/// it. `line` and `column` are 1-based; both are 0 when the problem is not
/// at a place in the file (it cannot be read), and then the Display form is
/// `path: message`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub struct PolicyError {
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path.display(), self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.path.display(),
                self.line,
                self.column,
                self.message
            )
        }
    }
}

/// The fields of a `[[rule]]` table.
const FIELDS: &[&str] = &[
    "toolName",
    "mcpName",
    "argsPattern",
    "commandPrefix",
    "commandRegex",
    "decision",
    "priority",
    "modes",
    "deny_message",
    // The spelling the issue tracker and some docs use; both are accepted.
    "denyMessage",
    // Gemini CLI reads `allowRedirection`, and the older snake_case spelling.
    "allowRedirection",
    "allow_redirection",
];

/// Gemini CLI fields whose conditions or checks we cannot evaluate. Ignoring
/// them would make a rule apply more widely than its author wrote, so such a
/// rule is an error.
const UNSUPPORTED_FIELDS: &[&str] = &[
    "toolAnnotations",
    "subagent",
    "safety_checker",
    "interactive",
];

/// Byte offset → 1-based line and column (in characters).
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |p| p + 1);
    let column = text[line_start..offset].chars().count() + 1;
    (line, column)
}

struct FileCtx<'a> {
    path: &'a Path,
    text: &'a str,
    errors: Vec<PolicyError>,
}

impl FileCtx<'_> {
    fn error(&mut self, span: Range<usize>, message: impl Into<String>) {
        let (line, column) = line_column(self.text, span.start);
        self.errors.push(PolicyError {
            path: self.path.to_owned(),
            line,
            column,
            message: message.into(),
        });
    }
}

/// Parses one policy file's text. Either every rule in it is valid and all
/// are returned, or the errors are (all of them, in file order) and the file
/// should be skipped: half a policy file could be more permissive than the
/// whole one.
pub fn parse_policy_file(
    text: &str,
    path: &Path,
    tier: Tier,
) -> Result<Vec<Rule>, Vec<PolicyError>> {
    let bom = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let mut ctx = FileCtx {
        path,
        text,
        errors: Vec::new(),
    };
    let doc = match DeTable::parse(&text[bom..]) {
        Ok(doc) => doc,
        Err(e) => {
            let start = e.span().map_or(0, |s| s.start) + bom;
            ctx.error(
                start..start,
                format!("invalid TOML: {}", e.message().trim_end()),
            );
            return Err(ctx.errors);
        }
    };
    let shift = |s: Range<usize>| s.start + bom..s.end + bom;
    let mut rules = Vec::new();
    for (key, value) in doc.get_ref().iter() {
        let name: &str = key.get_ref();
        if name != "rule" {
            let message = if name == "safety_checker" {
                "`[[safety_checker]]` tables are not supported by Gemini Desktop".to_owned()
            } else {
                format!("unknown top-level key `{name}`: a policy file holds `[[rule]]` tables")
            };
            ctx.error(shift(key.span()), message);
            continue;
        }
        let DeValue::Array(items) = value.get_ref() else {
            ctx.error(
                shift(value.span()),
                format!(
                    "`rule` must be an array of tables (`[[rule]]`), found {}",
                    value.get_ref().type_str()
                ),
            );
            continue;
        };
        for item in items.iter() {
            let DeValue::Table(table) = item.get_ref() else {
                ctx.error(
                    shift(item.span()),
                    format!(
                        "each `rule` must be a table, found {}",
                        item.get_ref().type_str()
                    ),
                );
                continue;
            };
            let header = shift(item.span());
            if let Some(rule) = parse_rule(&mut ctx, table, header.clone(), bom, tier) {
                let (line, _) = line_column(text, header.start);
                rules.push(Rule {
                    source: Some(RuleSource {
                        path: path.to_owned(),
                        line,
                    }),
                    ..rule
                });
            }
        }
    }
    if ctx.errors.is_empty() {
        Ok(rules)
    } else {
        ctx.errors.sort_by_key(|e| (e.line, e.column));
        Err(ctx.errors)
    }
}

type Value<'a> = Spanned<DeValue<'a>>;

fn parse_rule(
    ctx: &mut FileCtx<'_>,
    table: &DeTable<'_>,
    header: Range<usize>,
    bom: usize,
    tier: Tier,
) -> Option<Rule> {
    let errors_before = ctx.errors.len();
    let shift = |s: Range<usize>| s.start + bom..s.end + bom;
    let get = |field: &str| -> Option<&Value<'_>> {
        table
            .iter()
            .find(|(k, _)| k.get_ref() == field)
            .map(|(_, v)| v)
    };

    for (key, _) in table.iter() {
        let name: &str = key.get_ref();
        if FIELDS.contains(&name) {
            continue;
        }
        let message = if UNSUPPORTED_FIELDS.contains(&name) {
            format!(
                "`{name}` is a Gemini CLI rule field that Gemini Desktop does not support; \
                 the rule cannot be applied as written"
            )
        } else {
            let hint = FIELDS
                .iter()
                .find(|f| {
                    f.replace('_', "")
                        .eq_ignore_ascii_case(&name.replace('_', ""))
                        || edit_distance(&f.to_ascii_lowercase(), &name.to_ascii_lowercase()) <= 2
                })
                .map(|f| format!(" (did you mean `{f}`?)"))
                .unwrap_or_default();
            format!(
                "unknown field `{name}` in [[rule]]{hint}; expected one of: {}",
                FIELDS.join(", ")
            )
        };
        ctx.error(shift(key.span()), message);
    }

    let tool_names = match get("toolName") {
        Some(v) => string_or_list(ctx, "toolName", v, bom).unwrap_or_default(),
        None => Vec::new(),
    };
    let mcp_name = get("mcpName").and_then(|v| string(ctx, "mcpName", v, bom));
    if let (Some(name), Some(v)) = (&mcp_name, get("mcpName"))
        && name.is_empty()
    {
        ctx.error(shift(v.span()), "`mcpName` must not be empty");
    }
    let args_pattern = get("argsPattern").and_then(|v| regex(ctx, "argsPattern", v, bom));
    let command_prefixes = match get("commandPrefix") {
        Some(v) => string_or_list(ctx, "commandPrefix", v, bom).unwrap_or_default(),
        None => Vec::new(),
    };
    let command_regex = get("commandRegex").and_then(|v| regex(ctx, "commandRegex", v, bom));

    let decision = match get("decision") {
        None => {
            ctx.error(
                header.clone(),
                "missing field `decision` (\"allow\", \"deny\" or \"ask_user\")",
            );
            None
        }
        Some(v) => string(ctx, "decision", v, bom).and_then(|s| match s.parse::<RuleDecision>() {
            Ok(d) => Some(d),
            Err(message) => {
                ctx.error(shift(v.span()), message);
                None
            }
        }),
    };
    let priority = match get("priority") {
        None => {
            ctx.error(
                header.clone(),
                "missing field `priority` (an integer from 0 to 999)",
            );
            None
        }
        Some(v) => priority(ctx, v, bom),
    };
    let modes = match get("modes") {
        None => Vec::new(),
        Some(v) => modes(ctx, v, bom),
    };
    let deny_message = match (get("deny_message"), get("denyMessage")) {
        (Some(v), _) => string(ctx, "deny_message", v, bom),
        (None, Some(v)) => string(ctx, "denyMessage", v, bom),
        (None, None) => None,
    };
    let mut allow_redirection = false;
    for field in ["allowRedirection", "allow_redirection"] {
        match get(field).map(|v| (v.get_ref(), v.span())) {
            None => {}
            Some((DeValue::Boolean(b), _)) => allow_redirection |= *b,
            Some((other, span)) => ctx.error(
                shift(span),
                format!("`{field}` must be a boolean, found {}", other.type_str()),
            ),
        }
    }

    // commandPrefix / commandRegex are about the shell tool.
    let has_prefix = get("commandPrefix").is_some();
    let has_regex = get("commandRegex").is_some();
    let mut tool_names = tool_names;
    if has_prefix || has_regex {
        if has_prefix && has_regex {
            let span = get("commandRegex").map_or(header.clone(), |v| shift(v.span()));
            ctx.error(
                span,
                "`commandPrefix` and `commandRegex` cannot be used in the same rule",
            );
        }
        if let Some(v) = get("mcpName") {
            ctx.error(shift(v.span()), "`commandPrefix`/`commandRegex` apply to run_shell_command and cannot be combined with `mcpName`");
        }
        if tool_names.is_empty() {
            tool_names.push(SHELL_TOOL_NAME.to_owned());
        } else if tool_names.iter().any(|t| t != SHELL_TOOL_NAME) {
            let span = get("toolName").map_or(header.clone(), |v| shift(v.span()));
            ctx.error(
                span,
                format!(
                    "`commandPrefix`/`commandRegex` only apply to toolName = \"{SHELL_TOOL_NAME}\""
                ),
            );
        }
    }

    if ctx.errors.len() > errors_before {
        return None;
    }
    debug!(path = %ctx.path.display(), ?tool_names, ?decision, "policy rule");
    Some(Rule {
        tool_names,
        mcp_name,
        args_pattern,
        command_prefixes,
        command_regex,
        decision: decision?,
        priority: priority?,
        modes,
        deny_message,
        allow_redirection,
        tier,
        source: None,
    })
}

/// Levenshtein distance, for "did you mean" hints.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

fn string(ctx: &mut FileCtx<'_>, field: &str, v: &Value<'_>, bom: usize) -> Option<String> {
    match v.get_ref() {
        DeValue::String(s) => Some(s.to_string()),
        other => {
            ctx.error(
                v.span().start + bom..v.span().end + bom,
                format!("`{field}` must be a string, found {}", other.type_str()),
            );
            None
        }
    }
}

fn string_or_list(
    ctx: &mut FileCtx<'_>,
    field: &str,
    v: &Value<'_>,
    bom: usize,
) -> Option<Vec<String>> {
    let span = v.span().start + bom..v.span().end + bom;
    match v.get_ref() {
        DeValue::String(s) if s.is_empty() => {
            ctx.error(span, format!("`{field}` must not be empty"));
            None
        }
        DeValue::String(s) => Some(vec![s.to_string()]),
        DeValue::Array(items) => {
            if items.is_empty() {
                ctx.error(span, format!("`{field}` must not be an empty list"));
                return None;
            }
            let mut out = Vec::new();
            for item in items.iter() {
                match item.get_ref() {
                    DeValue::String(s) if !s.is_empty() => out.push(s.to_string()),
                    DeValue::String(_) => {
                        ctx.error(
                            item.span().start + bom..item.span().end + bom,
                            format!("`{field}` entries must not be empty"),
                        );
                        return None;
                    }
                    other => {
                        ctx.error(
                            item.span().start + bom..item.span().end + bom,
                            format!(
                                "`{field}` entries must be strings, found {}",
                                other.type_str()
                            ),
                        );
                        return None;
                    }
                }
            }
            Some(out)
        }
        other => {
            ctx.error(
                span,
                format!(
                    "`{field}` must be a string or a list of strings, found {}",
                    other.type_str()
                ),
            );
            None
        }
    }
}

fn regex(ctx: &mut FileCtx<'_>, field: &str, v: &Value<'_>, bom: usize) -> Option<Regex> {
    let pattern = string(ctx, field, v, bom)?;
    match Regex::new(&pattern) {
        Ok(re) => Some(re),
        Err(e) => {
            // The regex crate's message spans several lines (pattern, caret,
            // reason); keep its last line, the reason.
            let reason = e.to_string();
            let reason = reason
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim();
            let reason = reason.strip_prefix("error: ").unwrap_or(reason);
            ctx.error(
                v.span().start + bom..v.span().end + bom,
                format!("`{field}` is not a valid regular expression: {reason}"),
            );
            None
        }
    }
}

fn priority(ctx: &mut FileCtx<'_>, v: &Value<'_>, bom: usize) -> Option<u16> {
    let span = v.span().start + bom..v.span().end + bom;
    let DeValue::Integer(i) = v.get_ref() else {
        ctx.error(
            span,
            format!(
                "`priority` must be an integer from 0 to 999, found {}",
                v.get_ref().type_str()
            ),
        );
        return None;
    };
    match i64::from_str_radix(i.as_str(), i.radix()) {
        Ok(n @ 0..=999) => Some(n as u16),
        _ => {
            ctx.error(
                span,
                format!(
                    "`priority` must be from 0 to 999, found {} (a priority of 1000 or more would jump to the next tier)",
                    i.as_str()
                ),
            );
            None
        }
    }
}

fn modes(ctx: &mut FileCtx<'_>, v: &Value<'_>, bom: usize) -> Vec<Mode> {
    let DeValue::Array(items) = v.get_ref() else {
        ctx.error(
            v.span().start + bom..v.span().end + bom,
            format!(
                "`modes` must be a list of modes, found {}",
                v.get_ref().type_str()
            ),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items.iter() {
        let span = item.span().start + bom..item.span().end + bom;
        match item.get_ref() {
            DeValue::String(s) => match s.parse::<Mode>() {
                Ok(m) => out.push(m),
                Err(message) => ctx.error(span, message),
            },
            other => ctx.error(
                span,
                format!(
                    "`modes` entries must be strings, found {}",
                    other.type_str()
                ),
            ),
        }
    }
    out
}

/// Reads every `*.toml` file of `dir` (sorted by name), or `dir` itself
/// when it is a `.toml` file. A missing directory is not an error. For the
/// workspace tier, files that resolve outside the directory (symbolic links)
/// are refused: a repository must not point its policy at other files.
pub(crate) fn load_dir(
    dir: &Path,
    tier: Tier,
    rules: &mut Vec<Rule>,
    errors: &mut Vec<PolicyError>,
) {
    let io_error = |path: &Path, message: String| PolicyError {
        path: path.to_owned(),
        line: 0,
        column: 0,
        message,
    };
    let files: Vec<PathBuf> = if dir.is_file() {
        if dir.extension().is_some_and(|e| e == "toml") {
            vec![dir.to_owned()]
        } else {
            errors.push(io_error(
                dir,
                "a policy path must be a directory or a .toml file".into(),
            ));
            return;
        }
    } else {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                errors.push(io_error(dir, format!("cannot read policy directory: {e}")));
                return;
            }
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        files
    };
    for path in files {
        if tier == Tier::Workspace
            && let (Ok(real), Ok(real_dir)) = (path.canonicalize(), dir.canonicalize())
            && !real.starts_with(&real_dir)
        {
            errors.push(io_error(
                &path,
                "refused: it links to a file outside the workspace policy directory".into(),
            ));
            continue;
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if path.is_dir() => {
                debug!(path = %path.display(), %e, "skipping a directory named *.toml");
                continue;
            }
            Err(e) => {
                errors.push(io_error(&path, format!("cannot read policy file: {e}")));
                continue;
            }
        };
        debug!(path = %path.display(), %tier, "loading policy file");
        match parse_policy_file(&text, &path, tier) {
            Ok(file_rules) => rules.extend(file_rules),
            Err(file_errors) => errors.extend(file_errors),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let text = "ab\ncdé\nf";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 3), (2, 1));
        assert_eq!(line_column(text, 7), (2, 4));
        assert_eq!(line_column(text, 8), (3, 1));
        assert_eq!(line_column(text, 99), (3, 2));
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
        assert!(e[3].starts_with("p.toml:6:1: unknown field `commandprefix` in [[rule]] (did you mean `commandPrefix`?)"), "{}", e[3]);
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
            parse("[[rule]]\ndecision = \"allow\"\npriority = 1\nallowRedirection = true\n")
                .unwrap();
        assert!(rules[0].allow_redirection);
        let rules = parse("[[rule]]\ndecision = \"allow\"\npriority = 1\n").unwrap();
        assert!(!rules[0].allow_redirection);
        let e =
            errors("[[rule]]\ndecision = \"allow\"\npriority = 1\nallowRedirection = \"yes\"\n");
        assert!(
            e.iter()
                .any(|m| m.contains("`allowRedirection` must be a boolean")),
            "{e:?}"
        );
    }
}
