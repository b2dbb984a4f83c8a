//! An extension's `settings` values, kept where Gemini CLI 0.61 keeps them
//! so both programs share them:
//!
//! * plain values in `~/.gemini/extensions/<name>/.env` (user scope, 0600)
//!   or the workspace's `.env` (workspace scope);
//! * sensitive values in the OS keyring through gd-auth's secret store
//!   (keyring, else its 0600 file): service
//!   `Gemini CLI Extensions <name> <id>` (plus ` <workspace>` for the
//!   workspace scope), account `__secret__<ENV_VAR>`. They are never
//!   written to a `.env`.
//!
//! [`values`] is what an extension's MCP servers receive (see gd-mcp's
//! `ExtensionEnv`): the declared settings only, workspace over user.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gd_auth::SecretStore;
use gd_http::SecretString;

use crate::layout::write_private;
use crate::manifest::SettingDecl;

/// The settings file name inside an extension folder.
pub const ENV_FILE: &str = ".env";

/// 0.61's prefix of a secret's keyring account (`SECRET_PREFIX`).
pub const SECRET_PREFIX: &str = "__secret__";

/// Where a value is kept (0.61's `ExtensionSettingScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    /// For every workspace: the extension's own `.env` and keyring entry.
    User,
    /// For one workspace folder: its `.env` and a keyring entry naming it.
    Workspace(&'a Path),
}

/// A value that could not be read, stored or removed.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{0}")]
    Invalid(String),
    #[error("the secret store: {0}")]
    Store(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// 0.61's `getKeychainStorageName`.
pub fn keychain_service(name: &str, id: &str, scope: Scope<'_>) -> String {
    let base = format!("Gemini CLI Extensions {name} {id}");
    match scope {
        Scope::User => base,
        Scope::Workspace(dir) => format!("{base} {}", dir.display()),
    }
}

/// The keyring account of a sensitive setting.
pub fn secret_account(env_var: &str) -> String {
    format!("{SECRET_PREFIX}{env_var}")
}

/// The `.env` a scope's plain values live in (`ext_dir` is the folder
/// under `~/.gemini/extensions`, also for a link).
pub fn env_path(ext_dir: &Path, scope: Scope<'_>) -> PathBuf {
    match scope {
        Scope::User => ext_dir.join(ENV_FILE),
        Scope::Workspace(dir) => dir.join(ENV_FILE),
    }
}

/// Who an extension is, for its stored values.
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    /// Its folder under `~/.gemini/extensions`.
    pub dir: &'a Path,
    pub name: &'a str,
    /// 0.61's extension id ([`crate::extension_id`]).
    pub id: &'a str,
    pub decls: &'a [SettingDecl],
}

impl<'a> Owner<'a> {
    pub fn of(ext: &'a crate::Extension, id: &'a str) -> Self {
        Self {
            dir: &ext.dir,
            name: &ext.manifest.name,
            id,
            decls: &ext.manifest.settings,
        }
    }
}

/// The declared settings' values of one scope: the `.env`'s plain ones and
/// the store's sensitive ones. A store that cannot be read is logged and
/// its values are missing (the server then starts without them and the
/// panel shows them unset).
pub fn scoped_values(
    owner: &Owner<'_>,
    scope: Scope<'_>,
    store: Option<&dyn SecretStore>,
) -> HashMap<String, String> {
    let env = read_env_file(&env_path(owner.dir, scope));
    let service = keychain_service(owner.name, owner.id, scope);
    let mut out = HashMap::new();
    for d in owner.decls {
        if d.sensitive {
            let Some(store) = store else { continue };
            match store.get_entry(&service, &secret_account(&d.env_var)) {
                Ok(Some(v)) => {
                    out.insert(d.env_var.clone(), v.expose().to_owned());
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(
                    extension = owner.name,
                    setting = d.env_var,
                    "cannot read a sensitive setting: {e}"
                ),
            }
        } else if let Some(v) = env.get(&d.env_var) {
            out.insert(d.env_var.clone(), v.clone());
        }
    }
    out
}

/// 0.61's `getEnvContents`: the user scope, then (for a trusted
/// `workspace`) the workspace scope over it.
pub fn values(
    owner: &Owner<'_>,
    store: Option<&dyn SecretStore>,
    workspace: Option<&Path>,
) -> HashMap<String, String> {
    let mut out = scoped_values(owner, Scope::User, store);
    if let Some(ws) = workspace {
        out.extend(scoped_values(owner, Scope::Workspace(ws), store));
    }
    out
}

fn check_name(env_var: &str) -> Result<(), SettingsError> {
    let mut chars = env_var.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(SettingsError::Invalid(format!(
            "Invalid environment variable name: \"{env_var}\". Must contain only alphanumeric characters and underscores."
        )))
    }
}

fn check_plain_value(env_var: &str, value: &str) -> Result<(), SettingsError> {
    if value.contains(['\n', '\r']) {
        return Err(SettingsError::Invalid(format!(
            "Invalid environment variable value for \"{env_var}\". Values cannot contain newlines."
        )));
    }
    Ok(())
}

fn store_error(e: impl ToString) -> SettingsError {
    SettingsError::Store(e.to_string())
}

/// Stores the values given at install (0.61's `maybePromptForSettings`
/// for a new extension, user scope): sensitive ones in the store, the
/// others in the extension's `.env`. Empty and undeclared values are
/// skipped. Nothing sensitive is kept when there is no store: that is an
/// error, not a file.
pub fn save_install_values(
    owner: &Owner<'_>,
    given: &HashMap<String, String>,
    store: Option<&dyn SecretStore>,
) -> Result<(), SettingsError> {
    let service = keychain_service(owner.name, owner.id, Scope::User);
    for d in owner.decls {
        check_name(&d.env_var)?;
        let Some(v) = given.get(&d.env_var).filter(|v| !v.is_empty()) else {
            continue;
        };
        if d.sensitive {
            let store = store.ok_or_else(|| {
                SettingsError::Store(format!("no secret store to keep {} in", d.name))
            })?;
            store
                .set_entry(&service, &secret_account(&d.env_var), &SecretString::new(v))
                .map_err(store_error)?;
        } else {
            check_plain_value(&d.env_var, v)?;
        }
    }
    write_env(owner.dir, owner.decls, given).map_err(|source| SettingsError::Io {
        path: owner.dir.join(ENV_FILE),
        source,
    })
}

/// Finds a declared setting by name or env var (0.61's `updateSetting`).
pub fn find<'d>(decls: &'d [SettingDecl], key: &str) -> Option<&'d SettingDecl> {
    decls.iter().find(|d| d.name == key || d.env_var == key)
}

/// Sets one setting in a scope; an empty value removes it (0.61's
/// `updateSetting`). A plain value updates its line of the `.env` and
/// keeps every other line (a workspace `.env` is the project's own file).
pub fn set_value(
    owner: &Owner<'_>,
    decl: &SettingDecl,
    value: &str,
    scope: Scope<'_>,
    store: Option<&dyn SecretStore>,
) -> Result<(), SettingsError> {
    check_name(&decl.env_var)?;
    if decl.sensitive {
        let store = store.ok_or_else(|| {
            SettingsError::Store(format!("no secret store to keep {} in", decl.name))
        })?;
        let service = keychain_service(owner.name, owner.id, scope);
        let account = secret_account(&decl.env_var);
        return if value.is_empty() {
            store.delete_entry(&service, &account).map_err(store_error)
        } else {
            store
                .set_entry(&service, &account, &SecretString::new(value))
                .map_err(store_error)
        };
    }
    check_plain_value(&decl.env_var, value)?;
    let path = env_path(owner.dir, scope);
    if path.is_dir() {
        return Err(SettingsError::Invalid(format!(
            "Cannot write extension settings to {} because it is a directory.",
            path.display()
        )));
    }
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(SettingsError::Io { path, source }),
    };
    let updated = replace_line(&text, &decl.env_var, (!value.is_empty()).then_some(value));
    write_private(&path, updated.as_bytes()).map_err(|source| SettingsError::Io { path, source })
}

/// `text` with `key`'s line replaced by `key=value` (appended when absent),
/// or removed for `None`; other lines as they were.
fn replace_line(text: &str, key: &str, value: Option<&str>) -> String {
    let mut out = String::new();
    let mut done = false;
    for line in text.lines() {
        let t = line.trim_start();
        let t = t.strip_prefix("export ").unwrap_or(t);
        let is_key = t
            .split_once('=')
            .is_some_and(|(k, _)| k.trim() == key && !t.starts_with('#'));
        if is_key {
            if let (Some(v), false) = (value, done) {
                out.push_str(&env_line(key, v));
                done = true;
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if let (Some(v), false) = (value, done) {
        out.push_str(&env_line(key, v));
    }
    out
}

fn env_line(key: &str, value: &str) -> String {
    let quoted = value.replace('\\', "\\\\").replace('"', "\\\"");
    format!("{key}=\"{quoted}\"\n")
}

/// Removes an extension's sensitive values from the store: the user
/// scope's and those of `workspaces` (uninstall; 0.61 leaves them behind,
/// we do not keep secrets nobody uses).
pub fn clear_secrets(
    owner: &Owner<'_>,
    store: &dyn SecretStore,
    workspaces: &[&Path],
) -> Result<(), SettingsError> {
    let mut scopes = vec![Scope::User];
    scopes.extend(workspaces.iter().map(|w| Scope::Workspace(w)));
    for scope in scopes {
        let service = keychain_service(owner.name, owner.id, scope);
        for d in owner.decls.iter().filter(|d| d.sensitive) {
            store
                .delete_entry(&service, &secret_account(&d.env_var))
                .map_err(store_error)?;
        }
    }
    Ok(())
}

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
    read_env_file(&dir.join(ENV_FILE))
}

fn read_env_file(path: &Path) -> HashMap<String, String> {
    std::fs::read_to_string(path)
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
        if let Some(v) = values.get(&d.env_var).filter(|v| !v.is_empty()) {
            text.push_str(&env_line(&d.env_var, v));
        }
    }
    write_private(&dir.join(ENV_FILE), text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gd_auth::secret_store::MemoryStore;

    fn decls() -> Vec<SettingDecl> {
        vec![
            SettingDecl {
                name: "Region".into(),
                description: None,
                env_var: "REGION".into(),
                sensitive: false,
            },
            SettingDecl {
                name: "Token".into(),
                description: Some("The API token".into()),
                env_var: "API_TOKEN".into(),
                sensitive: true,
            },
        ]
    }

    #[test]
    fn keyring_names_are_0_61s() {
        assert_eq!(
            keychain_service("ext", "abc", Scope::User),
            "Gemini CLI Extensions ext abc"
        );
        assert_eq!(
            keychain_service("ext", "abc", Scope::Workspace(Path::new("/w/p"))),
            "Gemini CLI Extensions ext abc /w/p"
        );
        assert_eq!(secret_account("API_TOKEN"), "__secret__API_TOKEN");
    }

    #[test]
    fn install_values_split_between_env_and_store_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let decls = decls();
        let owner = Owner {
            dir: dir.path(),
            name: "ext",
            id: "id1",
            decls: &decls,
        };
        let store = MemoryStore::default();
        let given = HashMap::from([
            ("REGION".to_owned(), "eu west".to_owned()),
            ("API_TOKEN".to_owned(), "tok-123".to_owned()),
            ("OTHER".to_owned(), "ignored".to_owned()),
        ]);
        save_install_values(&owner, &given, Some(&store)).unwrap();
        let env = std::fs::read_to_string(dir.path().join(ENV_FILE)).unwrap();
        assert_eq!(env, "REGION=\"eu west\"\n");
        assert_eq!(
            store
                .get_entry("Gemini CLI Extensions ext id1", "__secret__API_TOKEN")
                .unwrap()
                .unwrap()
                .expose(),
            "tok-123"
        );
        let all = values(&owner, Some(&store), Some(ws.path()));
        assert_eq!(all.len(), 2);
        assert_eq!(all["API_TOKEN"], "tok-123");
        // Without the store a sensitive value is unknown, never guessed.
        assert!(!values(&owner, None, None).contains_key("API_TOKEN"));
        // And without a store, a sensitive value is refused, not written.
        let err = save_install_values(&owner, &given, None).unwrap_err();
        assert!(err.to_string().contains("Token"), "{err}");

        // The workspace scope wins; its .env keeps the project's lines.
        std::fs::write(ws.path().join(ENV_FILE), "# project\nFOO=1\nREGION=old\n").unwrap();
        let region = find(&decls, "Region").unwrap();
        set_value(
            &owner,
            region,
            "us",
            Scope::Workspace(ws.path()),
            Some(&store),
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(ws.path().join(ENV_FILE)).unwrap(),
            "# project\nFOO=1\nREGION=\"us\"\n"
        );
        assert_eq!(
            values(&owner, Some(&store), Some(ws.path()))["REGION"],
            "us"
        );
        assert_eq!(values(&owner, Some(&store), None)["REGION"], "eu west");
        // An empty value removes.
        set_value(
            &owner,
            region,
            "",
            Scope::Workspace(ws.path()),
            Some(&store),
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(ws.path().join(ENV_FILE)).unwrap(),
            "# project\nFOO=1\n"
        );
        let bad = set_value(&owner, region, "a\nb", Scope::User, Some(&store)).unwrap_err();
        assert!(bad.to_string().contains("newlines"), "{bad}");

        let token = find(&decls, "API_TOKEN").unwrap();
        set_value(
            &owner,
            token,
            "ws-tok",
            Scope::Workspace(ws.path()),
            Some(&store),
        )
        .unwrap();
        assert_eq!(
            values(&owner, Some(&store), Some(ws.path()))["API_TOKEN"],
            "ws-tok"
        );
        clear_secrets(&owner, &store, &[ws.path()]).unwrap();
        assert!(!values(&owner, Some(&store), Some(ws.path())).contains_key("API_TOKEN"));
    }

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
