//! The shadow repository's ignore rules: the workspace's own, plus those
//! that apply to it from outside (the project's `.git/info/exclude`, parent
//! folders' `.gitignore`s), rebased onto the workspace.

use std::path::{Path, PathBuf};

/// Ignore rules that apply to `workspace` from outside it: the project's
/// `.git/info/exclude` and, when the workspace is a folder inside a
/// repository, the `.gitignore` files of its parent folders up to the
/// repository's root (git would apply them; with `GIT_WORK_TREE` set to the
/// folder it cannot see them). Patterns are rewritten relative to the
/// workspace: unanchored ones apply as they are, anchored ones only when
/// they point inside it.
pub(super) fn inherited_excludes(workspace: &Path) -> String {
    let mut text = String::new();
    let mut inner = PathBuf::new();
    for ancestor in workspace.ancestors() {
        if ancestor != workspace {
            let rel = inner.to_string_lossy().replace('\\', "/");
            if let Ok(rules) = std::fs::read_to_string(ancestor.join(".gitignore")) {
                text.push_str(&format!("# From {}/.gitignore:\n", ancestor.display()));
                for rule in rules.lines().filter_map(|r| rebase_rule(r, &rel)) {
                    text.push_str(&rule);
                    text.push('\n');
                }
            }
        }
        let dot_git = ancestor.join(".git");
        if dot_git.exists() {
            let rel = inner.to_string_lossy().replace('\\', "/");
            if let Ok(rules) = std::fs::read_to_string(dot_git.join("info").join("exclude")) {
                text.push_str("# From the project's .git/info/exclude:\n");
                for rule in rules.lines().filter_map(|r| rebase_rule(r, &rel)) {
                    text.push_str(&rule);
                    text.push('\n');
                }
            }
            break;
        }
        match ancestor.file_name() {
            // (Joining an empty path would add a trailing slash.)
            Some(name) if inner.as_os_str().is_empty() => inner = PathBuf::from(name),
            Some(name) => inner = Path::new(name).join(&inner),
            None => break,
        }
    }
    text
}

/// One gitignore rule written for a folder `rel` levels up (`a/b`, or ""
/// for the workspace itself), rewritten for the workspace; `None` when it
/// cannot match inside the workspace.
fn rebase_rule(rule: &str, rel: &str) -> Option<String> {
    let rule = rule.trim_end();
    if rule.is_empty() || rule.starts_with('#') {
        return None;
    }
    if rel.is_empty() {
        return Some(rule.to_owned());
    }
    let (neg, body) = match rule.strip_prefix('!') {
        Some(rest) => ("!", rest),
        None => ("", rule),
    };
    let (body, dir) = match body.strip_suffix('/') {
        Some(b) => (b, "/"),
        None => (body, ""),
    };
    if !body.contains('/') || body.starts_with("**/") {
        return Some(rule.to_owned());
    }
    let anchored = body.trim_start_matches('/');
    let inside = anchored.strip_prefix(rel)?.strip_prefix('/')?;
    (!inside.is_empty()).then(|| format!("{neg}/{inside}{dir}"))
}

#[cfg(test)]
mod tests {
    use super::rebase_rule;

    #[test]
    fn parent_rules_are_rebased_onto_the_workspace() {
        assert_eq!(
            rebase_rule("node_modules/", "web").as_deref(),
            Some("node_modules/")
        );
        assert_eq!(rebase_rule("*.log", "web").as_deref(), Some("*.log"));
        assert_eq!(
            rebase_rule("!keep.log", "web").as_deref(),
            Some("!keep.log")
        );
        assert_eq!(rebase_rule("**/dist", "web").as_deref(), Some("**/dist"));
        assert_eq!(rebase_rule("/web/dist/", "web").as_deref(), Some("/dist/"));
        assert_eq!(
            rebase_rule("web/a/b.txt", "web").as_deref(),
            Some("/a/b.txt")
        );
        assert_eq!(rebase_rule("!/web/keep", "web").as_deref(), Some("!/keep"));
        assert_eq!(rebase_rule("/top-only", "web"), None);
        assert_eq!(rebase_rule("webapp/x", "web"), None);
        assert_eq!(rebase_rule("other/dist", "web"), None);
        assert_eq!(rebase_rule("# comment", "web"), None);
        assert_eq!(rebase_rule("/x", "").as_deref(), Some("/x"));
    }
}
