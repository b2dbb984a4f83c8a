//! Trusted folders, as Gemini CLI 0.61 decides them.
//!
//! A repository can carry settings, `.env` files, custom commands and MCP
//! servers that run code on the user's behalf, so a folder the user has not
//! trusted is opened in a restricted mode. The rules live in
//! `~/.gemini/trustedFolders.json` (`GEMINI_CLI_TRUSTED_FOLDERS_PATH` moves
//! it), shared with Gemini CLI: `{"<absolute path>": "TRUST_FOLDER" |
//! "TRUST_PARENT" | "DO_NOT_TRUST"}`.
//!
//! * `TRUST_PARENT` on a path trusts its parent folder (and so the path).
//! * The rule whose written path is longest wins among those covering the
//!   folder (the folder itself or one of its parents), so a `DO_NOT_TRUST`
//!   below a trusted parent carves out an exception and vice versa.
//! * `GEMINI_CLI_TRUST_WORKSPACE=true` (what `--skip-trust` sets) trusts the
//!   folder; `GEMINI_CLI_TRUST_WORKSPACE=false` or
//!   `GEMINI_RESTRICTED_MODE=true` distrusts it, whatever the file says.
//! * `security.folderTrust.enabled` (on by default) switches the feature;
//!   it is read from the system and user settings only, since a workspace
//!   must not be able to trust itself.
//! * No matching rule means "not decided yet", treated as untrusted.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::edit;
use crate::layers::{
    LayerKind, LoadOptions, SettingsError, layer_paths, parse_file, read_optional,
};
use crate::merge::merge_into;
use crate::model::Settings;
use crate::write::{WriteError, edit_file};

pub const TRUSTED_FOLDERS_FILE: &str = "trustedFolders.json";
pub const TRUSTED_FOLDERS_PATH_ENV: &str = "GEMINI_CLI_TRUSTED_FOLDERS_PATH";
pub const TRUST_WORKSPACE_ENV: &str = "GEMINI_CLI_TRUST_WORKSPACE";
pub const RESTRICTED_MODE_ENV: &str = "GEMINI_RESTRICTED_MODE";

/// A rule's value in `trustedFolders.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrustLevel {
    TrustFolder,
    TrustParent,
    DoNotTrust,
}

impl TrustLevel {
    pub const ALL: [TrustLevel; 3] = [Self::TrustFolder, Self::TrustParent, Self::DoNotTrust];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::TrustFolder => "TRUST_FOLDER",
            Self::TrustParent => "TRUST_PARENT",
            Self::DoNotTrust => "DO_NOT_TRUST",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == value)
    }

    /// Whether the rule trusts what it covers.
    pub fn trusts(self) -> bool {
        self != Self::DoNotTrust
    }
}

/// One rule of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustRule {
    /// The path as written (normalised: absolute, no trailing `/`).
    pub path: String,
    pub level: TrustLevel,
}

impl TrustRule {
    /// The folder the rule covers (the parent for `TRUST_PARENT`).
    pub fn effective_path(&self) -> PathBuf {
        let path = Path::new(&self.path);
        match self.level {
            TrustLevel::TrustParent => path.parent().unwrap_or(path).to_owned(),
            _ => path.to_owned(),
        }
    }
}

/// The rules of `trustedFolders.json`.
#[derive(Debug, Clone, Default)]
pub struct TrustedFolders {
    pub file: PathBuf,
    pub rules: Vec<TrustRule>,
}

/// Where the trusted folders file is: `GEMINI_CLI_TRUSTED_FOLDERS_PATH`,
/// else `~/.gemini/trustedFolders.json`.
pub fn trusted_folders_path(
    env: &dyn Fn(&str) -> Option<String>,
    home: Option<&Path>,
) -> Option<PathBuf> {
    env(TRUSTED_FOLDERS_PATH_ENV)
        .filter(|p| !p.trim().is_empty())
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".gemini").join(TRUSTED_FOLDERS_FILE)))
}

/// Absolute, lexically cleaned (`.`/`..` resolved, no trailing `/`), the
/// form Gemini CLI stores rule paths in.
pub fn normalize(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_owned()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut out = PathBuf::new();
    for component in absolute.components() {
        match component {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The real path when it exists (symlinks resolved), else the path itself.
fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| normalize(path))
}

impl TrustedFolders {
    /// Reads the file; a missing file has no rules. Invalid JSON, a
    /// non-object or an unknown trust level is an error naming the file and
    /// line (Gemini CLI refuses to start on one, exit code 52).
    pub fn load(file: &Path) -> Result<Self, SettingsError> {
        let Some(text) = read_optional(file)? else {
            return Ok(Self {
                file: file.to_owned(),
                rules: Vec::new(),
            });
        };
        let value = crate::layers::parse_json(file, &text)?;
        let Value::Object(map) = value else {
            return Err(SettingsError::NotAnObject {
                path: file.to_owned(),
            });
        };
        let mut rules = Vec::new();
        for (path, level) in map {
            let Some(level) = level.as_str().and_then(TrustLevel::parse) else {
                let (line, column) = edit::locate(&text, &[&path]).unwrap_or((0, 0));
                return Err(SettingsError::Type {
                    path: file.to_owned(),
                    line,
                    column,
                    key: path,
                    message: format!(
                        "invalid trust level {level}; possible values are TRUST_FOLDER, TRUST_PARENT, DO_NOT_TRUST"
                    ),
                });
            };
            let path = normalize(Path::new(&path)).to_string_lossy().into_owned();
            rules.retain(|r: &TrustRule| r.path != path);
            rules.push(TrustRule { path, level });
        }
        Ok(Self {
            file: file.to_owned(),
            rules,
        })
    }

    /// The rule deciding `location`: among the rules whose folder contains
    /// it (or is it), the one with the longest written path. `None`: no rule.
    pub fn rule_for(&self, location: &Path) -> Option<&TrustRule> {
        let location = real(location);
        self.rules
            .iter()
            .filter(|rule| location.starts_with(real(&rule.effective_path())))
            .fold(None, |best: Option<&TrustRule>, rule| match best {
                Some(b) if b.path.len() >= rule.path.len() => Some(b),
                _ => Some(rule),
            })
    }

    /// `Some(true)` trusted, `Some(false)` distrusted, `None` undecided.
    pub fn is_path_trusted(&self, location: &Path) -> Option<bool> {
        self.rule_for(location).map(|rule| rule.level.trusts())
    }

    /// Records `level` for `folder` (the workspace itself; `TRUST_PARENT`
    /// covers its parent), keeping the file's other rules and comments.
    /// A new file is created readable by its owner only, as Gemini CLI does.
    pub fn set(file: &Path, folder: &Path, level: TrustLevel) -> Result<(), WriteError> {
        let key = normalize(folder).to_string_lossy().into_owned();
        // Refuse to edit a file we cannot understand.
        Self::load(file).map_err(|e| match e {
            SettingsError::Syntax {
                path,
                line,
                column,
                message,
            } => WriteError::Broken {
                path,
                line,
                column,
                message,
            },
            other => WriteError::Invalid(other),
        })?;
        edit_file(
            file,
            &[&key],
            Some(&Value::String(level.as_str().to_owned())),
            Some(0o600),
        )
    }
}

/// Who decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustSource {
    /// `security.folderTrust.enabled` is false: every folder is trusted.
    Disabled,
    /// `GEMINI_CLI_TRUST_WORKSPACE` / `GEMINI_RESTRICTED_MODE` (or `--skip-trust`).
    Env,
    /// A rule in the trusted folders file.
    File,
}

/// The decision for one workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceTrust {
    pub workspace: PathBuf,
    /// `security.folderTrust.enabled` from the system and user settings.
    pub enabled: bool,
    /// `None`: no rule matches (the user has not decided; untrusted).
    pub trusted: Option<bool>,
    pub source: Option<TrustSource>,
    /// The rule that decided, when the file did.
    pub rule: Option<TrustRule>,
    /// The trusted folders file (where a decision is written).
    pub file: Option<PathBuf>,
}

impl WorkspaceTrust {
    /// A trusted workspace: its settings, `.env`, commands and MCP servers load.
    pub fn is_trusted(&self) -> bool {
        self.trusted == Some(true)
    }

    /// Trusted regardless of any file (tests, tools that must not ask).
    pub fn assumed(workspace: &Path) -> Self {
        Self {
            workspace: workspace.to_owned(),
            enabled: false,
            trusted: Some(true),
            source: Some(TrustSource::Disabled),
            rule: None,
            file: None,
        }
    }
}

/// `security.folderTrust.enabled` from the layers a workspace cannot
/// influence (system defaults, user, system); on unless set to false.
pub fn folder_trust_enabled(options: &LoadOptions<'_>) -> Result<bool, SettingsError> {
    let mut merged = Value::Object(Default::default());
    for (kind, path) in layer_paths(options) {
        if kind == LayerKind::Workspace {
            continue;
        }
        let Some(text) = read_optional(&path)? else {
            continue;
        };
        merge_into(&mut merged, &parse_file(&path, &text)?);
    }
    let settings: Settings = serde_json::from_value(merged).unwrap_or_default();
    Ok(settings.security.folder_trust.enabled.unwrap_or(true))
}

/// Decides whether `options.workspace` is trusted (see the module doc for
/// the order). `options.env` should be the process environment: a `.env`
/// file is only read once the decision is made.
pub fn workspace_trust(options: &LoadOptions<'_>) -> Result<WorkspaceTrust, SettingsError> {
    let env = options.env;
    let workspace = options.workspace.clone();
    let file = trusted_folders_path(env, options.home.as_deref());
    let decided =
        |trusted: Option<bool>, source: Option<TrustSource>, enabled: bool| WorkspaceTrust {
            workspace: workspace.clone(),
            enabled,
            trusted,
            source,
            rule: None,
            file: file.clone(),
        };
    let flag = |name: &str| env(name).map(|v| v.trim().to_ascii_lowercase());
    if flag(RESTRICTED_MODE_ENV).as_deref() == Some("true")
        || flag(TRUST_WORKSPACE_ENV).as_deref() == Some("false")
    {
        let enabled = folder_trust_enabled(options)?;
        return Ok(decided(Some(false), Some(TrustSource::Env), enabled));
    }
    if flag(TRUST_WORKSPACE_ENV).as_deref() == Some("true") {
        let enabled = folder_trust_enabled(options)?;
        return Ok(decided(Some(true), Some(TrustSource::Env), enabled));
    }
    if !folder_trust_enabled(options)? {
        return Ok(decided(Some(true), Some(TrustSource::Disabled), false));
    }
    let Some(path) = &file else {
        return Ok(decided(None, None, true));
    };
    let folders = TrustedFolders::load(path)?;
    let rule = folders.rule_for(&workspace).cloned();
    Ok(WorkspaceTrust {
        trusted: rule.as_ref().map(|r| r.level.trusts()),
        source: rule.as_ref().map(|_| TrustSource::File),
        rule,
        ..decided(None, None, true)
    })
}
