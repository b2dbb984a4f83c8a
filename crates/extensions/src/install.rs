//! Installing, linking, updating and uninstalling, as 0.61 does: a local
//! folder is copied, a git URL is cloned with the user's `git` (then
//! `--ref` fetched and checked out, see [`crate::git`]), a link records the
//! folder and reads it in place. Every install is staged first in a
//! private temporary folder, so what the consent text describes is exactly
//! what gets installed. An extension with a symbolic link leading outside
//! its folder is refused (see [`crate::links`]).

use std::path::{Path, PathBuf};

use crate::layout::{self, InstallMetadata, InstallType, create_private_dir, extensions_dir};
use crate::links::Link;
use crate::manifest::{self, Manifest, Variables};
use crate::security::Security;
use crate::{Enablement, Extension, contributions, read_extension};

/// An install, update or uninstall that failed; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{0}")]
    Message(String),
    #[error("{0}")]
    Manifest(#[from] manifest::ManifestError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
}

fn msg(text: impl Into<String>) -> InstallError {
    InstallError::Message(text.into())
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> InstallError {
    let context = context.into();
    move |source| InstallError::Io { context, source }
}

/// What the user asked to install (`extensions install` / `link`).
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub source: String,
    pub git_ref: Option<String>,
    pub auto_update: bool,
    pub pre_release: bool,
    pub link: bool,
}

/// Whether `source` is a git URL (0.61's prefixes, plus `file://` so a
/// local repository can be cloned too).
pub fn is_git_url(source: &str) -> bool {
    [
        "http://", "https://", "git@", "sso://", "github:", "gitlab:", "ssh://", "file://",
    ]
    .iter()
    .any(|p| source.starts_with(p))
}

/// An extension copied or cloned into a private temporary folder, read
/// but not run.
#[derive(Debug)]
pub struct Staged {
    /// Holds the copy; removed when dropped. `None` for a link (read in
    /// place).
    temp: Option<tempfile::TempDir>,
    /// The folder read (the copy, or the linked folder).
    pub dir: PathBuf,
    pub metadata: InstallMetadata,
    pub manifest: Manifest,
    pub has_hooks: bool,
    pub skills: Vec<String>,
    /// Its symbolic links, each leading to a file of its own (listed in
    /// the consent text).
    pub links: Vec<Link>,
}

impl Staged {
    /// The consent text for this extension.
    pub fn consent_text(&self) -> String {
        crate::consent::text(
            &self.manifest,
            self.has_hooks,
            &self.skills,
            &link_lines(&self.links),
        )
    }

    /// The extension as it would be once installed, for a preview.
    pub fn preview(&self, home: &Path, workspace: &Path) -> Extension {
        let vars = Variables::new(&self.dir, workspace);
        let contributions = contributions::read(&self.dir, &self.manifest, &vars);
        let _ = home;
        Extension {
            dir: self.dir.clone(),
            path: self.dir.clone(),
            install: Some(self.metadata.clone()),
            manifest: self.manifest.clone(),
            enabled: true,
            enabled_for_user: true,
            contributions,
            notes: Vec::new(),
        }
    }

    /// Where the staged copy is (none for a link).
    pub fn temp_dir(&self) -> Option<&Path> {
        self.temp.as_ref().map(|t| t.path())
    }
}

fn temp_dir() -> Result<tempfile::TempDir, InstallError> {
    tempfile::Builder::new()
        .prefix("gemini-extension")
        .tempdir()
        .map_err(io("cannot create a temporary folder"))
}

/// Copies, clones or (for a link) checks the source, and reads its manifest.
/// Nothing is fetched for a source `security` does not allow.
pub fn stage(
    request: &Request,
    workspace: &Path,
    security: &Security,
) -> Result<Staged, InstallError> {
    let git = is_git_url(&request.source);
    if request.link && git {
        return Err(msg("Only a local folder can be linked."));
    }
    let kind = match (git, request.link) {
        (true, _) => InstallType::Git,
        (false, true) => InstallType::Link,
        (false, false) => InstallType::Local,
    };
    let source = if git {
        request.source.clone()
    } else {
        workspace.join(&request.source).display().to_string()
    };
    security.check_install(&source, kind).map_err(msg)?;
    if !git && (request.git_ref.is_some() || request.auto_update) {
        return Err(msg(
            "--ref and --auto-update are not applicable for local extensions.",
        ));
    }
    let (temp, dir, metadata) = if git {
        let temp = temp_dir()?;
        let dir = temp.path().join("clone");
        crate::git::clone(&request.source, request.git_ref.as_deref(), &dir).map_err(msg)?;
        let metadata = InstallMetadata {
            source: request.source.clone(),
            kind: InstallType::Git,
            git_ref: request.git_ref.clone(),
            auto_update: request.auto_update.then_some(true),
            allow_pre_release: request.pre_release.then_some(true),
            release_tag: None,
        };
        (Some(temp), dir, metadata)
    } else {
        let given = Path::new(&request.source);
        let absolute = if given.is_absolute() {
            given.to_path_buf()
        } else {
            workspace.join(given)
        };
        let real =
            std::fs::canonicalize(&absolute).map_err(|_| msg("Install source not found."))?;
        if !real.is_dir() {
            return Err(msg(format!("{}: not a folder", absolute.display())));
        }
        let kind = if request.link {
            InstallType::Link
        } else {
            InstallType::Local
        };
        let metadata = InstallMetadata {
            source: if request.link {
                real.to_string_lossy().into_owned()
            } else {
                absolute.to_string_lossy().into_owned()
            },
            kind,
            git_ref: None,
            auto_update: None,
            allow_pre_release: None,
            release_tag: None,
        };
        if request.link {
            (None, real, metadata)
        } else {
            let temp = temp_dir()?;
            let dir = temp.path().join("copy");
            copy_tree(&real, &dir)?;
            (Some(temp), dir, metadata)
        }
    };
    // Before anything in it is read: a link out of the folder would read
    // (and, once installed, keep reading) a file of the user's.
    let links = crate::links::audit(&dir)
        .map_err(|refused| msg(crate::links::refusal(&request.source, &refused)))?;
    // Variables are resolved against where the extension will be read
    // from (0.61 reads the staged copy, so the consent text shows it).
    let shown = if metadata.kind == InstallType::Local {
        PathBuf::from(&metadata.source)
    } else {
        dir.clone()
    };
    let manifest = manifest::read(&dir, &Variables::new(&shown, workspace)).map_err(|e| {
        // Name the file the user knows, not the staged copy.
        let mut e = e;
        if metadata.kind != InstallType::Link
            && let Ok(rel) = e.path.strip_prefix(&dir)
        {
            e.path = PathBuf::from(&metadata.source).join(rel);
        }
        InstallError::Manifest(e)
    })?;
    let has_hooks = dir.join("hooks").join("hooks.json").is_file();
    let skills = contributions::read(&dir, &manifest, &Variables::new(&dir, workspace)).skills;
    Ok(Staged {
        temp,
        dir,
        metadata,
        manifest,
        has_hooks,
        skills,
        links,
    })
}

/// The links as the consent text lists them.
fn link_lines(links: &[Link]) -> Vec<String> {
    links.iter().map(Link::shown).collect()
}

/// Copies a folder (symlinks as symlinks, never followed, so nothing they
/// point to is read; [`stage`] refuses a folder whose links lead outside
/// it, which keeps the copy's links inside too); new folders 0700 and files
/// keep their mode plus the user's write bit (0.61 makes copies writable).
pub fn copy_tree(from: &Path, to: &Path) -> Result<(), InstallError> {
    create_private_dir(to).map_err(io(format!("cannot create {}", to.display())))?;
    let entries = std::fs::read_dir(from).map_err(io(format!("cannot read {}", from.display())))?;
    for entry in entries {
        let entry = entry.map_err(io(format!("cannot read {}", from.display())))?;
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(io(format!("cannot read {}", src.display())))?;
        if kind.is_symlink() {
            #[cfg(unix)]
            {
                let target = std::fs::read_link(&src)
                    .map_err(io(format!("cannot read {}", src.display())))?;
                std::os::unix::fs::symlink(target, &dst)
                    .map_err(io(format!("cannot create {}", dst.display())))?;
            }
        } else if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(io(format!("cannot copy {}", src.display())))?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                if let Ok(meta) = std::fs::metadata(&dst) {
                    let mode = meta.permissions().mode() | 0o600;
                    let _ = std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(mode));
                }
            }
        }
    }
    Ok(())
}

/// Installs exactly the staged extension into `~/.gemini/extensions/<name>`
/// and enables it for the user. Refuses when one of that name is installed
/// (0.61's messages).
pub fn install(home: &Path, workspace: &Path, staged: &Staged) -> Result<Extension, InstallError> {
    // Every installed one, allowed or not: a name is taken either way.
    let loaded = crate::load(home, workspace, &Security::default());
    let name = &staged.manifest.name;
    if loaded.get(name).is_some() {
        return Err(msg(format!(
            "Extension \"{name}\" is already installed. Please uninstall it first."
        )));
    }
    put_in_place(home, staged)?;
    let mut enablement = Enablement::load(home);
    enablement
        .enable(name, home)
        .map_err(io("cannot write the enablement file"))?;
    let dest = extensions_dir(home).join(name);
    read_extension(&dest, home, workspace, &enablement).map_err(msg)
}

fn put_in_place(home: &Path, staged: &Staged) -> Result<(), InstallError> {
    let name = &staged.manifest.name;
    let root = extensions_dir(home);
    create_private_dir(&root).map_err(io(format!("cannot create {}", root.display())))?;
    let dest = root.join(name);
    if dest.exists() {
        return Err(msg(format!(
            "Cannot install extension \"{name}\" because a directory with that name already exists. Please remove it manually."
        )));
    }
    // Copy next to the destination, then rename: a failed copy leaves
    // nothing half-installed.
    let partial = root.join(format!(".{name}.partial"));
    let _ = std::fs::remove_dir_all(&partial);
    let result = (|| {
        if staged.metadata.kind == InstallType::Link {
            create_private_dir(&partial)
                .map_err(io(format!("cannot create {}", partial.display())))?;
        } else {
            copy_tree(&staged.dir, &partial)?;
        }
        layout::write_metadata(&partial, &staged.metadata)
            .map_err(io("cannot write the install metadata"))?;
        std::fs::rename(&partial, &dest).map_err(io(format!("cannot create {}", dest.display())))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&partial);
    }
    result
}

/// Finds an installed extension by name (any case) or install source.
fn find<'a>(loaded: &'a crate::Loaded, key: &str) -> Option<&'a Extension> {
    let key_l = key.to_lowercase();
    loaded.extensions.iter().find(|e| {
        e.manifest.name.to_lowercase() == key_l
            || e.install
                .as_ref()
                .is_some_and(|m| m.source.to_lowercase() == key_l)
    })
}

/// Removes an extension's folder (for a link, only its record), its
/// enablement and, given the store, its sensitive settings (user scope and
/// `workspace`'s). Returns its name.
pub fn uninstall(
    home: &Path,
    workspace: &Path,
    key: &str,
    secrets: Option<&dyn gd_auth::SecretStore>,
) -> Result<String, InstallError> {
    // An extension the security settings no longer allow can still go.
    let loaded = crate::load(home, workspace, &Security::default());
    let ext = find(&loaded, key).ok_or_else(|| msg("Extension not found."))?;
    if let Some(store) = secrets {
        let id = ext.id();
        crate::settings::clear_secrets(&crate::settings::Owner::of(ext, &id), store, &[workspace])
            .map_err(|e| msg(format!("cannot remove its stored settings: {e}")))?;
    }
    std::fs::remove_dir_all(&ext.dir)
        .map_err(io(format!("cannot remove {}", ext.dir.display())))?;
    let name = ext.manifest.name.clone();
    Enablement::load(home)
        .remove(&name)
        .map_err(io("cannot write the enablement file"))?;
    Ok(name)
}

/// The outcome of an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Updated {
    pub name: String,
    pub from_version: String,
    pub to_version: String,
}

/// Re-fetches an installed extension from its recorded source and installs
/// it again in place, keeping its enablement (and its `.env` settings).
/// `consent` is asked with the new consent text when it differs from the
/// old one; `false` cancels.
pub fn update(
    home: &Path,
    workspace: &Path,
    name: &str,
    security: &Security,
    consent: &mut dyn FnMut(&str) -> bool,
) -> Result<Updated, InstallError> {
    let loaded = crate::load(home, workspace, security);
    let ext = loaded
        .get(name)
        .ok_or_else(|| msg(format!("Extension \"{name}\" not found.")))?;
    let metadata = ext.install.clone().ok_or_else(|| {
        msg(format!(
            "Unable to install extension \"{name}\" due to missing install metadata"
        ))
    })?;
    let source = match &ext.manifest.migrated_to {
        Some(to) => to.clone(),
        None => metadata.source.clone(),
    };
    let request = Request {
        source,
        git_ref: metadata.git_ref.clone(),
        auto_update: metadata.auto_update.unwrap_or(false),
        pre_release: metadata.allow_pre_release.unwrap_or(false),
        link: metadata.kind == InstallType::Link,
    };
    let staged = stage(&request, workspace, security)?;
    if staged.manifest.name != ext.manifest.name {
        return Err(msg(format!(
            "Cannot update \"{name}\": the new version is named \"{}\".",
            staged.manifest.name
        )));
    }
    let old_links = crate::links::audit(&ext.path).unwrap_or_default();
    let old_text = crate::consent::text(
        &ext.manifest,
        ext.contributions.hooks.is_some(),
        &ext.contributions.skills,
        &link_lines(&old_links),
    );
    let new_text = staged.consent_text();
    if old_text != new_text && !consent(&new_text) {
        return Err(msg(format!("Installation cancelled for \"{name}\".")));
    }
    // Keep the settings values across the reinstall.
    let env = std::fs::read(ext.dir.join(crate::settings::ENV_FILE)).ok();
    let backup = extensions_dir(home).join(format!(".{name}.old"));
    let _ = std::fs::remove_dir_all(&backup);
    std::fs::rename(&ext.dir, &backup).map_err(io(format!("cannot move {}", ext.dir.display())))?;
    if let Err(e) = put_in_place(home, &staged) {
        let _ = std::fs::rename(&backup, &ext.dir);
        return Err(e);
    }
    let _ = std::fs::remove_dir_all(&backup);
    if let Some(env) = env {
        let _ = layout::write_private(
            &extensions_dir(home)
                .join(name)
                .join(crate::settings::ENV_FILE),
            &env,
        );
    }
    Ok(Updated {
        name: name.to_owned(),
        from_version: ext.manifest.version.clone(),
        to_version: staged.manifest.version.clone(),
    })
}
