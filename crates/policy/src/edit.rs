//! Adding, changing and deleting `[[rule]]` tables of the user's and the
//! workspace's policy files, in place.
//!
//! Policy files are written by people: their comments, key order and the
//! other rules must survive an edit made from the app, byte for byte (the
//! settings writer keeps JSON comments for the same reason). So the file is
//! edited as a `toml_edit` document, only the keys that changed are
//! touched, and the result must load with the real loader
//! ([`parse_policy_file`]) before anything is written: a rule that would not
//! load is refused with the loader's errors, which name the line. The file
//! is replaced through a temporary file and a rename, with its mode kept, so
//! a crash never leaves half a policy (which could be more permissive than
//! the whole one).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use toml_edit::{Array, ArrayOfTables, DocumentMut, Item, Table, Value};
use tracing::debug;

use crate::loader::{PolicyError, parse_policy_file};
use crate::rule::{Rule, SHELL_TOOL_NAME, Tier};

/// A rule as a form edits it: the TOML fields, not yet checked. Values are
/// kept as typed (the decision and modes as text, the priority as any
/// integer) so that the loader, not this module, says what is wrong with
/// them. Empty strings and lists mean "no such condition".
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuleSpec {
    /// `toolName`: one name is written as a string, several as a list.
    pub tool_names: Vec<String>,
    pub mcp_name: Option<String>,
    pub args_pattern: Option<String>,
    /// `commandPrefix`: one is written as a string, several as a list.
    pub command_prefixes: Vec<String>,
    pub command_regex: Option<String>,
    /// `allow`, `deny` or `ask_user`.
    pub decision: String,
    pub priority: i64,
    /// `default`, `autoEdit`, `yolo`, `plan`; empty: every mode.
    pub modes: Vec<String>,
    pub allow_redirection: bool,
    pub deny_message: Option<String>,
}

impl RuleSpec {
    /// The fields of a loaded rule. A shell rule whose `toolName` was
    /// implied by `commandPrefix`/`commandRegex` keeps it implied.
    pub fn from_rule(rule: &Rule) -> RuleSpec {
        let implied_shell = (!rule.command_prefixes.is_empty() || rule.command_regex.is_some())
            && rule.tool_names == [SHELL_TOOL_NAME];
        RuleSpec {
            tool_names: if implied_shell {
                Vec::new()
            } else {
                rule.tool_names.clone()
            },
            mcp_name: rule.mcp_name.clone(),
            args_pattern: rule.args_pattern.as_ref().map(|r| r.as_str().to_owned()),
            command_prefixes: rule.command_prefixes.clone(),
            command_regex: rule.command_regex.as_ref().map(|r| r.as_str().to_owned()),
            decision: rule.decision.as_str().to_owned(),
            priority: i64::from(rule.priority),
            modes: rule.modes.iter().map(|m| m.as_str().to_owned()).collect(),
            allow_redirection: rule.allow_redirection,
            deny_message: rule.deny_message.clone(),
        }
    }
}

/// Why an edit was not made. Nothing was written in any case.
#[derive(Debug)]
pub enum EditError {
    /// The edited file would not load: the loader's errors (with lines of
    /// the edited text).
    Invalid(Vec<PolicyError>),
    /// The edit is not allowed or does not apply (wrong tier, no rule at
    /// that line, a file that does not load now…).
    Refused(String),
    Io {
        path: PathBuf,
        error: io::Error,
    },
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::Invalid(errors) => {
                let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
                write!(f, "the rule would not load: {}", lines.join("; "))
            }
            EditError::Refused(message) => f.write_str(message),
            EditError::Io { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for EditError {}

/// A rule as written: its file, the line of its `[[rule]]` header and its
/// text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditedRule {
    pub path: PathBuf,
    pub line: usize,
    pub text: String,
}

/// The `[[rule]]` table `spec` would be written as (for previews).
pub fn render_spec(spec: &RuleSpec) -> String {
    let mut doc = DocumentMut::new();
    let mut rules = ArrayOfTables::new();
    let mut table = Table::new();
    fill(&mut table, spec);
    rules.push(table);
    doc.insert("rule", Item::ArrayOfTables(rules));
    doc.to_string()
}

/// Appends `spec` as a new `[[rule]]` at the end of `file` (created, with
/// its directories, when missing).
pub fn add_rule(file: &Path, tier: Tier, spec: &RuleSpec) -> Result<EditedRule, EditError> {
    editable_tier(tier)?;
    let (text, bom) = read(file)?;
    let mut doc = parse_doc(file, &text)?;
    let mut table = Table::new();
    fill(&mut table, spec);
    // Comments after the last table (or a file of comments only) are the
    // document's trailing text: they stay where they are, above the new
    // rule, with a blank line between.
    let mut prefix = doc.trailing().as_str().unwrap_or_default().to_owned();
    doc.set_trailing("");
    if !text.trim().is_empty() && !prefix.ends_with("\n\n") {
        prefix.push('\n');
    }
    table.decor_mut().set_prefix(prefix);
    match doc.get_mut("rule") {
        None => {
            let mut rules = ArrayOfTables::new();
            rules.push(table);
            doc.insert("rule", Item::ArrayOfTables(rules));
        }
        Some(Item::ArrayOfTables(rules)) => rules.push(table),
        Some(_) => return Err(inline_rules(file)),
    }
    let new_text = format!("{bom}{doc}");
    let rules = validate(&new_text, file, tier)?;
    let line = rules
        .last()
        .and_then(|r| r.source.as_ref())
        .map_or(0, |s| s.line);
    write_atomically(file, &new_text)?;
    debug!(path = %file.display(), line, "policy rule added");
    Ok(EditedRule {
        path: file.to_owned(),
        line,
        text: rule_text(&new_text, line),
    })
}

/// Replaces the conditions and decision of the rule whose `[[rule]]`
/// header is on `line` of `file`. Keys whose value stays the same are not
/// touched; comments inside the table are kept.
pub fn update_rule(
    file: &Path,
    tier: Tier,
    line: usize,
    spec: &RuleSpec,
) -> Result<EditedRule, EditError> {
    editable_tier(tier)?;
    let (text, bom) = read(file)?;
    let index = rule_index(file, &text, tier, line)?;
    let mut doc = parse_doc(file, &text)?;
    let Some(Item::ArrayOfTables(rules)) = doc.get_mut("rule") else {
        return Err(inline_rules(file));
    };
    let Some(table) = rules.get_mut(index) else {
        return Err(no_rule_at(file, line));
    };
    fill(table, spec);
    let new_text = format!("{bom}{doc}");
    let rules = validate(&new_text, file, tier)?;
    let line = rules
        .get(index)
        .and_then(|r| r.source.as_ref())
        .map_or(line, |s| s.line);
    write_atomically(file, &new_text)?;
    debug!(path = %file.display(), line, "policy rule changed");
    Ok(EditedRule {
        path: file.to_owned(),
        line,
        text: rule_text(&new_text, line),
    })
}

/// Deletes the rule whose `[[rule]]` header is on `line` of `file` (with
/// the comment lines just above its header, which belong to it).
pub fn delete_rule(file: &Path, tier: Tier, line: usize) -> Result<(), EditError> {
    editable_tier(tier)?;
    let (text, bom) = read(file)?;
    let index = rule_index(file, &text, tier, line)?;
    let mut doc = parse_doc(file, &text)?;
    let Some(Item::ArrayOfTables(rules)) = doc.get_mut("rule") else {
        return Err(inline_rules(file));
    };
    if index >= rules.len() {
        return Err(no_rule_at(file, line));
    }
    // Comments above the header separated from it by a blank line are
    // about the file (or earlier rules), not this rule: they stay.
    let kept = rules
        .get(index)
        .and_then(|t| t.decor().prefix())
        .and_then(|p| p.as_str())
        .and_then(|p| p.rfind("\n\n").map(|at| p[..at + 2].to_owned()))
        .unwrap_or_default();
    rules.remove(index);
    if let Some(next) = rules.get_mut(index) {
        let prefix = next
            .decor()
            .prefix()
            .and_then(|p| p.as_str())
            .unwrap_or_default()
            .to_owned();
        next.decor_mut().set_prefix(format!("{kept}{prefix}"));
    } else if !kept.is_empty() {
        let trailing = doc.trailing().as_str().unwrap_or_default().to_owned();
        doc.set_trailing(format!("{kept}{trailing}"));
    }
    if doc
        .get("rule")
        .and_then(Item::as_array_of_tables)
        .is_some_and(ArrayOfTables::is_empty)
    {
        doc.remove("rule");
    }
    let new_text = format!("{bom}{doc}");
    validate(&new_text, file, tier)?;
    write_atomically(file, &new_text)?;
    debug!(path = %file.display(), line, "policy rule deleted");
    Ok(())
}

/// The lines of the rule whose header is on `line` (1-based): up to the
/// next table header, without trailing blank or comment lines (those
/// belong to the next rule).
pub fn rule_text(file_text: &str, line: usize) -> String {
    let lines: Vec<&str> = file_text
        .lines()
        .skip(line.saturating_sub(1))
        .enumerate()
        .take_while(|(i, l)| *i == 0 || !l.trim_start().starts_with('['))
        .map(|(_, l)| l)
        .collect();
    let end = lines
        .iter()
        .rposition(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#')
        })
        .map_or(0, |i| i + 1);
    let mut out = lines[..end].join("\n");
    out.push('\n');
    out
}

fn editable_tier(tier: Tier) -> Result<(), EditError> {
    match tier {
        Tier::User | Tier::Workspace => Ok(()),
        Tier::Default | Tier::Extension | Tier::Admin => Err(EditError::Refused(format!(
            "rules of the {tier} tier are read-only here"
        ))),
    }
}

fn no_rule_at(file: &Path, line: usize) -> EditError {
    EditError::Refused(format!(
        "{}:{line}: no [[rule]] starts on this line (the file changed on disk?); reload the rules",
        file.display()
    ))
}

fn inline_rules(file: &Path) -> EditError {
    EditError::Refused(format!(
        "{}: its rules are written as an inline array, not [[rule]] tables; edit it by hand",
        file.display()
    ))
}

/// The file's text (empty when it does not exist) and its byte order
/// mark, which `toml_edit` does not read and which is written back as it
/// was.
fn read(file: &Path) -> Result<(String, &'static str), EditError> {
    match std::fs::read_to_string(file) {
        Ok(text) => match text.strip_prefix('\u{feff}') {
            Some(rest) => Ok((rest.to_owned(), "\u{feff}")),
            None => Ok((text, "")),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok((String::new(), "")),
        Err(error) => Err(EditError::Io {
            path: file.to_owned(),
            error,
        }),
    }
}

fn parse_doc(file: &Path, text: &str) -> Result<DocumentMut, EditError> {
    text.parse::<DocumentMut>().map_err(|e| {
        EditError::Refused(format!(
            "{}: cannot be edited, it is not valid TOML: {}",
            file.display(),
            e.message()
        ))
    })
}

/// Which `[[rule]]` of the file starts on `line`. The file must load as
/// it is: the loader's rules are in file order, as the document's tables.
fn rule_index(file: &Path, text: &str, tier: Tier, line: usize) -> Result<usize, EditError> {
    let rules = parse_policy_file(text, file, tier).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
        EditError::Refused(format!(
            "the file does not load now, fix it by hand first: {}",
            lines.join("; ")
        ))
    })?;
    rules
        .iter()
        .position(|r| r.source.as_ref().is_some_and(|s| s.line == line))
        .ok_or_else(|| no_rule_at(file, line))
}

fn validate(text: &str, file: &Path, tier: Tier) -> Result<Vec<Rule>, EditError> {
    parse_policy_file(text, file, tier).map_err(EditError::Invalid)
}

/// Writes `text` to a temporary file next to `file`, with `file`'s
/// permissions, and renames it over `file`. A symbolic link is followed:
/// its target is replaced, the link stays.
fn write_atomically(file: &Path, text: &str) -> Result<(), EditError> {
    let io_err = |path: &Path| {
        let path = path.to_owned();
        move |error| EditError::Io { path, error }
    };
    let target = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_owned());
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let name = target
        .file_name()
        .map_or_else(|| "policy".into(), |n| n.to_string_lossy().into_owned());
    // Not `*.toml`: a loader reading the directory meanwhile skips it.
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let permissions = std::fs::metadata(&target).ok().map(|m| m.permissions());
    let result = std::fs::write(&tmp, text)
        .and_then(|()| match permissions {
            Some(p) => std::fs::set_permissions(&tmp, p),
            None => Ok(()),
        })
        .and_then(|()| std::fs::rename(&tmp, &target));
    if let Err(error) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(EditError::Io {
            path: target,
            error,
        });
    }
    Ok(())
}

/// The form's value of one key, compared by meaning with what the file
/// has so that an unchanged key keeps its exact spelling.
#[derive(Debug, PartialEq)]
enum Field {
    Str(String),
    Strs(Vec<String>),
    Int(i64),
    Bool(bool),
}

impl Field {
    fn of(value: &Value) -> Option<Field> {
        match value {
            Value::String(s) => Some(Field::Str(s.value().clone())),
            Value::Integer(i) => Some(Field::Int(*i.value())),
            Value::Boolean(b) => Some(Field::Bool(*b.value())),
            Value::Array(a) => a
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .map(Field::Strs),
            _ => None,
        }
    }

    fn to_value(&self) -> Value {
        match self {
            Field::Str(s) => Value::from(s.as_str()),
            Field::Int(i) => Value::from(*i),
            Field::Bool(b) => Value::from(*b),
            Field::Strs(items) => {
                let mut array = Array::new();
                for item in items {
                    array.push(item.as_str());
                }
                Value::Array(array)
            }
        }
    }
}

fn cleaned(items: &[String]) -> Vec<String> {
    items
        .iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

fn text(s: &Option<String>) -> Option<String> {
    s.as_deref()
        .filter(|s| !s.trim().is_empty())
        .map(str::to_owned)
}

/// One string, or a list when there are several (`toolName`,
/// `commandPrefix`).
fn one_or_many(items: Vec<String>) -> Option<Field> {
    match items.len() {
        0 => None,
        1 => items.into_iter().next().map(Field::Str),
        _ => Some(Field::Strs(items)),
    }
}

/// Sets the table's keys to the spec's fields, in the order a new rule
/// is written. `keys` lists a field's accepted spellings; the file's one
/// is kept.
fn fill(table: &mut Table, spec: &RuleSpec) {
    let modes = cleaned(&spec.modes);
    let fields: [(&[&str], Option<Field>); 10] = [
        (&["toolName"], one_or_many(cleaned(&spec.tool_names))),
        (&["mcpName"], text(&spec.mcp_name).map(Field::Str)),
        (&["argsPattern"], text(&spec.args_pattern).map(Field::Str)),
        (
            &["commandPrefix"],
            one_or_many(cleaned(&spec.command_prefixes)),
        ),
        (&["commandRegex"], text(&spec.command_regex).map(Field::Str)),
        (
            &["allowRedirection", "allow_redirection"],
            spec.allow_redirection.then_some(Field::Bool(true)),
        ),
        (
            &["decision"],
            Some(Field::Str(spec.decision.trim().to_owned())),
        ),
        (&["priority"], Some(Field::Int(spec.priority))),
        (
            &["modes"],
            (!modes.is_empty()).then_some(Field::Strs(modes)),
        ),
        (
            &["deny_message", "denyMessage"],
            text(&spec.deny_message).map(Field::Str),
        ),
    ];
    for (keys, field) in fields {
        set(table, keys, field);
    }
}

fn set(table: &mut Table, keys: &[&str], field: Option<Field>) {
    let present = keys.iter().copied().find(|k| table.contains_key(k));
    let Some(field) = field else {
        for key in keys {
            table.remove(key);
        }
        return;
    };
    let key = present.unwrap_or(keys[0]);
    for other in keys.iter().filter(|k| **k != key) {
        table.remove(other);
    }
    let mut value = field.to_value();
    if let Some(old) = table.get(key).and_then(Item::as_value) {
        if Field::of(old).as_ref() == Some(&field) {
            return;
        }
        // A trailing comment on the key's line stays with it.
        *value.decor_mut() = old.decor().clone();
    }
    table.insert(key, Item::Value(value));
}
