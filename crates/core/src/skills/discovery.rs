//! Where skills come from, in 0.61's order of precedence (a later tier's
//! skill replaces an earlier one of the same name): built-in, installed
//! extensions' `skills/`, the user's `~/.gemini/skills` then
//! `~/.agents/skills`, and — only in a trusted folder — the workspace's
//! `.gemini/skills` then `.agents/skills`.
//!
//! A tier's folder holds `SKILL.md` itself or `<skill>/SKILL.md` (one level,
//! as 0.61's `SKILL.md` and `*/SKILL.md` patterns). A missing folder costs
//! one failed `read_dir`.

use std::path::{Path, PathBuf};

use gd_protocol::DefinitionSource;
use serde::Deserialize;

use crate::frontmatter::{self, FrontMatterError};

use super::catalog::{Skill, SkillBody};

/// `skill-creator`, shipped with the app (our own text; 0.61 ships a skill
/// of the same name and purpose).
const SKILL_CREATOR: &str = include_str!("builtin/skill-creator.md");
/// `antigravity-support`: 0.61 ships it too, so `activate_skill`'s enum is
/// the same as 0.61's out of the box (our own text).
const ANTIGRAVITY_SUPPORT: &str = include_str!("builtin/antigravity-support.md");

/// The front matter of a `SKILL.md`. Other fields are allowed (0.61 reads
/// only these two).
#[derive(Debug, Deserialize)]
struct Meta {
    name: String,
    description: String,
}

/// What discovery found: every skill in precedence order (a later one of
/// the same name wins) and the files that could not be read.
#[derive(Debug, Default)]
pub struct Found {
    pub skills: Vec<Skill>,
    pub errors: Vec<FrontMatterError>,
}

/// The folders to read, by tier.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    pub home: Option<PathBuf>,
    pub workspace: Option<PathBuf>,
    pub trusted: bool,
}

impl Roots {
    /// `(tier, folder)` in precedence order, built-in excepted.
    pub fn folders(&self) -> Vec<(DefinitionSource, PathBuf)> {
        let mut folders = Vec::new();
        if let Some(home) = &self.home {
            folders.extend(extension_skill_dirs(home, self.workspace.as_deref()));
            folders.push((DefinitionSource::User, home.join(".gemini/skills")));
            folders.push((DefinitionSource::User, home.join(".agents/skills")));
        }
        if let (Some(ws), true) = (&self.workspace, self.trusted) {
            folders.push((DefinitionSource::Workspace, ws.join(".gemini/skills")));
            folders.push((DefinitionSource::Workspace, ws.join(".agents/skills")));
        }
        folders
    }
}

/// Every tier's skills.
pub fn discover(roots: &Roots) -> Found {
    let mut found = Found {
        skills: builtin(),
        errors: Vec::new(),
    };
    for (source, folder) in roots.folders() {
        read_folder(&folder, source, &mut found);
    }
    found
}

/// The built-in skills, in 0.61's order (Rust values: nothing is parsed at
/// launch).
pub fn builtin() -> Vec<Skill> {
    vec![
        Skill {
            name: "skill-creator".into(),
            description: "Guide for creating effective skills. Use it when the user wants to create a new skill (or update an existing one) that extends the agent with specialised knowledge, workflows or tool integrations.".into(),
            source: DefinitionSource::BuiltIn,
            file: None,
            body: SkillBody::Static(SKILL_CREATOR),
        },
        Skill {
            name: "antigravity-support".into(),
            description: "Use when the user asks how to install, set up, use or migrate to Antigravity CLI: where its official documentation is and how to answer from it rather than from memory.".into(),
            source: DefinitionSource::BuiltIn,
            file: None,
            body: SkillBody::Static(ANTIGRAVITY_SUPPORT),
        },
    ]
}

/// The `skills/` folders of the ENABLED extensions (0.61 reads skills only
/// from active extensions).
fn extension_skill_dirs(home: &Path, workspace: Option<&Path>) -> Vec<(DefinitionSource, PathBuf)> {
    let workspace = workspace.unwrap_or(home);
    crate::extensions::skill_dirs(home, workspace)
        .into_iter()
        .map(|d| (DefinitionSource::Extension, d))
        .collect()
}

fn read_folder(folder: &Path, source: DefinitionSource, found: &mut Found) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let mut files = Vec::new();
    let direct = folder.join("SKILL.md");
    if direct.is_file() {
        files.push(direct);
    }
    let mut nested: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name != "node_modules" && name != ".git" && p.is_dir()
        })
        .map(|p| p.join("SKILL.md"))
        .filter(|f| f.is_file())
        .collect();
    nested.sort();
    files.extend(nested);
    for file in files {
        match read_skill(&file, source) {
            Ok(skill) => found.skills.push(skill),
            Err(error) => {
                tracing::warn!(%error, "a skill could not be read");
                found.errors.push(error);
            }
        }
    }
}

/// Reads one `SKILL.md`. Its name has 0.61's forbidden characters
/// (`: \ / < > * ? " |`) replaced by `-`.
pub fn read_skill(file: &Path, source: DefinitionSource) -> Result<Skill, FrontMatterError> {
    let text = std::fs::read_to_string(file).map_err(|e| FrontMatterError {
        path: file.to_path_buf(),
        line: None,
        message: format!("cannot read the file: {e}"),
    })?;
    let doc = frontmatter::parse::<Meta>(file, &text)?;
    let name: String = doc
        .meta
        .name
        .trim()
        .chars()
        .map(|c| if ":\\/<>*?\"|".contains(c) { '-' } else { c })
        .collect();
    if name.is_empty() || doc.meta.description.trim().is_empty() {
        return Err(FrontMatterError {
            path: file.to_path_buf(),
            line: Some(2),
            message: "a skill needs a non-empty `name` and `description`".into(),
        });
    }
    Ok(Skill {
        name,
        description: doc.meta.description.trim().to_owned(),
        source,
        file: Some(file.to_path_buf()),
        body: SkillBody::Loaded(doc.body.trim().to_owned()),
    })
}
