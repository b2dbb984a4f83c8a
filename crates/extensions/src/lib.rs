//! Gemini CLI 0.61 compatible extensions, without Tauri or the session:
//! folders holding a `gemini-extension.json` under `~/.gemini/extensions`
//! (copies, clones and links), where each is enabled, how they are
//! installed, updated and removed, and what each one contributes.
//!
//! [`load`] reads everything for one workspace; the session glue in gd-core
//! takes the enabled extensions' [`Contributions`] from it.

pub mod conflicts;
pub mod consent;
pub mod contributions;
pub mod enablement;
pub mod git;
pub mod install;
pub mod layout;
pub mod links;
pub mod list;
pub mod manifest;
pub mod security;
pub mod setting_env;
pub mod settings;
pub mod templates;
pub mod validate;

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

pub use contributions::Contributions;
pub use enablement::Enablement;
pub use layout::{InstallMetadata, InstallType};
pub use manifest::{Manifest, ManifestError, Variables};

/// One installed (or linked) extension, read for a workspace.
#[derive(Debug, Clone)]
pub struct Extension {
    /// Its folder under `~/.gemini/extensions`.
    pub dir: PathBuf,
    /// Where it is read from (the linked folder for a link).
    pub path: PathBuf,
    pub install: Option<InstallMetadata>,
    pub manifest: Manifest,
    /// On in the workspace (0.61's `isActive`).
    pub enabled: bool,
    /// On for the home folder (`Enabled (User)`).
    pub enabled_for_user: bool,
    pub contributions: Contributions,
    /// Conflicts and skipped parts, in words.
    pub notes: Vec<String>,
}

impl Extension {
    pub fn name(&self) -> &str {
        &self.manifest.name
    }

    /// 0.61's extension id: sha256 of the install source (a GitHub URL
    /// normalised), or of the name without install metadata.
    pub fn id(&self) -> String {
        extension_id(&self.manifest.name, self.install.as_ref())
    }

    /// For the protocol (the panel and the consent screen), without the
    /// secret store: a sensitive setting is reported unset.
    pub fn info(&self) -> gd_protocol::ExtensionInfo {
        self.info_with(None, None)
    }

    /// The values stored for this extension's settings (user scope, then
    /// the workspace scope of `workspace` over it).
    pub fn setting_values(
        &self,
        store: Option<&dyn gd_auth::SecretStore>,
        workspace: Option<&Path>,
    ) -> std::collections::HashMap<String, String> {
        let id = self.id();
        settings::values(&settings::Owner::of(self, &id), store, workspace)
    }

    /// [`Extension::info`], with `is_set` of sensitive settings read from
    /// `store`, and `set_here` from `workspace`'s scope when given.
    pub fn info_with(
        &self,
        store: Option<&dyn gd_auth::SecretStore>,
        workspace: Option<&Path>,
    ) -> gd_protocol::ExtensionInfo {
        let c = &self.contributions;
        let settings_values = self.setting_values(store, None);
        let id = self.id();
        let here = workspace
            .map(|ws| {
                settings::scoped_values(
                    &settings::Owner::of(self, &id),
                    settings::Scope::Workspace(ws),
                    store,
                )
            })
            .unwrap_or_default();
        gd_protocol::ExtensionInfo {
            name: self.manifest.name.clone(),
            version: self.manifest.version.clone(),
            description: self.manifest.description.clone(),
            path: self.path.to_string_lossy().into_owned(),
            install: self.install.as_ref().map(InstallMetadata::to_protocol),
            enabled: self.enabled,
            enabled_for_user: self.enabled_for_user,
            enabled_for_workspace: (self.enabled != self.enabled_for_user).then_some(self.enabled),
            contributes: gd_protocol::ExtensionContributions {
                mcp_servers: c
                    .mcp_servers
                    .iter()
                    .map(|(name, def)| gd_protocol::ExtensionServer {
                        name: name.clone(),
                        launches: consent::launches(def),
                        shadowed_by: None,
                    })
                    .collect(),
                commands: c
                    .commands
                    .iter()
                    .map(|cmd| format!("/{}", cmd.name))
                    .collect(),
                context_files: c
                    .context_files
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect(),
                exclude_tools: c.exclude_tools.clone(),
                policy_rules: c
                    .policies_dir
                    .as_deref()
                    .map(contributions::policy_lines)
                    .unwrap_or_default(),
                skills: c.skills.clone(),
                agents: c.agents.clone(),
                hooks: c
                    .hooks
                    .as_ref()
                    .map(|(_, h)| contributions::hook_lines(h))
                    .unwrap_or_default(),
                settings: self
                    .manifest
                    .settings
                    .iter()
                    .map(|s| gd_protocol::ExtensionSetting {
                        name: s.name.clone(),
                        description: s.description.clone(),
                        env_var: s.env_var.clone(),
                        sensitive: s.sensitive,
                        is_set: settings_values.contains_key(&s.env_var),
                        set_here: here.contains_key(&s.env_var),
                    })
                    .collect(),
                themes: c.themes.clone(),
            },
            migrated_to: self.manifest.migrated_to.clone(),
            notes: self.notes.iter().chain(&c.notes).cloned().collect(),
        }
    }
}

/// sha256 as lowercase hex.
pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// 0.61's `getExtensionId`.
pub fn extension_id(name: &str, install: Option<&InstallMetadata>) -> String {
    let value = match install {
        Some(m) if matches!(m.kind, InstallType::Git | InstallType::GithubRelease) => {
            github_repo(&m.source)
                .map(|(o, r)| format!("https://github.com/{o}/{r}"))
                .unwrap_or_else(|| m.source.clone())
        }
        Some(m) => m.source.clone(),
        None => name.to_owned(),
    };
    sha256_hex(&value)
}

/// `owner/repo` of a GitHub URL (`https://github.com/o/r(.git)`,
/// `git@github.com:o/r.git`, `o/r`), else `None`.
pub fn github_repo(source: &str) -> Option<(String, String)> {
    let rest = match source.strip_prefix("git@github.com:") {
        Some(r) => r,
        None => source
            .strip_prefix("https://github.com/")
            .or_else(|| source.strip_prefix("http://github.com/"))?,
    };
    let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
    if parts.len() != 2 {
        return None;
    }
    Some((parts[0].to_owned(), parts[1].replace(".git", "")))
}

/// The extensions of one home folder as seen from one workspace.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// Sorted by folder name, as 0.61 lists them.
    pub extensions: Vec<Extension>,
    /// Folders that could not be read (`path: message`); the others still
    /// load.
    pub errors: Vec<String>,
}

impl Loaded {
    pub fn enabled(&self) -> impl Iterator<Item = &Extension> {
        self.extensions.iter().filter(|e| e.enabled)
    }

    pub fn get(&self, name: &str) -> Option<&Extension> {
        self.extensions.iter().find(|e| e.manifest.name == name)
    }

    /// By name, ignoring case (how 0.61 matches `-e` names).
    pub fn get_ignoring_case(&self, name: &str) -> Option<&Extension> {
        self.extensions
            .iter()
            .find(|e| e.manifest.name.eq_ignore_ascii_case(name))
    }

    pub fn infos(&self) -> Vec<gd_protocol::ExtensionInfo> {
        self.infos_with(None, None)
    }

    /// [`Loaded::infos`] with sensitive settings looked up in `store`, and
    /// the values of `workspace`'s scope.
    pub fn infos_with(
        &self,
        store: Option<&dyn gd_auth::SecretStore>,
        workspace: Option<&Path>,
    ) -> Vec<gd_protocol::ExtensionInfo> {
        self.extensions
            .iter()
            .map(|e| e.info_with(store, workspace))
            .collect()
    }
}

/// Reads one extension folder (under `~/.gemini/extensions`).
pub fn read_extension(
    dir: &Path,
    home: &Path,
    workspace: &Path,
    enablement: &Enablement,
) -> Result<Extension, String> {
    let install = layout::read_metadata(dir);
    let path = layout::effective_path(dir, install.as_ref());
    let vars = Variables::new(&path, workspace);
    let first = manifest::read(&path, &vars).map_err(|e| e.to_string())?;
    // Settings values can be named in the manifest too (0.61 substitutes
    // them after reading).
    let env = settings::read_env(dir);
    let vars = if env.is_empty() {
        vars
    } else {
        vars.with(&env)
    };
    let manifest = if env.is_empty() {
        first
    } else {
        manifest::read(&path, &vars).map_err(|e| e.to_string())?
    };
    let contributions = contributions::read(&path, &manifest, &vars);
    Ok(Extension {
        enabled: enablement.is_enabled(&manifest.name, workspace),
        enabled_for_user: enablement.is_enabled(&manifest.name, home),
        dir: dir.to_path_buf(),
        path,
        install,
        manifest,
        contributions,
        notes: Vec::new(),
    })
}

impl Extension {
    /// This extension read again with its settings `values` (the `.env`'s
    /// and the secret store's, workspace over user) substituted into its
    /// manifest and contributions: `${API_TOKEN}` in a server's `env` or
    /// `args` becomes the value kept in the keyring, and the values are in
    /// the environment of its stdio servers and command hooks
    /// ([`setting_env`]). Done for a launch only (it needs the store);
    /// listing and previews show the names.
    pub fn with_values(
        &self,
        workspace: &Path,
        values: &std::collections::HashMap<String, String>,
    ) -> Result<Extension, String> {
        let vars = Variables::new(&self.path, workspace).with(values);
        let manifest = manifest::read(&self.path, &vars).map_err(|e| e.to_string())?;
        let mut contributions = contributions::read(&self.path, &manifest, &vars);
        setting_env::give(&mut contributions, values);
        Ok(Extension {
            manifest,
            contributions,
            ..self.clone()
        })
    }
}

/// Reads every extension of `home` for `workspace`, and resolves the
/// conflicts between them (see [`conflicts`]).
/// Extensions `security` does not allow are skipped, each with the reason
/// in `errors`.
pub fn load(home: &Path, workspace: &Path, security: &security::Security) -> Loaded {
    let root = layout::extensions_dir(home);
    let enablement = Enablement::load(home);
    let mut loaded = Loaded::default();
    if let Some(e) = &enablement.error {
        loaded.errors.push(e.clone());
    }
    let Ok(entries) = std::fs::read_dir(&root) else {
        return loaded;
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        if security.restricts()
            && let Err(e) = security.check_load(&dir, layout::read_metadata(&dir).as_ref())
        {
            tracing::warn!("{e}");
            loaded.errors.push(e);
            continue;
        }
        match read_extension(&dir, home, workspace, &enablement) {
            Ok(ext) => {
                if loaded.get(ext.name()).is_some() {
                    loaded.errors.push(format!(
                        "{}: an extension named \"{}\" is already loaded; this one is skipped",
                        dir.display(),
                        ext.name()
                    ));
                    continue;
                }
                loaded.extensions.push(ext);
            }
            Err(e) => {
                tracing::warn!("skipping extension in {}: {e}", dir.display());
                loaded.errors.push(e);
            }
        }
    }
    conflicts::between_extensions(&mut loaded.extensions);
    loaded
}
