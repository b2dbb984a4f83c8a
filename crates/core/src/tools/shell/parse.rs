//! The root commands of a shell command line, for the confirmation shown to
//! the user and the "always allow" rules it creates.
//!
//! This uses the policy engine's own analysis, so that what the user is
//! shown (and allows) is exactly what the policy checks command by command:
//! wrappers' inner commands too (`xargs rm` offers `rm`).

use gd_policy::shell::analyze;

/// The name of every command `command` may run (lists, pipelines,
/// substitutions, wrappers' inner commands), without duplicates, in order of
/// appearance. Commands whose name is not a static word (`$cmd`) have no
/// root to offer.
pub fn root_commands(command: &str) -> Vec<String> {
    let mut roots: Vec<String> = Vec::new();
    for name in analyze(command).commands.into_iter().filter_map(|c| c.name) {
        if !roots.contains(&name) {
            roots.push(name);
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

    #[test]
    fn roots_include_what_wrappers_run() {
        assert_eq!(root_commands("find . -exec rm {} +"), ["find", "rm"]);
        assert_eq!(root_commands("ls | xargs rm"), ["ls", "xargs", "rm"]);
        assert_eq!(root_commands("bash -c 'touch a'"), ["bash", "touch"]);
        assert_eq!(
            root_commands("echo \"$'\" ; touch ../x ; echo \"'\""),
            ["echo", "touch"]
        );
    }
}
