//! The root commands of a shell command line, for the confirmation shown to
//! the user and the "always allow" rules it creates.
//!
//! This uses the policy engine's own splitter, so that what the user is
//! shown (and allows) is exactly what the policy checks part by part.

use gd_policy::shell::{root_command, split_commands};

/// The first word of every simple command in `command` (pipelines, lists,
/// command substitutions), without duplicates, in order of appearance.
pub fn root_commands(command: &str) -> Vec<String> {
    let mut roots: Vec<String> = Vec::new();
    for part in split_commands(command) {
        if let Some(root) = root_command(&part)
            && !roots.contains(&root)
        {
            roots.push(root);
        }
    }
    roots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_of_lists_pipelines_and_substitutions() {
        assert_eq!(root_commands("ls -la"), ["ls"]);
        assert_eq!(root_commands("git add . && git commit -m x"), ["git"]);
        assert_eq!(
            root_commands("make || echo failed; npm test | grep ok"),
            ["make", "echo", "npm", "grep"]
        );
        assert_eq!(root_commands("echo 'a; rm -rf /' \"b && c\""), ["echo"]);
        assert_eq!(root_commands("echo $(rm -rf x)"), ["echo", "rm"]);
        assert_eq!(root_commands("FOO=1 make -j4"), ["make"]);
        assert!(root_commands("").is_empty());
    }
}
