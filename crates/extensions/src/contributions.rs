//! What one extension adds to a session, read from its folder: MCP
//! servers, context files, excluded tools, `commands/**/*.toml`,
//! `policies/*.toml`, `skills/*/SKILL.md`, `agents/*.md`,
//! `hooks/hooks.json`, settings, themes and the plan folder.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::manifest::{Manifest, Variables};

/// One custom command file: `commands/gcs/sync.toml` is `gcs:sync`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandFile {
    pub name: String,
    pub path: PathBuf,
}

/// Everything an extension contributes, typed for the session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Contributions {
    /// Server name → definition (variables substituted, `trust` removed).
    pub mcp_servers: serde_json::Map<String, Value>,
    /// Context files that exist, absolute; each lies in the extension's
    /// folder once links are followed.
    pub context_files: Vec<PathBuf>,
    /// Context files that are links leading outside the extension's folder:
    /// never read (one could be `~/.ssh/id_rsa`), kept so the session can
    /// say which were skipped.
    pub refused_context_files: Vec<PathBuf>,
    pub exclude_tools: Vec<String>,
    pub commands: Vec<CommandFile>,
    /// `policies/` when it exists.
    pub policies_dir: Option<PathBuf>,
    /// `skills/` when it exists.
    pub skills_dir: Option<PathBuf>,
    /// Names of the skills found there (`skills/<name>/SKILL.md`).
    pub skills: Vec<String>,
    /// `agents/` when it exists.
    pub agents_dir: Option<PathBuf>,
    pub agents: Vec<String>,
    /// `hooks/hooks.json` and its `hooks` object, variables substituted.
    pub hooks: Option<(PathBuf, Value)>,
    pub themes: Vec<String>,
    pub plan_directory: Option<String>,
    /// Parts skipped, in words (a bad context file name, a bad hooks file).
    pub notes: Vec<String>,
}

/// 0.61's checks on a `contextFileName`: relative, no `..`, inside the
/// extension.
pub(crate) fn context_file(dir: &Path, name: &str) -> Result<PathBuf, String> {
    if name.trim().is_empty() {
        return Err("expected a non-empty string.".into());
    }
    if name.contains('\0') {
        return Err("null bytes are not allowed.".into());
    }
    if Path::new(name).is_absolute() || name.starts_with('\\') || name.get(1..2) == Some(":") {
        return Err("Absolute paths are not allowed.".into());
    }
    if name.contains("..") || name.contains("%2e%2e") || name.contains("%2E%2E") {
        return Err("Relative parent directory references (\"..\") are not allowed.".into());
    }
    Ok(dir.join(name))
}

/// Whether `path` lies in the extension folder `dir` once every link is
/// followed (the name checks of [`context_file`] cannot see a link).
pub fn inside(dir: &Path, path: &Path) -> Result<(), String> {
    let real = path
        .canonicalize()
        .map_err(|e| format!("{} cannot be resolved ({e})", path.display()))?;
    let root = dir
        .canonicalize()
        .map_err(|e| format!("{} cannot be resolved ({e})", dir.display()))?;
    if real.starts_with(&root) {
        Ok(())
    } else {
        Err(format!(
            "it leads to {}, outside the extension's folder",
            real.display()
        ))
    }
}

/// Reads what the extension in `dir` (its effective folder) contributes.
pub fn read(dir: &Path, manifest: &Manifest, vars: &Variables) -> Contributions {
    let mut c = Contributions {
        mcp_servers: manifest.servers_for_session(),
        exclude_tools: manifest.exclude_tools.clone().unwrap_or_default(),
        plan_directory: manifest.safe_plan_directory().map(str::to_owned),
        ..Default::default()
    };
    if manifest.plan_directory.is_some() && c.plan_directory.is_none() {
        c.notes.push(format!(
            "plan.directory \"{}\" ignored: absolute paths and \"..\" are not allowed",
            manifest.plan_directory.as_deref().unwrap_or_default()
        ));
    }
    let names = manifest
        .context_file_name
        .clone()
        .unwrap_or_else(|| vec!["GEMINI.md".into()]);
    for name in names {
        match context_file(dir, &name) {
            Ok(path) if path.is_file() => match inside(dir, &path) {
                Ok(()) => c.context_files.push(path),
                Err(why) => {
                    c.notes
                        .push(format!("contextFileName \"{name}\" ignored: {why}"));
                    c.refused_context_files.push(path);
                }
            },
            Ok(_) => {}
            Err(why) => c
                .notes
                .push(format!("contextFileName \"{name}\" ignored: {why}")),
        }
    }
    let commands = dir.join("commands");
    collect_commands(&commands, &commands, &mut c.commands);
    c.commands.sort_by(|a, b| a.name.cmp(&b.name));
    let policies = dir.join("policies");
    if policies.is_dir() {
        c.policies_dir = Some(policies);
    }
    let skills = dir.join("skills");
    if skills.is_dir() {
        c.skills = subdirs_with(&skills, "SKILL.md");
        c.skills_dir = Some(skills);
    }
    let agents = dir.join("agents");
    if agents.is_dir() {
        c.agents = files_with_ext(&agents, "md");
        c.agents_dir = Some(agents);
    }
    match read_hooks(dir, vars) {
        Ok(hooks) => c.hooks = hooks,
        Err(note) => c.notes.push(note),
    }
    c.themes = manifest
        .themes
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .map(|n| format!("{n} ({})", manifest.name))
        .collect();
    c
}

/// `hooks/hooks.json`: 0.61 takes its top-level `hooks` object (a file
/// without one is refused with a note).
pub fn read_hooks(dir: &Path, vars: &Variables) -> Result<Option<(PathBuf, Value)>, String> {
    let path = dir.join("hooks").join("hooks.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: cannot read it: {e}", path.display())),
    };
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{}:{}: invalid JSON: {e}", path.display(), e.line()))?;
    match value.get("hooks") {
        Some(Value::Object(_)) => {
            let hooks = vars.substitute_value(&value["hooks"]);
            Ok(Some((path, hooks)))
        }
        _ => Err(format!(
            "{}: \"hooks\" property must be an object",
            path.display()
        )),
    }
}

fn collect_commands(root: &Path, dir: &Path, out: &mut Vec<CommandFile>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_commands(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "toml") {
            let Ok(rel) = path
                .with_extension("")
                .strip_prefix(root)
                .map(Path::to_path_buf)
            else {
                continue;
            };
            let name = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(":");
            out.push(CommandFile { name, path });
        }
    }
}

fn subdirs_with(dir: &Path, file: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join(file).is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn files_with_ext(dir: &Path, ext: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == ext))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    names.sort();
    names
}

/// One line per policy rule (`ask_user run_shell_command priority 100`),
/// for the panel and the consent screen; `allow` rules are marked ignored
/// (0.61 drops them at the extension tier).
pub fn policy_lines(dir: &Path) -> Vec<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut lines = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(doc) = text.parse::<toml::Table>() else {
            lines.push(format!("{}: unreadable", file.display()));
            continue;
        };
        for rule in doc
            .get("rule")
            .and_then(|r| r.as_array())
            .into_iter()
            .flatten()
        {
            let decision = rule.get("decision").and_then(|d| d.as_str()).unwrap_or("?");
            let tool = match rule.get("toolName") {
                Some(toml::Value::String(s)) => s.clone(),
                Some(toml::Value::Array(a)) => a
                    .iter()
                    .filter_map(|v| v.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
                _ => "*".into(),
            };
            let mut line = format!("{decision} {tool}");
            if let Some(p) = rule.get("priority").and_then(|p| p.as_integer()) {
                line.push_str(&format!(" priority {p}"));
            }
            if decision == "allow" {
                line.push_str(" (ignored: extensions cannot allow)");
            }
            lines.push(line);
        }
    }
    lines
}

/// One line per hook: `BeforeTool write_file: <command>`.
pub fn hook_lines(hooks: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    let Some(events) = hooks.as_object() else {
        return lines;
    };
    for (event, defs) in events {
        for def in defs.as_array().into_iter().flatten() {
            let matcher = def.get("matcher").and_then(Value::as_str).unwrap_or("");
            for hook in def
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let command = hook.get("command").and_then(Value::as_str).unwrap_or("");
                let head = if matcher.is_empty() {
                    event.clone()
                } else {
                    format!("{event} {matcher}")
                };
                lines.push(format!("{head}: {command}"));
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn a_context_file_linked_outside_the_folder_is_refused_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let ext = dir.path().join("ext");
        std::fs::create_dir_all(ext.join("docs")).unwrap();
        std::fs::write(dir.path().join("id_rsa"), "secret").unwrap();
        std::fs::write(ext.join("docs/inside.md"), "inside").unwrap();
        std::fs::write(
            ext.join("gemini-extension.json"),
            r#"{"name": "x", "version": "1.0.0", "contextFileName": ["GEMINI.md", "OK.md"]}"#,
        )
        .unwrap();
        symlink("../id_rsa", ext.join("GEMINI.md")).unwrap();
        symlink("docs/inside.md", ext.join("OK.md")).unwrap();
        let vars = Variables::new(&ext, dir.path());
        let manifest = crate::manifest::read(&ext, &vars).unwrap();
        let c = read(&ext, &manifest, &vars);
        assert_eq!(c.context_files, [ext.join("OK.md")]);
        assert_eq!(c.refused_context_files, [ext.join("GEMINI.md")]);
        let real = dir.path().join("id_rsa").canonicalize().unwrap();
        assert_eq!(
            c.notes,
            [format!(
                "contextFileName \"GEMINI.md\" ignored: it leads to {}, outside the extension's folder",
                real.display()
            )]
        );
    }
}
