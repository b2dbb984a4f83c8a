//! The skills of a session: the winner of each name (a later tier replaces
//! an earlier one, as 0.61), the ones they hide, the files that failed, and
//! what changes while the session runs — which skills are disabled
//! (`/skills disable`) and which the model activated (their folders became
//! readable). A change bumps [`SkillCatalog::generation`], so the next
//! request declares `activate_skill` again.
//!
//! The skills themselves can be looked for again while the session runs
//! ([`SkillCatalog::reload`], 0.61's `/skills reload`): someone writing a
//! skill (with `skill-creator`, say) uses it without a new conversation.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use gd_protocol::{DefinitionError, DefinitionSource, SkillInfo};

use crate::frontmatter::FrontMatterError;

use super::discovery::{self, Found, Roots};

/// A skill's instructions: shipped text, or a `SKILL.md` body read at
/// discovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillBody {
    Static(&'static str),
    Loaded(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub source: DefinitionSource,
    /// Its `SKILL.md` (none for built-in skills, which have no folder).
    pub file: Option<PathBuf>,
    pub body: SkillBody,
}

impl Skill {
    /// The skill's folder: its resources, readable once it is active.
    pub fn folder(&self) -> Option<&Path> {
        self.file.as_deref().and_then(Path::parent)
    }

    pub fn instructions(&self) -> &str {
        match &self.body {
            SkillBody::Static(text) => text,
            SkillBody::Loaded(text) => text,
        }
    }

    pub fn is_builtin(&self) -> bool {
        self.source == DefinitionSource::BuiltIn
    }
}

#[derive(Debug, Default)]
struct State {
    /// Lower-cased names (0.61 compares `skills.disabled` case-insensitively).
    disabled: BTreeSet<String>,
    active: BTreeSet<String>,
}

/// What one discovery found, sorted out: the winner of each name, the
/// skills they hide (with the tier that won), the files that failed.
#[derive(Debug, Default)]
struct Loaded {
    skills: Vec<Arc<Skill>>,
    shadowed: Vec<(Arc<Skill>, DefinitionSource)>,
    errors: Vec<FrontMatterError>,
}

impl Loaded {
    fn sort_out(found: Found) -> Self {
        let mut skills: Vec<Arc<Skill>> = Vec::new();
        let mut shadowed = Vec::new();
        for skill in found.skills {
            let skill = Arc::new(skill);
            if let Some(i) = skills.iter().position(|s| s.name == skill.name) {
                let old = std::mem::replace(&mut skills[i], skill);
                if !old.is_builtin() {
                    tracing::warn!(name = %old.name, "a skill of another tier overrides this one");
                }
                shadowed.push((old, skills[i].source));
            } else {
                skills.push(skill);
            }
        }
        Self {
            skills,
            shadowed,
            errors: found.errors,
        }
    }
}

#[derive(Debug, Default)]
pub struct SkillCatalog {
    loaded: RwLock<Arc<Loaded>>,
    /// Where the skills were found, to look again; `None` for a catalog
    /// made of given skills (tests).
    roots: Option<Roots>,
    /// `skills.enabled: false`: no skill is declared at all.
    off: bool,
    state: Mutex<State>,
    generation: AtomicU64,
}

impl SkillCatalog {
    /// The catalog of what discovery found; `disabled` from
    /// `skills.disabled`, `off` from `skills.enabled: false`.
    pub fn new(found: Found, disabled: &[String], off: bool) -> Self {
        Self {
            loaded: RwLock::new(Arc::new(Loaded::sort_out(found))),
            roots: None,
            off,
            state: Mutex::new(State {
                disabled: disabled.iter().map(|n| n.to_lowercase()).collect(),
                active: BTreeSet::new(),
            }),
            generation: AtomicU64::new(0),
        }
    }

    /// The same catalog, which [`Self::reload`] refreshes from `roots`.
    pub fn with_roots(mut self, roots: Roots) -> Self {
        self.roots = Some(roots);
        self
    }

    /// Looks for the skills again in the folders they came from (a new
    /// `SKILL.md`, an edited one, a removed folder), keeping which are
    /// disabled and active. Returns whether anything changed; a catalog
    /// without folders never changes.
    pub fn reload(&self) -> bool {
        let Some(roots) = &self.roots else {
            return false;
        };
        let fresh = Loaded::sort_out(discovery::discover(roots));
        let mut loaded = self.loaded.write().unwrap_or_else(|e| e.into_inner());
        let same = loaded.skills == fresh.skills
            && loaded.shadowed == fresh.shadowed
            && loaded.errors == fresh.errors;
        if same {
            return false;
        }
        tracing::info!(skills = fresh.skills.len(), "skills reloaded");
        *loaded = Arc::new(fresh);
        self.generation.fetch_add(1, Ordering::Relaxed);
        true
    }

    fn loaded(&self) -> Arc<Loaded> {
        self.loaded
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes when the enabled set changes.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    pub fn is_off(&self) -> bool {
        self.off
    }

    /// Every skill that won its name, enabled or not.
    pub fn all(&self) -> Vec<Arc<Skill>> {
        self.loaded().skills.clone()
    }

    pub fn errors(&self) -> Vec<FrontMatterError> {
        self.loaded().errors.clone()
    }

    pub fn is_enabled(&self, name: &str) -> bool {
        !self.off && !self.state().disabled.contains(&name.to_lowercase())
    }

    /// The skills the model is told about and may activate.
    pub fn enabled(&self) -> Vec<Arc<Skill>> {
        if self.off {
            return Vec::new();
        }
        let loaded = self.loaded();
        let state = self.state();
        loaded
            .skills
            .iter()
            .filter(|s| !state.disabled.contains(&s.name.to_lowercase()))
            .cloned()
            .collect()
    }

    /// An enabled skill by name.
    pub fn get_enabled(&self, name: &str) -> Option<Arc<Skill>> {
        self.enabled().into_iter().find(|s| s.name == name)
    }

    pub fn set_enabled(&self, name: &str, enabled: bool) {
        let mut state = self.state();
        let key = name.to_lowercase();
        let changed = if enabled {
            state.disabled.remove(&key)
        } else {
            state.disabled.insert(key)
        };
        if changed {
            self.generation.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Marks a skill active; its folder is then among [`Self::roots`].
    pub fn activate(&self, name: &str) {
        self.state().active.insert(name.to_owned());
    }

    /// The folders of the active skills: read like workspace folders for
    /// the rest of the session (0.61 adds them to the workspace).
    pub fn roots(&self) -> Vec<PathBuf> {
        let loaded = self.loaded();
        let state = self.state();
        loaded
            .skills
            .iter()
            .filter(|s| state.active.contains(&s.name))
            .filter_map(|s| s.folder().map(Path::to_path_buf))
            .collect()
    }

    /// `/skills`: every skill, the hidden ones after the winners.
    pub fn infos(&self) -> Vec<SkillInfo> {
        let loaded = self.loaded();
        let state = self.state();
        let info = |s: &Skill, shadowed_by: Option<DefinitionSource>| SkillInfo {
            name: s.name.clone(),
            description: s.description.clone(),
            source: s.source,
            location: s.folder().map(|f| f.display().to_string()),
            enabled: !self.off
                && shadowed_by.is_none()
                && !state.disabled.contains(&s.name.to_lowercase()),
            active: shadowed_by.is_none() && state.active.contains(&s.name),
            shadowed_by,
        };
        loaded
            .skills
            .iter()
            .map(|s| info(s, None))
            .chain(loaded.shadowed.iter().map(|(s, by)| info(s, Some(*by))))
            .collect()
    }

    pub fn error_infos(&self) -> Vec<DefinitionError> {
        self.errors().into_iter().map(Into::into).collect()
    }

    /// 0.61's "Available Agent Skills" section of the system instruction,
    /// listing the enabled skills; `None` without any.
    pub fn prompt_section(&self) -> Option<String> {
        let enabled = self.enabled();
        if enabled.is_empty() {
            return None;
        }
        let items: Vec<String> = enabled
            .iter()
            .map(|s| {
                let location = s
                    .file
                    .as_ref()
                    .map_or_else(|| "built-in".to_owned(), |f| f.display().to_string());
                format!(
                    "  <skill>\n    <name>{}</name>\n    <description>{}</description>\n    <location>{location}</location>\n  </skill>",
                    s.name, s.description
                )
            })
            .collect();
        Some(format!(
            "# Available Agent Skills\n\nThese skills hold specialised instructions for particular tasks. When a task matches a skill's description, call the `activate_skill` tool with its name to load its instructions.\n\n<available_skills>\n{}\n</available_skills>",
            items.join("\n")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::catalog::SkillBody;

    fn skill(name: &str, source: DefinitionSource) -> Skill {
        Skill {
            name: name.into(),
            description: format!("{name} from {source:?}"),
            source,
            file: Some(PathBuf::from(format!("/s/{source:?}/{name}/SKILL.md"))),
            body: SkillBody::Loaded("body".into()),
        }
    }

    #[test]
    fn a_later_tier_wins_and_the_loser_is_listed_as_hidden() {
        let found = Found {
            skills: vec![
                skill("a", DefinitionSource::User),
                skill("a", DefinitionSource::Workspace),
                skill("b", DefinitionSource::User),
            ],
            errors: vec![],
        };
        let catalog = SkillCatalog::new(found, &["B".into()], false);
        let enabled: Vec<_> = catalog
            .enabled()
            .iter()
            .map(|s| (s.name.clone(), s.source))
            .collect();
        assert_eq!(enabled, [("a".to_owned(), DefinitionSource::Workspace)]);
        let infos = catalog.infos();
        assert_eq!(infos.len(), 3);
        assert_eq!(infos[2].shadowed_by, Some(DefinitionSource::Workspace));
        assert!(!infos[1].enabled, "b is disabled case-insensitively");
        let before = catalog.generation();
        catalog.set_enabled("b", true);
        assert_ne!(catalog.generation(), before);
        assert!(catalog.is_enabled("b"));
    }

    #[test]
    fn skills_enabled_false_turns_every_skill_off() {
        let found = Found {
            skills: vec![skill("a", DefinitionSource::User)],
            errors: vec![],
        };
        let catalog = SkillCatalog::new(found, &[], true);
        assert!(catalog.enabled().is_empty());
        assert!(catalog.prompt_section().is_none());
    }
}
