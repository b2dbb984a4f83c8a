//! `extensions new <path> [template]`: a new extension folder, empty (a
//! manifest named after the folder, as 0.61) or from one of the starting
//! points 0.61 offers under the same names. The templates are our own (in
//! `templates/`, built into the binary), each small, working as it is and
//! commented where a reader would change it.

use std::path::Path;

use crate::layout::write_private;
use crate::manifest::MANIFEST_FILE;

/// One template file: its path inside the new folder and its text. Shell
/// and Python files are programs (made executable).
struct File {
    path: &'static str,
    text: &'static str,
}

impl File {
    fn executable(&self) -> bool {
        self.path.ends_with(".sh") || self.path.ends_with(".py")
    }
}

macro_rules! template_file {
    ($template:literal, $path:literal) => {
        File {
            path: $path,
            text: include_str!(concat!("../templates/", $template, "/", $path)),
        }
    };
}

/// The templates, by name (0.61's names).
const TEMPLATES: &[(&str, &[File])] = &[
    (
        "custom-commands",
        &[
            template_file!("custom-commands", "commands/notes/todo.toml"),
            template_file!("custom-commands", "gemini-extension.json"),
        ],
    ),
    (
        "exclude-tools",
        &[template_file!("exclude-tools", "gemini-extension.json")],
    ),
    (
        "hooks",
        &[
            template_file!("hooks", "gemini-extension.json"),
            template_file!("hooks", "hooks/hooks.json"),
            template_file!("hooks", "scripts/on-start.sh"),
        ],
    ),
    (
        "mcp-server",
        &[
            template_file!("mcp-server", "gemini-extension.json"),
            template_file!("mcp-server", "server.py"),
        ],
    ),
    (
        "policies",
        &[
            template_file!("policies", "gemini-extension.json"),
            template_file!("policies", "policies/policies.toml"),
        ],
    ),
    (
        "skills",
        &[
            template_file!("skills", "gemini-extension.json"),
            template_file!("skills", "skills/release-notes/SKILL.md"),
        ],
    ),
    (
        "themes-example",
        &[template_file!("themes-example", "gemini-extension.json")],
    ),
];

/// The template names, for the command's help and its error.
pub fn names() -> Vec<&'static str> {
    TEMPLATES.iter().map(|(name, _)| *name).collect()
}

/// Why a new extension was not created.
#[derive(Debug, thiserror::Error)]
pub enum NewError {
    #[error("Path already exists: {0}")]
    Exists(String),
    #[error("Unknown template \"{0}\". Choose one of: {1}.")]
    UnknownTemplate(String, String),
    #[error("Cannot write {0}: {1}")]
    Io(String, std::io::Error),
}

/// Creates `path` (which must not exist) with `template`'s files, or with a
/// bare manifest named after the folder.
pub fn create(path: &Path, template: Option<&str>) -> Result<(), NewError> {
    let files = match template {
        Some(name) => Some(
            TEMPLATES
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, files)| *files)
                .ok_or_else(|| NewError::UnknownTemplate(name.to_owned(), names().join(", ")))?,
        ),
        None => None,
    };
    if path.exists() {
        return Err(NewError::Exists(path.display().to_string()));
    }
    let io = |p: &Path| {
        let shown = p.display().to_string();
        move |e| NewError::Io(shown, e)
    };
    std::fs::create_dir_all(path).map_err(io(path))?;
    let Some(files) = files else {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "my-extension".into());
        let manifest = serde_json::json!({"name": name, "version": "1.0.0"});
        let text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
        let target = path.join(MANIFEST_FILE);
        return write_private(&target, text.as_bytes()).map_err(io(&target));
    };
    for file in files {
        let target = path.join(file.path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&target, file.text).map_err(io(&target))?;
        #[cfg(unix)]
        if file.executable() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))
                .map_err(io(&target))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{Variables, read};

    #[test]
    fn every_template_is_a_valid_extension_and_an_existing_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for name in names() {
            let path = dir.path().join(name);
            create(&path, Some(name)).unwrap();
            let manifest = read(&path, &Variables::new(&path, dir.path()))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let found = crate::validate::validate(&path).unwrap();
            assert!(found.errors.is_empty(), "{name}: {:?}", found.errors);
            assert!(found.warnings.is_empty(), "{name}: {:?}", found.warnings);
            assert_eq!(manifest.version, "1.0.0");
        }
        let bare = dir.path().join("my-ext");
        create(&bare, None).unwrap();
        let manifest = read(&bare, &Variables::new(&bare, dir.path())).unwrap();
        assert_eq!(manifest.name, "my-ext");
        assert!(matches!(create(&bare, None), Err(NewError::Exists(_))));
        assert!(matches!(
            create(&dir.path().join("x"), Some("nope")),
            Err(NewError::UnknownTemplate(..))
        ));
        assert!(
            !dir.path().join("x").exists(),
            "an unknown template created the folder"
        );
    }
}
