//! Glue between gd-extensions and a session: what the enabled extensions
//! of the user's `~/.gemini/extensions` add to a launch (MCP servers,
//! excluded tools, policies; context files and skills are read by memory
//! and skills discovery through [`enabled`]).
//!
//! Only ENABLED extensions count (0.61's `isActive`: the enablement rules
//! for the workspace folder).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use gd_auth::SecretStore;
use gd_extensions::Loaded;
use gd_extensions::security::Security;
use gd_settings::layers;
use gd_settings::model::Settings;

/// Where extensions' sensitive settings are kept: the store the app keeps
/// its sign-in in (gd-auth's choice for `home` and this workspace's
/// settings and environment: the OS keyring, else the 0600 secrets file in
/// `home`). Blocking (a keyring probe); call it off the async runtime.
pub fn secret_store(home: &Path, workspace: &Path) -> Result<Arc<dyn SecretStore>, String> {
    let loaded =
        crate::launch::load_workspace(workspace, Some(home), crate::launch::TrustOverride::Decide)
            .map_err(|e| e.to_string())?;
    let env = loaded.env.clone();
    let config =
        gd_auth::AuthConfig::from_settings(loaded.settings(), &|name| env.get(name), Some(home))
            .map_err(|e| e.to_string())?;
    let manager = gd_auth::AuthManager::new(
        config,
        Arc::new(move |name: &str| env.get(name)),
        Some(home.to_path_buf()),
    )
    .map_err(|e| e.to_string())?;
    manager
        .store()
        .map(|s| s.store.clone())
        .map_err(|e| e.to_string())
}

/// The enabled extensions of a launch with their settings' values —
/// sensitive ones from the secret store — substituted, so their servers
/// start with them. The store is opened only when an enabled extension
/// declares a sensitive setting; one that cannot be opened is a warning
/// (the servers start without those values).
pub fn with_setting_values(
    loaded: &mut Loaded,
    home: Option<&Path>,
    workspace: &Path,
    trusted: bool,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let store = match home {
        Some(home) if has_sensitive_settings(loaded.enabled()) => {
            match secret_store(home, workspace) {
                Ok(store) => Some(store),
                Err(e) => {
                    warnings.push(format!(
                        "Extension settings kept in the keyring are not available: {e}"
                    ));
                    None
                }
            }
        }
        _ => None,
    };
    let workspace_scope = trusted.then_some(workspace);
    for ext in loaded.extensions.iter_mut().filter(|e| e.enabled) {
        if ext.manifest.settings.is_empty() {
            continue;
        }
        let values = ext.setting_values(store.as_deref(), workspace_scope);
        match ext.with_values(workspace, &values) {
            Ok(read) => *ext = read,
            Err(e) => warnings.push(format!("Extension {}: {e}", ext.name())),
        }
    }
    warnings
}

/// `experimental.extensionConfig` of the settings `workspace` opens with
/// (on unless set to `false`; settings that cannot be read count as on,
/// their error is reported where they are loaded for the session).
pub fn config_enabled(home: &Path, workspace: &Path) -> bool {
    crate::launch::load_workspace(workspace, Some(home), crate::launch::TrustOverride::Decide)
        .map(|loaded| loaded.settings().experimental.extension_config != Some(false))
        .unwrap_or(true)
}

/// Whether any of `loaded`'s extensions declares a sensitive setting (so
/// the store is only opened when it can hold something).
pub fn has_sensitive_settings<'a>(
    mut extensions: impl Iterator<Item = &'a gd_extensions::Extension>,
) -> bool {
    extensions.any(|e| e.manifest.settings.iter().any(|s| s.sensitive))
}

/// The extensions this process may use: `-e/--extensions` of a headless
/// run. A property of the whole run (every part that reads extensions —
/// servers, context, skills, agents, commands, hooks — must see the same
/// set), so it is set once at start rather than threaded through each.
static ONLY: OnceLock<Vec<String>> = OnceLock::new();

/// Limits this process to the named extensions (lower-cased; `none`: no
/// extension). The first call wins.
pub fn limit_to(names: &[String]) {
    let _ = ONLY.set(names.iter().map(|n| n.to_lowercase()).collect());
}

/// The extensions of `home` as seen from `workspace`, as far as the
/// extension security settings allow them; with [`limit_to`], exactly the
/// named ones are enabled (0.61: even ones disabled in the enablement file).
pub fn load(home: Option<&Path>, workspace: &Path) -> Loaded {
    let Some(home) = home else {
        return Loaded::default();
    };
    if !gd_extensions::layout::extensions_dir(home).is_dir() {
        // Nothing installed: no settings to read for it.
        return Loaded::default();
    }
    let mut loaded = gd_extensions::load(home, workspace, &security(home));
    if let Some(only) = ONLY.get() {
        let none = only.len() == 1 && only[0] == "none";
        for ext in &mut loaded.extensions {
            ext.enabled = !none && only.contains(&ext.manifest.name.to_lowercase());
        }
    }
    loaded
}

/// `security.allowedExtensions` / `security.blockGitExtensions` of the
/// system settings, the system defaults and the user's settings (see
/// `gd_extensions::security` for why not the workspace's). A file that
/// exists but cannot be read or parsed allows nothing.
pub fn security(home: &Path) -> Security {
    let env = |name: &str| std::env::var(name).ok();
    let paths = [
        layers::system_defaults_path(&env),
        layers::system_settings_path(&env),
        layers::user_settings_path(home),
    ];
    let mut values = Vec::new();
    for path in paths {
        let read = layers::read_optional(&path)
            .and_then(|text| text.map(|t| layers::parse_file(&path, &t)).transpose());
        match read {
            Ok(Some(value)) => values.push(value),
            Ok(None) => {}
            Err(error) => {
                return Security::refuse_all(format!(
                    "the extension security settings cannot be read ({error})."
                ));
            }
        }
    }
    Security::from_settings(&values)
}

/// The enabled extensions' context files, in load order.
/// Each comes with its extension's name and folder: the file, and what it
/// imports, must lie in that folder (memory checks again as it reads).
/// Those gd-extensions already refused (links leading out) are included,
/// so the session warns about them.
pub fn context_files(home: Option<&Path>, workspace: &Path) -> Vec<(PathBuf, String, PathBuf)> {
    load(home, workspace)
        .enabled()
        .flat_map(|e| {
            let c = &e.contributions;
            c.context_files
                .iter()
                .chain(&c.refused_context_files)
                .map(|path| (path.clone(), e.manifest.name.clone(), e.path.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The enabled extensions' `skills/` folders.
pub fn skill_dirs(home: &Path, workspace: &Path) -> Vec<PathBuf> {
    load(Some(home), workspace)
        .enabled()
        .filter_map(|e| e.contributions.skills_dir.clone())
        .collect()
}

/// The enabled extensions' `agents/` folders.
pub fn agent_dirs(home: &Path, workspace: &Path) -> Vec<PathBuf> {
    load(Some(home), workspace)
        .enabled()
        .filter_map(|e| e.contributions.agents_dir.clone())
        .collect()
}

/// The enabled extensions' hooks: `(name, hooks/hooks.json, its object)`.
pub fn hooks(loaded: &Loaded) -> Vec<(String, PathBuf, serde_json::Value)> {
    loaded
        .enabled()
        .filter_map(|e| {
            let (path, value) = e.contributions.hooks.clone()?;
            Some((e.manifest.name.clone(), path, value))
        })
        .collect()
}

/// The Extension policy tier: `(name, policies/)` of each enabled one.
pub fn policy_dirs(loaded: &Loaded) -> Vec<gd_policy::ExtensionPolicies> {
    loaded
        .enabled()
        .filter_map(|e| {
            e.contributions
                .policies_dir
                .clone()
                .map(|dir| gd_policy::ExtensionPolicies {
                    name: e.manifest.name.clone(),
                    dir,
                })
        })
        .collect()
}

/// Adds the enabled extensions' MCP servers (a settings.json server of the
/// same name wins; between extensions the first wins) and `excludeTools`
/// to the settings a session starts with. Returns the notes about servers
/// left out and extension folders that could not be read.
pub fn apply_to_settings(settings: &mut Settings, loaded: &Loaded) -> Vec<String> {
    let configured: Vec<String> = settings.mcp_servers.keys().cloned().collect();
    let (servers, mut notes) =
        gd_extensions::conflicts::session_servers(loaded.enabled(), &configured);
    for (_ext, name, def) in servers {
        settings.mcp_servers.insert(name, def);
    }
    for ext in loaded.enabled() {
        for tool in &ext.contributions.exclude_tools {
            if !settings.tools.exclude.contains(tool) {
                settings.tools.exclude.push(tool.clone());
            }
        }
    }
    notes.extend(
        loaded
            .errors
            .iter()
            .map(|e| format!("Extension skipped: {e}")),
    );
    notes
}
