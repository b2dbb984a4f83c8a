//! Agent definition files (`.gemini/agents/*.md`), read as Gemini CLI 0.61
//! reads them: a YAML front matter with the fields below (strict: an
//! unknown field is an error, so a typo such as `max_turn` is caught
//! instead of silently ignored) and a body that is the agent's system
//! prompt. A front matter that is a YAML list declares several remote
//! agents at once (0.61's "remote agents list").
//!
//! Files whose name starts with `_` are skipped (0.61 keeps them as
//! drafts), and so is anything that is not a `.md` file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use gd_protocol::{AgentKind, DefinitionSource};
use serde::Deserialize;

use super::definition::{DEFAULT_MAX_TURNS, DEFAULT_TIMEOUT_MINS};
use super::{AgentDefinition, AgentTools, ModelChoiceForAgent};
use crate::frontmatter::{self, FrontMatterError};

/// The front matter fields of 0.61's local and remote agent schemas. Both
/// shapes are read into one struct (so serde reports the line of an
/// unknown or mistyped field) and checked against the `kind` afterwards.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Meta {
    kind: Option<String>,
    name: Option<String>,
    description: Option<String>,
    display_name: Option<String>,
    tools: Option<Vec<String>>,
    mcp_servers: Option<serde_yaml_ng::Mapping>,
    model: Option<String>,
    temperature: Option<f64>,
    max_turns: Option<i64>,
    timeout_mins: Option<i64>,
    agent_card_url: Option<String>,
    agent_card_json: Option<String>,
    /// Recognised (remote agents' A2A auth); remote agents are not run.
    #[serde(rename = "auth")]
    _auth: Option<serde_yaml_ng::Value>,
}

const LOCAL_ONLY: [&str; 6] = [
    "tools",
    "mcp_servers",
    "model",
    "temperature",
    "max_turns",
    "timeout_mins",
];
const REMOTE_ONLY: [&str; 3] = ["agent_card_url", "agent_card_json", "auth"];

/// One agent read from a file.
#[derive(Debug)]
pub struct FileAgent {
    pub definition: AgentDefinition,
}

/// What one folder held.
#[derive(Debug, Default)]
pub struct FolderAgents {
    pub agents: Vec<FileAgent>,
    pub errors: Vec<FrontMatterError>,
}

/// Reads every definition in `dir` (one `read_dir`; a missing folder is
/// empty, not an error). Files are read in name order so the listing and
/// the duplicate-name rule do not depend on the file system's order.
pub fn read_folder(dir: &Path, source: DefinitionSource) -> FolderAgents {
    let mut found = FolderAgents::default();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return found,
        Err(e) => {
            found.errors.push(FrontMatterError {
                path: dir.to_path_buf(),
                line: None,
                message: format!("could not list the folder: {e}"),
            });
            return found;
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_type()
                .is_ok_and(|t| t.is_file() || t.is_symlink())
        })
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".md") && !n.starts_with('_'))
                && path.is_file()
        })
        .collect();
    files.sort();
    for path in files {
        match std::fs::read_to_string(&path) {
            Ok(text) => match parse_file(&path, &text, source) {
                Ok(agents) => found.agents.extend(agents),
                Err(e) => {
                    tracing::warn!("agent definition skipped: {e}");
                    found.errors.push(e);
                }
            },
            Err(e) => found.errors.push(FrontMatterError {
                path: path.clone(),
                line: None,
                message: format!("could not read the file: {e}"),
            }),
        }
    }
    found
}

/// Parses one definition file's text (`path` names it in errors).
pub fn parse_file(
    path: &Path,
    text: &str,
    source: DefinitionSource,
) -> Result<Vec<FileAgent>, FrontMatterError> {
    if front_matter_is_list(text) {
        let doc = frontmatter::parse::<Vec<Meta>>(path, text)?;
        return doc
            .meta
            .into_iter()
            .map(|meta| {
                if meta.kind.as_deref().is_some_and(|k| k != "remote") {
                    return Err(error(
                        path,
                        text,
                        Some("kind"),
                        "a list of agents may only hold remote agents (`kind: remote`)",
                    ));
                }
                remote(path, text, meta, source)
            })
            .collect();
    }
    let doc = frontmatter::parse::<Meta>(path, text)?;
    let meta = doc.meta;
    let kind = match meta.kind.as_deref() {
        Some("remote") => AgentKind::Remote,
        Some("local") => AgentKind::Local,
        Some(other) => {
            return Err(error(
                path,
                text,
                Some("kind"),
                &format!("kind must be `local` or `remote`, not `{other}`"),
            ));
        }
        // 0.61 guesses the kind from the fields when it is absent.
        None if REMOTE_ONLY.iter().any(|k| has_key(text, k)) => AgentKind::Remote,
        None => AgentKind::Local,
    };
    match kind {
        AgentKind::Remote => Ok(vec![remote(path, text, meta, source)?]),
        AgentKind::Local => Ok(vec![local(path, text, doc.body, meta, source)?]),
    }
}

fn local(
    path: &Path,
    text: &str,
    body: &str,
    meta: Meta,
    source: DefinitionSource,
) -> Result<FileAgent, FrontMatterError> {
    if let Some(key) = REMOTE_ONLY.iter().find(|k| has_key(text, k)) {
        return Err(error(
            path,
            text,
            Some(key),
            &format!("`{key}` belongs to remote agents (`kind: remote`), not local ones"),
        ));
    }
    let name = checked_name(path, text, meta.name)?;
    let description = meta
        .description
        .filter(|d| !d.trim().is_empty())
        .ok_or_else(|| {
            error(
                path,
                text,
                Some("description"),
                "`description` is required: the model reads it to decide when to call the agent",
            )
        })?;
    if let Some(tools) = &meta.tools
        && let Some(bad) = tools.iter().find(|t| !valid_tool_name(t))
    {
        return Err(error(
            path,
            text,
            Some("tools"),
            &format!("tools: `{bad}` is not a valid tool name"),
        ));
    }
    let max_turns = positive(path, text, "max_turns", meta.max_turns)?.unwrap_or(DEFAULT_MAX_TURNS);
    let timeout_mins =
        positive(path, text, "timeout_mins", meta.timeout_mins)?.unwrap_or(DEFAULT_TIMEOUT_MINS);
    let model = match meta.model.as_deref().map(str::trim) {
        None | Some("") | Some("inherit") => ModelChoiceForAgent::Inherit,
        Some(model) => ModelChoiceForAgent::Named(model.to_owned()),
    };
    let mcp_servers = match meta.mcp_servers {
        Some(servers) => super::inline_mcp::parse(servers).map_err(|(server, message)| {
            let mut e = error(path, text, Some("mcp_servers"), &message);
            if let Some(line) = server.and_then(|s| server_line(text, &s)) {
                e.line = Some(line);
            }
            e
        })?,
        None => serde_json::Map::new(),
    };
    Ok(FileAgent {
        definition: AgentDefinition {
            name,
            display_name: meta.display_name,
            description,
            kind: AgentKind::Local,
            source,
            path: Some(path.to_path_buf()),
            system_prompt: body.trim().to_owned(),
            tools: meta.tools.map_or(AgentTools::Inherit, AgentTools::Listed),
            model,
            temperature: meta.temperature.map(|t| t as f32),
            max_turns,
            timeout: Duration::from_secs(u64::from(timeout_mins) * 60),
            enabled: true,
            mcp_servers,
        },
    })
}

fn remote(
    path: &Path,
    text: &str,
    meta: Meta,
    source: DefinitionSource,
) -> Result<FileAgent, FrontMatterError> {
    if let Some(key) = LOCAL_ONLY.iter().find(|k| has_key(text, k)) {
        return Err(error(
            path,
            text,
            Some(key),
            &format!("`{key}` belongs to local agents, not remote ones (`kind: remote`)"),
        ));
    }
    let name = checked_name(path, text, meta.name)?;
    match (&meta.agent_card_url, &meta.agent_card_json) {
        (Some(_), Some(_)) => {
            return Err(error(
                path,
                text,
                Some("agent_card_json"),
                "a remote agent has `agent_card_url` or `agent_card_json`, not both",
            ));
        }
        (None, None) => {
            return Err(error(
                path,
                text,
                Some("name"),
                "a remote agent needs `agent_card_url` or `agent_card_json`",
            ));
        }
        (None, Some(json)) if serde_json::from_str::<serde_json::Value>(json).is_err() => {
            return Err(error(
                path,
                text,
                Some("agent_card_json"),
                "agent_card_json must be valid JSON",
            ));
        }
        _ => {}
    }
    Ok(FileAgent {
        definition: AgentDefinition {
            name,
            display_name: meta.display_name,
            description: meta.description.unwrap_or_default(),
            kind: AgentKind::Remote,
            source,
            path: Some(path.to_path_buf()),
            system_prompt: String::new(),
            tools: AgentTools::Inherit,
            model: ModelChoiceForAgent::Inherit,
            temperature: None,
            max_turns: DEFAULT_MAX_TURNS,
            timeout: Duration::from_secs(u64::from(DEFAULT_TIMEOUT_MINS) * 60),
            // What the settings say; the catalog never runs a remote agent
            // and the listing shows it as not runnable.
            enabled: true,
            mcp_servers: serde_json::Map::new(),
        },
    })
}

/// 0.61's name rule: a slug of lowercase letters, digits, `-` and `_` (it
/// is what the model passes as `agent_name` and what `@name` matches).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

fn checked_name(path: &Path, text: &str, name: Option<String>) -> Result<String, FrontMatterError> {
    let Some(name) = name else {
        return Err(error(path, text, None, "`name` is required"));
    };
    if !valid_name(&name) {
        return Err(error(
            path,
            text,
            Some("name"),
            &format!("name `{name}` must be a slug: lowercase letters, digits, `-` and `_` only"),
        ));
    }
    Ok(name)
}

/// Gemini CLI 0.61's built-in tool names (`ALL_BUILTIN_TOOL_NAMES`), plus
/// its legacy alias `search_file_content`. A definition may name them even
/// where this app has no such tool (the agent then simply lacks it).
const KNOWN_TOOLS: &[&str] = &[
    "glob",
    "write_todos",
    "write_file",
    "google_web_search",
    "web_fetch",
    "replace",
    "run_shell_command",
    "grep_search",
    "read_many_files",
    "read_file",
    "list_directory",
    "activate_skill",
    "ask_user",
    "tracker_create_task",
    "tracker_update_task",
    "tracker_get_task",
    "tracker_list_tasks",
    "tracker_add_dependency",
    "tracker_visualize",
    "get_internal_docs",
    "enter_plan_mode",
    "exit_plan_mode",
    "update_topic",
    "complete_task",
    "invoke_agent",
    "read_mcp_resource",
    "list_mcp_resources",
    "search_file_content",
];

/// 0.61's `isValidToolName` with wildcards allowed: a built-in tool's
/// name, `discovered_tool_…`, `*`, `mcp_*`, or `mcp_<server>_<tool>` /
/// `mcp_<server>_*` with slug parts. A typo (`read_fil`) is an error, so
/// an agent does not silently lose a tool.
fn valid_tool_name(name: &str) -> bool {
    if KNOWN_TOOLS.contains(&name) || name.starts_with("discovered_tool_") || name == "*" {
        return true;
    }
    let Some(rest) = name.strip_prefix("mcp_") else {
        return false;
    };
    if rest == "*" {
        return true;
    }
    let slug = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
    };
    match rest.split_once('_') {
        Some((server, tool)) if !server.is_empty() && slug(server) => {
            tool == "*" || (!tool.chars().all(|c| c == '_') && slug(tool))
        }
        _ => false,
    }
}

fn positive(
    path: &Path,
    text: &str,
    key: &str,
    value: Option<i64>,
) -> Result<Option<u32>, FrontMatterError> {
    match value {
        None => Ok(None),
        Some(v) if v > 0 => u32::try_from(v)
            .map(Some)
            .map_err(|_| error(path, text, Some(key), &format!("`{key}` is too large"))),
        Some(v) => Err(error(
            path,
            text,
            Some(key),
            &format!("`{key}` must be a positive whole number, not {v}"),
        )),
    }
}

/// An error at the line of `key` in the front matter (or the first line
/// when the key is absent).
fn error(path: &Path, text: &str, key: Option<&str>, message: &str) -> FrontMatterError {
    FrontMatterError {
        path: path.to_path_buf(),
        line: Some(key.and_then(|k| line_of(text, k)).unwrap_or(1)),
        message: message.to_owned(),
    }
}

/// The front matter lines (after the opening `---`), numbered from 1 as
/// in the file.
fn front_matter_lines(text: &str) -> impl Iterator<Item = (u32, &str)> {
    text.lines()
        .enumerate()
        .skip(1)
        .take_while(|(_, l)| l.trim_end() != "---")
        .map(|(i, l)| (i as u32 + 1, l))
}

/// The line of `key`: a top-level one first, else a nested one (a list
/// item's).
fn line_of(text: &str, key: &str) -> Option<u32> {
    let at = |line: &str| {
        line.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    };
    front_matter_lines(text)
        .find_map(|(n, line)| at(line.strip_prefix("- ").unwrap_or(line)).then_some(n))
        .or_else(|| {
            front_matter_lines(text)
                .find_map(|(n, line)| at(line.trim_start().trim_start_matches("- ")).then_some(n))
        })
}

/// The line of server `name`'s entry under the top-level `mcp_servers:`
/// (a key at the indentation of its first entry, before the next
/// top-level key).
fn server_line(text: &str, name: &str) -> Option<u32> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut entries = front_matter_lines(text)
        .skip_while(|(_, l)| !l.starts_with("mcp_servers:"))
        .skip(1)
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .take_while(|(_, l)| indent(l) > 0)
        .peekable();
    let depth = indent(entries.peek()?.1);
    entries.find_map(|(n, line)| {
        let key = line.trim_start().trim_start_matches(['"', '\'']);
        let named = key.strip_prefix(name).is_some_and(|rest| {
            rest.trim_start_matches(['"', '\''])
                .trim_start()
                .starts_with(':')
        });
        (indent(line) == depth && named).then_some(n)
    })
}

/// Whether `key` is a top-level key (or a list item's first key), not a
/// nested one such as an MCP server's `auth`.
fn has_key(text: &str, key: &str) -> bool {
    front_matter_lines(text).any(|(_, line)| {
        let top = line.strip_prefix("- ").unwrap_or(line);
        top.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    })
}

/// Whether the front matter is a YAML sequence (its first meaningful line
/// starts with `-`).
fn front_matter_is_list(text: &str) -> bool {
    front_matter_lines(text)
        .map(|(_, l)| l.trim())
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l == "-" || l.starts_with("- "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<FileAgent>, FrontMatterError> {
        parse_file(Path::new("/a/b.md"), text, DefinitionSource::User)
    }

    #[test]
    fn a_broken_server_is_reported_at_its_own_entry() {
        // `command` is both x's field and a server's name: the server wins.
        let text = "---\nname: a\ndescription: d\nmcp_servers:\n  x:\n    command: ok\n\n  \"command\":\n    args: 3\nmodel: m\n---\n";
        let error = parse(text).unwrap_err();
        assert_eq!(error.line, Some(8), "{error}");
        assert!(error.message.contains("mcp_servers.command"), "{error}");
        assert_eq!(server_line(text, "model"), None, "not a server");
    }

    #[test]
    fn tool_names_as_0_61_checks_them() {
        for ok in [
            "read_file",
            "*",
            "mcp_*",
            "mcp_github_*",
            "mcp_github_list_issues",
            "discovered_tool_x",
        ] {
            assert!(valid_tool_name(ok), "{ok}");
        }
        for bad in [
            "read_fil",
            "mcp_",
            "mcp__x",
            "mcp_github",
            "mcp_github___",
            "mcp_git hub_x",
        ] {
            assert!(!valid_tool_name(bad), "{bad}");
        }
    }

    #[test]
    fn names_are_slugs() {
        assert!(valid_name("code-review_2"));
        assert!(!valid_name("Code"));
        assert!(!valid_name("a b"));
        assert!(!valid_name(""));
    }

    #[test]
    fn validation_errors_point_at_the_key() {
        let e = parse("---\nname: ok\ndescription: d\nmax_turns: 0\n---\n").unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        let e = parse("---\ndescription: d\nname: Bad Name\n---\n").unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        let e = parse("---\nname: x\n---\nbody").unwrap_err();
        assert!(e.message.contains("description"), "{e}");
        let e = parse("---\nname: x\ndescription: d\nmax_turn: 3\n---\n").unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.message.contains("max_turn"), "{e}");
    }

    #[test]
    fn kind_is_guessed_and_mixed_fields_refused() {
        let agents = parse("---\nname: r\nagent_card_url: https://x/card\n---\n").unwrap();
        assert_eq!(agents[0].definition.kind, AgentKind::Remote);
        let e =
            parse("---\nname: r\nkind: remote\nagent_card_url: u\nmodel: m\n---\n").unwrap_err();
        assert_eq!(e.line, Some(5), "{e}");
        let list = parse(
            "---\n- name: a\n  agent_card_url: https://a\n- name: b\n  agent_card_json: '{}'\n---\n",
        )
        .unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[1].definition.name, "b");
        let e = parse("---\nname: r\nagent_card_json: '{nope'\n---\n").unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
    }
}
