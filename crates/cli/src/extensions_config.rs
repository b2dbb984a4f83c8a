//! `extensions config [name] [setting] [--scope user|workspace]`: setting
//! an installed extension's settings after the install, as 0.61 does it —
//! one setting, every setting of one extension (asking before overwriting
//! a value that is set), or every extension's. Plain values go to the
//! scope's `.env`, sensitive ones to the secret store; an empty answer
//! removes a value.

use std::path::Path;

use gd_extensions::Extension;
use gd_extensions::manifest::SettingDecl;
use gd_extensions::settings::{self, Owner, Scope};

use crate::exit;
use crate::prompt::ask;

/// Runs the command; returns the exit code.
pub fn run(
    home: &Path,
    workspace: &Path,
    name: Option<&str>,
    setting: Option<&str>,
    in_workspace: bool,
) -> i32 {
    if let Some(name) = name
        && (name.contains('/') || name.contains('\\') || name.contains(".."))
    {
        eprintln!("Invalid extension name. Names cannot contain path separators or \"..\".");
        return exit::GENERAL_ERROR;
    }
    if !gd_core::extensions::config_enabled(home, workspace) {
        // 0.61's words, and its exit code (0).
        eprintln!(
            "Extension configuration is currently disabled. Enable it by setting \"experimental.extensionConfig\" to true."
        );
        return exit::SUCCESS;
    }
    let scope = if in_workspace {
        Scope::Workspace(workspace)
    } else {
        Scope::User
    };
    let loaded = gd_core::extensions::load(Some(home), workspace);
    let targets: Vec<&Extension> = match name {
        Some(name) => match loaded.get(name) {
            Some(ext) => vec![ext],
            None => {
                eprintln!("Extension \"{name}\" not found.");
                return exit::GENERAL_ERROR;
            }
        },
        None if loaded.extensions.is_empty() => {
            println!("No extensions installed.");
            return exit::SUCCESS;
        }
        None => loaded.extensions.iter().collect(),
    };
    let store = if gd_core::extensions::has_sensitive_settings(targets.iter().copied()) {
        match gd_core::extensions::secret_store(home, workspace) {
            Ok(store) => Some(store),
            Err(e) => {
                eprintln!("Error: cannot open the secret store: {e}");
                return exit::GENERAL_ERROR;
            }
        }
    } else {
        None
    };
    let store = store.as_deref();
    for ext in targets {
        let id = ext.id();
        let owner = Owner::of(ext, &id);
        let result = match setting {
            Some(key) => match settings::find(&ext.manifest.settings, key) {
                Some(decl) => update(&owner, decl, scope, store)
                    .map(|_| println!("Setting \"{key}\" updated.")),
                None => {
                    println!("Setting {key} not found.");
                    Ok(())
                }
            },
            None if ext.manifest.settings.is_empty() => {
                if name.is_some() {
                    println!("Extension \"{}\" has no settings to configure.", ext.name());
                }
                Ok(())
            }
            None => configure_all(&owner, ext, scope, store, workspace),
        };
        if let Err(e) = result {
            eprintln!("Error: {e}");
            return exit::GENERAL_ERROR;
        }
    }
    exit::SUCCESS
}

/// Every setting of one extension: a value already set in this scope is
/// only replaced when the user says so.
fn configure_all(
    owner: &Owner<'_>,
    ext: &Extension,
    scope: Scope<'_>,
    store: Option<&dyn gd_auth::SecretStore>,
    workspace: &Path,
) -> Result<(), String> {
    println!("Configuring settings for \"{}\"...", ext.name());
    let current = settings::scoped_values(owner, scope, store);
    let in_workspace = match scope {
        Scope::User => settings::scoped_values(owner, Scope::Workspace(workspace), store),
        Scope::Workspace(_) => Default::default(),
    };
    for decl in &ext.manifest.settings {
        if in_workspace.contains_key(&decl.env_var) {
            println!(
                "Note: Setting \"{}\" is already configured in the workspace scope.",
                decl.name
            );
        }
        if current.contains_key(&decl.env_var) {
            let question = format!(
                "Setting \"{}\" ({}) is already set. Overwrite? (y/N) ",
                decl.name, decl.env_var
            );
            let answer = ask(&question, false).map_err(|e| e.to_string())?;
            if !matches!(answer.trim().to_lowercase().as_str(), "y" | "yes") {
                continue;
            }
        }
        update(owner, decl, scope, store)?;
    }
    Ok(())
}

/// Asks for one setting's value and keeps it (empty: removes it).
fn update(
    owner: &Owner<'_>,
    decl: &SettingDecl,
    scope: Scope<'_>,
    store: Option<&dyn gd_auth::SecretStore>,
) -> Result<(), String> {
    let message = match &decl.description {
        Some(d) => format!("? {}\n{d} › ", decl.name),
        None => format!("? {} › ", decl.name),
    };
    let value = ask(&message, decl.sensitive).map_err(|e| e.to_string())?;
    settings::set_value(owner, decl, &value, scope, store).map_err(|e| e.to_string())
}
