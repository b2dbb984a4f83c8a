//! Symbolic links inside an extension's folder.
//!
//! An installed extension's files are read into the session (its context
//! files go into every model request) and copies keep links as links. A
//! link such as `GEMINI.md -> ../../../.ssh/id_rsa` therefore sent the
//! user's private key to the model once the copy landed in
//! `~/.gemini/extensions/<name>/` (issue 33). So an extension is installed
//! (copied, cloned or linked) only when every link in it leads, step by
//! step, to an existing file or folder of its own: [`audit`] resolves each
//! one inside the folder, never above it, so the answer does not depend on
//! where the folder lies and holds for the installed copy too. Absolute
//! links are refused (a copy's would still point at the source), and so
//! are links that lead nowhere or loop (what they would reach cannot be
//! known). The links that pass are listed in the consent text.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Links followed while resolving one path before it counts as a loop
/// (Linux's own limit).
const MAX_HOPS: usize = 40;

/// A symbolic link in an extension: where it is (relative to the
/// extension's folder) and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub path: PathBuf,
    pub target: PathBuf,
}

impl Link {
    /// `path -> target`, as the consent text and errors show it.
    pub fn shown(&self) -> String {
        format!("{} -> {}", self.path.display(), self.target.display())
    }
}

/// A link that cannot be installed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub link: Link,
    pub why: String,
}

/// Every symbolic link in `root` (links to folders are not entered), or,
/// when any of them does not stay inside, those that do not.
pub fn audit(root: &Path) -> Result<Vec<Link>, Vec<Refused>> {
    let mut links = Vec::new();
    let mut refused = Vec::new();
    let mut folders = vec![PathBuf::new()];
    while let Some(rel) = folders.pop() {
        let entries = match std::fs::read_dir(root.join(&rel)) {
            Ok(entries) => entries,
            Err(e) => {
                refused.push(Refused {
                    link: Link {
                        path: rel.clone(),
                        target: PathBuf::new(),
                    },
                    why: format!("this folder cannot be read ({e})"),
                });
                continue;
            }
        };
        let mut names: Vec<_> = entries.flatten().collect();
        names.sort_by_key(|e| e.file_name());
        for entry in names {
            let path = rel.join(entry.file_name());
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                folders.push(path);
            } else if kind.is_symlink() {
                let target = std::fs::read_link(root.join(&path)).unwrap_or_default();
                let link = Link {
                    path: path.clone(),
                    target: target.clone(),
                };
                match resolve_inside(root, &rel, &target) {
                    Ok(()) => links.push(link),
                    Err(why) => refused.push(Refused {
                        link,
                        why: why.to_owned(),
                    }),
                }
            }
        }
    }
    links.sort_by(|a, b| a.path.cmp(&b.path));
    if refused.is_empty() {
        Ok(links)
    } else {
        refused.sort_by(|a, b| a.link.path.cmp(&b.link.path));
        Err(refused)
    }
}

/// The error for an extension from `source` whose links were refused.
pub fn refusal(source: &str, refused: &[Refused]) -> String {
    let lines: Vec<String> = refused
        .iter()
        .map(|r| format!("  {} ({})", r.link.shown(), r.why))
        .collect();
    format!(
        "The extension from {source} cannot be installed: it has symbolic links that lead outside its folder (they could bring other files, such as your SSH keys, into the model's context):\n{}\nAn extension may link only to its own files.",
        lines.join("\n")
    )
}

/// One step of a path being resolved.
enum Part {
    Absolute,
    Up,
    Name(OsString),
}

/// `path`'s steps (`.` dropped).
fn parts(path: &Path) -> impl Iterator<Item = Part> + '_ {
    path.components().filter_map(|c| match c {
        Component::Prefix(_) | Component::RootDir => Some(Part::Absolute),
        Component::CurDir => None,
        Component::ParentDir => Some(Part::Up),
        Component::Normal(name) => Some(Part::Name(name.to_owned())),
    })
}

/// Resolves `target` (a link in the folder `from`, relative to `root`) one
/// step at a time, following links, without ever going above `root`.
fn resolve_inside(root: &Path, from: &Path, target: &Path) -> Result<(), &'static str> {
    if target.as_os_str().is_empty() {
        return Err("it cannot be read");
    }
    let mut stack: Vec<OsString> = from
        .components()
        .map(|c| c.as_os_str().to_owned())
        .collect();
    let mut pending: VecDeque<Part> = parts(target).collect();
    let mut hops = 0;
    while let Some(part) = pending.pop_front() {
        let name = match part {
            Part::Absolute => return Err("an absolute link"),
            Part::Up => {
                if stack.pop().is_none() {
                    return Err("it leads outside the extension's folder");
                }
                continue;
            }
            Part::Name(name) => name,
        };
        let mut here = root.to_path_buf();
        here.extend(&stack);
        here.push(&name);
        let meta = std::fs::symlink_metadata(&here).map_err(|_| "it leads to nothing")?;
        if meta.file_type().is_symlink() {
            hops += 1;
            if hops > MAX_HOPS {
                return Err("a loop of links");
            }
            // The link's own target replaces it, resolved from where the
            // link is (the current folder).
            let next = std::fs::read_link(&here).map_err(|_| "it cannot be read")?;
            for part in parts(&next).collect::<Vec<_>>().into_iter().rev() {
                pending.push_front(part);
            }
            continue;
        }
        if !pending.is_empty() && !meta.is_dir() {
            return Err("it leads to nothing");
        }
        stack.push(name);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ext");
        std::fs::create_dir_all(root.join("docs/deep")).unwrap();
        std::fs::write(root.join("docs/context.md"), "x").unwrap();
        std::fs::write(dir.path().join("secret"), "s").unwrap();
        (dir, root)
    }

    fn whys(root: &Path) -> Vec<(String, String)> {
        audit(root)
            .unwrap_err()
            .into_iter()
            .map(|r| (r.link.shown(), r.why))
            .collect()
    }

    #[test]
    fn links_to_own_files_pass_and_are_listed() {
        let (_dir, root) = tree();
        symlink("docs/context.md", root.join("GEMINI.md")).unwrap();
        symlink("../context.md", root.join("docs/deep/up.md")).unwrap();
        symlink("docs", root.join("d")).unwrap();
        symlink("d/./deep/../context.md", root.join("via-link.md")).unwrap();
        let shown: Vec<String> = audit(&root).unwrap().iter().map(Link::shown).collect();
        assert_eq!(
            shown,
            [
                "GEMINI.md -> docs/context.md",
                "d -> docs",
                "docs/deep/up.md -> ../context.md",
                "via-link.md -> d/./deep/../context.md",
            ]
        );
    }

    #[test]
    fn links_outside_absolute_dangling_and_looping_are_refused() {
        let (dir, root) = tree();
        symlink("../secret", root.join("GEMINI.md")).unwrap();
        symlink(dir.path().join("ext/docs/context.md"), root.join("abs.md")).unwrap();
        symlink("missing.md", root.join("dangling.md")).unwrap();
        symlink("loop-b", root.join("loop-a")).unwrap();
        symlink("loop-a", root.join("loop-b")).unwrap();
        // Every link inside, yet the walk leaves the folder through one
        // that goes up from deeper down: docs/deep/up -> ../.. is `ext`
        // itself, so up/../secret is above it.
        symlink("../..", root.join("docs/deep/up")).unwrap();
        symlink("docs/deep/up/../secret", root.join("sneaky.md")).unwrap();
        assert_eq!(
            whys(&root),
            [
                (
                    "GEMINI.md -> ../secret".to_owned(),
                    "it leads outside the extension's folder".to_owned()
                ),
                (
                    format!(
                        "abs.md -> {}",
                        dir.path().join("ext/docs/context.md").display()
                    ),
                    "an absolute link".to_owned()
                ),
                (
                    "dangling.md -> missing.md".to_owned(),
                    "it leads to nothing".to_owned()
                ),
                ("loop-a -> loop-b".to_owned(), "a loop of links".to_owned()),
                ("loop-b -> loop-a".to_owned(), "a loop of links".to_owned()),
                (
                    "sneaky.md -> docs/deep/up/../secret".to_owned(),
                    "it leads outside the extension's folder".to_owned()
                ),
            ]
        );
        let message = refusal("/src/x", &audit(&root).unwrap_err());
        assert!(message.starts_with("The extension from /src/x cannot be installed: it has symbolic links that lead outside its folder"));
        assert!(
            message
                .contains("\n  GEMINI.md -> ../secret (it leads outside the extension's folder)\n")
        );
    }
}
