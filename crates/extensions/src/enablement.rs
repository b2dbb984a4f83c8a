//! `~/.gemini/extensions/extension-enablement.json`, Gemini CLI 0.61's
//! record of where each extension is on or off: per extension a list of
//! path globs (`/home/me/*` on everywhere under the home folder,
//! `!/home/me/ws/*` off in that workspace); the last rule matching the
//! current folder wins, and no rule means on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::layout::{create_private_dir, extensions_dir, write_private};

/// The file name inside the extensions folder.
pub const ENABLEMENT_FILE: &str = "extension-enablement.json";

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    overrides: Vec<String>,
}

/// One rule: a folder (with leading and trailing `/`), whether it covers
/// sub-folders, and whether it disables.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Override {
    base: String,
    disable: bool,
    subdirs: bool,
}

fn with_slashes(path: &str) -> String {
    let mut s = path.replace('\\', "/");
    if !s.starts_with('/') {
        s.insert(0, '/');
    }
    if !s.ends_with('/') {
        s.push('/');
    }
    s
}

impl Override {
    fn from_input(rule: &str, subdirs: bool) -> Self {
        let disable = rule.starts_with('!');
        let base = with_slashes(rule.trim_start_matches('!'));
        Override {
            base,
            disable,
            subdirs,
        }
    }

    fn from_file(rule: &str) -> Self {
        let disable = rule.starts_with('!');
        let base = if disable { &rule[1..] } else { rule };
        let subdirs = base.ends_with('*');
        let base = if subdirs {
            &base[..base.len() - 1]
        } else {
            base
        };
        Override {
            base: base.to_owned(),
            disable,
            subdirs,
        }
    }

    /// 0.61's glob: regex characters escaped, each `*` (with the `/` before
    /// it) made optional-anything.
    fn regex(&self) -> Option<regex::Regex> {
        let glob = format!("{}{}", self.base, if self.subdirs { "*" } else { "" });
        let escaped = regex::escape(&glob).replace("\\*", "*");
        let pattern = regex::Regex::new(r"(/?)\*")
            .ok()?
            .replace_all(&escaped, "(${1}.*)?");
        regex::Regex::new(&format!("^{pattern}$")).ok()
    }

    fn matches(&self, path: &str) -> bool {
        self.regex().is_some_and(|r| r.is_match(path))
    }

    fn output(&self) -> String {
        format!(
            "{}{}{}",
            if self.disable { "!" } else { "" },
            self.base,
            if self.subdirs { "*" } else { "" }
        )
    }

    fn child_of(&self, parent: &Override) -> bool {
        parent.subdirs && parent.matches(&self.base)
    }
}

/// The enablement file of one home folder.
#[derive(Debug, Clone)]
pub struct Enablement {
    path: PathBuf,
    entries: BTreeMap<String, Entry>,
    /// The file's own order of extensions (0.61 keeps insertion order).
    order: Vec<String>,
    /// Why the file could not be read (then everything counts as enabled,
    /// as 0.61, and the message is shown).
    pub error: Option<String>,
}

impl Enablement {
    /// Reads `~/.gemini/extensions/extension-enablement.json`.
    pub fn load(home: &Path) -> Self {
        let path = extensions_dir(home).join(ENABLEMENT_FILE);
        let mut this = Enablement {
            path: path.clone(),
            entries: BTreeMap::new(),
            order: Vec::new(),
            error: None,
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return this,
            Err(e) => {
                this.error = Some(format!("{}: cannot read it: {e}", path.display()));
                return this;
            }
        };
        match serde_json::from_str::<Map<String, Value>>(&text) {
            Ok(map) => {
                for (name, value) in map {
                    match serde_json::from_value::<Entry>(value) {
                        Ok(entry) => {
                            this.order.push(name.clone());
                            this.entries.insert(name, entry);
                        }
                        Err(e) => {
                            this.error = Some(format!("{}: \"{name}\": {e}", path.display()));
                            this.entries.clear();
                            this.order.clear();
                            return this;
                        }
                    }
                }
            }
            Err(e) => {
                this.error = Some(format!("{}:{}: {e}", path.display(), e.line()));
            }
        }
        this
    }

    /// Whether `name` is on in `folder`: the last matching rule wins.
    pub fn is_enabled(&self, name: &str, folder: &Path) -> bool {
        let current = with_slashes(&folder.to_string_lossy());
        let mut enabled = true;
        if let Some(entry) = self.entries.get(name) {
            for rule in &entry.overrides {
                let rule = Override::from_file(rule);
                if rule.matches(&current) {
                    enabled = !rule.disable;
                }
            }
        }
        enabled
    }

    /// Turns `name` on for `folder` and everything under it.
    pub fn enable(&mut self, name: &str, folder: &Path) -> std::io::Result<()> {
        self.set(name, &folder.to_string_lossy(), true)
    }

    /// Turns `name` off for `folder` and everything under it.
    pub fn disable(&mut self, name: &str, folder: &Path) -> std::io::Result<()> {
        self.set(name, &format!("!{}", folder.to_string_lossy()), true)
    }

    /// 0.61's `enable`: rules for the same folder and rules inside it are
    /// replaced by the new one.
    fn set(&mut self, name: &str, rule: &str, subdirs: bool) -> std::io::Result<()> {
        let new = Override::from_input(rule, subdirs);
        if !self.entries.contains_key(name) {
            self.order.push(name.to_owned());
        }
        let entry = self.entries.entry(name.to_owned()).or_default();
        entry.overrides.retain(|r| {
            let old = Override::from_file(r);
            old.base != new.base && !old.child_of(&new)
        });
        entry.overrides.push(new.output());
        self.save()
    }

    /// Forgets `name` (on uninstall).
    pub fn remove(&mut self, name: &str) -> std::io::Result<()> {
        if self.entries.remove(name).is_some() {
            self.order.retain(|n| n != name);
            self.save()?;
        }
        Ok(())
    }

    fn save(&self) -> std::io::Result<()> {
        if let Some(parent) = self.path.parent() {
            create_private_dir(parent)?;
        }
        let mut map = Map::new();
        for name in &self.order {
            if let Some(entry) = self.entries.get(name) {
                map.insert(
                    name.clone(),
                    serde_json::to_value(entry).map_err(std::io::Error::other)?,
                );
            }
        }
        let text =
            serde_json::to_string_pretty(&Value::Object(map)).map_err(std::io::Error::other)?;
        write_private(&self.path, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_matching_rule_wins_and_subfolders_follow() {
        let home = tempfile::tempdir().unwrap();
        let mut e = Enablement::load(home.path());
        let h = home.path();
        assert!(e.is_enabled("a", &h.join("ws")));
        e.enable("a", h).unwrap();
        e.disable("a", &h.join("ws")).unwrap();
        assert!(e.is_enabled("a", h));
        assert!(!e.is_enabled("a", &h.join("ws")));
        assert!(!e.is_enabled("a", &h.join("ws/sub")));
        assert!(e.is_enabled("a", &h.join("wsx")));
        let text = std::fs::read_to_string(extensions_dir(h).join(ENABLEMENT_FILE)).unwrap();
        let hs = h.to_string_lossy();
        assert_eq!(
            text,
            format!(
                "{{\n  \"a\": {{\n    \"overrides\": [\n      \"{hs}/*\",\n      \"!{hs}/ws/*\"\n    ]\n  }}\n}}"
            )
        );
        // Enabling the home folder again replaces the rules inside it.
        e.enable("a", h).unwrap();
        assert!(e.is_enabled("a", &h.join("ws")));
        let e2 = Enablement::load(h);
        assert!(e2.is_enabled("a", &h.join("ws")));
    }

    #[test]
    fn a_broken_file_is_reported_and_everything_stays_on() {
        let home = tempfile::tempdir().unwrap();
        let dir = extensions_dir(home.path());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(ENABLEMENT_FILE), "{ nope").unwrap();
        let e = Enablement::load(home.path());
        assert!(
            e.error
                .as_deref()
                .unwrap()
                .contains("extension-enablement.json:1")
        );
        assert!(e.is_enabled("x", home.path()));
    }
}
