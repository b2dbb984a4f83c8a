//! An extension's `settings` values: 0.61 keeps the plain ones in
//! `~/.gemini/extensions/<name>/.env` (and a trusted workspace's `.env`)
//! and the sensitive ones in the OS keyring under
//! `Gemini CLI Extensions <name> <id>`.
//!
//! Here the `.env` values are read and written (0600); sensitive values are
//! never written to a file. TODO(extensions): keyring storage for sensitive
//! values through gd-auth's secret store (until then a sensitive setting is
//! reported unset and its value is asked for nowhere).

use std::collections::HashMap;
use std::path::Path;

use crate::layout::write_private;
use crate::manifest::SettingDecl;

/// The settings file name inside an extension folder.
pub const ENV_FILE: &str = ".env";

/// Parses `KEY=value` lines (`#` comments, optional quotes), as dotenv.
pub fn parse_env(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let v = v.trim();
        let value = if let Some(inner) = v.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
            inner.replace("\\\"", "\"").replace("\\\\", "\\")
        } else {
            v.strip_prefix('\'')
                .and_then(|s| s.strip_suffix('\''))
                .unwrap_or(v)
                .to_owned()
        };
        out.insert(k.trim().to_owned(), value);
    }
    out
}

/// The values in `<dir>/.env` (empty when there is none).
pub fn read_env(dir: &Path) -> HashMap<String, String> {
    std::fs::read_to_string(dir.join(ENV_FILE))
        .map(|t| parse_env(&t))
        .unwrap_or_default()
}

/// Writes the non-sensitive values of `decls` to `<dir>/.env` (0600).
pub fn write_env(
    dir: &Path,
    decls: &[SettingDecl],
    values: &HashMap<String, String>,
) -> std::io::Result<()> {
    let mut text = String::new();
    for d in decls.iter().filter(|d| !d.sensitive) {
        if let Some(v) = values.get(&d.env_var) {
            let quoted = v.replace('\\', "\\\\").replace('"', "\\\"");
            text.push_str(&format!("{}=\"{quoted}\"\n", d.env_var));
        }
    }
    write_private(&dir.join(ENV_FILE), text.as_bytes())
}

/// The environment an extension's MCP server may see from ours: what 0.61
/// lets through its sanitization (the basic variables a program needs) and
/// the variables the extension declares as settings. Everything else
/// (tokens, keys of other tools) is kept away from third-party servers.
pub fn allowed_env_vars(decls: &[SettingDecl]) -> Vec<String> {
    const SAFE: &[&str] = &[
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "TERM",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "TMPDIR",
        "TEMP",
        "TMP",
        "PWD",
        "SYSTEMROOT",
        "COMSPEC",
        "PATHEXT",
        "WINDIR",
        "USERPROFILE",
        "APPDATA",
        "LOCALAPPDATA",
    ];
    let mut vars: Vec<String> = SAFE.iter().map(|s| (*s).to_owned()).collect();
    vars.extend(decls.iter().map(|d| d.env_var.clone()));
    vars
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_round_trips_without_sensitive_values() {
        let dir = tempfile::tempdir().unwrap();
        let decls = vec![
            SettingDecl {
                name: "A".into(),
                description: None,
                env_var: "A_VAR".into(),
                sensitive: false,
            },
            SettingDecl {
                name: "K".into(),
                description: None,
                env_var: "KEY".into(),
                sensitive: true,
            },
        ];
        let values = HashMap::from([
            ("A_VAR".to_owned(), "x \"y\"".to_owned()),
            ("KEY".to_owned(), "secret".to_owned()),
        ]);
        write_env(dir.path(), &decls, &values).unwrap();
        let text = std::fs::read_to_string(dir.path().join(ENV_FILE)).unwrap();
        assert!(!text.contains("secret"));
        assert_eq!(
            read_env(dir.path()).get("A_VAR").map(String::as_str),
            Some("x \"y\"")
        );
    }
}
