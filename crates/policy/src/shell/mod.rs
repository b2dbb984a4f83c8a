//! Which commands a shell command line runs, so that each one is checked
//! against the policy on its own (see [`analyze`]).
//!
//! Commands run as `bash -c <command>` (crates/core's shell tool): not
//! interactive, so history expansion (`!`) and aliases are off, which this
//! analysis assumes. The text is parsed with the bash grammar Gemini CLI
//! uses (tree-sitter-bash); everything that may run is listed, and anything
//! the analysis cannot see through makes it *unproven*, which the policy
//! engine turns into a question to the user. The analysis may list more than
//! runs; it must never list less.

mod analysis;
mod builtins;
mod coverage;
mod heredoc;
mod lexer;
mod parse;
mod words;
mod wrappers;

pub(crate) use analysis::Found;

/// The commands of a command line and whether that list is known to be
/// complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    /// Every simple command that may run, in source order (wrappers' inner commands too).
    pub commands: Vec<Command>,
    /// Why the analysis cannot prove which commands run; empty means proven.
    pub unproven: Vec<String>,
}

impl Analysis {
    pub fn is_proven(&self) -> bool {
        self.unproven.is_empty()
    }
}

/// One simple command that may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The command's source text as written (what policy rules match, as today).
    pub text: String,
    /// The command name after quote removal, when it is a static word (else None).
    pub name: Option<String>,
    /// Redirections that open a file (their target as written); not /dev/null or fd dups.
    pub file_redirections: Vec<String>,
}

/// Every command `cmd` may run and why that list may be incomplete.
///
/// ```
/// use gd_policy::shell::analyze;
/// let a = analyze("git status && xargs rm < list");
/// let names: Vec<_> = a.commands.iter().map(|c| c.name.as_deref()).collect();
/// assert_eq!(names, [Some("git"), Some("xargs"), Some("rm")]);
/// assert!(a.is_proven());
/// assert!(!analyze("eval \"$code\"").is_proven());
/// ```
pub fn analyze(cmd: &str) -> Analysis {
    let (found, unproven) = analyze_found(cmd);
    Analysis {
        commands: found.into_iter().map(|f| f.command).collect(),
        unproven,
    }
}

/// [`analyze`], keeping which commands are only assignments (for the
/// engine, which does not ask a rule about `X=1`).
pub(crate) fn analyze_found(cmd: &str) -> (Vec<Found>, Vec<String>) {
    let walker = analysis::Walker::run(cmd, 0);
    let mut unproven = walker.unproven;
    second_opinion(cmd, &walker.found, &mut unproven);
    (walker.found, unproven)
}

/// Defence in depth: the old hand lexer reads the text too. A command name it
/// finds that the grammar did not, or text it cannot read to the end, means
/// the two readings disagree, and the analysis is not trusted.
pub(super) fn second_opinion(cmd: &str, found: &[Found], unproven: &mut Vec<String>) {
    const KEYWORDS: &[&str] = &[
        "for", "select", "case", "esac", "in", "function", "time", "coproc", "[[", "]]", "((",
        "then", "do", "done", "fi", "else", "elif", "if", "while", "until", "{", "}", "!",
    ];
    let parsed = lexer::parse(cmd);
    if !parsed.complete {
        unproven.push("a second reading of the command did not reach its end".to_owned());
    }
    let known: Vec<String> = found
        .iter()
        .flat_map(|f| {
            let first = lexer::parse(&f.command.text)
                .commands
                .first()
                .and_then(|p| lexer::first_word(p));
            f.command.name.clone().into_iter().chain(first)
        })
        .collect();
    for part in &parsed.commands {
        let Some(name) = lexer::first_word(part) else {
            continue;
        };
        if KEYWORDS.contains(&name.as_str()) || name.ends_with("()") || known.contains(&name) {
            continue;
        }
        let why = format!("a second reading found a command `{name}` the grammar did not");
        if !unproven.contains(&why) {
            unproven.push(why);
        }
    }
}

/// The texts of the commands `cmd` may run, in order (see [`analyze`]).
///
/// ```
/// use gd_policy::shell::split_commands;
/// assert_eq!(split_commands("git status && rm -rf x"), ["git status", "rm -rf x"]);
/// assert_eq!(split_commands("echo \"a && b\""), ["echo \"a && b\""]);
/// assert_eq!(split_commands("echo $(rm -rf /)"), ["echo $(rm -rf /)", "rm -rf /"]);
/// ```
pub fn split_commands(cmd: &str) -> Vec<String> {
    analyze(cmd).commands.into_iter().map(|c| c.text).collect()
}

/// The name of the first command `cmd` runs that has a static name
/// (assignments skipped).
///
/// ```
/// use gd_policy::shell::root_command;
/// assert_eq!(root_command("git commit -m x").as_deref(), Some("git"));
/// assert_eq!(root_command("FOO=1 BAR='a b' npm test").as_deref(), Some("npm"));
/// assert_eq!(root_command("   ").as_deref(), None);
/// ```
pub fn root_command(cmd: &str) -> Option<String> {
    analyze(cmd).commands.into_iter().find_map(|c| c.name)
}

#[cfg(test)]
mod tests;
