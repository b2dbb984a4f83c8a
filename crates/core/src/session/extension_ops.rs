//! The extension ops (`Op::ListExtensions`, `PreviewExtension`,
//! `InstallExtension`, `DiscardExtensionPreview`, `UninstallExtension`,
//! `SetExtensionEnabled`, `UpdateExtension`, `SetExtensionSetting`),
//! answered at once with
//! `Event::Extensions` / `Event::ExtensionPreview` / `Event::ExtensionError`.
//!
//! A preview stages the extension in a private temporary folder (copied or
//! cloned, never run) and keeps it under a preview id; installing installs
//! exactly that copy, so what the consent screen listed is what lands.
//! After a change, commands and skills are picked up at once; MCP servers,
//! policies, context files and excluded tools apply from the next
//! conversation (the notice says so).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use gd_extensions::install::{self, Request, Staged};
use gd_protocol::{DefinitionError, Event, Op, SettingsScope};

use crate::events::EventSink;
use crate::skills::SkillCatalog;

use super::op_loop::CommandSources;

/// Staged previews by id; process-wide so any session can install one it
/// previewed (the id is random and unguessable).
fn previews() -> &'static Mutex<HashMap<String, Staged>> {
    static PREVIEWS: OnceLock<Mutex<HashMap<String, Staged>>> = OnceLock::new();
    PREVIEWS.get_or_init(Default::default)
}

const LATER: &str = "Its commands and skills are available now; its MCP servers, policies, context files and excluded tools apply from the next conversation.";

pub(super) fn take(op: Op, skills: &SkillCatalog, sources: &CommandSources, sink: &EventSink) {
    // One change at a time (they run on blocking threads, see `op_loop`).
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (Some(home), Some(workspace)) = (sources.home.clone(), sources.workspace.clone()) else {
        sink.emit(Event::ExtensionError {
            name: None,
            message: "This session has no home folder to keep extensions in.".into(),
        });
        return;
    };
    match run(op, &home, &workspace) {
        Ok(Answer::List(notice)) => {
            if notice.is_some() {
                skills.reload();
            }
            emit_list(&home, &workspace, notice, sink);
        }
        Ok(Answer::Preview(preview_id, extension)) => sink.emit(Event::ExtensionPreview {
            preview_id,
            extension: *extension,
        }),
        Err((name, message)) => sink.emit(Event::ExtensionError { name, message }),
    }
}

enum Answer {
    List(Option<String>),
    Preview(String, Box<gd_protocol::ExtensionInfo>),
}

type Failure = (Option<String>, String);

fn fail(name: Option<&str>, e: impl ToString) -> Failure {
    (name.map(str::to_owned), e.to_string())
}

fn run(op: Op, home: &Path, workspace: &Path) -> Result<Answer, Failure> {
    match op {
        Op::ListExtensions => Ok(Answer::List(None)),
        Op::PreviewExtension { spec } => {
            let request = Request {
                source: spec.source.clone(),
                git_ref: spec.git_ref.clone(),
                auto_update: spec.auto_update,
                pre_release: false,
                link: spec.link,
            };
            let staged = install::stage(&request, workspace, &crate::extensions::security(home))
                .map_err(|e| fail(None, e))?;
            let mut info = staged.preview(home, workspace).info();
            if !crate::extensions::config_enabled(home, workspace) {
                // `experimental.extensionConfig: false`: nothing to ask.
                info.contributes.settings.clear();
            }
            let id = format!("preview-{}", uuid::Uuid::new_v4());
            previews()
                .lock()
                .map_err(|_| fail(None, "the previews are unavailable"))?
                .insert(id.clone(), staged);
            Ok(Answer::Preview(id, Box::new(info)))
        }
        Op::DiscardExtensionPreview { preview_id } => {
            if let Ok(mut map) = previews().lock() {
                map.remove(&preview_id);
            }
            Ok(Answer::List(None))
        }
        Op::InstallExtension {
            preview_id,
            settings,
        } => {
            let staged = previews()
                .lock()
                .map_err(|_| fail(None, "the previews are unavailable"))?
                .remove(&preview_id)
                .ok_or_else(|| fail(None, "This preview is gone; preview the extension again."))?;
            let name = staged.manifest.name.clone();
            let values: HashMap<String, String> =
                if crate::extensions::config_enabled(home, workspace) {
                    settings
                        .into_iter()
                        .filter(|(_, v)| !v.is_empty())
                        .collect()
                } else {
                    HashMap::new()
                };
            // A sensitive value needs the store: opened (and checked)
            // before anything is installed, so a refusal loses nothing.
            let wants_store = staged
                .manifest
                .settings
                .iter()
                .any(|d| d.sensitive && values.contains_key(&d.env_var));
            let store = if wants_store {
                Some(
                    crate::extensions::secret_store(home, workspace).map_err(|e| {
                        fail(
                            Some(&name),
                            format!("cannot keep its sensitive settings: {e}"),
                        )
                    })?,
                )
            } else {
                None
            };
            let ext =
                install::install(home, workspace, &staged).map_err(|e| fail(Some(&name), e))?;
            if !values.is_empty() {
                let id = ext.id();
                let owner = gd_extensions::settings::Owner::of(&ext, &id);
                if let Err(e) =
                    gd_extensions::settings::save_install_values(&owner, &values, store.as_deref())
                {
                    // Installed without its values would look done and
                    // fail later: undo the install and say why.
                    let _ = install::uninstall(home, workspace, &name, store.as_deref());
                    return Err(fail(
                        Some(&name),
                        format!("cannot save its settings (nothing was installed): {e}"),
                    ));
                }
            }
            Ok(Answer::List(Some(format!(
                "Installed {name} {}. {LATER}",
                ext.manifest.version
            ))))
        }
        Op::UninstallExtension { name } => {
            let loaded = crate::extensions::load(Some(home), workspace);
            let store = if crate::extensions::has_sensitive_settings(loaded.extensions.iter()) {
                Some(
                    crate::extensions::secret_store(home, workspace).map_err(|e| {
                        fail(
                            Some(&name),
                            format!("cannot remove its sensitive settings: {e}"),
                        )
                    })?,
                )
            } else {
                None
            };
            let removed = install::uninstall(home, workspace, &name, store.as_deref())
                .map_err(|e| fail(Some(&name), e))?;
            Ok(Answer::List(Some(format!(
                "Uninstalled {removed}. Its commands and skills are gone now; its MCP servers, policies and context stop with the next conversation."
            ))))
        }
        Op::SetExtensionEnabled {
            name,
            enabled,
            scope,
        } => {
            let loaded = crate::extensions::load(Some(home), workspace);
            if loaded.get(&name).is_none() {
                return Err(fail(
                    Some(&name),
                    format!("Extension with name {name} does not exist."),
                ));
            }
            let folder: PathBuf = match scope {
                SettingsScope::Workspace => workspace.to_path_buf(),
                _ => home.to_path_buf(),
            };
            let mut enablement = gd_extensions::Enablement::load(home);
            let result = if enabled {
                enablement.enable(&name, &folder)
            } else {
                enablement.disable(&name, &folder)
            };
            result.map_err(|e| fail(Some(&name), e))?;
            let verb = if enabled { "Enabled" } else { "Disabled" };
            let where_ = match scope {
                SettingsScope::Workspace => "in this workspace",
                _ => "for the user",
            };
            Ok(Answer::List(Some(format!(
                "{verb} {name} {where_}. {LATER}"
            ))))
        }
        Op::UpdateExtension { name } => {
            // The panel asked for it; a changed consent text is accepted
            // here only if nothing new runs (no new servers or hooks).
            let mut consent = |_: &str| false;
            let security = crate::extensions::security(home);
            match install::update(home, workspace, &name, &security, &mut consent) {
                Ok(u) if u.from_version != u.to_version => Ok(Answer::List(Some(format!(
                    "Updated {name}: {} \u{2192} {}. {LATER}",
                    u.from_version, u.to_version
                )))),
                Ok(_) => Ok(Answer::List(Some(format!("{name} is already up to date.")))),
                Err(e) => Err(fail(
                    Some(&name),
                    format!(
                        "{e} (what it adds changed: uninstall it and install it again to review the new version)"
                    ),
                )),
            }
        }
        Op::SetExtensionSetting {
            name,
            env_var,
            value,
            scope,
        } => set_setting(home, workspace, &name, &env_var, &value, scope),
        _ => Ok(Answer::List(None)),
    }
}

/// [`Op::SetExtensionSetting`]: `extensions config <name> <setting>` from
/// the panel. The value itself is in no message and no log.
fn set_setting(
    home: &Path,
    workspace: &Path,
    name: &str,
    env_var: &str,
    value: &str,
    scope: SettingsScope,
) -> Result<Answer, Failure> {
    if !crate::extensions::config_enabled(home, workspace) {
        return Err(fail(
            Some(name),
            "Extension configuration is currently disabled. Enable it by setting \"experimental.extensionConfig\" to true.",
        ));
    }
    let loaded = crate::extensions::load(Some(home), workspace);
    let ext = loaded.get(name).ok_or_else(|| {
        fail(
            Some(name),
            format!("Extension with name {name} does not exist."),
        )
    })?;
    let decl = gd_extensions::settings::find(&ext.manifest.settings, env_var)
        .ok_or_else(|| fail(Some(name), format!("Setting {env_var} not found.")))?;
    let store = if decl.sensitive {
        Some(
            crate::extensions::secret_store(home, workspace).map_err(|e| {
                fail(
                    Some(name),
                    format!("cannot keep its sensitive settings: {e}"),
                )
            })?,
        )
    } else {
        None
    };
    let (scope, where_) = match scope {
        SettingsScope::Workspace => (
            gd_extensions::settings::Scope::Workspace(workspace),
            "for this workspace",
        ),
        _ => (gd_extensions::settings::Scope::User, "for the user"),
    };
    let id = ext.id();
    gd_extensions::settings::set_value(
        &gd_extensions::settings::Owner::of(ext, &id),
        decl,
        value,
        scope,
        store.as_deref(),
    )
    .map_err(|e| fail(Some(name), e))?;
    let done = if value.is_empty() { "Removed" } else { "Set" };
    Ok(Answer::List(Some(format!(
        "{done} {} of {name} {where_}. Its MCP servers and hooks get it from the next conversation.",
        decl.name
    ))))
}

fn emit_list(home: &Path, workspace: &Path, notice: Option<String>, sink: &EventSink) {
    let loaded = crate::extensions::load(Some(home), workspace);
    // Sensitive settings are `is_set` when the store holds them; a store
    // that cannot be opened shows them unset (and is logged).
    let store = if crate::extensions::has_sensitive_settings(loaded.extensions.iter()) {
        crate::extensions::secret_store(home, workspace)
            .map_err(|e| tracing::warn!("extension settings: {e}"))
            .ok()
    } else {
        None
    };
    sink.emit(Event::Extensions {
        extensions: loaded.infos_with(store.as_deref(), Some(workspace)),
        errors: loaded.errors.iter().map(|e| definition_error(e)).collect(),
        notice,
    });
}

/// `path:line: message` or `path: message` back into its parts.
fn definition_error(text: &str) -> DefinitionError {
    let (head, message) = text.split_once(": ").unwrap_or(("", text));
    let (path, line) = match head.rsplit_once(':') {
        Some((p, l)) if l.parse::<u32>().is_ok() => (p, l.parse().ok()),
        _ => (head, None),
    };
    DefinitionError {
        path: path.to_owned(),
        line,
        message: message.to_owned(),
    }
}
