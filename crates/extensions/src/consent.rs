//! The consent text shown before an extension is installed, as 0.61's
//! `extensionConsentString`: the servers it will run (command line,
//! working directory, environment with secrets masked, a config
//! signature), the context it appends, the tools it excludes, hooks, and
//! the third-party warning; beyond 0.61, its symbolic links (an extension
//! with one leading outside its folder is refused before this is shown, so
//! the user sees that each stays inside).

use serde_json::Value;

use crate::Manifest;
use crate::sha256_hex;

/// 0.61's warning, shown with every install.
pub const INSTALL_WARNING: &str = "The extension you are about to install may have been created by a third-party developer and sourced from a public repository. Google does not vet, endorse, or guarantee the functionality or security of extensions. Please carefully inspect any extension and its source code before installing to understand the permissions it requires and the actions it may perform.";

/// The question asked on a terminal.
pub const QUESTION: &str = "Do you want to continue? [Y/n]: ";

/// What a server definition runs: its URL, or its command line.
pub fn launches(def: &Value) -> String {
    if let Some(url) = def.get("httpUrl").and_then(Value::as_str) {
        return url.to_owned();
    }
    let command = def.get("command").and_then(Value::as_str).unwrap_or("");
    let args: Vec<String> = def
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(js_string).collect())
        .unwrap_or_default();
    if command.is_empty()
        && args.is_empty()
        && let Some(url) = def.get("url").and_then(Value::as_str)
    {
        return url.to_owned();
    }
    if def.get("args").is_some() {
        format!("{command} {}", args.join(" "))
    } else {
        command.to_owned()
    }
}

fn js_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// sha256 of the definition with its keys sorted (0.61's "Config
/// signature").
pub fn signature(def: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let mut copy = def.clone();
    if let Some(o) = copy.as_object_mut() {
        o.remove("extension");
    }
    sha256_hex(&serde_json::to_string(&sorted(&copy)).unwrap_or_default())
}

fn masked(key: &str, value: &str, pattern: &str) -> String {
    let re = regex::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .build();
    if !value.is_empty() && re.is_ok_and(|r| r.is_match(key)) {
        "********".into()
    } else {
        value.to_owned()
    }
}

/// The consent text for installing `manifest` (read from the staged copy),
/// with its symbolic links as `path -> target` lines.
pub fn text(manifest: &Manifest, has_hooks: bool, skills: &[String], links: &[String]) -> String {
    let mut out = vec![format!("Installing extension \"{}\".", manifest.name)];
    if !manifest.mcp_servers.is_empty() {
        out.push("This extension will run the following MCP servers:".into());
        for (name, def) in &manifest.mcp_servers {
            let local = def
                .get("command")
                .and_then(Value::as_str)
                .is_some_and(|c| !c.is_empty());
            out.push(format!(
                "  * {name} ({}): {}",
                if local { "local" } else { "remote" },
                launches(def)
            ));
            if let Some(cwd) = def.get("cwd").and_then(Value::as_str) {
                out.push(format!("    Working directory: {cwd}"));
            }
            for (key, title, pattern) in [
                (
                    "env",
                    "Environment variables:",
                    "token|secret|password|passwd|key|auth|credential|creds|private|cert",
                ),
                (
                    "headers",
                    "Headers:",
                    "authorization|key|cookie|token|secret",
                ),
            ] {
                if let Some(map) = def
                    .get(key)
                    .and_then(Value::as_object)
                    .filter(|m| !m.is_empty())
                {
                    out.push(format!("    {title}"));
                    let mut entries: Vec<_> = map.iter().collect();
                    entries.sort_by(|a, b| a.0.cmp(b.0));
                    for (k, v) in entries {
                        out.push(format!(
                            "      - {k}: {}",
                            masked(k, &js_string(v), pattern)
                        ));
                    }
                }
            }
            for (key, label) in [
                ("url", "URL"),
                ("tcp", "TCP"),
                ("type", "Type"),
                ("timeout", "Timeout"),
                ("trust", "Trust"),
                ("description", "Description"),
            ] {
                if let Some(v) = def.get(key).filter(|v| !v.is_null()) {
                    out.push(format!("    {label}: {}", js_string(v)));
                }
            }
            for (key, label) in [
                ("includeTools", "Include tools"),
                ("excludeTools", "Exclude tools"),
            ] {
                if let Some(a) = def
                    .get(key)
                    .and_then(Value::as_array)
                    .filter(|a| !a.is_empty())
                {
                    let items: Vec<String> = a.iter().map(js_string).collect();
                    out.push(format!("    {label}: {}", items.join(", ")));
                }
            }
            out.push(format!("    Config signature: {}", signature(def)));
        }
    }
    if let Some(names) = manifest.raw.get("contextFileName").filter(|v| !v.is_null()) {
        let shown = match names {
            Value::Array(a) => a.iter().map(js_string).collect::<Vec<_>>().join(","),
            other => js_string(other),
        };
        out.push(format!(
            "This extension will append info to your gemini.md context using {shown}"
        ));
    }
    if let Some(tools) = &manifest.exclude_tools {
        out.push(format!(
            "This extension will exclude the following core tools: {}",
            tools.join(",")
        ));
    }
    if has_hooks {
        out.push("\u{26a0}\u{fe0f}  This extension contains Hooks which can automatically execute commands.".into());
    }
    if !skills.is_empty() {
        out.push("\nAgent Skills:".into());
        out.push("\nThis extension will install the following agent skills:\n".into());
        for s in skills {
            out.push(format!("  * {s}"));
        }
    }
    if !links.is_empty() {
        out.push("This extension contains symbolic links, each to a file of its own (links that lead outside an extension are refused):".into());
        for link in links {
            out.push(format!("  * {link}"));
        }
    }
    out.push(format!("\n{INSTALL_WARNING}"));
    out.join("\n")
}
