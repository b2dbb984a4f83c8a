//! `gemini-extension.json`: read leniently like Gemini CLI 0.61 (unknown keys
//! are kept, not refused), with its variables (`${extensionPath}`,
//! `${workspacePath}`, `${/}`, `${pathSeparator}`) substituted in every string.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// The manifest's file name inside an extension folder.
pub const MANIFEST_FILE: &str = "gemini-extension.json";

/// A manifest that could not be used; shown as `path:line: message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ManifestError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

/// One `settings` entry: a value the user gives at install time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingDecl {
    pub name: String,
    pub description: Option<String>,
    pub env_var: String,
    pub sensitive: bool,
}

/// A parsed manifest, variables substituted.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    pub description: Option<String>,
    /// Server name → its JSON definition, in the manifest's order (`trust`
    /// is kept here for the consent text; [`Manifest::servers_for_session`]
    /// strips it).
    pub mcp_servers: Map<String, Value>,
    /// `contextFileName` (a string or a list); `None` means `GEMINI.md`.
    pub context_file_name: Option<Vec<String>>,
    pub exclude_tools: Option<Vec<String>>,
    pub settings: Vec<SettingDecl>,
    pub themes: Vec<Value>,
    pub plan_directory: Option<String>,
    pub migrated_to: Option<String>,
    /// The whole object, substituted (for the consent signature and for
    /// keys we do not model).
    pub raw: Value,
}

/// The values `${…}` can name.
#[derive(Debug, Clone, Default)]
pub struct Variables(HashMap<String, String>);

impl Variables {
    /// `extensionPath`, `workspacePath`, `/` and `pathSeparator`.
    pub fn new(extension_path: &Path, workspace: &Path) -> Self {
        let sep = std::path::MAIN_SEPARATOR.to_string();
        let mut map = HashMap::new();
        map.insert(
            "extensionPath".into(),
            extension_path.to_string_lossy().into_owned(),
        );
        map.insert(
            "workspacePath".into(),
            workspace.to_string_lossy().into_owned(),
        );
        map.insert("/".into(), sep.clone());
        map.insert("pathSeparator".into(), sep);
        Variables(map)
    }

    /// Adds the extension's settings values (its `.env`), as 0.61 does for
    /// everything but the manifest's own variables.
    pub fn with(mut self, extra: &HashMap<String, String>) -> Self {
        for (k, v) in extra {
            self.0.entry(k.clone()).or_insert_with(|| v.clone());
        }
        self
    }

    /// `${name}` replaced where `name` is known; unknown ones are left as
    /// written (0.61 leaves them too).
    pub fn substitute(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            match after.find('}') {
                Some(end) => {
                    let key = &after[..end];
                    match self.0.get(key) {
                        Some(v) => out.push_str(v),
                        None => out.push_str(&rest[start..start + 2 + end + 1]),
                    }
                    rest = &after[end + 1..];
                }
                None => {
                    out.push_str(&rest[start..]);
                    rest = "";
                }
            }
        }
        out.push_str(rest);
        out
    }

    /// Substitutes every string inside `value` (keys stay as written).
    pub fn substitute_value(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.substitute(s)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.substitute_value(v)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, _)| {
                        !matches!(k.as_str(), "__proto__" | "constructor" | "prototype")
                    })
                    .map(|(k, v)| (k.clone(), self.substitute_value(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// 0.61's rule for extension names: letters, digits and dashes.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// Reads `<dir>/gemini-extension.json`, substituting variables with `dir`
/// as `${extensionPath}`.
pub fn read(dir: &Path, vars: &Variables) -> Result<Manifest, ManifestError> {
    let path = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| ManifestError {
        path: path.clone(),
        line: None,
        message: if e.kind() == std::io::ErrorKind::NotFound {
            "configuration file not found".into()
        } else {
            format!("cannot read it: {e}")
        },
    })?;
    parse(&path, &text, vars)
}

/// Parses a manifest's text; `path` is only for messages.
pub fn parse(path: &Path, text: &str, vars: &Variables) -> Result<Manifest, ManifestError> {
    let err = |line: Option<usize>, message: String| ManifestError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let raw: Value = serde_json::from_str(text)
        .map_err(|e| err(Some(e.line()), format!("invalid JSON: {e}")))?;
    let Value::Object(_) = raw else {
        return Err(err(None, "expected a JSON object".into()));
    };
    let raw = vars.substitute_value(&raw);
    let obj = raw.as_object().expect("still an object");
    let string = |key: &str| obj.get(key).and_then(Value::as_str).map(str::to_owned);
    let name = string("name").filter(|s| !s.is_empty());
    let version = string("version").filter(|s| !s.is_empty());
    let Some(name) = name else {
        return Err(err(None, "invalid configuration: missing \"name\"".into()));
    };
    let Some(version) = version else {
        return Err(err(
            None,
            "invalid configuration: missing \"version\"".into(),
        ));
    };
    if !valid_name(&name) {
        return Err(err(
            None,
            format!(
                "invalid extension name: \"{name}\". Only letters (a-z, A-Z), numbers (0-9), and dashes (-) are allowed."
            ),
        ));
    }
    let mcp_servers = match obj.get("mcpServers") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m
            .iter()
            .filter(|(_, v)| v.is_object())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        Some(_) => return Err(err(None, "\"mcpServers\" must be an object".into())),
    };
    let string_list = |key: &str| -> Result<Option<Vec<String>>, ManifestError> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(vec![s.clone()])),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| err(None, format!("\"{key}\" must hold strings")))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(err(
                None,
                format!("\"{key}\" must be a string or a list of strings"),
            )),
        }
    };
    let context_file_name = string_list("contextFileName")?;
    let exclude_tools = string_list("excludeTools")?;
    let settings = match obj.get("settings") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|s| {
                let o = s.as_object()?;
                Some(SettingDecl {
                    name: o.get("name")?.as_str()?.to_owned(),
                    description: o
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    env_var: o.get("envVar")?.as_str()?.to_owned(),
                    sensitive: o.get("sensitive").and_then(Value::as_bool).unwrap_or(false),
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    let themes = match obj.get("themes") {
        Some(Value::Array(items)) => items.clone(),
        _ => Vec::new(),
    };
    let plan_directory = obj
        .get("plan")
        .and_then(|p| p.get("directory"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(Manifest {
        description: string("description"),
        migrated_to: string("migratedTo"),
        name,
        version,
        mcp_servers,
        context_file_name,
        exclude_tools,
        settings,
        themes,
        plan_directory,
        raw,
    })
}

impl Manifest {
    /// The servers as a session starts them: `trust` removed (an extension
    /// cannot make its own server trusted, as 0.61's `filterMcpConfig`).
    pub fn servers_for_session(&self) -> Map<String, Value> {
        self.mcp_servers
            .iter()
            .map(|(k, v)| {
                let mut v = v.clone();
                if let Some(o) = v.as_object_mut() {
                    o.remove("trust");
                }
                (k.clone(), v)
            })
            .collect()
    }

    /// `plan.directory` when it stays inside the workspace (0.61 drops an
    /// absolute one or one with `..`).
    pub fn safe_plan_directory(&self) -> Option<&str> {
        self.plan_directory
            .as_deref()
            .filter(|d| !d.contains("..") && !Path::new(d).is_absolute() && !d.starts_with('\\'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_substituted_and_unknown_ones_kept() {
        let vars = Variables::new(Path::new("/x/ext"), Path::new("/w"));
        assert_eq!(
            vars.substitute("${extensionPath}${/}a ${workspacePath} ${nope} ${"),
            format!("/x/ext{}a /w ${{nope}} ${{", std::path::MAIN_SEPARATOR)
        );
    }

    #[test]
    fn broken_json_names_the_line() {
        let vars = Variables::default();
        let e = parse(
            Path::new("/e/gemini-extension.json"),
            "{\n \"name\": \"a\",\n oops\n}",
            &vars,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(
            e.to_string()
                .starts_with("/e/gemini-extension.json:3: invalid JSON"),
            "{e}"
        );
    }

    #[test]
    fn name_and_version_are_required_and_names_checked() {
        let vars = Variables::default();
        let p = Path::new("m.json");
        assert!(
            parse(p, r#"{"version":"1"}"#, &vars)
                .unwrap_err()
                .message
                .contains("\"name\"")
        );
        assert!(
            parse(p, r#"{"name":"a"}"#, &vars)
                .unwrap_err()
                .message
                .contains("\"version\"")
        );
        assert!(
            parse(p, r#"{"name":"a b","version":"1"}"#, &vars)
                .unwrap_err()
                .message
                .contains("Invalid extension name".to_lowercase().as_str())
        );
    }

    #[test]
    fn trust_is_stripped_for_the_session() {
        let vars = Variables::default();
        let m = parse(
            Path::new("m.json"),
            r#"{"name":"a","version":"1","unknown":1,"mcpServers":{"s":{"command":"x","trust":true}}}"#,
            &vars,
        )
        .unwrap();
        assert_eq!(m.mcp_servers["s"]["trust"], true);
        assert!(m.servers_for_session()["s"].get("trust").is_none());
    }
}
